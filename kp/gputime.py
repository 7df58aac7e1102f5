"""A modelled kernel time on a named GPU from the work each launch did (as the CPU stand-in's counters count it):
LaunchWork in, Estimate out, roofline-style. No constant is fitted to any kernel: every number is the GPU table's
(kp.gpus, where each is sourced: data sheets, the CUDA Programming Guide, this project's one bandwidth measurement, and
two stated assumptions, DRAM latency and the launch floor). Never counts anything itself and never runs on a GPU.

A launch takes the largest of these terms, and the Estimate names the one that bounds it:
- memory: the traced DRAM bytes (32-byte sectors read + written, as traced, not the ideal count) / the GPU's
  achievable DRAM bandwidth;
- latency (Little's law): the DRAM bandwidth a launch can reach is bytes in flight / DRAM latency, where bytes in flight
  = resident warps x the bytes each warp keeps in flight (the DRAM bytes it loads per round trip, a round trip being a
  wait for DRAM data: `dram_round_trips_per_warp` of them one after another; stores do not hold a warp up).
  Blocks run in waves of blocks_per_sm x SMs
  blocks (waves = ceil(blocks / (blocks_per_sm x SMs))); a wave moves its bytes at min(achievable, reachable), so
  the memory time is, wave by wave, max(bytes / achievable bandwidth, round trips x latency). The last, partial wave
  has only part of the SMs busy: its bytes in flight, and so its reachable bandwidth, are that share of a full
  wave's, and it takes a whole round-trip time for its few bytes. "latency" names a launch whose waves' round trips
  add up to more than bytes / achievable bandwidth (too few warps, or too few bytes per warp, in flight);
- compute: fp32 FLOPs / FP32 peak + fp64 FLOPs / FP64 peak (added: both issue from the same warp schedulers);
- shared memory: shared-memory wavefronts / (one wavefront per clock per SM) / clock;
  compute and shared memory run on the SMs holding blocks: the SM given the most blocks, ceil(blocks / SMs),
  finishes last, so these take (that many blocks' work) / (one SM's rate);
- launch: no launch takes less than the GPU's launch floor.
Launches are taken as run back to back (as `make bench` times them): the total is the sum of the launches' times.
Every block is taken to do the same work (the launch's counts / its blocks).

Not modelled: L2 hits (every traced sector is taken to go to DRAM; a working set smaller than the L2 can be faster),
instruction latency and issue limits other than FLOP/s, tensor cores, overlap between launches, clocks below boost,
and latency partly exposed near the edge between the two memory terms: add2_v1 (one float per thread, 384 bytes in
flight per warp) comes out memory-bound at 272 us like add2 (16-byte Packs), where `make bench` measured 2.74 TB/s
(294 us) against add2's 3.02 TB/s (267 us).
"""

import dataclasses
import math

from kp.gpus import WARP, Occupancy, gpu, occupancy
from kp.table import Quantity, Table, quantity

# Global memory is moved in 32-byte sectors (CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory").
SECTOR_BYTES = 32


@dataclasses.dataclass(frozen=True)
class LaunchWork:
    """What one launch (one <<<grid, block>>>) did, as counted; the counts are the whole launch's."""

    kernel: str
    grid_blocks: int
    threads_per_block: int
    registers_per_thread: int = 32  # ptxas's count (kp.ptxas.kernel_resources); 32 when not known
    shared_bytes_per_block: int = 0  # static + dynamic
    dram_read_sectors: int = 0  # 32-byte sectors the warps' loads touched, as traced
    dram_write_sectors: int = 0
    shared_wavefronts: int = 0
    flops: float = 0  # fp32; a fused multiply-add counts 2
    flops64: float = 0
    # DRAM waits one warp makes one after another: 1 for a kernel that loads what it needs, computes and stores; a
    # grid-stride loop waits once per iteration (unless it loads ahead); a load whose address comes from a load, twice.
    dram_round_trips_per_warp: float = 1

    @property
    def dram_bytes(self):
        return SECTOR_BYTES * (self.dram_read_sectors + self.dram_write_sectors)

    @property
    def warps(self):
        return self.grid_blocks * -(-self.threads_per_block // WARP)

    @property
    def waited_bytes(self):
        """The DRAM bytes warps wait for: the loads (a store does not hold a warp up), or, in a kernel that only
        stores, the stores."""
        return SECTOR_BYTES * self.dram_read_sectors or self.dram_bytes

    @property
    def bytes_in_flight_per_warp(self):
        """The DRAM bytes one warp waits for per round trip."""
        return self.waited_bytes / (self.warps * self.dram_round_trips_per_warp)


@dataclasses.dataclass(frozen=True)
class LaunchEstimate:
    """One launch's modelled time, each term in seconds, and the term that bounds it."""

    kernel: str
    seconds: float
    bound: str  # "memory", "latency", "compute", "shared memory" or "launch"
    dram_bytes: int
    achieved_bandwidth: float  # dram_bytes / seconds, bytes/s
    occupancy: Occupancy
    waves: int
    reachable_bandwidth: float  # Little's law in the first (fullest) wave: bytes in flight / DRAM latency
    bandwidth_s: float  # dram_bytes / achievable bandwidth
    latency_s: float  # the waves' round trips: round trips x latency per wave
    memory_s: float  # wave by wave, the larger of the two
    compute_s: float
    shared_s: float
    launch_floor_s: float


@dataclasses.dataclass(frozen=True)
class Estimate:
    """A sequence of launches on one GPU: the total and each launch's LaunchEstimate."""

    gpu: str
    seconds: float
    launches: tuple

    def describe(self):
        bounds = "; ".join(f"{e.kernel}: {_time(e.seconds)}, {e.bound}-bound" for e in self.launches)
        return f"{_time(self.seconds)} on the {self.gpu}, modelled ({bounds})"

    def table(self):
        """A row per launch: the modelled time and its bound first, then occupancy and waves, then each term of the
        time (the largest is the bound); times as Quantities (5.73 ms, 42.1 µs); short headers, to fit Lab's output."""
        rows = [
            {
                "kernel": f"`{e.kernel}`",
                "modelled": Quantity(e.seconds * 1e6, "µs"),
                "bound": e.bound,
                "DRAM": Quantity(e.achieved_bandwidth / 1e12, "TB/s"),
                "occupancy": f"{e.occupancy.occupancy:.0%} ({e.occupancy.limited_by})",
                "waves": e.waves,
                "DRAM term": Quantity(e.bandwidth_s * 1e6, "µs"),
                "latency term": Quantity(e.latency_s * 1e6, "µs"),
                "FLOP term": Quantity(e.compute_s * 1e6, "µs"),
                "shared term": Quantity(e.shared_s * 1e6, "µs"),
            }
            for e in self.launches
        ]
        return Table(rows, f"modelled on the {self.gpu} (kp.gputime): {_time(self.seconds)} in all")


def _time(seconds):
    return quantity(seconds, "s")


def estimate_launch(gpu_or_name, work):
    """One launch's modelled time on a GPU (see the module's docstring for the terms)."""
    g = gpu(gpu_or_name)
    if work.grid_blocks < 1 or work.dram_round_trips_per_warp <= 0:
        raise ValueError(f"{work.kernel}: a launch has at least 1 block and a positive number of round trips per warp")
    occ = occupancy(g, work.threads_per_block, work.registers_per_thread, work.shared_bytes_per_block)
    per_wave = occ.blocks_per_sm * g.sms
    waves = math.ceil(work.grid_blocks / per_wave)
    wave_blocks = [per_wave] * (waves - 1) + [work.grid_blocks - per_wave * (waves - 1)]
    warps_per_block = work.warps // work.grid_blocks
    bandwidth_s = latency_s = memory_s = reachable = 0.0
    if work.dram_bytes:
        for blocks in wave_blocks:  # the full waves, then the last
            in_flight = blocks * warps_per_block * work.bytes_in_flight_per_warp
            reachable = reachable or in_flight / g.dram_latency
            share = blocks / work.grid_blocks
            waits = work.waited_bytes * share / (in_flight / g.dram_latency)  # the wave's round trips x latency
            latency_s += waits
            memory_s += max(work.dram_bytes * share / g.achievable_dram_bandwidth, waits)
        bandwidth_s = work.dram_bytes / g.achievable_dram_bandwidth
    busiest = math.ceil(work.grid_blocks / g.sms) / work.grid_blocks  # the busiest SM's share of the blocks
    compute_s = (work.flops / g.fp32_flops + work.flops64 / g.fp64_flops) * g.sms * busiest
    shared_s = work.shared_wavefronts * busiest / g.clock_hz
    terms = {"memory": memory_s, "compute": compute_s, "shared memory": shared_s, "launch": g.launch_floor}
    bound = max(terms, key=terms.get)
    if bound == "memory" and latency_s > bandwidth_s:
        bound = "latency"
    seconds = max(terms.values())
    return LaunchEstimate(
        kernel=work.kernel,
        seconds=seconds,
        bound=bound,
        dram_bytes=work.dram_bytes,
        achieved_bandwidth=work.dram_bytes / seconds,
        occupancy=occ,
        waves=waves,
        reachable_bandwidth=reachable,
        bandwidth_s=bandwidth_s,
        latency_s=latency_s,
        memory_s=memory_s,
        compute_s=compute_s,
        shared_s=shared_s,
        launch_floor_s=g.launch_floor,
    )


def estimate(gpu_or_name, launches):
    """The modelled time of a launch or a sequence of launches (LaunchWork) on a GPU, run back to back."""
    g = gpu(gpu_or_name)
    launches = [launches] if isinstance(launches, LaunchWork) else list(launches)
    each = tuple(estimate_launch(g, w) for w in launches)
    return Estimate(gpu=g.name, seconds=sum(e.seconds for e in each), launches=each)
