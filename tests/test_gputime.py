"""kp.gpumodel.gputime: counted launches -> a modelled time on a named GPU. Each case is worked out by hand in its
comments from the GPU table's constants (H100 SXM: 132 SMs, 1.98 GHz, 2.97e12 B/s achievable, 700 ns DRAM latency, 2.5
us launch floor), so a change to the model or to a constant shows here."""

import dataclasses

import pytest
import torch

from kp.gpumodel.caches import Sharing
from kp.gpumodel.gpus import gpu
from kp.gpumodel.gputime import Estimate, LaunchWork, estimate, estimate_launch

N = 2**26  # 67,108,864 float32 elements, the size `make bench` measured add2 at
H100_BW, LATENCY = 2.97e12, 700e-9


def add2(blocks, threads=256, **kw):
    """c = a + b on N floats: 2 reads + 1 write of 4 bytes each = 805,306,368 bytes = 25,165,824 sectors."""
    return LaunchWork(
        "add2", blocks, threads, 32, dram_read_sectors=2 * N * 4 // 32, dram_write_sectors=N * 4 // 32, **kw
    )


def test_launch_work_counts_bytes_warps_and_bytes_in_flight():
    w = add2(65536)
    assert (w.dram_read_sectors, w.dram_write_sectors, w.dram_bytes) == (16_777_216, 8_388_608, 805_306_368)
    assert w.warps == 65536 * 8
    assert w.bytes_in_flight_per_warp == 1024  # 32 threads x 16 bytes x 2 loads (the store does not hold the warp up)
    assert LaunchWork("k", 3, 33).warps == 6  # 33 threads are 2 warps


def test_add2_on_an_h100_is_memory_bound_near_the_measured_time():
    e = estimate_launch("H100", add2(65536, flops=N))  # 4 floats per thread: N / (256 x 4) = 65536 blocks
    # 256 threads x 32 registers: 8 blocks per SM -> 8 x 132 = 1056 blocks a wave -> 63 waves (62 full, then 64 blocks)
    assert (e.occupancy.blocks_per_sm, e.waves) == (8, 63)
    # 12288 bytes per block. A full wave: 1056 x 12288 = 12,976,128 bytes / 2.97e12 = 4.369 us > 700 ns: bandwidth.
    # The last: 64 x 12288 = 786,432 bytes / 2.97e12 = 0.265 us < 700 ns: one round trip. 62 x 4.369 + 0.7 = 271.58 us
    assert e.memory_s == pytest.approx(62 * 12_976_128 / H100_BW + LATENCY)
    assert e.seconds == pytest.approx(271.58e-6, rel=1e-4)
    assert e.bandwidth_s == pytest.approx(805_306_368 / H100_BW)  # 271.15 us
    assert e.latency_s == pytest.approx(63 * LATENCY)  # 44.1 us: one round trip per warp, per wave
    # Little's law in a full wave: 1056 blocks x 8 warps x 1024 bytes loaded / 700 ns = 12.4 TB/s, far above 2.97
    assert e.reachable_bandwidth == pytest.approx(1056 * 8 * 1024 / LATENCY)  # the loads in flight
    assert e.bound == "memory"
    assert e.achieved_bandwidth == pytest.approx(805_306_368 / 271.58e-6, rel=1e-4)  # 2.965 TB/s
    # `make bench` measured add2 at 3.02 TB/s: 805,306,368 / 3.02e12 = 266.7 us, 1.8% under the model
    assert e.seconds / (805_306_368 / 3.02e12) == pytest.approx(1.018, abs=0.002)
    # N FLOPs: 67,108,864 / (132 x 128 x 2 x 1.98e9) x (497 blocks on the busiest SM x 132 / 65536) = 1.004 us
    assert e.compute_s == pytest.approx(N / 66.90816e12 * 497 * 132 / 65536)


def test_the_model_misses_add2_v1s_measured_slowdown():
    # Known miss, written down in kp.gpumodel.gputime: one float per thread (262144 blocks of 256) keeps 384 bytes per
    # warp in flight; a full wave's 1056 x 8 x 384 bytes / 700 ns = 4.63 TB/s > 2.97, so it is memory-bound like add2.
    # 3072 bytes per block; 249 waves: 248 full (1056 x 3072 = 3,244,032 bytes / 2.97e12 = 1.092 us each), then 256
    # blocks (786,432 bytes = 0.265 us, under one 700 ns round trip). `make bench` measured 2.74 TB/s: 293.9 us.
    v1 = estimate_launch("H100", add2(262144))
    assert (v1.bound, v1.waves) == ("memory", 249)
    assert v1.seconds == pytest.approx(248 * 1056 * 3072 / H100_BW + LATENCY)  # 271.58 us
    assert 805_306_368 / 2.74e12 / v1.seconds == pytest.approx(1.082, abs=0.002)  # measured 8% slower


def test_few_resident_warps_are_latency_bound_and_slower_than_bandwidth_alone():
    # One block of one warp per SM, a grid-stride loop: each warp makes 4096 round trips moving 1536 bytes each
    # (two 16-byte loads and one store per thread), waiting for the 1024 it loads. 132 x 4096 x 1536 = 830,472,192
    # bytes.
    reads, writes = 132 * 4096 * 1024 // 32, 132 * 4096 * 512 // 32
    low = LaunchWork("grid_stride", 132, 32, 32, 0, reads, writes, dram_round_trips_per_warp=4096)
    e = estimate_launch("H100", low)
    # Little's law: 132 warps x 1024 bytes in flight / 700 ns = 193.1 GB/s reachable, not 2.97 TB/s
    assert e.reachable_bandwidth == pytest.approx(132 * 1024 / LATENCY)
    assert e.latency_s == pytest.approx(4096 * LATENCY)  # 2867.2 us, one wave
    assert e.bandwidth_s == pytest.approx(830_472_192 / H100_BW)  # 279.6 us
    assert (e.bound, e.seconds) == ("latency", pytest.approx(4096 * LATENCY))
    assert e.seconds > 10 * e.bandwidth_s
    # The same bytes over 8 warps per block and 1056 blocks (64 round trips each, the same 1536 bytes per trip):
    # 64 x 700 ns = 44.8 us per wave, one wave, under the 279.6 us the bytes take at 2.97 TB/s: memory-bound
    full = LaunchWork("full", 1056, 256, 32, 0, reads, writes, dram_round_trips_per_warp=64)
    f = estimate_launch("H100", full)
    assert (f.bound, f.waves, f.latency_s, f.seconds) == ("memory", 1, pytest.approx(64 * LATENCY), e.bandwidth_s)


def test_a_tiny_launch_takes_the_launch_floor():
    # 1024 floats: 8192 bytes read (256 sectors), 4096 written (128): 12288 / 2.97e12 = 4 ns; one round trip 700 ns
    e = estimate_launch("H100", LaunchWork("add2", 1, 256, 32, 0, 256, 128))
    assert (e.bound, e.seconds) == ("launch", 2.5e-6)
    assert e.memory_s == pytest.approx(LATENCY)


def test_flop_heavy_launches_are_compute_bound_fp32_and_fp64_added():
    # 1056 blocks = 8 per SM; 1e12 fp32 FLOPs / (132 x 128 x 2 x 1.98e9 = 66.908e12) = 14.946 ms,
    # 1e11 fp64 FLOPs / (132 x 64 x 2 x 1.98e9 = 33.454e12) = 2.989 ms; reads 1056 x 8 warps x 128 bytes = 0.36 us
    work = LaunchWork("fma_chain", 1056, 256, 32, 0, 1056 * 8 * 4, flops=1e12, flops64=1e11)
    e = estimate_launch("H100", work)
    assert (e.bound, e.seconds) == ("compute", pytest.approx(1e12 / 66.90816e12 + 1e11 / 33.45408e12))
    assert e.seconds == pytest.approx(17.935e-3, rel=1e-4)


def test_one_block_past_a_round_number_of_sms_doubles_compute():
    # 132 blocks of 1e9 FLOPs: one per SM, 1e9 / (66.908e12 / 132) = 1.973 ms. 133: one SM runs two, 3.946 ms
    one_each = estimate_launch("H100", LaunchWork("k", 132, 256, flops=132e9))
    one_more = estimate_launch("H100", LaunchWork("k", 133, 256, flops=133e9))
    assert one_each.compute_s == pytest.approx(1e9 / (66.90816e12 / 132))
    assert one_more.compute_s == pytest.approx(2 * one_each.compute_s)


def test_shared_memory_wavefronts_take_a_clock_each_per_sm():
    # 1e8 wavefronts over 1056 blocks (8 per SM): 1e8 / (132 SMs x 1.98e9 /s) = 382.6 us
    e = estimate_launch(
        "H100", LaunchWork("transpose", 1056, 256, 32, 4096, 1056 * 64, 1056 * 64, shared_wavefronts=1e8)
    )
    assert (e.bound, e.shared_s) == ("shared memory", pytest.approx(1e8 / (132 * 1.98e9)))


def test_launches_add_up_and_other_gpus_use_their_own_constants():
    a, b = add2(65536), LaunchWork("tiny", 1, 32)
    both = estimate("h100", [a, b])
    assert isinstance(both, Estimate) and both.gpu == "H100 SXM"
    assert both.seconds == pytest.approx(estimate("H100", a).seconds + 2.5e-6)
    assert [e.bound for e in both.launches] == ["memory", "launch"]
    # A100: 2.039e12 x 2.97 / 3.35 = 1.8077e12 B/s; 8 blocks x 108 SMs = 864 a wave, 76 waves, each (the last's 736
    # blocks too: 9,043,968 bytes = 5.0 us) over 700 ns: 805,306,368 / 1.8077e12 = 445.5 us
    a100 = estimate(gpu("A100"), a)
    assert a100.launches[0].waves == 76
    assert a100.seconds == pytest.approx(805_306_368 / (2.039e12 * 2.97 / 3.35))


def test_impossible_launches_are_errors():
    with pytest.raises(ValueError, match="at least 1 block"):
        estimate("H100", LaunchWork("k", 0, 256))
    with pytest.raises(ValueError, match="1025 threads per block"):
        estimate("H100", LaunchWork("k", 1, 1025))
    with pytest.raises(ValueError, match="unknown GPU 'P100'"):
        estimate("P100", LaunchWork("k", 1, 256))


def phases(threads, shared, barriers):
    """264 blocks, each: 16 round trips per warp for 4 sectors a warp each (a loop over 16 tiles), 5e6 FLOPs, 1e4
    shared wavefronts, and `barriers` __syncthreads per block between loading a tile and computing on it."""
    warps = threads // 32
    return LaunchWork(
        "tiled",
        264,
        threads,
        32,
        shared,
        dram_read_sectors=264 * warps * 16 * 4,
        shared_wavefronts=264 * 1e4,
        flops=264 * 5e6,
        dram_round_trips_per_warp=16,
        barriers=264 * barriers,
    )


def test_with_one_block_per_sm_barrier_separated_phases_add():
    """1024 threads and 150 KiB of shared memory: one block per SM (228 // 151), 264 blocks = 2 waves. Memory: each
    wave's 16 round trips x 700 ns = 11.2 us (its 132 x 32 x 64 sectors, 8.65 MB, take 2.91 us at 2.97 TB/s):
    22.4 us, latency-bound. On the SM: 2 blocks x 5e6 FLOPs / (66.908e12 / 132) = 19.73 us; 2 x 1e4 wavefronts /
    1.98e9 = 10.1 us. While the block computes no load of it is in flight, and no other block's: they add, 42.13 us."""
    e = estimate_launch("H100", phases(1024, 150 * 1024, barriers=32))
    assert (e.occupancy.blocks_per_sm, e.waves, e.phases_add) == (1, 2, True)
    assert e.memory_s == pytest.approx(2 * 16 * LATENCY) and e.compute_s == pytest.approx(2 * 5e6 / (66.90816e12 / 132))
    assert e.l1_s == pytest.approx(2e4 / 1.98e9)
    assert (e.bound, e.seconds) == ("latency + compute", pytest.approx(22.4e-6 + 19.73e-6, rel=1e-3))


def test_without_barriers_the_slowest_resource_bounds():
    # The same block with no barrier: its warps load the next tile while others compute: max(22.4, 19.73) us
    e = estimate_launch("H100", phases(1024, 150 * 1024, barriers=0))
    assert (e.phases_add, e.bound, e.seconds) == (False, "latency", pytest.approx(22.4e-6))


def test_two_blocks_per_sm_hide_only_each_others_compute():
    """512 threads and 64 KiB: 3 blocks per SM fit (228 // 65), one wave of 396 >= 264, so the busiest SM holds B = 2.
    Per iteration M = 700 ns, C = 5e6 / 16 FLOPs / (66.908e12 / 132) = 0.6165 us: max(M + C, 2 x C) = M + C, so
    16 x (0.7 + 0.6165) = 11.2 + 9.864 = 21.06 us, above both the memory side (11.2 us) and the SM's 19.73 us."""
    several = estimate_launch("H100", phases(512, 64 * 1024, barriers=32))
    assert (several.occupancy.blocks_per_sm, several.waves, several.phases_add) == (3, 1, True)
    assert several.memory_s == pytest.approx(16 * LATENCY)
    assert several.compute_s == pytest.approx(2 * 5e6 / (66.90816e12 / 132))
    per_block = 5e6 / (66.90816e12 / 132)
    assert (several.bound, several.seconds) == ("latency + compute", pytest.approx(16 * LATENCY + per_block))
    # Without barriers the same blocks overlap fully: the compute, 19.73 us
    free = estimate_launch("H100", phases(512, 64 * 1024, barriers=0))
    assert (free.phases_add, free.bound, free.seconds) == (False, "compute", pytest.approx(2 * per_block))


def many_small_blocks(flops_per_block):
    """4224 blocks of 2 warps, 32 resident per SM (the H100's limit of blocks): one wave, B = 32 on every SM; 16
    round trips per warp of 4 sectors each (17.3 MB: 5.8 us at 2.97 TB/s, under 16 x 700 ns = 11.2 us), a barrier
    per round."""
    blocks = 132 * 32
    return LaunchWork("small", blocks, 64, 32, 0, dram_read_sectors=blocks * 2 * 16 * 4, flops=blocks * flops_per_block,
                      dram_round_trips_per_warp=16, barriers=blocks * 16)  # fmt: skip


def test_many_blocks_per_sm_tend_to_the_max_of_the_terms():
    """B = 32: with 1e6 FLOPs a block (C = 1e6 / 16 / (66.908e12 / 132) = 0.1233 us a round) 32 x C = 3.95 us > M + C
    = 0.82 us: the SM never idles, compute-bound at 32 x 1.973 = 63.13 us, as the max of the terms. With 1e5 (C =
    12.3 ns) the chain is 16 x (700 + 12.3) ns = 11.397 us: the max of the terms (11.2 us) and 1.8% more."""
    busy = estimate_launch("H100", many_small_blocks(1e6))
    assert (busy.occupancy.blocks_per_sm, busy.waves) == (32, 1)
    assert (busy.bound, busy.phases_add, busy.seconds) == ("compute", False, pytest.approx(32 * 1e6 / 506.88e9))
    waiting = estimate_launch("H100", many_small_blocks(1e5))
    assert (waiting.bound, waiting.seconds) == ("latency + compute", pytest.approx(16 * LATENCY + 1e5 / 506.88e9))
    assert waiting.seconds / max(waiting.memory_s, waiting.compute_s) == pytest.approx(1.0176, abs=1e-4)


def test_barriers_are_counted_per_block():
    """patterns.cu's transpose: one block, one __syncthreads; shared_stride on 1024 floats: 32 blocks, one each."""
    import helpers
    import kp.files
    from kp.gpumodel.profile import profile

    k = helpers.load_kernel(kp.files.ROOT / "tests" / "cuda_cpu" / "patterns.cu", target="cpu", check=True, quiet=True)
    x, out = torch.arange(1024.0), torch.zeros(1024)
    assert [w.barriers for w in profile(k.run, 5, x, out, 1).work()] == [1]
    assert [w.barriers for w in profile(k.run, 4, x, out, 1).work()] == [32]


def test_the_issue_term_is_warp_instructions_over_the_busy_schedulers():
    """Each of an SM's 4 schedulers issues one warp instruction per clock while it holds a warp. 528 blocks of 8
    warps, 8 blocks per SM fit (2048 threads): the busiest SM gets 4 blocks, 32 warps, so issues 4 per clock; it runs
    4 x 8 x 1000 = 32,000 warp instructions: 32,000 / (4 x 1.98e9) = 4.04 us. One warp per SM (132 blocks of 32
    threads) has one scheduler busy: 10,000 instructions / 1.98e9 = 5.05 us, though it runs fewer of them."""
    many = estimate_launch("H100", LaunchWork("fma", 528, 256, issued=528 * 8 * 1000))
    assert (many.bound, many.seconds, many.issue_s) == ("issue", pytest.approx(32_000 / (4 * 1.98e9)), many.seconds)
    one = estimate_launch("H100", LaunchWork("fma", 132, 32, issued=132 * 10_000))
    assert (one.bound, one.seconds) == ("issue", pytest.approx(10_000 / 1.98e9))
    assert estimate_launch("H100", LaunchWork("fma", 132, 32)).issue_s == 0  # no instructions counted: no term


def test_the_issue_term_adds_to_the_memory_phase_with_one_block_and_barriers():
    """phases() with no FLOPs and 2e5 warp instructions per warp: the busiest SM's 2 blocks x 32 warps x 2e5 =
    1.28e7 instructions at 4 per clock take 1.616 ms, the larger on-SM side; one block per SM with barriers, so it adds
    to the 22.4 us of memory."""
    work = dataclasses.replace(phases(1024, 150 * 1024, barriers=32), flops=0, issued=264 * 32 * 2e5)
    e = estimate_launch("H100", work)
    assert e.issue_s == pytest.approx(2 * 32 * 2e5 / (4 * 1.98e9))
    assert (e.bound, e.seconds) == ("latency + issue", pytest.approx(22.4e-6 + e.issue_s))


def test_an_l2_resident_tile_reused_by_every_block_is_bound_by_the_l2s_bandwidth():
    """1056 blocks each read the same 1 MiB (32,768 sectors, shared along x) once, with no L1 reuse: DRAM reads it
    once (it fits the L2: 0.35 us at 2.97 TB/s), the L2 serves it 1056 times: 1056 x 1 MiB / (34.5 B per clock per SM
    x 132 SMs x 1.98e9) = 122.8 us, the bound."""
    tile = 32_768
    sharing = Sharing(grid=(1056, 1, 1), samples=(4, 1, 1), l1_wavefronts=0, l2_read_sectors=1056 * tile, barriers=0,
                      reads=(0, tile, 0, 0, 0, 0, 0, 0), writes=(0,) * 8)  # fmt: skip
    work = LaunchWork("reuse", 1056, 256, sharing=sharing, requested_read_sectors=1056 * tile)
    e = estimate_launch("H100", work)
    assert e.dram_bytes == tile * 32 and e.bandwidth_s == pytest.approx(tile * 32 / H100_BW)
    assert e.l2_s == pytest.approx(1056 * tile * 32 / (34.5 * 132 * 1.98e9))
    assert (e.bound, e.seconds) == ("L2", pytest.approx(e.l2_s))
    assert e.hit_shares[1] == pytest.approx(1 - 1 / 1056)  # the L2 serves all but the first read of each sector


def test_local_memory_passes_the_l1_pipe_and_what_the_l1_cannot_keep_goes_to_the_l2():
    """1056 blocks of 256 threads, 8 per SM (2048 threads), 65 local lines per warp (tests/test_local.py's
    local_array): 1056 x 8 x 65 = 549,120 lines. The busiest SM's 8 x 8 x 65 = 4160 lines take 4160 / 1.98e9 = 2.10
    us of its L1 pipe. 256 bytes of stack per thread: 2048 x 256 = 512 KiB resident against the 256 KiB unified L1
    less 8 x 1 KiB reserved for the blocks' shared memory: 1 - 248 / 512 = 51.6% of the lines go to the L2: 549,120 x
    128 x 0.515625 = 36.2 MB / (34.5 x 132 x 1.98e9 = 9.017 TB/s) = 4.02 us. 64 bytes a thread (128 KiB) fit: no L2."""
    spilled = LaunchWork("local", 1056, 256, local_lines=1056 * 8 * 65, local_bytes_per_thread=256)
    e = estimate_launch("H100", spilled)
    assert e.occupancy.blocks_per_sm == 8 and e.l1_s == pytest.approx(8 * 8 * 65 / 1.98e9)
    assert e.l2_s == pytest.approx(1056 * 8 * 65 * 128 * (1 - 248 / 512) / (34.5 * 132 * 1.98e9))
    assert (e.bound, e.seconds) == ("L2", e.l2_s)
    fits = estimate_launch("H100", dataclasses.replace(spilled, local_bytes_per_thread=64))
    assert (fits.l2_s, fits.l1_s, fits.bound) == (0, e.l1_s, "launch")  # 2.10 us of L1 pipe, under the 2.5 us floor


def test_the_model_misses_same_address_atomics_serialising_at_the_l2():
    """Known miss, written down in kp.gpumodel.gputime: tests/cuda_cpu/terms.cu's atomic_one (2^22 threads, each
    atomicAdd(out, 1.0f): one REDG per warp, its 32 updates of one address served one after another at the L2) is
    charged its sectors alone, 1 per warp request, and models as fast as atomic_distinct (out[i]: 4 sectors a request;
    16384 blocks of 256 in 16 waves of 1056, each writing 1 MiB, 0.35 us at 2.97 TB/s, under the one 700 ns round trip
    a kernel that only stores waits for its stores: both 16 x 700 ns = 11.2 us), where a GPU serialises every one of
    atomic_one's 2^22 updates."""
    import warnings

    import helpers
    import kp.files
    from kp.gpumodel.profile import profile

    k = helpers.load_kernel(kp.files.ROOT / "tests" / "cuda_cpu" / "terms.cu", target="cpu", check=True, quiet=True)
    n, seconds = 2**22, {}
    for which, name in ((1, "one"), (2, "distinct")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "sampled: ..."
            p = profile(k.run, which, torch.zeros(64), torch.zeros(n, dtype=torch.int32), torch.zeros(n), max_blocks=8)
        [line] = p.lines
        assert (line.kind, line.units / line.requests) == ("atomic", 1 if name == "one" else 4)
        seconds[name] = p.estimate("H100")
    assert seconds["distinct"] == pytest.approx(16 * LATENCY)
    assert seconds["one"] == seconds["distinct"]
