"""kp.gpumodel.subcores: one SM's sub-cores issuing a basic block, on blocks whose clocks follow by hand from the rules
its docstring quotes (Huerta et al., MICRO 2025)."""

import pytest

from kp.gpumodel.gpus import gpu
from kp.gpumodel.pipes import rates
from kp.gpumodel.subcores import NONE, QUEUE, round_clocks, simulate

A6000, A100 = gpu("RTX A6000"), gpu("A100")


def _instruction(opcode, stall=1, write=NONE, read=NONE, wait=0, reads=None, yield_=False, operands=""):
    return (opcode, stall, yield_, write, read, wait, reads, operands)


def _clocks(g, block, warps_per_block=1, blocks=1, runs=1, latency=500, wavefronts=(1.0, 1.0)):
    on = (tuple(g.compute_capability), tuple(sorted(rates(g).items())))
    return round_clocks(tuple(block), *on, warps_per_block, blocks, runs, latency, wavefronts)


def _steady(g, block, **kw):
    """Clocks per run once the loop is going: (3 runs - 1 run) / 2, as block_clocks takes a loop."""
    return (_clocks(g, block, runs=3, **kw) - _clocks(g, block, runs=1, **kw)) / 2


# FMUL R1, R2, 0.5: one source read (bank 0), so the register file never holds it up
FMUL = _instruction("FMUL", reads=((0, 2, False),))


def test_full_warp_fp32_issues_every_clock_half_warp_every_other():
    """The input latch (5.1.1): held 1 clock by a full-warp unit, 2 by a half-warp one. On 8.6 FP32 has two 16-lane
    datapaths per sub-core, and an FMUL takes either: 8 independent FMULs of one warp issue a clock apart (8 clocks a
    run); on 8.0 one 16-lane unit (64 FP32 results per clock per SM): 2 clocks apart, 16 a run."""
    block = [FMUL] * 8
    assert _steady(A6000, block) == 8
    assert _steady(A100, block) == 16


def test_one_warp_waits_its_stall_counts():
    """A stall count of 4 on each (a dependent chain, as the compiler encodes it): 4 clocks apart however free the
    units are."""
    block = [_instruction("FMUL", stall=4, reads=((0, 2, False),))] * 8
    assert _steady(A6000, block) == 32


def test_integer_takes_the_shared_datapath_on_86():
    """On 8.6 integer instructions take only the datapath FP32 shares (the GA102 whitepaper): IADD3s of one warp issue
    2 clocks apart (16 a run of 8), where FMULs issue every clock."""
    iadd = _instruction("IADD3", reads=((0, 2, False),))
    assert _steady(A6000, [iadd] * 8) == 16


def test_register_bank_ports_and_the_reuse_cache():
    """Two banks, one read a clock each (5.3): an FFMA reading R2, R4, R6 (one bank) takes 3 clocks of its port, so 8
    of them take 24 clocks a run; with every source's reuse bit set the second on hit the cache and read nothing: the
    first FFMA's 3 reads, then none (8 clocks a run)."""
    three = ((0, 2, False), (1, 4, False), (2, 6, False))
    block = [_instruction("FFMA", reads=three)] * 8
    assert _steady(A6000, block) == 24
    kept = ((0, 2, True), (1, 4, True), (2, 6, True))
    assert _steady(A6000, [_instruction("FFMA", reads=kept)] * 8) == 8


def test_memory_instructions_one_sub_core_every_four_clocks_four_every_eight():
    """Table 1 of Huerta et al.: a sub-core's address calculation takes a memory instruction every 4 clocks; the
    shared structures one every 2 from all sub-cores, so with four sub-cores busy each gets one every 8. 16
    independent LDS a run: one warp 64 clocks; four warps (one per sub-core) 4 x 16 x 2 = 128."""
    block = [_instruction("LDS")] * 16
    assert _steady(A6000, block) == 64
    assert _steady(A6000, block, warps_per_block=4) == 128


def test_the_memory_queue_holds_five_then_issue_stalls():
    """Table 1 of Huerta et al. (one sub-core): "each sub-core can issue one instruction per cycle for five consecutive
    memory instructions. The issue of the 6th memory instruction is stalled", then one every 4 clocks: relative to
    the first, the sixth issues at 11, the seventh at 15, the eighth at 19 (the table's cycles 2-6, 13, 17, 21). A run
    of n of one warp ends a clock after its last issue: 5, 12, 16, 20."""
    assert QUEUE == 5
    assert [_clocks(A6000, [_instruction("LDS")] * n) for n in (5, 6, 7, 8)] == [5, 12, 16, 20]


def test_a_load_result_waits_its_latency():
    """An LDG (its result to dependence counter 0) and an FMUL waiting on counter 0: the result comes the launch's
    latency after the LDG's issue (here 500), the FMUL issues then: 501 clocks for one run of one warp. A shared load
    instead: Table 2's 24 clocks from issue to a dependent's issue (32-bit, a register address)."""
    block = [_instruction("LDG.E", write=0), _instruction("FMUL", wait=1, reads=((0, 2, False),))]
    assert _clocks(A6000, block, latency=500) == 501
    shared = [_instruction("LDS", write=0), _instruction("FMUL", wait=1, reads=((0, 2, False),))]
    assert _clocks(A6000, shared) == 24 + 1


def _issues(g, block, warps_per_block, blocks=1, runs=1, wavefronts=(1.0, 1.0)):
    log = []
    on = (tuple(g.compute_capability), tuple(sorted(rates(g).items())))
    simulate(tuple(block), *on, warps_per_block, blocks, runs, 500, wavefronts, log=log)
    return log


def test_barrier_holds_a_block_until_its_last_warp():
    """BAR.SYNC: no warp of a block issues past it before the block's last warp has issued it. Eight warps each load
    (their results 500 clocks on), wait, then BAR, then FMUL: every FMUL after the barrier issues after the last BAR.
    With a NOP in its place the first warps run on: some FMUL issues before the last NOP."""
    wait = _instruction("FMUL", wait=1, reads=((0, 2, False),))
    for barrier, held in (("BAR.SYNC.DEFER_BLOCKING", True), ("NOP", False)):
        block = [_instruction("LDG.E", write=0), wait, _instruction(barrier), FMUL]
        log = _issues(A6000, block, warps_per_block=8)
        last_barrier = max(c for c, _, k in log if k == 2)
        first_after = min(c for c, _, k in log if k == 3)
        assert (first_after > last_barrier) is held


def test_the_scheduler_keeps_to_one_warp_then_takes_the_youngest():
    """CGGTY (5.1.2): sub-core 0 holds warps 0 and 4 (warp ID % 4); with four independent FMULs each, it issues warp
    4's four (the youngest first, then greedily the same warp), then warp 0's."""
    log = _issues(A6000, [FMUL] * 4, warps_per_block=8)
    assert [w for _, w, _ in log if w % 4 == 0] == [4, 4, 4, 4, 0, 0, 0, 0]


def test_imad_takes_one_datapath_on_86():
    """IMAD on 8.6 runs on one of the two 16-lane datapaths (NVIDIA's forum answer, "FMAheavy pipe handles IMAD, IDP,
    and FP32 operations. FMAlite pipe handles FP32"): eight of one warp issue 2 clocks apart, 16 a run."""
    imad = _instruction("IMAD", reads=((0, 2, False),))
    assert _steady(A6000, [imad] * 8) == 16


@pytest.mark.parametrize("g", [A6000, A100])
def test_more_warps_hide_a_dependent_chain(g):
    """Volta-on latency hiding: a chain of 8 FMULs 4 clocks apart takes one warp 32 clocks a run; four warps on one
    sub-core (blocks of 4 warps place one per sub-core, so 16 warps: four each) issue in each other's stalls: still
    32 clocks a run on 8.6 (4 x 8 issues in 32 clocks), and on 8.0 the half-warp latch binds: 4 x 8 x 2 = 64."""
    block = [_instruction("FMUL", stall=4, reads=((0, 2, False),))] * 8
    expected = 32 if g is A6000 else 64
    assert _steady(g, block, warps_per_block=4, blocks=4) == expected


def _pipeline(depbar):
    """One stage of a cp.async pipeline as nvcc compiles it for sm_86 (`__pipeline_memcpy_async`, `__pipeline_commit`,
    `__pipeline_wait_prior(n)`): LDGSTS (its copy, no counter of its own), LDGDEPBAR (the group, counter SB0),
    DEPBAR.LE SB0, n (stall 4, as Huerta et al. section 4 says it must be), then an FMUL."""
    return [_instruction("LDGSTS.E", read=1), _instruction("LDGDEPBAR", write=0),
            _instruction("DEPBAR.LE", stall=4, operands=depbar), FMUL]  # fmt: skip


def test_depbar_waits_until_at_most_n_groups_are_pending():
    """DEPBAR.LE SB0, N (Huerta et al. section 4: "requires the Dependence counter SB0 to have a value less or equal
    to" N): a committed group counts on SB0 until its copies land, the launch's round trip (500 here) after the
    LDGSTS's issue. N = 0: every run waits for its own copy: the LDGSTS at 0, LDGDEPBAR 1, DEPBAR 500 (the copy lands),
    the FMUL 504, so 505 clocks a run, 3 x 505 for three. N = 1: the first DEPBAR passes with one group pending
    (FMUL at 6); the second (at 9) waits for the first group (500), the FMUL at 504; the third LDGSTS at 505, its
    DEPBAR at 507 finds the second group landed at 7 + 500: one pending, the FMUL at 511: 512 clocks for three runs.
    Without the wait, three runs take 3 x 7 = 21."""
    assert _clocks(A6000, _pipeline("SB0, 0x0"), runs=3) == 3 * 505
    assert _clocks(A6000, _pipeline("SB0, 0x1"), runs=3) == 512
    assert _clocks(A6000, _pipeline("SB0, 0x3"), runs=3) == 3 * 7


def test_depbar_also_waits_for_the_counters_it_lists():
    """DEPBAR.LE SB1, 0x3, {0}: SB1 holds nothing, but the listed SB0 must be at zero ("the instruction cannot be
    issued until the values of the Dependence counters specified by those IDs ... are equal to 0"): the LDG's result
    (SB0) comes at 500, the DEPBAR issues then and the FMUL 4 later: 505 for one run."""
    block = [_instruction("LDG.E", write=0), _instruction("DEPBAR.LE", stall=4, operands="SB1, 0x3, {0}"), FMUL]
    assert _clocks(A6000, block) == 505


def test_a_barriers_thread_count_releases_that_many_warps():
    """`BAR.SYNC.DEFER_BLOCKING 0x1, 0x40` (a named barrier of 64 threads, PTX's bar.sync 1, 64): it releases each 2
    warps that arrive, not the block's 8. Eight warps each load (their results 500 clocks on, the loads spread over
    the memory queue), wait, then BAR, then FMUL: with the count, FMULs issue in 4 pairs, the first before the last
    BAR; without it (`0x1`, the block), all after the last BAR."""
    wait = _instruction("FMUL", wait=1, reads=((0, 2, False),))
    for operands, held in (("0x1, 0x40", False), ("0x1", True)):
        block = [_instruction("LDG.E", write=0), wait, _instruction("BAR.SYNC.DEFER_BLOCKING", operands=operands), FMUL]
        log = _issues(A6000, block, warps_per_block=8)
        bars = sorted(c for c, _, k in log if k == 2)
        after = sorted(c for c, _, k in log if k == 3)
        assert (after[0] > bars[-1]) is held
        if not held:  # each pair leaves the clock after its second warp arrives (its sub-core one issue a clock)
            assert [a - b for a, b in zip(after[::2], bars[1::2])] == [1, 1, 1, 1]


def test_a_barrier_waits_for_no_warp_that_is_done():
    """PTX's bar.sync waits "for non-exited threads of all other warps participating": 3 warps at a barrier of 2
    (`0x1, 0x40`) over one run each, all arriving at clock 0 (three sub-cores): the first two leave together (their
    FMULs at 1), and the third, whose partner never comes, is released when they are done, not held forever: its FMUL
    at 2, 3 clocks in all (the block's barrier, 2: all three FMULs at 1)."""
    block = [_instruction("BAR.SYNC.DEFER_BLOCKING", operands="0x1, 0x40"), FMUL]
    assert [(c, w) for c, w, k in _issues(A6000, block, 3) if k == 1] == [(1, 0), (1, 1), (2, 2)]
    assert _clocks(A6000, block, warps_per_block=3) == 3
    block[0] = _instruction("BAR.SYNC.DEFER_BLOCKING", operands="0x1")
    assert _clocks(A6000, block, warps_per_block=3) == 2


def test_clocks_stay_integers_with_fractional_wavefronts():
    """Review L1: a mean of 2.375 wavefronts a shared instruction (1.7 lines a global one) puts the data pipe at
    fractional clocks, but results are released at whole clocks, so every issue and the answer are integers (a
    fractional clock would see integer-timed frees up to a clock late)."""
    lds, wait = _instruction("LDS", write=0), _instruction("FMUL", wait=1, reads=((0, 2, False),))
    block = [lds, lds, _instruction("LDG.E", write=1), wait] * 3
    log = _issues(A6000, block, warps_per_block=4, blocks=2, runs=3, wavefronts=(2.375, 1.7))
    assert all(isinstance(c, int) for c, _, _ in log)
    on = (tuple(A6000.compute_capability), tuple(sorted(rates(A6000).items())))
    assert isinstance(round_clocks(tuple([lds, wait] * 4), *on, 4, 2, 3, 500, (2.375, 1.7)), int)
