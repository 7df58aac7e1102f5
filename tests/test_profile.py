"""The GPU model's counters (kernels/common/cuda_cpu_profile.h, kp.gpumodel.profile) on access patterns whose counts
follow from Nsight Compute's rules by hand (tests/cuda_cpu/patterns.cu), every op of kernels/ profiled on irregular
sizes, the source view, sampling, and the errors. The CPU stand-in counts: no GPU is needed, and none is used."""

import re
import warnings

import pytest
import torch
from op_samples import SAMPLES

import helpers
import kp.files
import kp.gpumodel.sass
import kp.toolchain
from kp.gpumodel.profile import ProfileError, profile

PATTERNS = kp.files.ROOT / "tests" / "cuda_cpu" / "patterns.cu"
LINES = PATTERNS.read_text().splitlines()
NAMES = "strided strided64 vector4 even_lanes shared transpose histogram swap_dynamic shared_gather".split()


@pytest.fixture(scope="module")
def k():
    return helpers.load_kernel(PATTERNS, target="cpu", check=True, quiet=True)


def line_of(text):
    return next(i for i, line in enumerate(LINES, 1) if text in line)


def run(k, which, param=0, n=1024, x=None, **options):
    x = torch.arange(n * max(param, 1), dtype=torch.float32) if x is None else x
    return profile(k.run, NAMES.index(which), x, torch.zeros(n), param, **options)


def one(p, space, kind):
    (found,) = [ln for ln in p.lines if ln.space == space and ln.kind == kind]
    assert found.file == "tests/cuda_cpu/patterns.cu", found
    return found


@pytest.mark.parametrize("stride, sectors", [(1, 4), (2, 8), (8, 32), (0, 1)])
def test_a_float_per_lane_touches_the_sectors_its_stride_spreads_it_over(k, stride, sectors):
    p = run(k, "strided", stride)
    load = one(p, "global", "load")
    assert (load.line, load.requests, load.active_lanes) == (line_of("x[(int64_t)i * k]"), 32, 32)
    assert load.sectors == 32 * sectors and load.bytes == 4096
    assert load.ideal == 32 * (4 if stride else 1)  # the bytes asked for, each once, contiguous: a broadcast is 4 bytes
    store = one(p, "global", "store")
    assert (store.sectors, store.ideal) == (32 * 4, 32 * 4)  # out[i]: consecutive whatever the stride
    assert [(la.kernel, la.grid, la.block, la.blocks, la.traced) for la in p.launches] == [
        ("strided", (32, 1, 1), (32, 1, 1), 32, 32)
    ]


@pytest.mark.parametrize("which, sectors", [("strided64", 8), ("vector4", 16)])
def test_wider_accesses_per_lane_touch_more_sectors_per_request(k, which, sectors):
    load = one(run(k, which), "global", "load")
    assert load.per_request == sectors and load.excess == 1 and load.active_lanes == 32


def test_inactive_lanes_show_as_divergence(k):
    p = run(k, "even_lanes")
    load = one(p, "global", "load")
    assert (load.requests, load.active_lanes, load.per_request, load.ideal / load.requests) == (32, 16, 4, 2)
    at = line_of("threadIdx.x % 2 == 0")
    assert f"divergence at tests/cuda_cpu/patterns.cu:{at}: 16 of 32 lanes active per global load on average" in (
        p.advice()
    )


def test_a_branch_whose_lanes_go_both_ways_is_divergent_in_every_warp(k):
    (branch,) = run(k, "even_lanes").branches
    assert (branch.line, branch.executions, branch.active_lanes, branch.divergent) == (
        line_of("threadIdx.x % 2 == 0"),
        32,
        32,
        32,
    )
    assert (
        f"a divergent branch at tests/cuda_cpu/patterns.cu:{branch.line}: in 32 of its 32 warp executions some lanes "
        "took it and some did not, and the warp ran both paths one after the other"
    ) in run(k, "even_lanes").advice()


@pytest.mark.parametrize("n, divergent", [(1024, 0), (1000, 1)])
def test_the_guard_diverges_only_in_a_ragged_last_warp_and_is_no_advice(k, n, divergent):
    p = run(k, "strided", 1, n=n)
    (branch,) = p.branches
    assert (branch.line, branch.executions, branch.active_lanes, branch.divergent) == (
        line_of("if (i < n) out[i] = x[(int64_t)i * k];"),
        -(-n // 32),
        32,
        divergent,
    )
    assert not [a for a in p.advice() if "divergent branch" in a]  # 1 warp of 32: not worth a word
    assert "branch" in [row["access"] for row in p.table().rows]


RAGGED_CU = """// ragged_loops: thread t runs trips[t] turns of a loop whose `if` takes pattern[t][i] (test_profile.py)
#include "kp.cuh"
__global__ void ragged_loops(const float* trips, const float* pattern, float* out, int turns) {
  int t = threadIdx.x;
  float acc = 0;
  int n = (int)trips[t];
  for (int i = 0; i < n; ++i) {  // (loop)
    if (pattern[t * turns + i] > 0.5f) acc += 1;  // (if)
  }
  out[t] = acc;
}
void ragged_loops_fwd(const float* trips, const float* pattern, float* out, int threads, int turns) {
  ragged_loops<<<1, threads>>>(trips, pattern, out, turns);
  KP_CHECK_LAUNCH();
}
"""
RAGGED_BINDING = """#include "binding.h"
void ragged_loops_fwd(const float* trips, const float* pattern, float* out, int threads, int turns);
kp::Tensor ragged_loops(kp::Tensor trips, kp::Tensor pattern) {
  kp::Tensor out = torch::stable::new_zeros(trips, {trips.numel()});
  ragged_loops_fwd(kp::data<const float>(trips, "trips"), kp::data<const float>(pattern, "pattern"),
                   kp::data<float>(out, "out"), trips.numel(), pattern.numel() / trips.numel());
  return out;
}
KP_OPS(m) { m.def("ragged_loops(Tensor trips, Tensor pattern) -> Tensor", TORCH_BOX(&ragged_loops)); }
"""


def branch_totals(evaluated, took):
    """A branch's (executions, lanes, divergent, split, none) and its per-lane (evaluated, taken), warp by warp, from
    each thread's evaluations (`evaluated[t]`) and the ones that held (`took[t][n]`: its n-th held), by
    cuda_cpu_profile.h's rules: the n-th evaluation of the lanes that evaluated it n times or more is one execution."""
    executions = lanes = divergent = split = none = 0
    per_lane = {}
    for first in range(0, len(evaluated), 32):
        warp = range(first, min(first + 32, len(evaluated)))
        for n in range(max(evaluated[t] for t in warp)):
            active = {t % 32 for t in warp if evaluated[t] > n}
            taken = {t % 32 for t in warp if evaluated[t] > n and took[t][n]}
            other = active - taken
            executions, lanes, none = executions + 1, lanes + len(active), none + (not taken)
            if taken and other:
                divergent += 1
                split += max(taken) < min(other) or max(other) < min(taken)
        lanes_of = [first + lane for lane in range(32)]
        per_lane[first // 32] = (
            tuple(evaluated[t] if t < len(evaluated) else 0 for t in lanes_of),
            tuple(sum(took[t][: evaluated[t]]) if t < len(evaluated) else 0 for t in lanes_of),
        )
    return (executions, lanes, divergent, split, none), per_lane


def test_a_branchs_executions_are_its_lanes_nth_evaluations_however_many_each_lane_made(tmp_path):
    """Each thread's evaluations are recorded as bits, 64 to a word, and a block's end puts the lanes' n-th ones
    together: lanes that ran the loop 0 to 200 times (words full, partial and empty), a ragged last warp (80
    threads), random `if`s: the totals and the picture of one block's lanes are the rule's, worked out here."""
    (tmp_path / "ragged.cu").write_text(RAGGED_CU)
    (tmp_path / "ragged_binding.cpp").write_text(RAGGED_BINDING)
    (tmp_path / "ragged_ops.py").write_text("def register(ops):\n    pass  # a test op: no fake, no formula\n")
    ragged = helpers.load_kernel(tmp_path / "ragged.cu", target="cpu", check=True, quiet=True)
    gen = torch.Generator().manual_seed(31)
    threads, turns = 80, 200
    trips = torch.randint(0, turns + 1, (threads,), generator=gen)
    trips[:3] = torch.tensor([0, 63, 64])  # no word; a word all but full; a full one and nothing after it
    trips[3:6] = torch.tensor([65, 128, turns])
    pattern = (torch.rand(threads, turns, generator=gen) > 0.3).float()
    p = profile(ragged.ragged_loops, trips.float(), pattern)
    lines = RAGGED_CU.splitlines()
    at = {what: next(i for i, ln in enumerate(lines, 1) if f"// ({what})" in ln) for what in ("loop", "if")}
    t = trips.tolist()
    expected = {
        "loop": branch_totals([n + 1 for n in t], [[i < n for i in range(n + 1)] for n in t]),
        "if": branch_totals(t, [[bool(v) for v in row] for row in pattern.tolist()]),
    }
    for what, (totals, per_lane) in expected.items():
        (branch,) = [b for b in p.branches if b.line == at[what]]
        assert (branch.executions, branch.lanes, branch.divergent, branch.split, branch.none) == totals, what
        pictured = {b.warp: (b.evaluated, b.taken) for b in p.branch_lanes if b.line == at[what]}
        assert pictured == per_lane, what


def test_a_ragged_last_warp_has_fewer_active_lanes(k):
    load = one(run(k, "strided", 1, n=1000), "global", "load")
    assert (load.requests, load.lanes, load.sectors) == (32, 1000, 31 * 4 + 1)  # the last warp: 8 floats, 1 sector


@pytest.mark.parametrize("stride, wavefronts", [(1, 1), (2, 2), (32, 32), (33, 1), (-1, 1)])
def test_shared_memory_wavefronts_follow_the_banks(k, stride, wavefronts):
    p = run(k, "shared", stride, n=1024, x=torch.randn(1024))
    load = one(p, "shared", "load")
    assert load.line == line_of("out[i] = s[at];")
    assert (load.requests, load.per_request, load.ideal, load.worst) == (32, wavefronts, 32, wavefronts)


def gathered(k, width, elements):
    """patterns.cu's shared_gather: lane t of one warp reads elements[t] of a __shared__ array of `width`-byte
    elements (one LDS, LDS.64 or LDS.128 per lane); its one load request."""
    p = run(k, "shared_gather", width, n=32, x=torch.tensor(elements, dtype=torch.float32))
    (load,) = [ln for ln in p.lines if (ln.space, ln.kind) == ("shared", "load")]
    assert (load.line, load.requests, load.active_lanes) == (line_of("total(s[(int)x[t]])"), 1, 32)
    return load


def test_a_bank_with_more_than_8_words_counts_each_word_once_however_many_lanes_read_it(k):
    """Lane t reads float (t % 16) * 32: sixteen words of bank 0, each read by lanes t and t + 16, are 16 wavefronts
    (a 16-way conflict). The stand-in once kept 8 words per bank to find repeats, and counted lanes 24-31's words
    again: 24."""
    load = gathered(k, 4, [(t % 16) * 32 for t in range(32)])
    assert (load.units, load.worst, load.ideal) == (16, 16, 1)


# LDS.128 and LDS.64 by hand (cuda_cpu_profile.h's rules): four phases of 8 lanes (two of 16), each as many
# wavefronts as its busiest bank has words; a load whose lanes n and n^1 (or n and n^2) read one address packs its
# return registers, in phases of twice the lanes (NVIDIA's answer in "Unexpected shared memory bank conflict",
# NVIDIA Developer Forums, 2019: "requests/instruction should reduce from 4 to 2").
LANES = range(32)
VECTOR_LOADS = {
    "float4 per lane, consecutive": (16, [t for t in LANES], 4, 4),
    # the forum's question: byte offset tid % 4 * 16, which Nsight Compute counted at 4 per LDS.128
    "lanes t and t + 4 on one float4 (the forum's tid % 4)": (16, [t % 4 for t in LANES], 4, 4),
    "lanes 2m and 2m + 1 on one float4 (Tn == Tn^1)": (16, [t // 2 for t in LANES], 2, 2),
    "lanes t and t ^ 2 on one float4 (Tn == Tn^2)": (16, [t // 4 * 2 + t % 2 for t in LANES], 2, 2),
    "every lane on one float4": (16, [0] * 32, 2, 2),
    # siboehm's kernel 6, As[dotIdx * BM + threadRow * TM + i]: threadRow = t / 16, TM = 8 floats (2 float4s)
    "lanes 0-15 on one float4, 16-31 on another (kernel 6 reading As)": (16, [t // 16 * 2 for t in LANES], 2, 2),
    # siboehm's kernel 6, Bs[dotIdx * BN + threadCol * TN + i]: threadCol = t % 16, TN = 8 floats; lanes 16-31 read
    # lanes 0-15's float4s, which pairs of n and n^1 or n^2 do not: four phases, in each lanes t and t + 4 on one
    # bank (float4s 0 and 8: words 0 and 32), 2 wavefronts each
    "lanes t and t + 16 on one float4 (kernel 6 reading Bs)": (16, [t % 16 * 2 for t in LANES], 8, 4),
    "float2 per lane, consecutive": (8, [t for t in LANES], 2, 2),
    "lanes 2m and 2m + 1 on one float2": (8, [t // 2 for t in LANES], 1, 1),
    "every lane on one float2": (8, [0] * 32, 1, 1),
    "every lane on one float": (4, [0] * 32, 1, 1),
}


@pytest.mark.parametrize("case", VECTOR_LOADS)
def test_wide_shared_loads_are_served_in_phases_and_lanes_that_pair_up_pack_them(k, case):
    width, elements, wavefronts, ideal = VECTOR_LOADS[case]
    load = gathered(k, width, elements)
    assert (load.units, load.ideal) == (wavefronts, ideal)


@pytest.mark.parametrize("padded, wavefronts", [(0, 32), (1, 1)])
def test_a_transpose_through_an_unpadded_tile_is_a_32_way_bank_conflict(k, padded, wavefronts):
    p = run(k, "transpose", padded, x=torch.randn(1024))
    read = one(p, "shared", "load")
    assert (read.line, read.requests, read.per_request) == (line_of("tile[c][r]"), 32, wavefronts)
    conflict = [a for a in p.advice() if "bank conflict" in a]
    if padded:
        assert not conflict
    else:
        assert conflict == [
            f"a 32-way bank conflict: 32 lanes read bank 0 at tests/cuda_cpu/patterns.cu:{read.line} "
            "(32 wavefronts per request where 1 would do)"
        ]


def test_banks_count_from_the_start_of_each_shared_array_in_every_run(k):
    """The stand-in starts every __shared__ variable, and the dynamic shared memory, on 128 bytes: bank 0 is an
    array's first word, as for the first variable of a block's shared window on a GPU. The conflicts do not depend
    on it (a shift turns all banks together); the bank that advice and the source view name did, from run to run.
    Checked on six arrays of five kernels, four of them odd-sized (66 floats, 2 ints, a float and an int side by
    side). Without the alignment an array starts where the heap put its thread's thread-local block: one array alone
    starts on 128 bytes by luck now and then (1 time in 8 at the 16-byte steps seen on the 2-core test machine,
    2026-11-27; 1 in 2 where the heap aligns to 64), but `top` and `positive`, packed 4 bytes apart, never both."""
    column = one(run(k, "shared", 32, n=1024, x=torch.randn(32 * 1024)), "shared", "load")
    assert (column.worst, column.worst_bank, column.worst_lanes) == (32, 0, 32)  # s[32 t]: every lane on bank 0
    static = run(k, "transpose", 0, x=torch.randn(1024))
    check = kp.files.ROOT / "tests" / "cuda_cpu" / "check.cu"  # its dynamic_reverse: extern __shared__, no race
    cases = re.findall(r'^    "(\w+)",$', check.read_text(), re.M)
    checked = helpers.load_kernel(check, check=True, quiet=True)
    names = ["dynamic_reverse", "stencil_with_halo", "shared_histogram", "shared_atomic_max"]
    runs = [profile(checked.run, cases.index(name), torch.randn(64), torch.zeros(64)) for name in names]
    shared = [a for p in (static, *runs) for a in p.arrays if a.space == "shared"]
    assert sorted(a.name for a in shared) == ["bins", "buf", "positive", "tile", "tile", "top"], shared
    assert all(a.begin % 128 == 0 for a in shared), [(a.name, a.begin % 128) for a in shared]


@pytest.mark.parametrize("padded, width", [(0, 32), (1, 33)])
def test_the_arrays_touched_are_named_with_their_shape_and_every_touch_kept(k, padded, width):
    """What the pictures draw from: a __shared__ array's dims, the tensors by name, one touch per access (the touch
    record is made only while touches are kept, so its name and dims must still come out whole)."""
    p = run(k, "transpose", padded, x=torch.randn(1024))
    named = {(a.space, a.dims) for a in p.arrays}
    assert ("shared", (32, width)) in named and {a.space for a in p.arrays} == {"global", "shared"}
    assert [a.elements for a in p.arrays if a.space == "shared"] == [32 * width]
    assert len(p.touches) == 4 * 1024  # each thread: a global load, a shared store, a shared load, a global store


def test_the_source_view_shows_the_lines_with_their_figures_labelled_as_a_model(k):
    page = run(k, "transpose", 0, x=torch.randn(1024))._repr_html_()
    assert "a model, not a measurement" in page and "32-way bank conflict" in page
    assert "out[r * 32 + c] = tile[c][r];" in page and "<td>32 (1)</td>" in page
    assert "class='bad'" in page


def test_sampling_runs_blocks_spread_over_the_grid_and_scales_the_counts(k):
    """A sample is what the caller asked for (max_blocks): no warning, and the Profile says what it left out."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = run(k, "strided", 2, max_blocks=4)
    load = one(p, "global", "load")
    assert (load.requests, load.sectors) == (32, 32 * 8)  # 4 warps counted, x 8
    assert p.launches[0].traced == 4
    assert p.sampled.startswith("sampled: strided 4 of 32 blocks ran and were counted") and p.sampled in repr(p)
    assert run(k, "strided", 2).sampled == ""


@pytest.mark.parametrize("n", [1000, 5])
def test_a_ragged_last_warp_is_no_divergence_and_no_advice_prints_a_sentence(k, n):
    """`if (i < n)` with n not a multiple of 32 leaves out the last lanes of the last warp: no branch left lanes out
    between active ones, so advice() says nothing, and printed says that in a sentence, not `[]`."""
    p = run(k, "strided", 1, n=n)
    assert one(p, "global", "load").active_lanes < 31.5 and p.advice() == []
    assert str(p.advice()).startswith("no advice: the GPU model sees no uncoalesced global access")
    even = run(k, "even_lanes").advice()
    assert str(even).startswith("- ") and any(a.startswith("divergence at ") for a in even)


def test_a_kernel_built_without_check_mode_is_refused_with_how_to_load_it():
    plain = helpers.load_kernel(PATTERNS, target="cpu", quiet=True)
    with pytest.raises(ProfileError, match=r"load_kernel\(name, check=True\)"):
        run(plain, "strided", 1)


def test_a_callable_that_launches_nothing_is_an_error():
    with pytest.raises(ProfileError, match="launched no kernel"):
        profile(lambda: torch.ones(3) + 1)


def test_the_modelled_time_counts_traced_sectors(k):
    """8 floats apart, a load touches 8x the sectors: the model charges them, not the ideal bytes."""
    n = 1 << 16
    x = torch.randn(8 * n)
    coalesced = profile(k.run, NAMES.index("strided"), x, torch.zeros(n), 1).estimate_detail("H100").launches[0]
    strided = profile(k.run, NAMES.index("strided"), x, torch.zeros(n), 8).estimate_detail("H100").launches[0]
    assert coalesced.dram_bytes == 32 * (n // 32) * (4 + 4) and strided.dram_bytes == 32 * (n // 32) * (32 + 4)
    assert strided.bandwidth_s / coalesced.bandwidth_s == pytest.approx(36 / 8)


# Ops whose binding calls torch, not a kernel of ours (mul_add's sum_to sums with torch.sum; issue 26 gives it one).
NO_KERNEL = set()  # every op launches a kernel (mul_add.sum_to too, since notebook 08: common/colsum.cuh)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_op_of_the_collection_is_profiled_on_irregular_sizes(name):
    kernel, op = name.split(".")
    ext = helpers.load_kernel(kernel, target="cpu", check=True, quiet=True)
    if name in NO_KERNEL:
        with pytest.raises(ProfileError, match="launched no kernel"):
            profile(lambda: [getattr(ext, op)(*args) for args in SAMPLES[name](torch.float32)])
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no sampling, nothing uncounted
        p = profile(lambda: [getattr(ext, op)(*args) for args in SAMPLES[name](torch.float32)])
    assert p.launches and all(la.traced == la.blocks for la in p.launches)
    files = {f"kernels/{kernel}.cu", "kernels/common/colsum.cuh"}  # mul_add's sum_to sums through the header's code
    assert all(ln.file in files and ln.requests > 0 for ln in p.lines), p.lines
    loads = [ln for ln in p.lines if ln.space == "global" and ln.kind == "load"]
    stores = [ln for ln in p.lines if ln.space == "global" and ln.kind in ("store", "atomic")]
    assert loads and stores
    assert all(ln.units >= ln.ideal > 0 and 0 < ln.active_lanes <= 32 for ln in p.lines)
    assert p.estimate("H100") > 0


def test_modelled_is_the_profiles_estimate_as_a_function_of_the_arguments(k):
    from kp.gpumodel.profile import modelled

    x, out = torch.arange(1024.0), torch.zeros(1024)
    seconds = modelled(k.run, "A100")(NAMES.index("strided"), x, out, 1)
    assert seconds == profile(k.run, NAMES.index("strided"), x, out, 1).estimate("A100") and seconds > 0
    assert modelled(k.run, "A100").gpu == "A100"


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None, reason="no CUDA toolkit here")
@pytest.mark.parametrize("dtype, ctype", [(torch.float32, "float"), (torch.float64, "double")], ids=str)
def test_the_model_takes_ptxas_figures_of_the_instantiation_the_call_ran(dtype, ctype):
    """A launch is named as the source wrote it (colsum_v3<T>); ptxas lists colsum_v3<double> before
    colsum_v3<float>, and a double's shared tile is twice a float's: a float32 call is modelled with the float one."""
    from kp.gpumodel.ptxas import kernel_resources

    rows = {r["kernel"]: r for r in kernel_resources(kp.files.ROOT / "kernels" / "colsum.cu")}
    assert rows["colsum_v3<float>"]["shared memory (bytes)"] != rows["colsum_v3<double>"]["shared memory (bytes)"]
    ext = helpers.load_kernel("colsum", target="cpu", check=True, quiet=True)
    (work,) = profile(ext.colsum, torch.randn(300, 40, dtype=dtype), 3).work()
    row = rows[f"colsum_v3<{ctype}>"]
    assert (work.registers_per_thread, work.shared_bytes_per_block) == (row["registers"], row["shared memory (bytes)"])


def test_warps_that_exit_at_once_do_not_thin_out_the_round_trips_of_those_that_load():
    """colsum's version 1, one thread per column, on 3000 x 32: one warp of its 256-thread block has columns and walks
    the 3000 rows, one load after another; the other seven exit at once. The model charges the 3000 round trips of
    that warp (the mean over all eight warps would be 375)."""
    ext = helpers.load_kernel("colsum", target="cpu", check=True, quiet=True)
    (launch,) = profile(ext.colsum, torch.randn(3000, 32), 1).launches
    assert (launch.blocks, launch.threads_per_block, launch.load_requests) == (1, 256, 3000)
    assert launch.round_trips_per_warp == 3000


SGEMM = kp.files.ROOT / "bench" / "kernels" / "sgemm" / "sgemm.cu"


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None or kp.gpumodel.sass.nvdisasm() is None,
                    reason="no nvcc or no nvdisasm here: the lines would be the source's, nothing re-read")  # fmt: skip
def test_the_views_show_the_re_reads_the_estimate_charges_and_the_lines_sum_to_its_wavefronts():
    """siboehm's kernel 5 at 128³ (one block, 8 warps, 16 tiles) on the RTX A6000 (sm_86): nvcc loads As's rows as 16
    LDS.128 per warp and tile (lanes 0-15 on one row's float4, 16-31 on the next: lanes n and n^1 on one address, a
    packed load of two phases of 16 lanes, 2 wavefronts each) and re-reads each row's first float with 8 scalar LDS
    (the two rows 256 bytes apart, one bank: 2 each). By hand (tests/test_published_gemm.py): 8 STS + 16 LDS + 32 As
    LDS.128 + 128 Bs LDS.128 = 184 wavefronts per warp and tile, 168 without the LDS. The As line's figures in the
    table and the advice include the LDS's 8 x 8 x 16 = 1024 requests, among its 3072, and say so; a re-read's lanes
    are whole (32 per request) and its worst request the scalar LDS's 2-way conflict. Per request the line takes
    (16 x 2 + 8 x 2) / 24 = 2 wavefronts where (16 x 2 + 8 x 1) / 24 = 1.67 would do (a packed LDS.128's ideal is one
    wavefront per 256 bytes, 2). The shared lines sum to the wavefronts the estimate charges, 184 x 8 x 16 (the
    compiled lines alone: 168 x 8 x 16). `.lines` are the H100's as charged."""
    checked = helpers.load_kernel(SGEMM, target="cpu", check=True, quiet=True)
    torch.manual_seed(0)
    p = profile(checked.sgemm, torch.randn(128, 128), torch.randn(128, 128), torch.randn(128, 128), 0.5, 3.0, 5)
    (kernel,) = {la.kernel for la in p.launches}
    as_line = next(n for n, ln in enumerate(SGEMM.read_text().splitlines(), 1) if "regM[i] = As[" in ln)
    found = [i.opcode for i in p.kernel_sass(kernel, "RTX A6000") if i.line == as_line and i.space == "shared"]
    if sorted(found) != ["LDS"] * 8 + ["LDS.128"] * 16:
        pytest.skip(f"this nvcc compiles kernel 5's As loads otherwise than the hand count assumes: {found}")
    gpu = "RTX A6000"
    (work,) = p.work(2 * 128**3, gpu)
    shared = [ln for ln in p.charged_lines(gpu) if ln.space == "shared"]
    assert sum(ln.units for ln in shared) == work.shared_wavefronts == 184 * 8 * 16
    assert sum(ln.units for ln in p.compiled(gpu)[0] if ln.space == "shared") == 168 * 8 * 16  # what the views showed
    table = p.table(gpu)
    (row,) = [r for r in table.rows if r["line"] == f"sgemm.cu:{as_line}" and r["access"] == "shared load"]
    assert (row["requests"], row["lanes"]) == ("3072 incl. 1024 re-read", "32") and "re-read: requests" in table.title
    said = [a for a in p.advice(gpu) if f"sgemm.cu:{as_line} " in a]
    assert said == [
        f"a 2-way bank conflict: 32 lanes read bank 0 at bench/kernels/sgemm/sgemm.cu:{as_line} (2 wavefronts per "
        "request where 1.67 would do, 1024 of its 3072 requests nvcc's narrower re-reads)"
    ]
    assert p.lines == p.charged_lines("H100")


def test_a_lines_worst_request_among_its_re_reads_is_the_most_ways_at_the_lowest_bank():
    """_with_rereads names a line's worst request over its compiled width and the widths its re-reads ran at as
    cuda_cpu_profile.h names a request's: the most wavefronts, and of equally many the lowest bank (a 2-way conflict at
    bank 5 wide and at bank 3 narrow: bank 3); more ways win at any bank."""
    import dataclasses

    from kp.gpumodel.counts import Line
    from kp.gpumodel.profile import _with_rereads

    widths = ((4, (8, 16, 8, 2, 3, 16)), (16, (16, 32, 32, 2, 5, 16)))
    wide = Line("k", "k.cu", 7, "shared", "load", 16, 32, 32, 8192, 512, 2, 5, 16, widths=widths)
    got = _with_rereads(wide, dataclasses.replace(wide, requests=24, units=48), {4, 16})
    assert (got.worst, got.worst_bank, got.worst_lanes, got.rereads, got.lanes) == (2, 3, 16, 8, 768)
    worse = dataclasses.replace(wide, widths=((4, (8, 24, 8, 3, 9, 8)), widths[1]))
    got = _with_rereads(worse, dataclasses.replace(worse, requests=24, units=56), {4, 16})
    assert (got.worst, got.worst_bank, got.worst_lanes) == (3, 9, 8)
