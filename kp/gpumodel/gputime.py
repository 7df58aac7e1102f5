"""A modelled kernel time on a named GPU from the work each launch did (as the CPU stand-in's counters count it):
LaunchWork in, Estimate out. No constant is fitted to any kernel: every number is the GPU table's (kp.gpumodel.gpus,
where each is sourced: data sheets, NVIDIA's documentation, microbenchmark studies, this project's one bandwidth
measurement, and stated assumptions). Never counts anything itself and never runs on a GPU.

The terms of one launch:
- memory: the DRAM bytes (kp.gpumodel.caches: the sectors the L1s and the L2 leave for DRAM, from the addresses
  the sampled blocks touched; a LaunchWork without them takes its dram_*_sectors as given) / the GPU's achievable
  DRAM bandwidth, against the latency (Little's law): a warp makes `dram_round_trips_per_warp` waits one after
  another (kp.gpumodel.profile gives a block's slowest warp's: a block frees its place when its last warp exits),
  each as long as the slowest of its loads (L1 hit, L2 hit or DRAM: the share of round trips that miss each level
  follows from the misses kp.gpumodel.caches finds, a request missing whole, loads independently); the loads of one
  round trip are in flight together, the resident warps' round trips overlap. Blocks run in waves of blocks_per_sm x
  SMs; a wave takes max(its bytes / achievable bandwidth, round trips x mean latency). "latency" names a launch whose
  waves' round trips add up to more than its bytes / achievable bandwidth;
- L2: the bytes the L2 serves (the loads' L1 misses, from kp.gpumodel.caches, and every store's sectors) / the
  L2's bandwidth (kp.gpumodel.gpu_constants: bytes per clock per SM, from a microbenchmark study); on the memory
  side with the DRAM terms, named "L2" where it is the larger;
- compute: fp32 FLOPs / FP32 peak + fp64 FLOPs / FP64 peak (added: both issue from the same warp schedulers);
- shared memory and L1: the L1's data pipe serves one wavefront per clock per SM, shared between shared-memory
  wavefronts and the 128-byte lines of global and local requests (kp.gpumodel.caches, kp.gpumodel.local); named
  "shared memory" or "L1" by the larger; compute and the L1 pipe run on the SMs holding blocks: the SM given the
  most blocks, ceil(blocks / SMs), finishes last, so these take (that many blocks' work) / (one SM's rate);
- local memory (LDL/STL: per-thread arrays indexed by data, spills): its lines pass the L1 pipe; the share the L1
  cannot keep (the resident threads' stacks against the unified L1 less the shared memory carved out:
  kp.gpumodel.caches.local_miss_share) goes to the L2 term (not DRAM: the L2 is taken to hold it);
- issue: the warp instructions the launch executed (kp.gpumodel.compiled: the SASS each line ran) over the issue rate of
  the SMs holding blocks: each of an SM's schedulers issues one warp instruction per clock, and only while it holds a
  warp, so the busiest SM issues min(schedulers, its resident warps) per clock (kp.gpumodel.gpu_constants); and no
  faster than its warps' dependent instructions allow: W warps sharing a scheduler take, for one run each of a basic
  block, max(W x (its instructions + its bank bubbles), its critical path) clocks (kp.gpumodel.depend: what one warp
  alone needs, issuing in order as the compiler's control bits schedule it, its stall counts and its waits on dependency
  barriers; the register rule, each register read waited for, only where a listing has no control bits; Volkov 2016,
  "Understanding Latency Hiding on GPUs"), summed over the blocks' runs that the trace fixes; the bubbles are the clocks
  its instructions wait for the register file's two banks (kp.gpumodel.register_banks: two or three sources in one bank,
  not served by `.reuse`; a microbenchmark study's rule), each a clock its scheduler issues nothing, hidden under a
  longer path. Named "issue (dependent)" where the waits on the path are the larger part;
- arithmetic pipes: the per-lane pipes (FP32, integer, IMAD, special functions, shuffle, conversions, FP64) give fewer
  results per clock than issue asks of them on some GPUs (an FFMA holds an A100 sub-partition's 16 FP32 lanes 2 clocks):
  each pipe's warp instructions on the busiest SM (kp.gpumodel.compiled) x 32 / its results per clock per SM, the
  sub-partitions holding warps busy (kp.gpumodel.pipes: the CUDA C++ Programming Guide's throughput table; FP32 and IMAD
  share the FMA datapath; on 8.6 and 8.9 FP32 and integer share 128 lanes); beside them the SM's load/store pipe, three
  ways: every instruction it takes (loads, stores, atomics, S2R, VOTE, shuffles) one per clock per SM, its memory
  instructions one per 2 clocks per SM (1 on 8.0 and 9.0), and one per 4 clocks per sub-partition holding warps
  (kp.gpumodel.pipes); the slowest named ("FP32 pipe", "integer pipe", "FMA pipe", "LSU pipe", "LSU address pipe", ...);
- schedule: the busiest SM's sub-cores simulated clock by clock issuing the basic blocks the trace fixes, its resident
  warps each running them as often as the launch does (kp.gpumodel.subcores: the compiler's control bits, the issue
  policy, the units' input latches, the register file's ports and cache, the memory queue and its rates, the L1 data
  pipe's wavefronts, BAR.SYNC, and each global or local load's result the round trip's latency later, all from the
  published measurements that module quotes); the instructions of blocks it leaves out at the issue rate beside. It
  holds what the max of the terms above misses: in-order warps that wait on a unit, a queue or a barrier while
  another unit idles. Left out (0) without SASS or control bits;
- launch: no launch takes less than the GPU's launch floor.

How the terms combine (kp.gpumodel.overlap, where the rule is derived): by what can run at the same time on the
busiest SM. Without barriers the terms overlap: max(memory or L2, compute, issue, L1 pipe, arithmetic pipe). With
barriers (__syncthreads) a block cycles through a memory phase (its loads, waited for at the barrier) and an SM phase
(compute, issue, the pipes) and cannot overlap its own two; B blocks resident on an SM take, per iteration,
max(M + C, B x C): the launch takes max(memory, SM side, memory + the SM time one block slot runs in sequence, each
block with the SM to itself). With one block per SM the phases add, max(memory, L2) + max(compute, issue, L1 pipe,
arithmetic pipe); with many, the max of the terms. Where the chain is the longest the bound names both sides
("latency + compute"). With a schedule term the phases are not added: the simulation waits for a block's loads at its
barriers itself, and the memory side (DRAM, L2) bounds it from outside, max(memory, SM side with the schedule).
Launches are taken as run back to back (as `make bench` times them): the total is the sum of the launches' times.
Every block is taken to do the same work (the launch's counts / its blocks).

Not modelled: the L2's two partitions (a far hit is slower: kp.gpumodel.gpu_constants), dependent instructions across
basic blocks (a dependency barrier set in one and waited on in the next; the last stall count does cover the next
block's first) and in blocks the trace leaves open (kp.gpumodel.depend), tensor cores, overlap between launches, clocks
below boost, partly exposed latency near the edge between the two memory terms (add2_v1, one float per thread, is
modelled as add2 is: the README says by how much it misses), atomics' serialisation at the L2 (no sourced rate yet),
local latency.
"""

import dataclasses
import math

from kp.gpumodel.caches import SECTOR_BYTES, local_miss_share, traffic
from kp.gpumodel.estimates import Estimate, LaunchEstimate
from kp.gpumodel.gpu_constants import UNIFIED_L1_BYTES
from kp.gpumodel.gpus import WARP, gpu, occupancy
from kp.gpumodel.overlap import combine
from kp.gpumodel.pipes import busiest_pipe
from kp.gpumodel.schedule import schedule_seconds


@dataclasses.dataclass(frozen=True)
class LaunchWork:
    """What one launch (one <<<grid, block>>>) did, as counted; the counts are the whole launch's."""

    kernel: str
    grid_blocks: int
    threads_per_block: int
    registers_per_thread: int = 32  # ptxas's count (kp.gpumodel.ptxas.kernel_resources); 32 when not known
    shared_bytes_per_block: int = 0  # static + dynamic
    dram_read_sectors: int = 0  # 32-byte sectors the warps' loads touched, as traced
    dram_write_sectors: int = 0
    shared_wavefronts: int = 0
    flops: float = 0  # fp32; a fused multiply-add counts 2
    flops64: float = 0
    # DRAM waits one warp makes one after another: 1 for a kernel that loads what it needs, computes and stores; a
    # grid-stride loop waits once per iteration (unless it loads ahead); a load whose address comes from a load, twice.
    dram_round_trips_per_warp: float = 1
    # The memory hierarchy (kp.gpumodel.caches): the sampled blocks' sharing of sectors (a kp.gpumodel.caches.Sharing;
    # None: the dram_*_sectors above are what DRAM moves, and every load waits for DRAM), the sectors the loads asked
    # for, the global requests' 128-byte lines, and the barriers (__syncthreads) released, summed over the blocks. The
    # sectors and lines as nvcc's SASS requests them (kp.gpumodel.profile scales the trace's: kp.gpumodel.charges).
    sharing: object = None
    requested_read_sectors: int = 0
    load_sites: int = 1  # the global load instructions a round trip issues together
    l1_wavefronts: int = 0
    barriers: int = 0
    written_sectors: int = 0  # the sectors the stores wrote, as requested (each passes through the L2)
    issued: float = 0  # warp instructions executed, every class (kp.gpumodel.compiled); 0: not counted
    bank_stalls: float = 0  # issue clocks lost to register-bank conflicts, all warps (kp.gpumodel.register_banks)
    local_lines: float = 0  # 128-byte lines of the local loads and stores (kp.gpumodel.local: LDL, STL)
    local_bytes_per_thread: int = 0  # each thread's stack frame (ptxas): its local memory
    # (warp-level runs, instructions, critical path in clocks, bank bubbles per run) per basic block whose runs are
    # known (kp.gpumodel.depend)
    dependent_blocks: tuple = ()
    pipes: tuple = ()  # ((pipe, warp instructions), ...) on the arithmetic pipes (kp.gpumodel.pipes); (): not counted
    # ((warp-level runs, block), ...) of the basic blocks the sub-cores' simulation takes (kp.gpumodel.subcores); ():
    # none (no SASS, no control bits), and the schedule term is left out
    scheduled: tuple = ()
    # (shared, global or local) warp instructions of the launch, every block's (kp.gpumodel.schedule's
    # memory_instructions): the simulation's wavefronts per instruction are the launch's over these; (): over its own
    memory_instructions: tuple = ()
    # the compute capability of the SASS `scheduled` holds (its control bits are that arch's compiler's): estimating
    # the launch on a GPU of another is refused; (): none said (refused too where there are scheduled blocks)
    compute_capability: tuple = ()

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


def _dram_sectors(g, work, resident_blocks):
    """(read, write, hit shares, round-trip latency, sectors the L2 reads out) of a launch on `g`: kp.gpumodel.caches'
    where the work has its sharing; else as given, every load waiting for DRAM."""
    if work.sharing is None:
        reads = work.dram_read_sectors
        return reads, work.dram_write_sectors, (0.0, 0.0, 1.0), g.dram_latency, reads
    t = traffic(work.sharing, work.requested_read_sectors, resident_blocks, g.l2_bytes)
    latency = _round_trip_latency(g, work, t.l2_read, t.dram_read)
    return t.dram_read, t.dram_write, t.hit_shares(), latency, t.l2_read


def _round_trip_latency(g, work, l2_sectors, dram_sectors):
    """A round trip waits for the slowest of its loads (one request per load site): for DRAM if any of them misses
    the L2, else for the L2 if any misses its L1. A missing request is taken to miss whole (its sectors together), and
    the k loads of a round trip to miss independently, each as often as the share of requested sectors DRAM serves
    (p): 1 - (1 - p)^k of the round trips wait for DRAM, likewise for the L2 (one load site: the sector-weighted mean
    of the latencies). Not k x p, the union bound: it needs no two loads of a round trip ever to miss together."""
    if not work.requested_read_sectors:
        return g.dram_latency
    k, asked = work.load_sites, work.requested_read_sectors
    dram = 1.0 - (1.0 - min(1.0, dram_sectors / asked)) ** k
    l2 = max(dram, 1.0 - (1.0 - min(1.0, l2_sectors / asked)) ** k)
    return g.l1_latency + l2 * (g.l2_latency - g.l1_latency) + dram * (g.dram_latency - g.l2_latency)


def _dependent_waits(g, work, warps):
    """The clocks, summed over the launch's block runs, that a scheduler holding its share of `warps` waits beyond
    issuing their instructions and their bank bubbles (kp.gpumodel.depend): W warps per scheduler take max(W x (n + b)
    / issue rate, path) clocks for a run each of a block of n instructions and b bubbles, so each run adds max(0, path
    / W - (n + b) / issue rate). The bubbles are in work.bank_stalls already: where the path is the longer they hide
    under it (the ports are free again between instructions issued clocks apart), not add to it."""
    per_scheduler = warps / min(g.sub_partitions, warps)
    ipc = g.issue_per_scheduler_per_clock
    return sum(runs * max(0.0, path / per_scheduler - (n + b) / ipc) for runs, n, path, b in work.dependent_blocks)


def estimate_launch(gpu_or_name, work):
    """One launch's modelled time on a GPU (see the module's docstring for the terms)."""
    g = gpu(gpu_or_name)
    if work.grid_blocks < 1 or work.dram_round_trips_per_warp <= 0:
        raise ValueError(f"{work.kernel}: a launch has at least 1 block and a positive number of round trips per warp")
    if work.scheduled and tuple(work.compute_capability) != tuple(g.compute_capability):
        raise ValueError(f"{work.kernel}: its scheduled blocks are the SASS of compute capability "
                         f"{work.compute_capability or 'unsaid'}, not {g.name}'s {g.compute_capability}: take the "
                         f"work for {g.name} (Profile.work(gpu={g.name!r}))")  # fmt: skip
    occ = occupancy(g, work.threads_per_block, work.registers_per_thread, work.shared_bytes_per_block)
    per_wave = occ.blocks_per_sm * g.sms
    waves = math.ceil(work.grid_blocks / per_wave)
    wave_blocks = [per_wave] * (waves - 1) + [work.grid_blocks - per_wave * (waves - 1)]
    reads, writes, shares, latency, l2_reads = _dram_sectors(g, work, per_wave)
    resident = min(occ.blocks_per_sm, math.ceil(work.grid_blocks / g.sms))  # blocks on the busiest SM at once
    carved = resident * (work.shared_bytes_per_block + g.shared_reserved_per_block)
    missed = local_miss_share(resident * work.threads_per_block, work.local_bytes_per_thread,
                              UNIFIED_L1_BYTES[g.compute_capability] - carved)  # fmt: skip
    local_l2 = work.local_lines * 4 * SECTOR_BYTES * missed  # the local lines the L1 cannot keep
    l2_s = (SECTOR_BYTES * (l2_reads + max(work.written_sectors, writes)) + local_l2) / g.l2_bandwidth
    dram_bytes = SECTOR_BYTES * (reads + writes)
    waited = SECTOR_BYTES * (work.requested_read_sectors or work.dram_read_sectors) or dram_bytes
    warps_per_block = work.warps // work.grid_blocks
    bandwidth_s = latency_s = memory_s = reachable = 0.0
    if waited:
        per_warp = waited / (work.warps * work.dram_round_trips_per_warp)  # bytes one warp waits for per trip
        reachable = wave_blocks[0] * warps_per_block * per_warp / latency
        for blocks in wave_blocks:  # the full waves, then the last
            waits = work.dram_round_trips_per_warp * latency
            latency_s += waits
            memory_s += max(dram_bytes * blocks / work.grid_blocks / g.achievable_dram_bandwidth, waits)
        bandwidth_s = dram_bytes / g.achievable_dram_bandwidth
    busiest = math.ceil(work.grid_blocks / g.sms) / work.grid_blocks  # the busiest SM's share of the blocks
    compute_s = (work.flops / g.fp32_flops + work.flops64 / g.fp64_flops) * g.sms * busiest
    per_clock = g.l1_wavefronts_per_clock * g.clock_hz  # one SM's L1 data pipe
    shared_s = work.shared_wavefronts * busiest / per_clock
    l1_lines = work.l1_wavefronts + work.local_lines  # global and local requests' 128-byte lines
    l1_s = (work.shared_wavefronts + l1_lines) * busiest / per_clock
    # The busiest SM's warps: its schedulers issue only while they hold one (one warp, one instruction per clock)
    resident_warps = resident * warps_per_block
    issue_rate = min(g.sub_partitions, resident_warps) * g.issue_per_scheduler_per_clock * g.clock_hz
    waits = _dependent_waits(g, work, resident_warps)  # clocks a scheduler waits on its warps' operands
    stall_s = waits * busiest / (min(g.sub_partitions, resident_warps) * g.clock_hz)
    issue_s = (work.issued + work.bank_stalls) * busiest / issue_rate + stall_s
    issue_name = "issue (dependent)" if stall_s > issue_s / 2 else "issue"
    # The busiest SM's blocks' warp instructions on the slowest arithmetic pipe, its resident warps' sub-partitions busy
    arithmetic_name, pipe_s = busiest_pipe(g, ((p, n * busiest) for p, n in work.pipes), resident_warps)
    memory_name = "latency" if latency_s > bandwidth_s else "memory"
    if l2_s > memory_s:  # the L2 serves less than DRAM and the latency ask for
        memory_name, memory_side = "L2", l2_s
    else:
        memory_side = memory_s
    pipe_name = "shared memory" if work.shared_wavefronts >= l1_lines else "L1"
    on_sm = {"compute": compute_s, issue_name: issue_s, pipe_name: l1_s, arithmetic_name: pipe_s}
    schedule_s = schedule_seconds(g, work, resident, warps_per_block, latency, l1_lines, issue_rate)
    if schedule_s:
        on_sm["schedule"] = schedule_s
    # One block slot's blocks in sequence (as many as the waves), each with the SM to itself: the busiest SM's compute
    # and L1 pipe shared out by its blocks; its issue at the rate of one block's warps (kp.gpumodel.overlap)
    slot = waves / math.ceil(work.grid_blocks / g.sms)
    block_issue = min(g.sub_partitions, warps_per_block) * g.issue_per_scheduler_per_clock * g.clock_hz
    chain_sm = {k: v * slot for k, v in on_sm.items()}
    block_waits = _dependent_waits(g, work, warps_per_block) / min(g.sub_partitions, warps_per_block) / g.clock_hz
    chain_sm[issue_name] = ((work.issued + work.bank_stalls) / block_issue + block_waits) / work.grid_blocks * waves
    # and its pipes at the rate of one block's warps' sub-partitions
    chain_sm[arithmetic_name] = busiest_pipe(g, ((p, n * waves / work.grid_blocks) for p, n in work.pipes),
                                             warps_per_block)[1]  # fmt: skip
    sm_name = max(on_sm, key=on_sm.get)
    # the schedule waits for its loads at its barriers itself: with it the phases are not added again
    _, phases_add = combine(memory_side, on_sm[sm_name], max(chain_sm.values()), work.barriers > 0 and not schedule_s)
    if phases_add:
        chain_name = max(chain_sm, key=chain_sm.get)
        terms = {f"{memory_name} + {chain_name}": memory_side + chain_sm[chain_name], "launch": g.launch_floor}
    else:
        terms = {memory_name: memory_side, **on_sm, "launch": g.launch_floor}
    bound = max(terms, key=terms.get)
    seconds = terms[bound]
    return LaunchEstimate(
        kernel=work.kernel,
        seconds=seconds,
        bound=bound,
        dram_bytes=dram_bytes,
        achieved_bandwidth=dram_bytes / seconds,
        occupancy=occ,
        waves=waves,
        reachable_bandwidth=reachable,
        bandwidth_s=bandwidth_s,
        latency_s=latency_s,
        memory_s=memory_s,
        compute_s=compute_s,
        shared_s=shared_s,
        launch_floor_s=g.launch_floor,
        l1_s=l1_s,
        issue_s=issue_s,
        pipe_s=pipe_s,
        pipe_bound=arithmetic_name,
        stall_s=stall_s,
        l2_s=l2_s,
        latency=latency,
        hit_shares=shares,
        phases_add=phases_add,
        schedule_s=schedule_s,
    )


def estimate(gpu_or_name, launches):
    """The modelled time of a launch or a sequence of launches (LaunchWork) on a GPU, run back to back."""
    g = gpu(gpu_or_name)
    launches = [launches] if isinstance(launches, LaunchWork) else list(launches)
    each = tuple(estimate_launch(g, w) for w in launches)
    return Estimate(gpu=g.name, seconds=sum(e.seconds for e in each), launches=each)
