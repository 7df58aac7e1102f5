"""kp.gpumodel.subcores: one SM's sub-cores issuing a basic block, on blocks whose clocks follow by hand from the rules
its docstring quotes (Huerta et al., MICRO 2025)."""

import pytest

from kp.gpumodel.gpus import gpu
from kp.gpumodel.pipes import rates
from kp.gpumodel.subcores import NONE, QUEUE, block_clocks, round_clocks

A6000, A100 = gpu("RTX A6000"), gpu("A100")


def _instruction(opcode, stall=1, write=NONE, read=NONE, wait=0, reads=None, yield_=False):
    return (opcode, stall, yield_, write, read, wait, reads)


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
    first FFMA's 3 reads, then one a clock (a run of 8 in 3 + 7 = 10, the loop's next run hitting from its first)."""
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
    """ "The instruction reserves a queue entry after dispatch and frees it when it leaves the unit" (5.4), five
    entries: one warp's LDS issue at clocks 0-4, the first entering the address calculation at clock 1 (holding its
    entry until clock 5), so the sixth issues at 5 as the second enters; the seventh waits for the next to leave at 9,
    the eighth at 13: a run of 6 ends at clock 6, of 7 at 10, of 8 at 14."""
    assert QUEUE == 5
    assert [_clocks(A6000, [_instruction("LDS")] * n) for n in (5, 6, 7, 8)] == [5, 6, 10, 14]


def test_a_load_result_waits_its_latency():
    """An LDG (its result to dependence counter 0) and an FMUL waiting on counter 0: the LDG leaves the queue a clock
    after its issue, its result comes the launch's latency later (here 500), the FMUL issues then: 502 clocks for one
    run of one warp. A shared load instead: released SHARED_LOAD_CLOCKS (23) after it starts on the data pipe."""
    block = [_instruction("LDG.E", write=0), _instruction("FMUL", wait=1, reads=((0, 2, False),))]
    assert _clocks(A6000, block, latency=500) == 502
    shared = [_instruction("LDS", write=0), _instruction("FMUL", wait=1, reads=((0, 2, False),))]
    assert _clocks(A6000, shared) == 1 + 23 + 1


def test_barrier_holds_a_block_until_its_last_warp():
    """Warps 0 and 4 share sub-core 0; warps 1-3 have one each. After an LDG whose result warp w reads, then BAR.SYNC,
    every warp of the block leaves the barrier together: with two blocks of 8 warps each barrier-separated phase
    cannot overlap its own block's, but the other block's can. One block of 8 takes as long as the slowest warp's
    load; the same 8 warps as 8 blocks of 1 warp (no one to wait for) take no longer."""
    block = [_instruction("LDG.E", write=0), _instruction("FMUL", wait=1, reads=((0, 2, False),)), _instruction("BAR")]
    together = _clocks(A6000, block, warps_per_block=8)
    alone = _clocks(A6000, block, warps_per_block=1, blocks=8)
    assert together >= alone
    assert together >= 500


def test_block_clocks_takes_a_loop_in_steady_state():
    """block_clocks: a block run twice or more per warp is a loop: 3 runs less 1, over 2; once: the one run."""
    block = tuple([FMUL] * 8)
    assert block_clocks(A100, block, 1, 1, 100, 500, (1.0, 1.0)) == (16, 3)
    assert block_clocks(A100, block, 1, 1, 1, 500, (1.0, 1.0)) == (_clocks(A100, block), 1)


@pytest.mark.parametrize("g", [A6000, A100])
def test_more_warps_hide_a_dependent_chain(g):
    """Volta-on latency hiding: a chain of 8 FMULs 4 clocks apart takes one warp 32 clocks a run; four warps on one
    sub-core (blocks of 4 warps place one per sub-core, so 16 warps: four each) issue in each other's stalls: still
    32 clocks a run on 8.6 (4 x 8 issues in 32 clocks), and on 8.0 the half-warp latch binds: 4 x 8 x 2 = 64."""
    block = [_instruction("FMUL", stall=4, reads=((0, 2, False),))] * 8
    expected = 32 if g is A6000 else 64
    assert _steady(g, block, warps_per_block=4, blocks=4) == expected
