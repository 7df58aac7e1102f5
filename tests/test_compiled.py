"""kp.gpumodel.compiled: a Profile's counts as nvcc compiled its kernels for the GPU asked about (each GPU's arch, its
SASS and its ptxas row), a kernel outside the project, and the fallback to the source's counts, said, without SASS. The
kernels and their hand-counted answers are tests/test_sass.py's (tests/cuda_cpu/compiled.cu). Compiles with nvcc; needs
no GPU."""

import sys

import pytest
import torch
from test_sass import COMPILED, counted, line_of, needs_sass, run

import helpers
import kp.files
import kp.gpumodel.compiled
import kp.gpumodel.profile
import kp.gpumodel.sass
from kp.gpumodel.cfg import blocks
from kp.gpumodel.profile import profile
from kp.puzzle import puzzle


@pytest.fixture(scope="module")
def k():
    return helpers.load_kernel(COMPILED, target="cpu", check=True, quiet=True)


@needs_sass
def test_another_gpu_is_counted_with_its_own_sass(k):
    p = run(k, "shared4")
    lines, _, basis = p.compiled("A100")
    assert basis == "SASS sm_80" and p.basis == "SASS sm_90"
    assert [ln.sass for ln in lines if ln.space == "shared" and ln.kind == "load"] == [("LDS.128",)]


@needs_sass
def test_the_model_of_a_gpu_takes_its_archs_sass_and_ptxas_row(k, monkeypatch):
    p = run(k, "shared4")
    asked = []
    monkeypatch.setattr(
        kp.gpumodel.profile, "launch_resources", lambda file, kernel, ctype, arch: asked.append(arch) or (32, 0)
    )
    p.estimate_detail("T4")
    p.estimate_detail("H100")
    assert asked == ["sm_75", "sm_90"]
    assert p.compiled("T4")[2] == "SASS sm_75"


@needs_sass
def test_a_kernel_outside_the_project_is_counted_with_its_sass(kernel_copy):
    ext = helpers.load_kernel(kernel_copy("add2"), target="cpu", check=True, quiet=True)
    p = profile(ext.add2, torch.randn(100), torch.randn(100))
    assert p.basis == "SASS sm_90" and all(ln.file.startswith("/") and ln.sass for ln in p.lines)


def test_without_sass_the_source_is_counted_and_the_profile_says_so(k, monkeypatch):
    def unavailable(*args, **kwargs):
        raise kp.gpumodel.sass.SassUnavailable("no SASS: nvdisasm was not found")

    monkeypatch.setattr(kp.gpumodel.compiled, "sass_of", unavailable)
    p = run(k, "shared4")
    assert p.lines == p.source_lines and p.instructions == []
    assert p.basis == "source (shared4: no SASS: nvdisasm was not found)"
    assert "counted as the source wrote it" in repr(p)
    assert "nvdisasm was not found" in p.sass(line_of("float a = s[4 * t];")).title


# An inlined helper's line 5 (an unrolled `if (d >= ndim) continue;`: two copies) and line 6 (a 64-bit `%`: nvcc's
# 32-bit path inline, a CALL to its division routine on the other side), inlined at line 10 (a path that ran) and, line
# 5 once more, at line 20 (a path that never ran), then the kernel's EXIT and the routine: kernels/mul_add.cu's
# broadcast_offsets as nvcc compiles it for sm_90, in small.
INLINED = """\
\t.section\t.text._Z1kPf,"ax",@progbits
\t//## File "k.cu", line 5 inlined at "k.cu", line 10
\t//## File "k.cu", line 10
        /*0000*/                   ISETP.GE.AND P0, PT, R0, 0x7, PT ;
        /*0010*/               @!P0 BRA `(.L_x_1) ;
\t//## File "k.cu", line 6 inlined at "k.cu", line 10
\t//## File "k.cu", line 10
        /*0020*/                   LOP3.LUT R8, R3, R5, RZ, 0xfc, !PT ;
        /*0030*/                   ISETP.NE.U32.AND P0, PT, R8, RZ, PT ;
        /*0040*/               @!P0 BRA `(.L_x_2) ;
        /*0050*/                   MOV R12, R0 ;
        /*0060*/                   CALL.REL.NOINC `($__internal_5_$__cuda_sm20_div_s64) ;
        /*0070*/                   BRA `(.L_x_3) ;
.L_x_2:
        /*0080*/                   I2F.U32.RP R10, R5 ;
        /*0090*/                   MUFU.RCP R10, R10 ;
        /*00a0*/                   IMAD.HI.U32 R8, R10, R0, RZ ;
.L_x_3:
.L_x_1:
\t//## File "k.cu", line 5 inlined at "k.cu", line 10
\t//## File "k.cu", line 10
        /*00b0*/                   LDC R4, c[0x0][0x230] ;
        /*00c0*/                   ISETP.GE.AND P0, PT, R4, 0x6, PT ;
        /*00d0*/               @!P0 BRA `(.L_x_4) ;
.L_x_4:
\t//## File "k.cu", line 5 inlined at "k.cu", line 20
\t//## File "k.cu", line 20
        /*00e0*/                   ISETP.GE.AND P0, PT, R0, 0x7, PT ;
        /*00f0*/                   IMAD R9, R1, R2, RZ ;
        /*0100*/                   IMAD R9, R9, R2, RZ ;
        /*0110*/                   LOP3.LUT R8, R3, R5, RZ, 0xfc, !PT ;
        /*0120*/                   IADD3 R9, R9, 0x1, RZ ;
        /*0130*/                   IMAD R9, R9, R2, RZ ;
        /*0140*/               @!P0 BRA `(.L_x_5) ;
.L_x_5:
\t//## File "k.cu", line 30
        /*0150*/                   EXIT ;
$__internal_5_$__cuda_sm20_div_s64:
        /*0160*/                   IADD3 R16, P1, RZ, -R15, RZ ;
        /*0170*/                   RET.REL.NODEC R14 `(_Z1kPf) ;
"""


def test_where_the_blocks_are_open_the_copies_of_a_line_on_the_paths_that_ran_and_the_32_bit_division_are_charged():
    """Line 5 ran 8 times (two copies per warp), all at site 10 (site 20's line ran none): its 5 instructions
    there in 2 fragments, 2.5 per run, 20; site 20's 7 are not charged. Line 6 ran 4 times: its 9 less the division's
    slow side (MOV, CALL, BRA), 6 per run, 24. Line 30 (4 runs): the EXIT, 4; the routine is not charged. 48 in all,
    where the rule before charged the mean fragment of every copy and the slow side: 12 / 3 x 8 + 9 x 4 + 3 x 4, 80."""
    listing = kp.gpumodel.sass.parse_sass(INLINED)
    assert [(i.line, i.site) for i in listing if i.offset in (0x00, 0xE0, 0x150)] == [(5, 10), (5, 20), (30, 30)]
    assert {i.routine for i in listing if i.offset >= 0x160} == {"$__internal_5_$__cuda_sm20_div_s64"}
    assert kp.gpumodel.compiled.slow_division(listing) == {0x50, 0x60, 0x70, 0x160, 0x170}

    runs, site_runs = {5: 8.0, 6: 4.0, 30: 4.0}, {10: 4.0, 20: 0.0, 30: 4.0}.get
    assert counted(listing, runs, site_runs).issue_instructions() == {"k": pytest.approx(5 / 2 * 8 + 6 * 4 + 1 * 4)}


@needs_sass
def test_mul_fwd_kernel_runs_the_warp_instructions_counted_by_hand_in_its_sm_90_sass():
    """mul (kernels/mul_add.cu, equal shapes: one merged dim, the packed path) per warp, by hand in its sm_90 SASS:
    the entry to `@P1 BRA P0` (`packed && i < n`: 45 instructions), the first `if (d >= bc.ndim) continue;` (d = 7:
    LDC, CS2R, CS2R, MOV, ISETP, IMAD.MOV, BRA: 7), the six after it (d = 6..1: LDC, ISETP, BRA: 18), none of their
    bodies (every d >= 1 continues), `if (bc.ndim > 0)` (3) and its body (10), the loads, product, store and EXIT
    (34): 117. Before the basic blocks the issue term charged 104 (the mean fragment of each line). The trace says
    which way the uniform branches went; which edge is their truth, nvcc's layout does."""
    sys.path.insert(0, str(kp.files.ROOT / "bench"))
    from ops import all_ops

    op = next(o for o in all_ops() if o.op == "mul")
    ext = helpers.load_kernel(op.kernel, target="cpu", check=True, quiet=True)
    torch.manual_seed(0)
    p = profile(op.custom(ext), *op.make_inputs(2**16), max_blocks=4)
    (launch,) = p.launches
    warps = launch.blocks * launch.threads_per_block // 32
    assert p.issue_instructions()["mul_fwd_kernel<T>"] / warps == 117
    assert sum(p.issued()["mul_fwd_kernel<T>"].values()) / warps == 117
    assert None not in {runs for runs, _ in p.block_runs("mul_fwd_kernel<T>").values()}


@needs_sass
def test_a_fully_unrolled_loops_line_runs_once_per_pass_of_its_block():
    """The matmul puzzle's solution at 40 x 20 x 35: 9 blocks of 8 warps, 2 tiles of m each: its line `for (int j = 0;
    j < 16; ++j) acc += ta[y][j] * tb[j][x];`, which nvcc unrolls into one block (4 LDS.128, 16 LDS, 16 FFMA), ran
    72 x 2 = 144 times (before: 720, its 2880 shared requests over its 4 widest instructions), each run all 36."""
    result = puzzle("matmul", solution=True, target="cpu", quiet=True)
    p = next(v for v in vars(result).values() if hasattr(v, "instructions"))
    source = (kp.files.ROOT / "puzzles" / "solutions" / "15_matmul.cu").read_text().splitlines()
    line = next(n for n, text in enumerate(source, 1) if "acc += ta[y][j] * tb[j][x]" in text)
    (ins,) = [i for i in p.instructions if i.line == line]
    assert (ins.executions, dict(ins.static), ins.fp32, ins.memory) == (144, {"fp32": 16, "memory": 20}, 2304, 2880)


TRIPS = kp.files.ROOT / "tests" / "cuda_cpu" / "trips.cu"
TRIPS_LINES = TRIPS.read_text().splitlines()


def trips_profile(which, trips):
    """tests/cuda_cpu/trips.cu's kernel `which` (0 unroll4, 1 triangle) on 4 warps (128 floats), x[0] = trips."""
    ext = helpers.load_kernel(TRIPS, target="cpu", check=True, quiet=True)
    x = torch.zeros(4)
    x[0] = trips
    return profile(ext.run, which, x, torch.zeros(128))


def block_table(p, kernel):
    """[(instructions, runs)] of `kernel`'s basic blocks, in address order."""
    at = p.block_runs(kernel)
    return [(len(b.instructions), at[b.instructions[0].offset][0]) for b in blocks(p.kernel_sass(kernel))]


@needs_sass
def test_a_loop_nvcc_unrolled_by_4_runs_its_body_and_remainder_as_its_trip_counts_say():
    """unroll4 at 10 trips, 4 warps. Its sm_90 SASS in basic blocks, per warp, by hand: the entry to the guard `@!P0
    BRA` (t >= 1: LDC, LDC.64, ULDC.64, LDG, ULDC, IMAD.MOV, S2R, S2R, IMAD, F2I, ISETP, BRA: 12, once); the remainder
    and the main loop's set-up (VIADD, LOP3 t & 3, IMAD.MOV, ISETP t - 1 >= 3, HFMA2, ISETP, BRA: 7, once); the main
    loop's preheader (IADD3, IMAD.MOV: 2, once: 10 >= 4); the main loop (IADD3, 4 FFMA, ISETP, BRA: 7, floor(10 / 4)
    = 2 times); `@!P0 BRA` past the remainder (1, once); the remainder loop (IADD3, FFMA, ISETP, BRA: 4, 10 mod 4 = 2
    times); `if (i < n)` (ULDC, ISETP, @P0 EXIT: 3, once) and the store (LDC.64, IMAD.WIDE, STG, EXIT: 4, once):
    12 + 7 + 2 + 14 + 1 + 8 + 3 + 4 = 51, every block known from the trace. Before the trip counts, the blocks of the
    loop's line were open and the issue term charged 160 per warp (the line's mean fragment per evaluation). The
    trace's copies of the loop's condition that g++ made (it honours `#pragma unroll 4` too) count as one branch: one
    entry of 10 trips per warp, not runs of 2 and 3 at each copy."""
    p = trips_profile(0, 10)
    (loop,) = [b for b in p.branches if b.line == 1 + next(n for n, t in enumerate(TRIPS_LINES) if "k < trips;" in t)]
    assert (loop.executions, loop.none, loop.trips) == (44, 4, ((10, 4),))
    assert block_table(p, "unroll4") == [(12, 4), (7, 4), (2, 4), (7, 8), (1, 4), (4, 8), (3, 4), (4, 4)]
    assert p.issue_instructions()["unroll4"] / 4 == sum(p.issued()["unroll4"].values()) / 4 == 51


@needs_sass
def test_an_inner_loop_entered_with_0_to_4_trips_runs_its_unrolled_bodies_and_remainder_as_they_say():
    """triangle at 5 rows: the inner loop is entered 5 times per warp, with 0, 1, 2, 3 and 4 trips. nvcc unrolls it
    into a loop of 16 FFMA, a block of 8, a loop of 4 and a remainder unrolled whole (a block of 1 FFMA for t mod 4
    >= 1, then one of 1 and a predicated 1 for t mod 4 >= 2). By hand, over 4 warps: 16 loop 0, 8 block 0, 4 loop 4
    (t = 4), the remainder's blocks 12 (t = 1, 2, 3) and 8 (t = 2, 3); the outer loop's latch 20 (5 rows), its guard's
    skip 0 and the `@P0 EXIT` of `if (i < n)` none (its block 4). Before, 865 instructions were charged per warp."""
    p = trips_profile(1, 5)
    inner = next(b for b in p.branches if b.line == 1 + next(n for n, t in enumerate(TRIPS_LINES) if "k < j;" in t))
    assert inner.trips == ((0, 4), (1, 4), (2, 4), (3, 4), (4, 4))
    table = block_table(p, "triangle")
    assert [runs for n, runs in table if n in (19, 11, 7)] == [0, 0, 4]  # the 16 loop, the 8 block, the 4 loop
    assert [runs for n, runs in table[-5:-2]] == [12, 8, 20]  # the remainder's two blocks, the outer loop's latch
    assert table[-2:] == [(3, 4), (4, 4)]  # `if (i < n)`'s EXIT, then the store
    assert sum(p.issued()["triangle"].values()) / 4 < 150


@needs_sass
def test_the_linear_ladders_blocks_are_whole_runs_and_v1s_unrolled_k_loop_is_known():
    """linear_ladder at 256 x 512 x 512 (4 blocks sampled): v1's K loop, which nvcc unrolls by 4 with a remainder
    loop, has every block known from its trip counts (512 per entry: 128 runs of the body of 4 per warp, none of the
    remainder); v6's and v7's tile loads test `packed && row < rows && k + N <= K` in parts (nvcc hoists `packed`
    out of the loop, or splits the condition over two branches), which no split of the line's evaluations fits:
    left out, their blocks are open or whole runs, where before they were solved at 0 (v6) or at fractions (v7).
    The trip counts of a header's condition inlined at two lines are not read (the stand-in counts them per
    condition of the source: one, at both lines)."""
    ext = helpers.load_kernel("linear_ladder", target="cpu", check=True, quiet=True)
    torch.manual_seed(0)
    x, w, b = torch.randn(256, 512), torch.randn(256, 512), torch.randn(256)
    for version in (1, 6, 7):
        p = profile(ext.linear_ladder, x, w, b, version, 0, max_blocks=4)
        (kernel,) = {la.kernel for la in p.launches}
        runs = [r for r, _ in p.block_runs(kernel).values()]
        assert all(r is None or r == round(r) for r in runs), version
        if version == 1:
            assert None not in runs
            assert max(runs) == 128 * 2048  # the body of 4: 512 / 4 per entry, one entry per warp
    # v7's K loop: 64 trips of 8 per entry, one entry per warp (16 blocks of 8); its two load_tile calls' condition
    # (linear_tiles.cuh's, inlined at both lines) has no trip counts: one condition at two lines cannot be split
    source = (kp.files.ROOT / "kernels" / "linear_ladder.cu").read_text().splitlines()
    at = {text: n for n, text in enumerate(source, 1)}
    trips = {b.line: b.trips for b in p.branches}
    k_loop = next(n for text, n in at.items() if "for (int64_t k0 = 0; k0 < K; k0 += BK)" in text and n > 190)
    assert trips[k_loop] == ((64, 128),)
    assert trips[k_loop + 1] == trips[k_loop + 2] == ()


@needs_sass
def test_involutions_index_arithmetic_runs_its_32_bit_division_every_time():
    """involution_fwd_kernel at N, C, H = W, K = 8, 16, 16, 3: its first lines split the thread's index with int64_t
    `/` and `%`, each a branch to nvcc's 64-bit division (a CALL, never run: the operands fit in 32 bits) or its
    32-bit one inline, which ends in a predicated `@!P2 LOP3` before the blocks rejoin. Every block of those lines is
    known: the 32-bit sides, and the blocks after them, once per warp (1024 warps), the 64-bit sides none; and so is
    the `@P0 EXIT` of `if (i >= ...) return;`, which no warp took. Before, the 32-bit sides were open."""
    sys.path.insert(0, str(kp.files.ROOT / "bench"))
    from ops import all_ops

    op = next(o for o in all_ops() if o.op == "involution")
    ext = helpers.load_kernel(op.kernel, target="cpu", check=True, quiet=True)
    torch.manual_seed(0)
    p = profile(op.custom(ext), *op.make_inputs((8, 16, 16, 3)), max_blocks=8)
    (kernel,) = {la.kernel for la in p.launches}
    found, at = p.kernel_sass(kernel), p.block_runs(kernel)
    source = (kp.files.ROOT / "kernels" / "involution.cu").read_text().splitlines()
    first = next(n for n, text in enumerate(source, 1) if "if (i >= s.N * s.C * s.H_out * s.W_out) return;" in text)
    index = [i for i in found if not i.routine and first <= i.line <= first + 2]
    assert {at[i.offset][0] for i in index} == {0.0, 1024.0}
    slow = kp.gpumodel.compiled.slow_division(found)
    assert {at[i.offset][0] for i in index if i.offset in slow} == {0.0}


@needs_sass
def test_involution_grad_inputs_loop_copy_for_stride_above_1_runs_none_however_many_blocks_are_sampled():
    """involution_bwd_input_kernel at N, C, H = W, K = 8, 32, 32, 7 (bench/gpu_model.py --sampling's size), stride 1.
    nvcc tests the loop-invariant `s.stride > 1` once, before the kh loop, and lays out a copy of the loop for each
    outcome. The trace never evaluated the other copy's conditions (`h % s.stride`, `w % s.stride`). At 8 sampled
    blocks the top rows' `if (h < 0) break;` gives the kh loop trip counts of 5 and 6; before, both copies' blocks
    came out open there, each charged the lines' runs: 23.2M warp instructions issued, against 16.6M at 4 blocks,
    where the trip counts (all 7) fixed them. Now the copy runs none at both, and the count moves under 1%."""
    sys.path.insert(0, str(kp.files.ROOT / "bench"))
    from ops import all_ops

    op = next(o for o in all_ops() if o.op == "involution_grad_input")
    ext = helpers.load_kernel(op.kernel, target="cpu", check=True, quiet=True)
    torch.manual_seed(0)
    inputs = op.make_inputs((8, 32, 32, 7))
    source = (kp.files.ROOT / "kernels" / "involution.cu").read_text().splitlines()
    start = next(n for n, text in enumerate(source, 1) if "void involution_bwd_input_kernel" in text)
    strided = [n for n, text in enumerate(source, 1) if n > start and "% s.stride != 0" in text][:2]
    issued = {}
    for max_blocks in (4, 8):
        p = profile(op.custom(ext), *inputs, max_blocks=max_blocks)
        (kernel,) = {la.kernel for la in p.launches}
        found, at = p.kernel_sass(kernel), p.block_runs(kernel)
        copy = [i for i in found if not i.routine and i.line in strided]
        assert copy and {at[i.offset][0] for i in copy} == {0.0}, max_blocks
        issued[max_blocks] = p.issue_instructions()[kernel]
    print(f"warp instructions issued: {issued}")
    assert issued[8] == pytest.approx(issued[4], rel=0.01)
