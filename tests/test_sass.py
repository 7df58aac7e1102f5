"""kp.gpumodel.sass and the GPU model's counts as nvcc compiled them (kp.gpumodel.compiled.as_compiled,
kp.gpumodel.profile): the SASS read and put at its `.cu` lines, classed; tests/cuda_cpu/compiled.cu's kernels, whose
counts follow by hand once one knows what nvcc makes of them (a float4 loaded whole or member by member, or stored
member by member: one 16-byte request per lane either way, per line and in the launch's charge; four consecutive
shared floats per lane: one LDS.128 and no bank conflict; a loop unrolled into four LDS); the SASS of a line on
request; the fallback to the source's counts without nvdisasm. Compiles with nvcc; needs no GPU."""

import re
import subprocess
from collections import namedtuple

import pytest
import torch

import helpers
import kp.files
import kp.gpumodel.compiled
import kp.gpumodel.counts
import kp.gpumodel.profile
import kp.gpumodel.sass
import kp.sourceview
import kp.toolchain
from kp.gpumodel.counts import Branch
from kp.gpumodel.profile import profile

COMPILED = kp.files.ROOT / "tests" / "cuda_cpu" / "compiled.cu"
LINES = COMPILED.read_text().splitlines()
NAMES = ["float4_whole", "float4_members", "shared4", "unrolled", "fma_loop", "chain4", "independent4", "halves",
         "float4_store_members"]  # fmt: skip
needs_sass = pytest.mark.skipif(
    kp.toolchain.find_cuda_root() is None or kp.gpumodel.sass.nvdisasm() is None, reason="no nvcc or no nvdisasm here"
)

LISTING = """\
//--------------------- .text._Z1kPf --------------------------
\t.section\t.text._Z1kPf,"ax",@progbits
_Z1kPf:
\t//## File "/p/k.cu", line 3
        /*0000*/                   LDC R1, c[0x0][0x28] ;
\t//## File "/p/h.cuh", line 1 inlined at "/p/k.cu", line 9
\t//## File "/p/k.cu", line 9
        /*0010*/              @!P0 LDS.128 R4, [R10] ;
        /*0020*/                   FFMA R4, R4, R5, R6 ;
\t//## File "/p/h.cuh", line 2
        /*0030*/                   STG.E.64 desc[UR4][R2.64], R4 ;
        /*0040*/                   EXIT ;
.L_x_3:
        /*0050*/                   BRA `(.L_x_3);
        /*0060*/                   NOP;
"""


LOOPS = """\
__global__ void k(float* out) {
  float acc[4] = {};
  for (int t = 0; t < n; ++t) {
    for (int m = 0; m < 4; ++m)
      acc[m] += s[m];
  }
  out[0] = acc[0];
}""".splitlines()
S = namedtuple("S", "opcode cls space kind width")
BRA, FFMA = S("BRA", "control", None, None, None), S("FFMA", "fp32", None, None, None)


def test_a_lines_sass_runs_as_often_as_the_trace_says_that_line_ran():
    """Line 3, a loop nvcc keeps (a BRA): once per evaluation of its condition (2 warps x 5 tiles + 1 exit); line 4,
    a loop nvcc unrolled (no BRA left), and line 5 in it: once per tile (its enclosing loop's iterations, 10); line 7,
    outside loops: once per warp (2); line 5's memory: as counted (passes)."""
    branches = [Branch("k", "f.cu", 3, 12, 384, 0, none=2), Branch("k", "f.cu", 4, 50, 1600, 0, none=10)]
    by_line = {("k", "f.cu", 3): [BRA], ("k", "f.cu", 4): [FFMA], ("k", "f.cu", 5): [FFMA] * 4,
               ("k", "f.cu", 7): [FFMA]}  # fmt: skip
    got = kp.gpumodel.sass.executed({}, branches, {"k": 2}, by_line, lambda file: LOOPS)
    assert [(i.line, i.executions, i.fp32, i.control) for i in got] == [
        (3, 12, 0, 12), (4, 10, 10, 0), (5, 10, 40, 0), (7, 2, 2, 0)
    ]  # fmt: skip
    ran = kp.gpumodel.sass.executed({("k", "f.cu", 5): 3.0}, branches, {"k": 2}, by_line, lambda f: LOOPS)
    (five,) = [i for i in ran if i.line == 5]
    assert (five.executions, five.total) == (3, 12)


def test_a_loop_whose_condition_the_trace_never_saw_ran_none_nor_its_body():
    """n = 0: line 3's condition was evaluated once per warp (2) and entered by no lane, so the stand-in never
    evaluated line 4's: line 4 and line 5 in it ran none (before: line 4 as often as line 3's body, 2 each); line 7,
    outside loops, once per warp. The runs of any line, a call site without SASS of its own too (line_runs)."""
    branches = [Branch("k", "f.cu", 3, 2, 64, 0, none=2)]
    by_line = {("k", "f.cu", n): [FFMA] for n in (4, 5, 7)}
    runs = kp.gpumodel.sass.line_runs({}, branches, {"k": 2}, by_line, lambda file: LOOPS)
    assert [runs(("k", "f.cu", n)) for n in (4, 5, 6, 7)] == [0, 0, 2, 2]
    got = kp.gpumodel.sass.executed({}, branches, {"k": 2}, by_line, lambda file: LOOPS)
    assert [(i.line, i.executions) for i in got] == [(4, 0), (5, 0), (7, 2)]


def line_of(text):
    return next(i for i, line in enumerate(LINES, 1) if text in line)


def test_the_listing_is_read_into_instructions_at_their_lines_classed():
    instructions = kp.gpumodel.sass.parse_sass(LISTING)
    assert instructions[1].text == "@!P0 LDS.128 R4, [R10]"  # the listing shows the predicate; the opcode has none
    got = [(i.function, i.offset, i.file, i.line, i.opcode, i.cls, i.space, i.kind, i.width) for i in instructions]
    assert got == [
        ("_Z1kPf", 0x00, "/p/k.cu", 3, "LDC", "memory", None, None, None),
        ("_Z1kPf", 0x10, "/p/k.cu", 9, "LDS.128", "memory", "shared", "load", 16),  # a predicate is no part of it
        ("_Z1kPf", 0x20, "/p/k.cu", 9, "FFMA", "fp32", None, None, None),
        ("_Z1kPf", 0x30, "/p/h.cuh", 2, "STG.E.64", "memory", "global", "store", 8),  # a header's own line
        ("_Z1kPf", 0x40, "/p/h.cuh", 2, "EXIT", "control", None, None, None),  # the padding after it is left out
    ]


@pytest.mark.parametrize(
    "opcode, expected",
    [
        ("LDG.E.128.CONSTANT", ("memory", "global", "load", 16)),
        ("LDS.U8", ("memory", "shared", "load", 1)),
        ("STS.64", ("memory", "shared", "store", 8)),
        ("ATOMS.ADD", ("memory", "shared", "atomic", 4)),
        ("RED.E.ADD.F32.FTZ.RN.STRONG.GPU", ("memory", "global", "atomic", 4)),
        ("STL", ("memory", "local", "store", 4)),
        ("IMAD.WIDE.U32", ("integer", None, None, None)),
        ("UIADD3", ("integer", None, None, None)),
        ("FFMA", ("fp32", None, None, None)),
        ("BAR.SYNC.DEFER_BLOCKING", ("barrier", None, None, None)),
        ("BRA", ("control", None, None, None)),
        ("S2R", ("other", None, None, None)),
    ],
)
def test_an_opcode_has_a_class_and_a_memory_opcode_its_space_kind_and_width(opcode, expected):
    assert kp.gpumodel.sass.classify(opcode) == expected


@pytest.mark.parametrize("gpu, arch", [("H100", "sm_90"), ("A100", "sm_80"), ("RTX 4090", "sm_89"), ("T4", "sm_75"),
                                       ("sm_86", "sm_86")])  # fmt: skip
def test_a_gpu_is_compiled_for_its_own_arch(gpu, arch):
    assert kp.gpumodel.sass.arch_of(gpu) == arch


@pytest.fixture(scope="module")
def k():
    return helpers.load_kernel(COMPILED, target="cpu", check=True, quiet=True)


def run(k, which, n=64):
    return profile(k.run, NAMES.index(which), torch.arange(4 * n, dtype=torch.float32), torch.zeros(n))


def at(p, line, space, kind):
    return [ln for ln in p.lines if ln.line == line and ln.space == space and ln.kind == kind]


@needs_sass
def test_sass_is_compiled_once_per_build_key(monkeypatch):
    first = kp.gpumodel.sass.sass(COMPILED, "H100")
    assert {i.opcode for i in first} >= {"LDG.E.128", "LDS.128", "STG.E.128"}
    monkeypatch.setattr(subprocess, "run", lambda *a, **kw: pytest.fail("compiled again"))
    assert kp.gpumodel.sass.sass(COMPILED, "H100") == first


@needs_sass
@pytest.mark.parametrize("which, text", [("float4_whole", "if (i < n) out[i] = x[i];"), ("float4_members", "t = x[i]")])
def test_a_float4_is_one_16_byte_request_per_warp_whether_loaded_whole_or_member_by_member(k, which, text):
    p = run(k, which)
    (load,) = at(p, line_of(text), "global", "load")
    warps = 1 if which == "float4_whole" else 2  # 16 float4 (one warp, half active) or 64 floats (two warps)
    assert (load.sass, load.requests, load.basis) == (("LDG.E.128",), warps, "SASS sm_90")
    assert load.excess == 1  # 16 bytes per lane, contiguous: no "uncoalesced" load
    assert not [a for a in p.advice() if "uncoalesced" in a]
    if which == "float4_members":  # the source's four scalar reads: 4 requests of 16 sectors, 4x the sectors needed
        (source,) = [ln for ln in p.source_lines if ln.line == load.line and ln.space == "global"]
        assert (source.requests, source.excess) == (4 * warps, 4)


@needs_sass
@pytest.mark.parametrize(
    "which, n, read, written, lines, traced",
    [
        # 64 float4s copied whole: each of 2 warps reads and writes 32 lanes x 16 bytes = 16 sectors in 4 lines
        ("float4_whole", 256, 32, 32, 8 + 8, (32, 32)),
        # 64 float4s read member by member (the trace: 4 requests of 16 sectors and 4 lines per warp, 128 sectors and
        # 32 lines), 64 floats written: 2 warps x 4 sectors in 1 line
        ("float4_members", 64, 32, 8, 8 + 2, (128, 8)),
        # 64 floats read (4 sectors, 1 line per warp), 64 float4s written member by member (the trace: 128 sectors)
        ("float4_store_members", 256, 8, 32, 2 + 8, (8, 128)),
    ],
)
def test_a_launch_is_charged_the_sectors_and_lines_its_sass_requests_for_a_float4_whole_or_member_by_member(
    k, which, n, read, written, lines, traced
):
    """The launch's charge (work()), not only its lines: a float4 read or written member by member is one 16-byte
    request per lane in SASS (LDG.E.128, STG.E.128), so the L2 and the L1 pipe see what they see for a float4 copied
    whole: 32 sectors read by 64 lanes either way, not the trace's 128 (4 x 4-byte requests, each touching all 16
    sectors of its warp's 512 bytes), and 4 L1 lines per warp, not 16. DRAM's distinct sectors are the same either
    way."""
    p = run(k, which, n)
    (work,) = p.work()
    assert (work.requested_read_sectors, work.written_sectors, work.l1_wavefronts) == (read, written, lines)
    compiled = {kind: sum(ln.units for ln in p.lines if (ln.space, ln.kind) == ("global", kind)) for kind in
                ("load", "store")}  # fmt: skip
    assert (compiled["load"], compiled["store"]) == (read, written)  # what the SASS requests, line by line
    assert (work.dram_read_sectors, work.dram_write_sectors) == (read, written)  # distinct: as the trace has them
    (la,) = p.launches
    assert (la.sectors_read, la.sectors_written) == traced  # the trace's, as the source wrote the accesses


@needs_sass
def test_four_consecutive_shared_floats_are_one_lds128_without_a_false_bank_conflict(k):
    p = run(k, "shared4")
    first = line_of("float a = s[4 * t];")
    (load,) = [ln for ln in p.lines if ln.space == "shared" and ln.kind == "load"]
    assert (load.line, load.sass, load.requests) == (first, ("LDS.128",), 2)  # one per warp, the others merged in it
    assert (load.wavefronts, load.ideal, load.worst) == (2 * 4, 2 * 4, 1)  # four phases of 8 lanes x 16 bytes
    sources = [ln for ln in p.source_lines if ln.space == "shared" and ln.kind == "load"]
    assert [(ln.requests, ln.worst) for ln in sources] == [(2, 4)] * 4  # the source's four 4-way conflicts
    assert not [a for a in p.advice() if "bank conflict" in a]
    (work,) = p.work()
    stores = sum(ln.wavefronts for ln in p.lines if ln.space == "shared" and ln.kind == "store")
    assert work.shared_wavefronts == stores + 8  # the model is charged the compiled wavefronts, not the source's 32
    listing = p.sass(first)
    assert "vectorised: LDS.128 moves 16 bytes per lane" in listing.title
    assert [r["SASS"].split()[0] for r in listing] == ["LDS.128"]


@needs_sass
def test_an_unrolled_loop_runs_its_instructions_once_per_warp_pass(k):
    p = run(k, "unrolled")
    line = line_of("acc += s[k * 32 + t]")
    (load,) = at(p, line, "shared", "load")
    assert (load.sass, load.requests, load.wavefronts, load.worst) == (("LDS",) * 4, 8, 8, 1)
    (ins,) = [i for i in p.instructions if i.line == line]
    assert ins.executions == 2  # 8 requests over its 4 LDS: each of the 2 warps ran the unrolled body once
    assert (dict(ins.static)["memory"], ins.memory) == (4, 8) and ins.fp32 == 2 * dict(ins.static)["fp32"] >= 8
    assert p.issued()["unrolled"]["fp32"] >= 8
    assert "unrolled: 4 x LDS" in p.sass(line).title
    most = max(p.instructions, key=lambda i: i.total)
    hotspot = f"the GPU runs the most instructions at tests/cuda_cpu/compiled.cu:{most.line}: {most.total:,.0f} warp"
    assert hotspot in " ".join(kp.sourceview.instruction_advice(p.instructions, []))
    assert p.advice() == []  # a clean kernel: where its instructions go is said beside other advice only


def test_advice_names_the_lines_whose_sass_spills_registers():
    stl = kp.gpumodel.sass.Instruction("_Z1kv", 16, "k.cu", 12, "STL [R1], R4", "STL", "memory", "local", "store", 4)
    ldl = stl._replace(offset=32, text="LDL R4, [R1]", opcode="LDL", kind="load")
    assert kp.sourceview.instruction_advice([], [stl, ldl]) == [
        "registers spilled at k.cu:12: nvcc's SASS moves values to local memory there (STL, LDL), memory traffic the "
        "source does not show"
    ]


@needs_sass
def test_a_kernel_file_without_a_binding_next_to_it_is_compiled_alone(tmp_path):
    """A puzzle's file (puzzles/*.cu) has no binding: its copy in build/puzzles/ has, and names it with #line."""
    cu = tmp_path / "alone.cu"
    cu.write_text("__global__ void twice(float* x) {\n  x[threadIdx.x] *= 2.0f;\n}\n")
    (ins,) = [i for i in kp.gpumodel.sass.sass(cu, "A100") if i.space == "global" and i.kind == "load"]
    assert (ins.file, ins.line, ins.opcode) == (str(cu), 2, "LDG.E")


@needs_sass
def test_a_kernel_file_nvcc_does_not_compile_alone_is_not_compiled_again(kernel_copy, monkeypatch):
    cu = kernel_copy("add2")
    cu.write_text(cu.read_text() + "\n__global__ void broken() { undefined_name(); }\n")
    with pytest.raises(
        kp.gpumodel.sass.SassUnavailable, match=r"no SASS: nvcc failed on add2.cu for sm_90: .*undefined_name"
    ):
        kp.gpumodel.sass.sass(cu, "H100")
    monkeypatch.setattr(subprocess, "run", lambda *a, **kw: pytest.fail("compiled again"))
    with pytest.raises(kp.gpumodel.sass.SassUnavailable, match="nvcc failed"):
        kp.gpumodel.sass.sass(cu, "H100")


ROUNDS = """\
\t.section\t.text._Z1kPf,"ax",@progbits
        /*0000*/                   LDG.E R2, desc[UR4][R2.64] ;
        /*0010*/                   LDG.E.64 R4, desc[UR4][R6.64] ;
        /*0020*/                   IMAD.WIDE R8, R0, 0x4, R10 ;
        /*0030*/                   FADD R0, R2, R5 ;
        /*0040*/              @!P0 LDG.E.128 R12, desc[UR4][R8.64] ;
        /*0050*/                   LDG.E R16, desc[UR4][R12.64] ;
        /*0060*/              @!P1 BRA `(.L_x_1) ;
        /*0070*/                   LDG.E R20, desc[UR4][R8.64] ;
        /*0080*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0090*/                   LDG.E R24, desc[UR4][R8.64] ;
"""


def test_loads_issued_before_any_is_used_are_one_round_in_flight():
    """The first two loads are in flight together until FADD reads R2 and R5 (LDG.E.64 wrote R4, R5); the 16-byte
    load writes R12..R15, and the next load's address is R12: a round of its own, which the load past a branch joins
    (it does not wait for the branch); a barrier ends a round."""
    rounds = kp.gpumodel.compiled.load_rounds(kp.gpumodel.sass.parse_sass(ROUNDS))
    assert [[i.offset for i in r] for r in rounds] == [[0x00, 0x10], [0x40], [0x50, 0x70], [0x90]]


@needs_sass
def test_an_unrolled_loop_of_four_loads_waits_a_quarter_of_the_dependent_chains_round_trips(k):
    """chain4 loads x[x[x[x[i]]]]: 4 rounds of one load; independent4's 4 loads of x[k * n + i] are issued before
    any is used: 1 round of 4. Each warp makes 4 round trips against 1: the latency is charged per round trip."""
    chain, independent = run(k, "chain4"), run(k, "independent4")
    assert (chain.loads_in_flight("chain4"), independent.loads_in_flight("independent4")) == (1, 4)
    (dependent,), (unrolled,) = chain.work(), independent.work()
    assert (dependent.dram_round_trips_per_warp, unrolled.dram_round_trips_per_warp) == (4, 1)
    (a,), (b,) = chain.estimate_detail().launches, independent.estimate_detail().launches
    assert (a.latency_s / a.latency, b.latency_s / b.latency) == (pytest.approx(4), pytest.approx(1))


@needs_sass
def test_an_fma_loop_without_loads_issues_its_instructions_and_waits_on_its_dependent_ones(k):
    """fma_loop: n = 4096 iterations per warp of a loop nvcc keeps, 128 blocks of one warp, one per SM at most (132
    SMs). Its sm_90 SASS in basic blocks, by hand, per warp: the entry (10 instructions, once), the preheader (MOV,
    UMOV, MOV: once, at its bound, what the entry ran), the loop (UIADD3, FFMA, ISETP, BRA back: n times, the loop
    test's evaluations that continued, 4097 - 1), `@P0 EXIT` (1) and the store's block (5): 4 n + 19 instructions.
    Before the basic blocks: 2.75 n (the mean fragment of the loop line), issued() 11 n.
    Each SM's one warp issues as the compiler's control bits schedule it (kp.gpumodel.depend.scheduled_path: an
    instruction issues its predecessor's stall count after it, a clock at least, or when the barriers it waits on are
    released; a block's last stall is its own, the clocks to the next block's first): the loop's UIADD3 (stall 1) at 0,
    FFMA (5) at 1, ISETP.LE (13) at 6, BRA (5) at 19, the next run's UIADD3 at 24: 24 clocks a run, 20 more than its 4
    instructions (the register rule, ALU results 4 clocks, gave 9). The entry: LDC R1 (stall 8) at 0, LDC R2 (1, sets
    barrier 0) at 8, S2R R5 (1, barrier 1) at 9, ULDC at 10, HFMA2 at 11, S2R R0 (1, barrier 1) at 12, ISETP (waits
    barrier 0, released at 8 + 4, the constant cache) at 13, IMAD (waits barrier 1, released at 12 + 4: depend takes S2R
    at the ALU's 4, an assumption) at 16, stall 5, ISETP (7) at 21, BRA (6) at 28: 34 clocks, 24 more than its 10. The
    store's block: LDC.64 (1, barrier 0) at 0, ULDC.64 (1) at 1, IMAD.WIDE (waits barrier 0) at 4, stall 5, STG (1) at
    9, EXIT (5) at 10: 15, 10 more than its 5. `@P0 EXIT` (stall 5): 5, 4 more than its 1. The preheader, whose runs
    block_runs fixes at the entry's (the old docstring took it as open): MOV (1) at 0, UMOV (1) at 1, MOV (7) at 2: 9, 6
    more than its 3. So (4 n + 19) + 20 n + 44 = 24 n + 63 clocks, bound by the waits; under the register rule 9 n + 29.
    Before dependent instructions were modelled, one instruction a clock: 4 n + 19, which one warp cannot reach."""
    n = 4096
    p = profile(k.run, NAMES.index("fma_loop"), torch.zeros(4 * n), torch.zeros(n), max_blocks=4)
    issued = p.issued()["fma_loop"]
    assert issued["fp32"] == 128 * n  # the FFMA runs once per iteration, in the loop's block
    per_warp = p.issue_instructions()["fma_loop"] / 128
    assert per_warp == sum(issued.values()) / 128 == 4 * n + 19
    (e,) = p.estimate_detail("H100").launches
    assert (e.bound, e.seconds) == ("issue (dependent)", pytest.approx((24 * n + 63) / 1.98e9))
    assert e.stall_s == pytest.approx((20 * n + 44) / 1.98e9)


@needs_sass
def test_a_straight_line_kernel_runs_each_of_its_instructions_once_per_warp(k):
    """float4_whole on 64 floats: 16 float4s, one block of 32 lanes (16 past the end): one warp, which runs its whole
    SASS (16 instructions) once: the `@P0 EXIT` exits no warp (half its lanes go on); the load's request fixes it."""
    p = run(k, "float4_whole")
    sass = p.kernel_sass("float4_whole")
    assert p.issue_instructions()["float4_whole"] == sum(p.issued()["float4_whole"].values()) == len(sass) == 16
    assert set(p.block_runs("float4_whole").values()) == {(1.0, 1.0)}


@needs_sass
def test_an_if_else_taken_by_half_the_warps_runs_each_side_for_those_warps(k):
    """halves on 128 floats: 4 warps; the trace sees line `if ((i / 32) % 2 == 0)` evaluated 4 times, 2 of them true,
    no warp diverging. Its sm_90 SASS, by hand: the entry to the `@P0 BRA` (17 instructions, 4 runs), the odd side
    (HFMA2.MMA, 16 FFMA, BRA: 18, 2 runs), the even side nvcc placed out of line (16 FFMA, 2 runs), the join (BSYNC to
    EXIT: 6, 4 runs): 4 x 17 + 2 x 18 + 2 x 16 + 4 x 6 = 160; neither side touches memory, so the trace's branch
    evaluations alone say how often each ran (before the basic blocks, the issue term charged both sides to every warp
    at its line's mean fragment)."""
    p = run(k, "halves", n=128)
    (branch,) = [b for b in p.branches if b.line == line_of("if ((i / 32) % 2 == 0)")]
    assert (branch.executions, branch.none, branch.divergent) == (4, 2, 0)
    runs = p.block_runs("halves")
    by_line = {}
    for i in p.kernel_sass("halves"):
        if i.cls == "fp32":
            by_line.setdefault(i.line, set()).add(runs[i.offset][0])
    assert by_line[line_of("v = v * v + 1.0f")] == by_line[line_of("v = v * 0.5f - 3.0f")] == {2.0}
    assert p.issue_instructions()["halves"] == sum(p.issued()["halves"].values()) == 160


FRAGMENTS = """\
\t.section\t.text._Z1kPf,"ax",@progbits
\t//## File "k.cu", line 3
        /*0000*/                   ISETP.GE.AND P0, PT, R0, 0x4, PT ;
        /*0010*/               @P0 BRA `(.L_x_1) ;
\t//## File "k.cu", line 4
        /*0020*/                   LDS R2, [R4] ;
        /*0030*/                   FADD R6, R6, R2 ;
        /*0040*/                   IADD3 R4, R4, 0x80, RZ ;
\t//## File "k.cu", line 3
        /*0050*/                   IADD3 R0, R0, 0x1, RZ ;
        /*0060*/                   BRA `(.L_x_2) ;
"""


def counted(listing, runs, site_runs=None):
    """A CompiledCounts of one kernel "k" (one block of 32 lanes) whose SASS is `listing` (parse_sass's), each line
    run as often as `runs` ({line: runs}) says, and any line's runs, for a call site, `site_runs` (line -> runs). Its
    basic blocks are all left open (block_runs finds none): the per-line fallback rule is what these tests check."""

    class Counted(kp.gpumodel.compiled.CompiledCounts):
        launches = [kp.gpumodel.counts.Launch("k", (1, 1, 1), (32, 1, 1), 0, 1, 1, 0, 0, 0, 0, 0, 0, 0)]
        _compiled = {("runs", "sm_90"): lambda key: site_runs(key[2])} if site_runs else {}

        def block_runs(self, kernel, gpu="H100"):
            return {}

        def kernel_sass(self, kernel, gpu="H100"):
            return listing

        def compiled(self, gpu="H100"):
            by_line = {}
            for i in listing:
                by_line.setdefault(("k", i.file, i.line), []).append(i)
            return [], [kp.gpumodel.sass.Instructions("k", f, n, runs[n], ((c, len(v)),), ((c, len(v) * runs[n]),))
                        for (_, f, n), v in by_line.items() for c in ["all"]], "SASS sm_90"  # fmt: skip

    return Counted()


def test_where_the_blocks_are_open_a_line_counted_exactly_is_charged_in_full_and_any_other_its_mean_fragment():
    """Line 3 (a loop test: 4 instructions in 2 stretches) ran 10 times: 2 per run, 20; line 4 has a shared load, so
    its runs (5, the trace's passes) go through all 3 of its instructions: 15. issued(), the upper bound, says 55."""
    listing = kp.gpumodel.sass.parse_sass(FRAGMENTS)
    assert counted(listing, {3: 10.0, 4: 5.0}).issue_instructions() == {"k": 4 / 2 * 10 + 3 * 5}


# nvdisasm -gi -hex, sm_86 (siboehm's kernel 7 as nvcc 13.0 compiles it): each instruction's two 64-bit words, the
# second on a line of its own. Its control bits decoded by hand (word >> 41: stall, yield bit, write and read barrier,
# wait mask, reuse): MOV 0x7f2: stall 2; S2UR 0x711: stall 1, writes barrier 0; USHF 0xff2: waits for barrier 0
# (0x1 << 11), stall 2; ISETP 0x7e7: stall 7, its yield bit 0; FFMA 0x207f1: stall 1, reuse 0b0001 (its first source,
# printed R36.reuse).
HEX = """\
\t.section\t.text._Z1kPf,"ax",@progbits
\t//## File "/p/k.cu", line 3
        /*0000*/                   MOV R1, c[0x0][0x28] ;                                /* 0x00000a0000017a02 */
                                                                                         /* 0x000fe40000000f00 */
        /*0010*/                   S2UR UR5, SR_CTAID.Y ;                                /* 0x00000000000579c3 */
                                                                                         /* 0x000e220000002600 */
        /*0020*/                   NOP ;                                                 /* 0x0000000000007918 */
                                                                                         /* 0x000fc00000000000 */
        /*0030*/                   USHF.L.U32 UR5, UR5, 0x7, URZ ;                       /* 0x0000000705057899 */
                                                                                         /* 0x001fe4000800063f */
        /*0040*/                   ISETP.NE.AND P0, PT, RZ, c[0x0][0x168], PT ;          /* 0x00005a00ff007a0c */
                                                                                         /* 0x000fce0003f05270 */
        /*0050*/                   FFMA R129, R36.reuse, R45, R129 ;                     /* 0x0000002d24817223 */
                                                                                         /* 0x040fe20000000081 */
"""


def test_the_control_bits_are_read_from_each_instructions_second_word():
    got = [(i.opcode, i.control_bits) for i in kp.gpumodel.sass.parse_sass(HEX)]
    C = kp.gpumodel.sass.Control
    assert got == [
        ("MOV", C(stall=2, yield_=False, write=7, read=7, wait=0, reuse=0)),
        ("S2UR", C(stall=1, yield_=False, write=0, read=7, wait=0, reuse=0)),  # the NOP's word is no one else's
        ("USHF.L.U32", C(stall=2, yield_=False, write=7, read=7, wait=0b000001, reuse=0)),
        ("ISETP.NE.AND", C(stall=7, yield_=True, write=7, read=7, wait=0, reuse=0)),
        ("FFMA", C(stall=1, yield_=False, write=7, read=7, wait=0, reuse=0b0001)),
    ]
    assert all(i.control_bits is None for i in kp.gpumodel.sass.parse_sass(LISTING))  # no -hex words: none


@needs_sass
@pytest.mark.parametrize("gpu", ["sm_75", "sm_86", "sm_90"])
def test_the_control_bits_agree_with_what_nvdisasm_prints_from_them(gpu):
    """nvdisasm prints `.reuse` from the reuse bits: an operand printed with it has its slot's bit set, and no other
    bit is (the third source slot is bit 2); every instruction's bits are read; a shared load, whose latency varies,
    writes a barrier that a later instruction of its function waits for before reading its result."""
    found = kp.gpumodel.sass.sass(COMPILED, gpu)
    assert found and all(i.control_bits is not None for i in found)
    for i in found:
        sources = re.sub(r"^@!?U?P\w+\s+", "", i.text).split(" ", 1)[-1].split(",")[1:]  # after the destination
        printed = sum(1 << k for k, op in enumerate(sources) if ".reuse" in op)
        if i.cls == "fp32" and i.opcode.startswith("FFMA") and len(sources) == 3:
            assert i.control_bits.reuse == printed, i.text
        assert bool(i.control_bits.reuse) == (".reuse" in i.text), i.text
    lds = [i for i in found if i.opcode.startswith("LDS")]
    assert lds
    for load in lds:
        after = [i for i in found if i.function == load.function and i.offset > load.offset]
        assert load.control_bits.write != 7
        assert any(i.control_bits.wait >> load.control_bits.write & 1 for i in after), load
