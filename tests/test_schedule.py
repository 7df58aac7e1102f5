"""kp.gpumodel.schedule: a launch's clocks of the simulated basic blocks, wave by wave, and the schedule term
kp.gpumodel.gputime takes from them, on blocks whose clocks follow by hand (kp.gpumodel.subcores' rules)."""

import dataclasses

import pytest

from kp.gpumodel.gpus import gpu
from kp.gpumodel.gputime import LaunchWork, estimate_launch
from kp.gpumodel.pipes import rates
from kp.gpumodel.schedule import block_clocks, schedule_clocks
from kp.gpumodel.subcores import NONE, round_clocks

A6000, A100 = gpu("RTX A6000"), gpu("A100")
# FMUL R1, R2, 0.5: one source read, the register file never holds it up
FMUL = ("FMUL", 1, False, NONE, NONE, 0, ((0, 2, False),), "R1, R2, 0.5")


def _clocks(g, block, warps_per_block=1, blocks=1, runs=1):
    on = (tuple(g.compute_capability), tuple(sorted(rates(g).items())))
    return round_clocks(tuple(block), *on, warps_per_block, blocks, runs, 500, (1.0, 1.0))


def test_block_clocks_takes_a_loop_in_steady_state():
    """block_clocks: one run from all the warps starting together, then each further run at the steady state's clocks
    (two runs' less one's); under one run, the warps that run it once (two of four warps: 0.5 runs per warp of
    4-warp blocks), and under one warp a block, one warp's run times the wave's share (0.5 of the 1-warp blocks)."""
    block = tuple([FMUL] * 8)
    once, twice = _clocks(A100, block), _clocks(A100, block, runs=2)
    assert (once, twice) == (15, 31)
    assert block_clocks(A100, block, 1, 1, 100, 500, (1.0, 1.0)) == once + 99 * (twice - once)
    on = (tuple(A100.compute_capability), tuple(sorted(rates(A100).items())))
    assert block_clocks(A100, block, 4, 1, 0.5, 500, (1.0, 1.0)) == round_clocks(
        block, *on, 4, 1, 1, 500, (1.0, 1.0), 2
    )
    assert block_clocks(A100, block, 1, 1, 0.5, 500, (1.0, 1.0)) == once * 0.5


def test_a_block_one_warp_of_the_launch_runs_is_not_charged_in_every_wave():
    """A load and its dependent add, run by one warp of a launch of 100 blocks of 8 warps per SM (3 resident, 34
    waves): the busiest SM's share of one warp's run, not a run in each wave (20434 clocks before)."""
    load, add = (
        ("LDG.E", 1, False, 0, NONE, 0, None, "R2, desc[UR4][R4.64]"),
        ("FADD", 4, False, NONE, NONE, 1, None, "R3, R2, R3"),
    )
    warps = 132 * 100 * 8
    one = block_clocks(A100, (load, add), 8, 1, 1 / 8, 600, (1.0, 1.0))  # one warp's run
    clocks, _ = schedule_clocks(A100, ((1 / warps, (load, add)),), 8, 3, 100, 600, (1.0, 1.0))
    assert one > 600 and clocks == pytest.approx(one * 100 * 8 / warps)


def test_the_last_partial_wave_is_simulated_apart():
    """schedule_clocks: 4 blocks on the SM, 3 resident: one wave of 3 and one of 1, each its own simulation (a block
    of 8 FMULs of 1-warp blocks, 1 run per warp: on an A100 the three blocks' warps sit on three sub-cores, so both
    waves take a run's 15 clocks, issues at 0, 2, ..., 14: 30 in all, not the 4/3 x 15 of one wave's clocks shared
    out)."""
    block = tuple([FMUL] * 8)
    clocks, instructions = schedule_clocks(A100, ((1.0, block),), 1, 3, 4, 500, (1.0, 1.0))
    assert clocks == _clocks(A100, block, blocks=3) + _clocks(A100, block, blocks=1) == 30
    assert instructions == 4 * 8


def test_the_schedule_term_is_the_busiest_sms_clocks():
    """schedule_seconds through estimate_launch: 2 x 84 one-warp blocks on an RTX A6000 (84 SMs) put 2 on the busiest
    SM, resident together on two sub-cores; each warp runs a chain of 8 FMULs (stall counts of 4) 10000 times: one run
    of 7 x 4 + 1 = 29 clocks, then 9999 more at the steady 32: 319997 clocks at the 1.8 GHz boost clock (178 µs). Every
    instruction is in the simulated block, so nothing is added at the issue rate; the issue term (2 warps on 2
    schedulers, 80000 clocks) knows nothing of the chain here (no dependent blocks given), so the schedule binds."""
    block = tuple([("FMUL", 4, *FMUL[2:])] * 8)
    blocks = 2 * A6000.sms
    work = LaunchWork(kernel="k", grid_blocks=blocks, threads_per_block=32, issued=10000 * 8 * blocks,
                      scheduled=((10000 * blocks, block),), compute_capability=(8, 6))  # fmt: skip
    e = estimate_launch(A6000, work)
    assert round(e.schedule_s * A6000.clock_hz, 6) == 319997
    assert e.bound == "schedule"
    assert LaunchWork(kernel="k", grid_blocks=blocks, threads_per_block=32).scheduled == ()
    assert estimate_launch(A6000, LaunchWork(kernel="k", grid_blocks=blocks, threads_per_block=32)).schedule_s == 0.0


def test_a_cp_async_pipeline_is_taken_once_filled():
    """A loop keeping one cp.async group in flight (LDGSTS, LDGDEPBAR, DEPBAR.LE SB0, 0x1, an FMUL; the launch's
    round trip 500): run 1 passes its DEPBAR at once (one group pending), run 2 waits for run 1's copy (500, its FMUL
    at 504), run 3 passes again (its DEPBAR at 507, run 2's copy landed at 7 + 500), run 4 waits for run 3's (505 +
    500, its FMUL at 1009): two runs a round trip, 505 / 2 clocks a run. Two runs less one (498) would take it for a
    run a round trip; block_clocks takes the mean over runs 3 and 4, m = 2 runs after the first two."""
    block = (("LDGSTS.E", 1, False, NONE, 1, 0, None, "[R2], [R4.64]"), ("LDGDEPBAR", 1, False, 0, NONE, 0, None, ""),
             ("DEPBAR.LE", 4, False, NONE, NONE, 0, None, "SB0, 0x1"), FMUL)  # fmt: skip
    four, two, once = (_clocks(A6000, block, runs=r) for r in (4, 2, 1))
    assert (once, two, four) == (7, 505, 1010)
    assert block_clocks(A6000, block, 1, 1, 100, 500, (1.0, 1.0)) == once + 99 * (four - two) / 2
    assert block_clocks(A6000, block, 1, 1, 3, 500, (1.0, 1.0)) == _clocks(A6000, block, runs=3) == 512


def test_a_block_one_warp_of_each_runs_is_simulated_with_those_warps():
    """Review L4: an epilogue under `if (threadIdx.x < 32)` runs once per block, 1/8 of a run per warp of 8-warp blocks:
    block_clocks simulates warp 0 of each of the 3 resident blocks running it (an LDG, then a dependent FMUL on the
    round trip of 500): warps 0, 8 and 16, all on sub-core 0 (warp ID % 4), their LDGs at 0, 1, 2, their FMULs at
    500-502, 503 clocks; not all 24 warps (518 clocks) cut to an eighth (64.75, far under a load's latency)."""
    block = (("LDG.E", 1, False, 0, NONE, 0, None, "R2, [R4.64]"), ("FMUL", 1, False, NONE, NONE, 1, *FMUL[6:]))
    assert block_clocks(A6000, block, 8, 3, 1 / 8, 500, (1.0, 1.0)) == 503
    on = (tuple(A6000.compute_capability), tuple(sorted(rates(A6000).items())))
    assert round_clocks(block, *on, 8, 3, 1, 500, (1.0, 1.0), 3) == 503
    assert round_clocks(block, *on, 8, 3, 1, 500, (1.0, 1.0)) == 518


def test_the_wavefront_means_are_the_launchs_over_all_its_shared_instructions():
    """Review L7: a launch's shared wavefronts are its whole; where half its shared instructions are in blocks the
    simulation leaves out (work.memory_instructions twice the simulated), each simulated LDS takes the launch's mean,
    wavefronts / all of them (here 2), not wavefronts / the simulated ones (4): the same schedule as the work with half
    the wavefronts and no count. 84 blocks of 4 warps on an RTX A6000 (one per SM), 8 LDS and an FMUL waiting for
    their results a run, 1000 runs a warp: at 4 wavefronts an LDS the data pipe holds the results back (4 clocks an
    LDS), at 2 less: 82 clocks a run against 140."""
    lds = ("LDS", 1, False, 0, NONE, 0, None, "R4, [R2]")
    block = (*[lds] * 8, ("FMUL", 1, False, NONE, NONE, 1, *FMUL[6:]))
    warps, runs = 4 * A6000.sms, 1000
    lds = 8 * runs * warps
    base = dict(kernel="k", grid_blocks=A6000.sms, threads_per_block=128, issued=9 * runs * warps,
                scheduled=((runs * warps, block),), compute_capability=(8, 6))  # fmt: skip
    told = estimate_launch(A6000, LaunchWork(**base, shared_wavefronts=4 * lds, memory_instructions=(2 * lds, 0)))
    halved = estimate_launch(A6000, LaunchWork(**base, shared_wavefronts=2 * lds))
    alone = estimate_launch(A6000, LaunchWork(**base, shared_wavefronts=4 * lds))
    assert told.schedule_s == halved.schedule_s
    assert alone.schedule_s / told.schedule_s > 1.5, (alone.schedule_s, told.schedule_s)


def test_scheduled_blocks_are_estimated_only_on_their_own_arch():
    """Review L9: the scheduled blocks hold one arch's SASS, control bits and all; estimating them on a GPU of another
    compute capability (an A100, 8.0, from sm_86's work), or from work that does not say its own, is refused, not
    simulated with the wrong stall counts. Another GPU of the same compute capability takes them; work without
    scheduled blocks goes anywhere."""
    block = (FMUL,) * 8
    work = LaunchWork(kernel="k", grid_blocks=84, threads_per_block=32, issued=8 * 84, scheduled=((84, block),))
    for made in ((8, 6), ()):
        with pytest.raises(ValueError, match="compute capability"):
            estimate_launch(A100 if made else A6000, dataclasses.replace(work, compute_capability=made))
    assert estimate_launch(gpu("RTX 3090"), dataclasses.replace(work, compute_capability=(8, 6))).schedule_s > 0
    assert estimate_launch(A100, dataclasses.replace(work, scheduled=())).schedule_s == 0.0
