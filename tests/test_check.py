"""Check mode (load_kernel(..., check=True), kp.check): the CPU stand-in finds out-of-bounds global and shared
accesses, shared-memory races, divergent barriers and uninitialised shared reads, at the `.cu` line, with the
block and threads involved (tests/cuda_cpu/check.cu: each bug on a line marked `// BUG: <case>`); correct kernels
that look risky, and every op of kernels/ forward and backward, report nothing.

CPU only by design: check mode is the stand-in's (on a GPU, compute-sanitizer does this job)."""

import platform
import re
import shutil
import subprocess
import warnings

import pytest
import torch
from conftest import edit
from op_samples import HALF, SAMPLES

import helpers
import kp.check
import kp.files
from kp.build import build_kernel
from kp.check import KernelCheckError, KernelCheckWarning
from kp.verify import check_against_reference

CHECK = kp.files.ROOT / "tests" / "cuda_cpu" / "check.cu"
SOURCE = CHECK.read_text()
LINES = SOURCE.splitlines()
CASES = re.findall(r'^    "(\w+)",$', SOURCE, re.M)  # kCases, in order
AT = "tests/cuda_cpu/check.cu"
N = 100  # two blocks of 64: the second is partly past the end


def line_of(text):
    return next(i for i, line in enumerate(LINES, 1) if text in line)


@pytest.fixture(scope="module")
def k():
    return helpers.load_kernel(CHECK, check=True, quiet=True)


@pytest.fixture(scope="module")
def plain():
    return helpers.load_kernel(CHECK, target="cpu", quiet=True)


def run(k, case, x=None, out=None):
    x = torch.randn(N, generator=torch.Generator().manual_seed(0)) if x is None else x
    out = torch.zeros(N) if out is None else out
    k.run(CASES.index(case), x, out)
    return x, out


def findings_of(k, case, **kwargs):
    """The KernelCheckError of running `case` (warnings that come with it, such as the uninitialised reads a
    missing barrier causes, are let go)."""
    with pytest.raises(KernelCheckError) as raised, warnings.catch_warnings(record=True):
        run(k, case, **kwargs)
    return raised.value


# (case, kind, line marker, thread, block, the other access's line marker and thread)
BUGS = [
    ("read_past_end", "global-bounds", "BUG: read_past_end", (35, 0, 0), (1, 0, 0), None, None),
    ("write_without_bound", "global-bounds", "BUG: write_without_bound", (36, 0, 0), (1, 0, 0), None, None),
    ("read_before_start", "global-bounds", "float load(", (0, 0, 0), (0, 0, 0), None, None),
    ("reduce_missing_sync", "race", "(the write)", (32, 0, 0), (0, 0, 0), "(the read)", (0, 0, 0)),
    ("warp_tail_without_syncwarp", "race", "v[t] += v[t + 32]", (1, 0, 0), (0, 0, 0), "v[t] += v[t + 1]", (0, 0, 0)),
    ("shift_left_in_shared", "shared-bounds", "BUG: shift_left_in_shared", (63, 0, 0), (0, 0, 0), None, None),
    ("read_before_first_odd_array", "shared-bounds", "BUG: read_before_first", (0, 0, 0), (0, 0, 0), None, None),
    ("read_before_second_odd_array", "shared-bounds", "BUG: read_before_second", (0, 0, 0), (0, 0, 0), None, None),
    ("read_past_first_of_one_declaration", "shared-bounds", "BUG: read_past_first", (32, 0, 0), (0, 0, 0), None, None),
    (
        "read_past_second_of_one_declaration",
        "shared-bounds",
        "BUG: read_past_second",
        (32, 0, 0),
        (0, 0, 0),
        None,
        None,
    ),
    ("dynamic_past_launch_size", "shared-bounds", "BUG: dynamic_past", (32, 0, 0), (0, 0, 0), None, None),
    ("barrier_under_if", "barrier", "BUG: barrier_under_if", (36, 0, 0), (1, 0, 0), None, None),
    ("barrier_skipped_by_live_threads", "barrier", "BUG: barrier_skipped", None, (0, 0, 0), None, None),
    ("barrier_in_branch", "barrier", "BUG: barrier_in_branch", None, (0, 0, 0), None, None),
    ("shuffle_mask_names_absent_lanes", "barrier", "BUG: shuffle_mask", (0, 0, 0), (0, 0, 0), None, None),
    ("local_array_off_by_one", "local-bounds", "BUG: local_array_off_by_one", (0, 0, 0), (0, 0, 0), None, None),
    (
        "tile_loop_without_end_barrier",
        "race",
        "end_barrier (the write)",
        (1, 0, 0),
        (0, 0, 0),
        "end_barrier (the read)",
        (0, 0, 0),
    ),
    (
        "lanes_store_different_values",
        "race",
        "BUG: lanes_store_different",
        (1, 0, 0),
        (0, 0, 0),
        "BUG: lanes_store_different",
        (0, 0, 0),
    ),
    (
        "last_block_without_fence",
        "global-race",
        "fence (the read)",
        (0, 0, 0),
        (1, 0, 0),
        "fence (the write",
        (0, 0, 0),
    ),
]


@pytest.mark.parametrize(("case", "kind", "marker", "thread", "block", "other_marker", "other"), BUGS)
def test_each_bug_is_found_at_its_line_with_its_threads(k, case, kind, marker, thread, block, other_marker, other):
    error = findings_of(k, case)
    first = error.findings[0]
    assert isinstance(error, RuntimeError) and error.kp_op == "run"
    assert (first.severity, first.kind, first.kernel) == ("error", kind, case)
    assert (first.file, first.line, first.block) == (AT, line_of(marker), block), first
    if thread is not None:
        assert first.thread == thread, first
    if other_marker:
        assert (first.other_file, first.other_line, first.other_thread) == (AT, line_of(other_marker), other)
    # The message: the kind, the line as build errors name it, and the source line itself.
    n = first.line
    assert f"at {AT}:{n}" in str(error) and f"{n:5d} | {LINES[n - 1]}" in str(error), str(error)


def test_out_of_bounds_messages_name_the_tensor_and_the_index(k):
    past = findings_of(k, "write_without_bound").findings[0].message
    assert "write of 'out'[100]" in past and "'out' has 100 elements of 4 bytes, so [100] is past its end" in past
    before = findings_of(k, "read_before_start").findings[0].message
    assert "read of 'x'[-1]" in before and "before its start" in before
    shared = findings_of(k, "shift_left_in_shared").findings[0].message
    assert "'tile[64]' has 64 elements" in shared and "at element 64" in shared
    dynamic = findings_of(k, "dynamic_past_launch_size").findings[0].message
    assert "byte 128 of the dynamic shared memory 'buf', but the launch gave it 128 bytes" in dynamic


def test_an_off_by_one_into_a_threads_own_array_is_named_and_the_plain_build_misses_it(k, plain):
    """A write one past a local array lands on the thread's stack: no tensor check sees it, and the plain build
    returns a silently wrong answer (out[i] = 2 x[i] sits in s[1], where element 0 should have gone)."""
    message = findings_of(k, "local_array_off_by_one").findings[0].message
    assert "out-of-bounds write" in message and "past the end of the thread's own array" in message, message
    x, out = run(plain, "local_array_off_by_one")
    torch.testing.assert_close(out, 2 * x)


def test_an_out_of_bounds_write_is_stopped_before_it_happens(k):
    """The block stops at the bad access: memory just past the tensor (here the rest of a larger buffer) keeps
    its contents, and the process goes on."""
    buffer = torch.full((N + 64,), 7.0)
    findings_of(k, "write_without_bound", out=buffer[:N])
    assert (buffer[N:] == 7.0).all()
    x, out = run(k, "grid_stride_scale")
    torch.testing.assert_close(out, 3 * x)


def test_a_race_is_reported_once_per_access_and_a_launch_stops_after_a_few(k):
    error = findings_of(k, "warp_tail_without_syncwarp")
    sites = [f.line for f in error.findings]
    assert len(sites) == len(set(sites)) and 1 <= len(error.findings) <= 5
    assert all(f.kind == "race" for f in error.findings)


def test_a_race_between_iterations_of_a_loop_is_named_as_such_once(k):
    """The tile's store of the next iteration against the reads of the last one (no barrier at the end of the loop
    body): one finding for the pair of lines, which says which access is in the next iteration of which loop, that
    the barrier between the two lines orders them only within an iteration, and where one would separate them."""
    error = findings_of(k, "tile_loop_without_end_barrier")
    write, read = line_of("end_barrier (the write)"), line_of("end_barrier (the read)")
    loop, barrier = line_of("LOOP: tile_loop_without_end_barrier"), line_of("BARRIER: tile_loop_without_end_barrier")
    (race,) = error.findings
    message = race.message
    assert message.startswith("shared-memory race: loop-carried race on 'tile["), message
    assert f"at {AT}:{write} in the next iteration of the loop at line {loop}" in message, message
    assert f"the one at line {barrier} separates them only within an iteration" in message, message
    assert f"one at the end of the loop body (after line {read}) would separate them" in message, message


def test_a_race_between_the_same_two_lines_is_one_finding_whichever_came_first():
    """The runtime reports a race at the later access; a loop-carried one is seen both ways round (and once per
    array a line touches): kp.check keeps the first of each pair of lines."""
    write, read = line_of("end_barrier (the write)"), line_of("end_barrier (the read)")
    row = "error\trace\tk\t(0,0,0)\t({t},0,0)\t@{here}\t@{there}\t(0,0,0)\tthread writes it {{here}}, read {{there}}"
    report = "\n".join(row.format(t=t, here=a, there=b) for t, a, b in [(1, write, read), (2, read, write), (3, 1, 2)])
    findings = kp.check.parse_report(report, CHECK)
    assert [(f.thread, f.line, f.other_line) for f in findings] == [((1, 0, 0), write, read), ((3, 0, 0), 1, 2)]


def test_a_barrier_under_an_if_that_threads_skip_is_named_with_its_if_and_an_early_return_is_not(k):
    """Since Volta a __syncthreads() waits for the threads that have not exited: return_before_barrier (threads
    past n return first) is silent. The same threads skipping a barrier under an `if`, then exiting, are named."""
    message = findings_of(k, "barrier_under_if").findings[0].message
    n = line_of("BUG: barrier_under_if")
    assert "28 exited without reaching it (the first: thread (36,0,0))" in message, message
    assert f"it is under the `if` at line {n - 2}, which they skipped" in message, message


def test_the_last_block_pattern_without_its_fence_names_the_missing_threadfence(k):
    """The Programming Guide's last-block pattern (last_block_sums) is silent; without its __threadfence() the
    finding says what is missing, not "use an atomic": the atomic ticket is there already."""
    message = findings_of(k, "last_block_without_fence").findings[0].message
    assert "no __threadfence() comes between its write and its atomic" in message, message
    assert "put __threadfence() before the atomic" in message and "use an atomic" not in message, message


def test_an_uninitialised_shared_read_is_a_warning_and_the_op_returns(k):
    with pytest.warns(KernelCheckWarning) as caught:
        x, out = run(k, "read_before_write")
    torch.testing.assert_close(out, x)
    text = str(caught[0].message)
    n = line_of("BUG: read_before_write")
    assert f"reads 's[0]' at {AT}:{n} before any thread of block (0,0,0) wrote it" in text, text


def test_a_missing_barrier_also_shows_as_a_read_of_shared_memory_nobody_wrote_yet(k):
    """The second uninitialised read: without the barrier, thread 0 adds s[32] before thread 32 has stored it."""
    with pytest.warns(KernelCheckWarning) as caught, pytest.raises(KernelCheckError):
        run(k, "reduce_missing_sync")
    n = line_of("(the read)")
    assert any(
        f"reads 's[32]' at {AT}:{n} before any thread of block (0,0,0) wrote it" in str(w.message) for w in caught
    )


def block_sums(x, block=64):
    return torch.stack([c.sum() for c in x.split(block)])


# Correct kernels that look risky, with what they compute.
CLEAN = {
    "tree_reduction": lambda x: block_sums(x),
    "warp_shuffle_reduction": lambda x: block_sums(x),
    "warp_tail_with_syncwarp": lambda x: block_sums(x),
    "grid_stride_scale": lambda x: 3 * x,
    "shared_histogram": lambda x: torch.tensor([(x < 0).sum(), (x >= 0).sum()], dtype=x.dtype),
    "stencil_with_halo": lambda x: x + torch.nn.functional.pad(x[1:], (0, 1)) + torch.nn.functional.pad(x[:-1], (1, 0)),
    "dynamic_reverse": None,  # checked against the plain build
    "reverse_in_header": None,  # its __shared__ array is in a header, which the source step translates too
    "return_before_barrier": lambda x: x,  # exited threads do not count at a barrier (since Volta)
    "lanes_store_the_same_value": lambda x: torch.cat([x[:32].sum().expand(64), x[64:96].sum().expand(36)]),
    "cas_loop_max": lambda x: x.max().clamp(min=0).reshape(1),  # out starts at 0
    "shared_atomic_max": lambda x: torch.stack([v for c in x.split(64) for v in (c.max(), (c > 0).any().float())]),
    "last_block_sums": lambda x: torch.cat(
        [torch.stack([x[:32].sum(), x[64:96].sum()]).sum().reshape(1), torch.stack([x[:32].sum(), x[64:96].sum()])]
    ),  # first warps' sums
    "carved_dynamic_shared": None,
    "cg_reduce_with_forceinline_op": None,  # builds in check mode (g++ -O1 cannot force-inline a function pointer)
}


@pytest.mark.parametrize("case", CLEAN)
def test_correct_kernels_that_look_risky_report_nothing(k, plain, case):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a KernelCheckWarning fails the test
        x, out = run(k, case)
    _, expected = run(plain, case, x=x)
    if CLEAN[case]:
        n = len(CLEAN[case](x))
        torch.testing.assert_close(out[:n], CLEAN[case](x))
    torch.testing.assert_close(out, expected)


def test_a_vector_read_past_a_views_end_inside_the_tensor_it_views_is_the_tensors(k):
    """op(x, x[:62]): x and out are one storage; thread 15's float4 read of x[60:64] runs past the view's end
    (248 bytes) but not x's. It is x's access, x holding all 16 bytes, whichever of the two was registered first."""
    x = torch.arange(64, dtype=torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a KernelCheckWarning fails the test
        k.run(CASES.index("vector_read_of_a_view"), x, x[:62])
    assert x[0].item() == 0 + 1 + 2 + 3


@pytest.mark.parametrize("n", [256, 1024])
def test_memory_handed_out_again_smaller_within_one_call_is_checked_against_the_smaller(k, n):
    """check_binding.cpp's reuse: one op call fills a pool of 4096 floats, then registers its first 256 as `small`
    (a caching allocator's block handed out again, no cudaFree between) and fills n floats of it. The pool's
    registration, of this call but from before the last launch, is stale: 1024 floats run past small's end at
    [256]; 256 report nothing."""
    pool = torch.zeros(4096)
    if n == 256:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a KernelCheckWarning fails the test
            k.reuse(pool, n)
        assert torch.equal(pool, torch.ones(4096))
        return
    with pytest.raises(KernelCheckError) as raised, warnings.catch_warnings(record=True):
        k.reuse(pool, n)
    error = next(f for f in raised.value.findings if f.severity == "error")
    assert error.kind == "global-bounds" and "'small'[256]" in error.message, raised.value
    assert error.line == line_of("BUG: fill_ones")


@pytest.mark.skipif(
    platform.machine() != "x86_64" or not shutil.which("objdump"),
    reason="the own-frame stub is x86-64's, and objdump reads the check build",
)
def test_a_check_built_kernel_keeps_its_frame_pointer_which_the_own_frame_stub_reads(k):
    """cuda_cpu_check.h's __tsan_* stub answers an access in [rsp, rbp) as the caller's own frame: sound only while a
    check-built kernel sets rbp to its frame (-fno-omit-frame-pointer, kp/build.py). Its prologue says so."""
    text = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(k.build.library)], capture_output=True, text=True, check=True
    ).stdout
    body = text.split("<_Z13read_past_endPKfPfi>:\n", 1)[1].split("\n\n", 1)[0]
    prologue = [line.split("\t")[-1].split() for line in body.splitlines()[:3]]
    assert ["push", "%rbp"] in prologue and ["mov", "%rsp,%rbp"] in prologue, prologue


BIG = (40_000, 54_000)  # 2.16e9 bytes, past 2^31: a 32-bit row * cols + col overflows from row 39768 on


def test_a_tensor_past_2_31_bytes_is_read_right_and_an_index_that_overflows_int_is_named_at_its_line(k):
    """The last column of a 2.16 GB uint8 matrix: with a 64-bit index, silent and right (its per-element records
    would take 240 GB: it has none, and its bounds are still checked); with a 32-bit one, rows past 2^31 bytes
    reach 2 GB before the tensor, named at the index's line, not at the launch. One such tensor (only its last
    column is ever touched: 160 MB of pages), freed at the end."""
    m = torch.empty(BIG, dtype=torch.uint8)
    try:
        m[:, -1] = torch.arange(BIG[0]) % 251
        out = torch.zeros(BIG[0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            k.last_column(m, out, True)
        assert torch.equal(out, m[:, -1].float())
        with pytest.raises(KernelCheckError) as raised:
            k.last_column(m, torch.zeros(BIG[0]), False)
    finally:
        del m
    first = raised.value.findings[0]
    row = -(-(2**31 - BIG[1] + 1) // BIG[1])  # the first row whose index passes 2^31 - 1
    assert (first.kind, first.kernel, first.line) == (
        "global-bounds",
        "last_column_int32",
        line_of("BUG: last_column_int32"),
    )
    assert (first.block, first.thread) == ((row // 64, 0, 0), (row % 64, 0, 0)), first
    assert "outside every tensor of the op call" in first.message and "before the start of 'm'" in first.message
    assert "an index that overflowed (a 32-bit int past 2^31)" in first.message, first.message


def test_the_plain_build_misses_what_check_mode_finds(plain):
    """Why check mode exists: the plain build runs these bugs without a word. A missing barrier gives a wrong sum
    (thread 0 reads what thread 32 has not written yet), a read past the end reads whatever lies there."""
    x, out = run(plain, "reduce_missing_sync")
    assert not torch.allclose(out[:2], block_sums(x))
    run(plain, "read_past_end")


def test_the_wrong_element_is_named_with_the_write_that_made_it(k):
    x, out = run(k, "copy_with_one_wrong")
    with pytest.raises(AssertionError) as failed:
        check_against_reference("copy", out, x)
    n = line_of("BUG: copy_with_one_wrong")
    message = str(failed.value)
    expected = f"the first wrong element is [37]: expected {x[37].item():.6g}, got {out[37].item():.6g}"
    assert expected in message, message
    assert f"last written by kernel 'copy_with_one_wrong' block (0,0,0) thread (37,0,0), at {AT}:{n}" in message


def ops_of(kernel):
    return [key.split(".")[1] for key in SAMPLES if key.split(".")[0] == kernel]


@pytest.mark.parametrize("kernel", sorted({key.split(".")[0] for key in SAMPLES}))
def test_every_op_of_the_collection_reports_nothing_in_check_mode(kernel):
    """No false positives: every op (forward and backward kernels) of kernels/ on op_samples' irregular sizes, in
    every dtype it takes, gives the plain build's answer with no finding and no warning."""
    checked = helpers.load_kernel(kernel, check=True, quiet=True)
    normal = helpers.load_kernel(kernel, target="cpu", quiet=True)
    assert checked.build.check and not normal.build.check
    for op in ops_of(kernel):
        dtypes = [torch.float32, torch.float64] + ([torch.float16, torch.bfloat16] if f"{kernel}.{op}" in HALF else [])
        for dtype in dtypes:
            for args in SAMPLES[f"{kernel}.{op}"](dtype):
                args = tuple(a.detach() if torch.is_tensor(a) else a for a in args)
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    got = getattr(checked, op)(*args)
                torch.testing.assert_close(got, getattr(normal, op)(*args))


def test_check_mode_finds_a_removed_syncthreads_in_linear(kernel_copy):
    """The notebook's exercise on a copy of kernels/linear.cu: without the barrier after the tile loads, the
    stand-in's answer is silently wrong, and check mode names the race: a tile's write and read, at their lines."""
    cu = kernel_copy("linear")
    barrier = "__syncthreads();  // the tiles are complete"
    assert barrier in cu.read_text()
    edit(cu, barrier, "// (removed)")
    lines = cu.read_text().splitlines()
    x, w, b = torch.randn(37, 53), torch.randn(29, 53), torch.randn(29)
    assert not torch.allclose(helpers.load_kernel(cu, target="cpu", quiet=True).linear(x, w, b), x @ w.T + b)
    with pytest.raises(KernelCheckError) as raised, warnings.catch_warnings(record=True):
        helpers.load_kernel(cu, check=True, quiet=True).linear(x, w, b)
    first = raised.value.findings[0]
    assert first.kind == "race" and first.kernel.startswith("linear_fwd_kernel"), first
    assert re.search(r"race on '[AB]s\[\d+\]\[\d+\]'", first.message), first.message
    for line in (first.line, first.other_line):
        assert re.search(r"[AB]s\[", lines[line - 1]), (line, lines[line - 1])


def test_check_mode_is_a_build_of_its_own_and_the_normal_one_stays(tmp_path):
    normal = build_kernel("add2", "cpu")
    checked = build_kernel("add2", check=True)
    assert checked.target == "cpu" and checked.check and checked.key != normal.key
    assert checked.library.parent != normal.library.parent
    assert build_kernel("add2", "cpu").status == "cached"
    assert "check mode" in checked.describe() and "check mode" not in normal.describe()


def test_check_mode_is_cpu_only_and_says_what_to_use_on_a_gpu():
    with pytest.raises(ValueError, match="check mode runs on the CPU stand-in.*compute-sanitizer"):
        build_kernel("add2", "cuda", check=True)


def test_the_environment_variable_turns_check_mode_on(monkeypatch, capsys):
    monkeypatch.setenv("KP_CHECK", "1")
    assert helpers.load_kernel("add2", quiet=True).build.check
    assert helpers.setup() == torch.device("cpu") and "check mode" in capsys.readouterr().out
    monkeypatch.setenv("KP_CHECK", "0")
    assert not helpers.load_kernel("add2", target="cpu", quiet=True).build.check


def test_in_jupyter_a_check_error_shows_its_findings_first_and_the_traceback_collapsed(tmp_path):
    import nbformat

    from kp.diagnostics import plain
    from kp.notebooks import execute

    cells = [
        f"import torch\nfrom helpers import load_kernel\nk = load_kernel({str(CHECK)!r}, check=True, quiet=True)",
        f"k.run({CASES.index('barrier_skipped_by_live_threads')}, torch.randn({N}), torch.zeros({N}))",
    ]
    path = tmp_path / "check_error.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    error, full = execute(path, allow_errors=True).notebook.cells[1].outputs
    n = line_of("BUG: barrier_skipped_by_live_threads")
    assert error["ename"] == "KernelCheckError", error
    text = plain("\n".join(error["traceback"]))
    kernel = "barrier_skipped_by_live_threads"
    assert text.startswith(f"KernelCheckError: run: check mode found 1 problem in kernel '{kernel}':"), text
    assert f"wait at different barriers at {AT}:{n}" in text and f"{n:5d} | {LINES[n - 1]}" in text, text
    assert "Traceback" not in text and "kp/" not in text, text
    assert full["data"]["text/html"].startswith("<details><summary>full traceback")


PATTERNS = kp.files.ROOT / "tests" / "cuda_cpu" / "patterns.cu"


def test_a_race_on_global_memory_is_named_at_both_lines_and_its_atomic_twin_is_silent():
    """`counts[bin] += 1` from many threads (a histogram without atomics): compute-sanitizer's racecheck sees shared
    memory only; check mode names the race on the global tensor. With atomicAdd: nothing, and the right counts."""
    k = helpers.load_kernel(PATTERNS, target="cpu", check=True, quiet=True)
    x = torch.arange(100, dtype=torch.float32) % 5
    line = next(n for n, text in enumerate(PATTERNS.read_text().splitlines(), 1) if "RACE: histogram" in text)
    with pytest.raises(KernelCheckError) as found:
        k.run(6, x, torch.zeros(5), 0)
    (read, write) = found.value.findings
    assert {read.kind, write.kind} == {"global-race"}
    assert (read.file, read.line, read.other_line, read.thread, read.other_thread) == (
        "tests/cuda_cpu/patterns.cu",
        line,
        line,
        (5, 0, 0),
        (0, 0, 0),
    )
    assert "global-memory race on 'out'[0]: thread (5,0,0) of block (0,0,0) reads it at " in read.message
    assert "and thread (0,0,0) of the same block wrote it" in read.message
    counts = torch.zeros(5)
    k.run(6, x, counts, 1)
    assert counts.tolist() == [20.0] * 5


def test_elements_of_extern_shared_arrays_are_named_by_index():
    k = helpers.load_kernel(PATTERNS, target="cpu", check=True, quiet=True)
    with pytest.raises(KernelCheckError) as found, warnings.catch_warnings():
        warnings.simplefilter("ignore", KernelCheckWarning)  # lane 0 reads s[1] before lane 1 wrote it, too
        k.run(7, torch.randn(64), torch.zeros(64), 0)
    race = found.value.findings[0]
    assert race.kind == "race" and "shared-memory race on 's[1]' in block (0,0,0)" in race.message, race.message


def test_the_compute_sanitizer_comparison_covers_every_bug_check_mode_names():
    """tools/sanitize_cases.py runs each bug of check.cu under compute-sanitizer on a GPU session: it must know
    every bug this file asserts (and the uninitialised read), with the kind check mode names; but races on global
    memory, which compute-sanitizer's racecheck does not look for (it sees shared memory only)."""
    from tools.sanitize_cases import BUGS as SANITIZED

    assert {case: kp.check.KINDS[kind] for case, kind, *_ in BUGS if kind != "global-race"} == {
        case: kind for case, (kind, _) in SANITIZED.items() if case != "read_before_write"
    }
    assert SANITIZED["read_before_write"][1] == "initcheck" and set(SANITIZED) <= set(CASES)


# A header's __shared__ arrays (issue 33 item 1: headers are translated like the .cu, their arrays registered): a
# kernel of the header whose block sum lacks its barrier, and a file-scope array of the header that a kernel of the
# .cu reads before any thread wrote it.
SUMS_HEADER = """#pragma once
#include "kp.cuh"

__shared__ float carry[64];  // file scope: the .cu's kernel reads it

// one sum per block of 64, without the barrier between the stores and thread 0's reads
__global__ void racy_sum(const float* x, float* out, int64_t n) {
  __shared__ float tile[64];
  int t = threadIdx.x;
  int64_t i = (int64_t)blockIdx.x * 64 + t;
  tile[t] = i < n ? x[i] : 0.f;  // (the write)
  if (t == 0) {
    float s = 0;
    for (int k = 0; k < 64; ++k) s += tile[k];  // (the read)
    out[blockIdx.x] = s;
  }
}

// half the block waits at one barrier, half at the next
__global__ void split_barrier(float* out) {
  if (threadIdx.x < 32) __syncthreads();  // (split)
  __syncthreads();
  out[threadIdx.x] = 1.f;
}
"""
SUMS_CU = """// header_shared: the kernels of tests/test_check.py's header tests
#include "sums.cuh"
__global__ void carry_read(float* out) {
  if (threadIdx.x == 0) out[0] = carry[5];  // (carry read)
}
void racy_sum_fwd(const float* x, float* out, int64_t n) {
  racy_sum<<<ceil_div<int64_t>(n, 64), 64>>>(x, out, n);
  KP_CHECK_LAUNCH();
}
void carry_read_fwd(float* out) {
  carry_read<<<1, 64>>>(out);
  KP_CHECK_LAUNCH();
}
void split_barrier_fwd(float* out) {
  split_barrier<<<1, 64>>>(out);
  KP_CHECK_LAUNCH();
}
"""
SUMS_BINDING = """#include "binding.h"
void racy_sum_fwd(const float* x, float* out, int64_t n);
void carry_read_fwd(float* out);
void split_barrier_fwd(float* out);
kp::Tensor racy_sum(kp::Tensor x) {
  kp::Tensor out = torch::stable::new_zeros(x, {(x.numel() + 63) / 64});
  racy_sum_fwd(kp::data<const float>(x, "x"), kp::data<float>(out, "out"), x.numel());
  return out;
}
kp::Tensor carry_read(kp::Tensor x) {
  kp::Tensor out = torch::stable::new_zeros(x, {1});
  carry_read_fwd(kp::data<float>(out, "out"));
  return out;
}
kp::Tensor split_barrier(kp::Tensor x) {
  kp::Tensor out = torch::stable::new_zeros(x, {64});
  split_barrier_fwd(kp::data<float>(out, "out"));
  return out;
}
KP_OPS(m) {
  m.def("racy_sum(Tensor x) -> Tensor", TORCH_BOX(&racy_sum));
  m.def("carry_read(Tensor x) -> Tensor", TORCH_BOX(&carry_read));
  m.def("split_barrier(Tensor x) -> Tensor", TORCH_BOX(&split_barrier));
}
"""


@pytest.fixture(scope="module")
def header_shared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("header_shared")
    (folder / "sums.cuh").write_text(SUMS_HEADER)
    (folder / "header_shared.cu").write_text(SUMS_CU)
    (folder / "header_shared_binding.cpp").write_text(SUMS_BINDING)
    (folder / "header_shared_ops.py").write_text("def register(ops):\n    pass  # a test op: no fake, no formula\n")
    return folder, helpers.load_kernel(folder / "header_shared.cu", check=True, quiet=True)


def test_a_race_on_a_headers_shared_array_is_named_at_the_headers_lines(header_shared):
    folder, k = header_shared
    header = str(folder / "sums.cuh")
    write, read = (1 + SUMS_HEADER.splitlines().index(n) for n in SUMS_HEADER.splitlines() if "(the " in n)
    with pytest.raises(KernelCheckError) as raised, warnings.catch_warnings(record=True):
        k.racy_sum(torch.randn(100))
    first = raised.value.findings[0]
    assert (first.kind, first.kernel, first.thread) == ("race", "racy_sum", (1, 0, 0))
    assert (first.file, first.line) == (header, write)
    assert (first.other_file, first.other_line, first.other_thread) == (header, read, (0, 0, 0))
    assert "shared-memory race on 'tile[1]'" in str(raised.value) and f"{read:5d} | " in str(raised.value)


def test_an_uninitialised_read_of_a_headers_file_scope_shared_array_is_named_at_the_reading_line(header_shared):
    folder, k = header_shared
    with pytest.warns(KernelCheckWarning) as caught:
        k.carry_read(torch.zeros(1))
    n = 1 + SUMS_CU.splitlines().index(next(ln for ln in SUMS_CU.splitlines() if "(carry read)" in ln))
    text = str(caught[0].message)
    assert f"reads 'carry[5]' at {folder / 'header_shared.cu'}:{n} before any thread of block (0,0,0) wrote it" in text


def test_a_divergent_barrier_in_a_headers_kernel_is_named_at_the_headers_line(header_shared):
    """The runtime names a barrier by its line alone: the file is the one that defines the kernel (kp.check)."""
    folder, k = header_shared
    with pytest.raises(KernelCheckError) as raised:
        k.split_barrier(torch.zeros(1))
    n = 1 + SUMS_HEADER.splitlines().index(next(ln for ln in SUMS_HEADER.splitlines() if "(split)" in ln))
    first = raised.value.findings[0]
    assert (first.kind, first.kernel) == ("barrier", "split_barrier")
    assert (first.file, first.line) == (str(folder / "sums.cuh"), n)
    assert f"{n:5d} |   if (threadIdx.x < 32) __syncthreads();" in str(raised.value), str(raised.value)
