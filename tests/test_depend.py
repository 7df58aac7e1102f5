"""kp.gpumodel.depend and the issue term's rule for dependent instructions (kp.gpumodel.gputime): the registers each
SASS instruction writes and reads, a basic block's critical path, and max(W x instructions, critical path) per block
run for W warps per scheduler. Hand-written listings in nvdisasm's form (as tests/test_cfg.py's), each answer worked out
by hand from the latencies of kp.gpumodel.gpu_constants (ALU 4 clocks, a shared load 23 on every cc here) and the H100
SXM's 1.98 GHz; one case on nvcc's own SASS (mul_fwd_kernel, tests/test_compiled.py's)."""

import dataclasses
import sys

import pytest
import torch
from test_sass import needs_sass

import helpers
import kp.files
from kp.gpumodel.cfg import blocks
from kp.gpumodel.depend import critical_path, dependent_blocks, operands, scheduled_path
from kp.gpumodel.gpu_constants import ALU_LATENCY_CLOCKS, SHARED_LOAD_CLOCKS
from kp.gpumodel.gputime import LaunchWork, estimate_launch
from kp.gpumodel.profile import profile
from kp.gpumodel.sass import parse_sass

H100 = (9, 0)
CLOCK = 1.98e9


def listing(*lines):
    """Instructions from SASS lines, in nvdisasm's form, at 0x0, 0x10, ... of one function at k.cu:1."""
    body = "".join(f"        /*{16 * k:04x}*/                   {line} ;\n" for k, line in enumerate(lines))
    return parse_sass(f'\t.section\t.text._Z1kPf,"ax",@progbits\n\t//## File "k.cu", line 1\n{body}')


def scheduled(*rows):
    """Instructions from (SASS line, stall, write barrier, read barrier, wait mask[, yield]) rows, each with its second
    64-bit word as nvdisasm -hex prints it (the control bits at bit 41: stall, yield, write, read, wait; 7: no barrier;
    the yield bit clear where the yield is set, as kp.gpumodel.sass reads it: no yield unless a row says so)."""
    body = ""
    for k, (line, stall, write, read, wait, *yields) in enumerate(rows):
        bits = stall | (not any(yields)) << 4 | write << 5 | read << 8 | wait << 11
        body += f"        /*{16 * k:04x}*/                   {line} ;\n        /* 0x{bits << 41:016x} */\n"
    return parse_sass(f'\t.section\t.text._Z1kPf,"ax",@progbits\n\t//## File "k.cu", line 1\n{body}')


def regs(prefix, first, count):
    return {f"{prefix}{first + k}" for k in range(count)}


@pytest.mark.parametrize(
    "text, written, read",
    [
        ("FFMA R3, R4, R5, R3", {"R3"}, {"R3", "R4", "R5"}),
        ("FFMA R3, -R4.reuse, |R5|, 1", {"R3"}, {"R4", "R5"}),  # negation, absolute value, the reuse flag
        ("@!P0 LDG.E.128 R4, desc[UR4][R2.64]", regs("R", 4, 4), {"P0", "UR4", "R2", "R3"}),
        ("LDS.128 R8, [R0+0x10]", regs("R", 8, 4), {"R0"}),
        ("LDS.64 R8, [R0]", {"R8", "R9"}, {"R0"}),
        ("LDSM.16.M88.4 R4, [R16]", regs("R", 4, 4), {"R16"}),
        ("IMAD.WIDE R2, R0, 0x4, R2", {"R2", "R3"}, {"R0", "R2", "R3"}),  # a pair written, the addend a pair read
        ("IMAD.WIDE.U32 R4, R7, R9, RZ", {"R4", "R5"}, {"R7", "R9"}),  # RZ: no register
        ("IADD3 R6, P0, R2, c[0x0][0x160], RZ", {"R6", "P0"}, {"R2"}),  # the carry out
        ("IADD3.X R7, R3, c[0x0][0x164], RZ, P0, !PT", {"R7"}, {"R3", "P0"}),  # the carry in
        ("LEA R2, P0, R3, c[0x0][0x168], 0x2", {"R2", "P0"}, {"R3"}),
        ("ISETP.GE.AND P0, PT, R0, 0x1, PT", {"P0"}, {"R0"}),
        ("PLOP3.LUT P0, PT, P1, P2, PT, 0x80, 0x8", {"P0"}, {"P1", "P2"}),
        ("LOP3.LUT P0, R6, R2, 0x3, RZ, 0xc0, !PT", {"P0", "R6"}, {"R2"}),  # a predicate and a register out
        ("LOP3.LUT R6, R2, 0x3, RZ, 0xc0, !PT", {"R6"}, {"R2"}),
        ("FSEL R0, R1, R2, P0", {"R0"}, {"R1", "R2", "P0"}),
        ("VOTE.ANY R0, PT, P0", {"R0"}, {"P0"}),
        ("STG.E.128 desc[UR4][R2.64], R4", set(), {"UR4", "R2", "R3"} | regs("R", 4, 4)),
        ("STS [R0], R5", set(), {"R0", "R5"}),
        ("RED.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R7", set(), {"UR4", "R2", "R3", "R7"}),
        ("ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R5, desc[UR4][R2.64], R7", {"R5"}, {"UR4", "R2", "R3", "R7"}),
        ("@P1 BRA `(.L_x_3)", set(), {"P1"}),
        ("BAR.SYNC.DEFER_BLOCKING 0x0", set(), set()),
        ("EXIT", set(), set()),
        ("S2R R0, SR_TID.X", {"R0"}, set()),  # SR_TID.X is no general register
        ("UIADD3 UR4, UR4, 0x1, URZ", {"UR4"}, {"UR4"}),
        ("ULDC.64 UR4, c[0x0][0x118]", {"UR4", "UR5"}, set()),
        ("DFMA R4, R4, R6, R8", {"R4", "R5"}, regs("R", 4, 6)),  # FP64: pairs
        ("F2F.F64.F32 R4, R3", {"R4", "R5"}, {"R3"}),
        ("MOV R1, c[0x0][0x28]", {"R1"}, set()),
        ("SHFL.BFLY PT, R6, R15, 0x10, 0x1f", {"R6"}, {"R15"}),  # a predicate out (PT: none), then the value
        ("SHFL.DOWN P0, R6, R15, 0x1, 0x1f", {"P0", "R6"}, {"R15"}),
        ("DSETP.GEU.AND P0, PT, R4, R6, PT", {"P0"}, regs("R", 4, 4)),  # FP64 sources in pairs, one predicate out
        ("F2I.F64.TRUNC R0, R2", {"R0"}, {"R2", "R3"}),  # F64 is the source's type: one register written, a pair read
        ("F2F.F32.F64 R0, R2", {"R0"}, {"R2", "R3"}),
        ("LDGSTS.E.BYPASS.128 [R7], desc[UR4][R2.64]", set(), {"R7", "UR4", "R2", "R3"}),  # writes shared memory
    ],
)
def test_operands_name_the_registers_written_and_read(text, written, read):
    (i,) = listing(text)
    assert operands(i) == (written, read)


def test_a_chain_of_dependent_ffmas_waits_for_each_result_and_independent_ones_only_for_their_issue():
    """In a run after a run: the chain's first FFMA waits for the last one's R3 (a loop's carried chain): 8 x 4 = 32
    clocks a run. Eight independent FFMAs issue one a clock: 8, and each reads its own accumulator 8 clocks after the
    run before wrote it, 4 after it was ready."""
    chain = listing(*["FFMA R3, R3, R4, R5"] * 8)
    assert critical_path(chain, H100) == 8 * ALU_LATENCY_CLOCKS == 32
    independent = listing(*[f"FFMA R{10 + k}, R4, R5, R{10 + k}" for k in range(8)])
    assert critical_path(independent, H100) == 8


def test_a_warp_shuffle_reduction_is_a_chain_through_each_shuffles_result():
    """Two steps of a butterfly sum: each SHFL reads the sum the FADD before it wrote (R0), each FADD the value its
    SHFL brought (R1): four dependent instructions, 4 x 4 = 16 clocks a run (the next run's SHFL waits for the last
    FADD). Reading SHFL's leading predicate as its only destination left R1 unwritten and the chain cut: 10 clocks."""
    steps = listing(
        "SHFL.BFLY PT, R1, R0, 0x10, 0x1f", "FADD R0, R0, R1", "SHFL.BFLY PT, R1, R0, 0x8, 0x1f", "FADD R0, R0, R1"
    )
    assert critical_path(steps, H100) == 4 * ALU_LATENCY_CLOCKS == 16


def test_a_shared_load_feeding_an_ffma_waits_for_the_shared_latency_and_a_global_one_for_none():
    """LDS at 0, the FFMA on its result at 23, the next run's LDS at 24 (in order, after that FFMA): 24 clocks a run.
    LDG then an FFMA accumulating into R5: the load's wait is the memory latency term's (not counted twice), so only
    the accumulator's carried chain is left, 4. FFMA then a store of its result: the store at 4, the next run's FFMA
    at 5: 5."""
    assert SHARED_LOAD_CLOCKS[H100] == 23
    assert critical_path(listing("LDS R4, [R0]", "FFMA R5, R4, R4, R5"), H100) == 24
    assert critical_path(listing("LDG.E R4, desc[UR4][R2.64]", "FFMA R5, R4, R4, R5"), H100) == 4
    assert critical_path(listing("FFMA R5, R4, R4, R5", "STS [R0], R5"), H100) == 5
    # a 128-bit shared load's fourth register is its result too
    assert critical_path(listing("LDS.128 R4, [R0]", "FFMA R9, R7, R7, R9"), H100) == 24


def test_a_load_into_a_register_still_being_read_waits_behind_its_reader_in_order():
    """nvcc reuses R12 for the next step's operand (as linear v7's SASS does): the second LDS cannot issue before the
    first FFMA, which waits for the first LDS. LDS 0, FFMA 23, LDS 24, FFMA 47: 48 clocks a run, where loads free to
    issue early would overlap (24)."""
    steps = listing("LDS R12, [R0]", "FFMA R20, R12, R12, R20", "LDS R12, [R0+0x10]", "FFMA R21, R12, R12, R21")
    assert critical_path(steps, H100) == 48


def fma_launch(warps_per_block, path, instructions=8, runs_per_warp=1000, bubbles=0):
    """132 blocks (one per SM on the H100) of `warps_per_block` warps, each warp running one basic block of
    `instructions` instructions with critical path `path` and `bubbles` register-bank bubbles 1000 times (a loop the
    trace fixed)."""
    warps = 132 * warps_per_block
    return LaunchWork(
        "fma", 132, 32 * warps_per_block, issued=warps * runs_per_warp * instructions,
        bank_stalls=warps * runs_per_warp * bubbles,
        dependent_blocks=((warps * runs_per_warp, instructions, path, bubbles),),
    )  # fmt: skip


def test_one_warp_per_scheduler_waits_for_a_dependent_chain():
    """8 dependent FFMAs (path 32), 4 warps per block, one block per SM: 1 warp per scheduler takes max(1 x 8, 32) =
    32 clocks a run, 1000 runs: 32,000 clocks = 16.2 us, named as waits on dependent instructions. Without the blocks'
    paths the issue term was 8,000 clocks."""
    e = estimate_launch("H100", fma_launch(4, 32))
    assert (e.bound, e.seconds) == ("issue (dependent)", pytest.approx(32_000 / CLOCK))
    assert e.stall_s == pytest.approx(24_000 / CLOCK)
    plain = estimate_launch("H100", LaunchWork("fma", 132, 128, issued=132 * 4 * 8000))
    assert (plain.bound, plain.seconds) == ("issue", pytest.approx(8_000 / CLOCK))


def test_eight_warps_per_scheduler_hide_the_chain_and_are_issue_bound():
    """The same chain, 32 warps per block, one block per SM: 8 warps per scheduler take max(8 x 8, 32) = 64 clocks
    for one run each, 1000 rounds: 64,000 clocks = 32.3 us, issue-bound, no waits."""
    e = estimate_launch("H100", fma_launch(32, 32))
    assert (e.bound, e.seconds, e.stall_s) == ("issue", pytest.approx(64_000 / CLOCK), 0)


def test_a_shared_load_feeding_an_ffma_is_latency_bound_until_enough_warps_cover_it():
    """LDS -> FFMA, 2 instructions, path 24: 1 warp per scheduler takes 24 clocks a run (24,000 for 1000); 8 warps take
    max(16, 24) = 24 per round of 8 runs (24,000 for 1000 rounds), still waiting 8 of each 24 clocks, less than they
    issue, so named "issue"; 16 warps (two blocks of 32 per SM) take max(32, 24) = 32 per round of 16 runs: 32,000
    clocks for their 16,000 runs, issue-bound, no waits."""
    one = estimate_launch("H100", fma_launch(4, 24, instructions=2))
    assert (one.bound, one.seconds) == ("issue (dependent)", pytest.approx(24_000 / CLOCK))
    eight = estimate_launch("H100", fma_launch(32, 24, instructions=2))
    assert (eight.bound, eight.seconds) == ("issue", pytest.approx(24_000 / CLOCK))
    assert eight.stall_s == pytest.approx(8_000 / CLOCK)
    two_blocks = on_blocks(fma_launch(32, 24, instructions=2), 264)
    sixteen = estimate_launch("H100", two_blocks)
    assert (sixteen.bound, sixteen.seconds, sixteen.stall_s) == ("issue", pytest.approx(32_000 / CLOCK), 0)


def on_blocks(work, blocks):
    """`work` on `blocks` blocks (its counts scaled with them): 264 blocks of 1024 threads put 2 on each SM."""
    scale = blocks / work.grid_blocks
    runs, n, path, bubbles = work.dependent_blocks[0]
    return dataclasses.replace(
        work, grid_blocks=blocks, issued=work.issued * scale, dependent_blocks=((runs * scale, n, path, bubbles),)
    )


def test_bank_bubbles_hide_under_a_longer_critical_path_and_add_where_the_instructions_are_the_longer():
    """8 FFMAs with 14 register-bank bubbles a run (kp.gpumodel.register_banks: all sources in one bank), one warp per
    scheduler: a dependent chain (path 32) takes max(8 + 14, 32) = 32 clocks a run, 32,000 for 1000 runs, not 32 + 14
    (its FFMAs issue 4 clocks apart: the banks' ports are free again); independent ones (path 8) take max(22, 8) = 22,
    22,000. Eight warps per scheduler on the chain: max(8 x 22, 32) = 176 per round, 176,000 clocks."""
    chain = estimate_launch("H100", fma_launch(4, 32, bubbles=14))
    assert chain.issue_s == pytest.approx(32_000 / CLOCK)
    assert chain.stall_s == pytest.approx(10_000 / CLOCK)
    stream = estimate_launch("H100", fma_launch(4, 8, bubbles=14))
    assert (stream.issue_s, stream.stall_s) == (pytest.approx(22_000 / CLOCK), 0)
    many = estimate_launch("H100", fma_launch(32, 32, bubbles=14))
    assert (many.issue_s, many.stall_s) == (pytest.approx(176_000 / CLOCK), 0)


def test_with_one_block_per_sm_and_barriers_the_chained_phase_hides_the_bubbles_under_the_path_too():
    """The one-block chain term (kp.gpumodel.overlap: barriers, one 4-warp block per SM) takes the same max: 8 dependent
    FFMAs with 14 bubbles, path 32: 32,000 clocks added to the memory phase, not 46,000 (named "issue": its 10,000
    clocks of waits on the path are under half)."""
    work = dataclasses.replace(fma_launch(4, 32, bubbles=14), barriers=132, dram_read_sectors=132 * 4,
                               requested_read_sectors=0)  # fmt: skip
    e = estimate_launch("H100", work)
    assert e.phases_add and e.bound == "latency + issue"
    assert e.seconds == pytest.approx(e.memory_s + 32_000 / CLOCK)


def test_independent_ffmas_are_issue_bound_even_with_one_warp():
    """8 independent FFMAs (path 8: one issue each): one warp per scheduler takes max(8, 8) = 8 clocks a run: as if
    no paths."""
    e = estimate_launch("H100", fma_launch(4, 8))
    assert (e.bound, e.seconds, e.stall_s) == ("issue", pytest.approx(8_000 / CLOCK), 0)


def test_with_one_block_per_sm_and_barriers_the_chained_phase_waits_too():
    """Barriers, one 4-warp block per SM: the SM phase one block runs alone is its dependent time (32,000 clocks),
    added to its memory phase, as kp.gpumodel.overlap says for one block per SM."""
    work = dataclasses.replace(fma_launch(4, 32), barriers=132, dram_read_sectors=132 * 4, requested_read_sectors=0)
    e = estimate_launch("H100", work)
    assert e.phases_add and e.bound == "latency + issue (dependent)"
    assert e.seconds == pytest.approx(e.memory_s + 32_000 / CLOCK)


@needs_sass
def test_a_kernels_blocks_carry_the_runs_that_make_its_issue_count():
    """mul_fwd_kernel (tests/test_compiled.py: every block's runs determined, 117 warp instructions per warp): the
    blocks' runs x instructions add up to the issue count, and each path is at least its block's instructions (one
    issue a clock) and at most its instructions x the longest latency."""
    sys.path.insert(0, str(kp.files.ROOT / "bench"))
    from ops import all_ops

    op = next(o for o in all_ops() if o.op == "mul")
    ext = helpers.load_kernel(op.kernel, target="cpu", check=True, quiet=True)
    torch.manual_seed(0)
    p = profile(op.custom(ext), *op.make_inputs(2**16), max_blocks=4)
    found = dependent_blocks(p, "mul_fwd_kernel<T>", "H100")
    assert sum(runs * n for runs, n, _, _ in found) == pytest.approx(p.issue_instructions()["mul_fwd_kernel<T>"])
    assert all(n <= path <= n * SHARED_LOAD_CLOCKS[H100] for _, n, path, _ in found)
    # the paths are the ones the compiler's control bits schedule
    at = p.block_runs("mul_fwd_kernel<T>", "H100")
    ran = [b for b in blocks(p.kernel_sass("mul_fwd_kernel<T>", "H100")) if at.get(b.instructions[0].offset, (0, 0))[0]]
    assert [path for _, _, path, _ in found] == [scheduled_path(b.instructions, H100) for b in ran]
    (work,) = p.work(gpu="H100")
    assert work.dependent_blocks == found


def test_with_control_bits_one_warp_waits_the_stall_counts_the_compiler_wrote_not_the_register_rule():
    """The compiler resolves fixed-latency dependences in the stall counts: the same 8 chained FFMAs take 8 x 4 = 32
    clocks a run where it wrote stall 4 on each (as nvcc does for a chain), 8 where it wrote 1 (the register rule would
    say 32 either way). Two independent FFMAs on a pipe that takes one every other clock, stall 2 each: 4."""
    chain = [("FFMA R3, R3, R4, R5", 4, 7, 7, 0)] * 8
    assert scheduled_path(scheduled(*chain), H100) == 32
    assert scheduled_path(scheduled(*[(t, 1, w, r, m) for t, _, w, r, m in chain]), H100) == 8
    assert critical_path(scheduled(*[(t, 1, w, r, m) for t, _, w, r, m in chain]), H100) == 32
    pair = scheduled(("IMAD R2, R4, R5, R2", 2, 7, 7, 0), ("IMAD R3, R4, R5, R3", 2, 7, 7, 0))
    assert scheduled_path(pair, H100) == 4


def test_with_control_bits_a_yield_keeps_the_warp_from_issuing_the_next_clock():
    """Huerta et al. (MICRO 2025, section 4): with the yield set, "in the next cycle it must not issue an instruction of
    the same warp", and a stall count above one waits at least that, "no matter whether Yield is set or not". 8 FFMAs
    of stall 1 with the yield set: 2 clocks each, 16 (8 without it); of stall 4: 32 either way; of stall 0: 2 each."""
    flags = [(t, 1, w, r, m, True) for t, _, w, r, m in [("FFMA R3, R3, R4, R5", 4, 7, 7, 0)] * 8]
    assert all(i.control_bits.yield_ for i in scheduled(*flags))
    assert scheduled_path(scheduled(*flags), H100) == 16
    assert scheduled_path(scheduled(*[(t, 4, w, r, m, True) for t, _, w, r, m, _ in flags]), H100) == 32
    assert scheduled_path(scheduled(*[(t, 0, w, r, m, True) for t, _, w, r, m, _ in flags]), H100) == 16
    assert scheduled_path(scheduled(*[(t, 1, w, r, m) for t, _, w, r, m, _ in flags]), H100) == 8


def test_with_control_bits_a_wait_on_a_barrier_waits_for_its_variable_latency_producer():
    """LDS (stall 1) sets barrier 0, the FFMA waits for it: LDS at 0, FFMA at 23, the next run's LDS at 24: 24 clocks a
    run. The same with an LDG: its wait is the memory term's, so 2 (two issues). A store's read barrier (1), waited
    for by the MOV that overwrites its data, is released a clock after the store: 2. Two LDS on barrier 0 and one wait:
    it waits for the later (LDS at 0 and 1, FFMA at 24, next run at 25)."""
    assert SHARED_LOAD_CLOCKS[H100] == 23
    lds = ("LDS R4, [R0]", 1, 0, 7, 0)
    use = ("FFMA R5, R4, R4, R5", 1, 7, 7, 0b1)
    assert scheduled_path(scheduled(lds, use), H100) == 24
    assert scheduled_path(scheduled(("LDG.E R4, desc[UR4][R2.64]", 1, 0, 7, 0), use), H100) == 2
    assert scheduled_path(scheduled(("STS [R0], R5", 1, 7, 1, 0), ("MOV R5, R6", 1, 7, 7, 0b10)), H100) == 2
    assert scheduled_path(scheduled(lds, ("LDS R6, [R0+0x4]", 1, 0, 7, 0), use), H100) == 25
    assert scheduled_path(scheduled(lds, ("FFMA R5, R4, R4, R5", 1, 7, 7, 0)), H100) == 2  # no wait: no barrier
