"""The GPU table and occupancy: what each named GPU has (SMs, clock, DRAM bandwidth, L2, the per-SM limits of its
compute capability) and how many blocks of a kernel fit on one of its SMs, by the CUDA Occupancy Calculator's rules.
Data first: GPU and Occupancy are frozen records a test can read; gpu_table() is the Table people read. Never times
a kernel (kp.gpumodel.gputime turns counted work into a modelled time) and never needs a GPU.

Sources, named again where each number is set:
- the CUDA C++ Programming Guide, "Compute Capabilities": the table "Technical Specifications per Compute Capability"
  (warps, blocks, registers and shared memory per SM and per block; the 1 KiB per block the runtime reserves from
  8.0 on) and the table "Throughput of Native Arithmetic Instructions" (FP32 and FP64 results per clock per SM);
- cuda_occupancy.h, the CUDA Toolkit's occupancy calculator (the rules cudaOccupancyMaxActiveBlocksPerMultiprocessor
  follows): registers go to warps in units of 256, and to each of an SM's 4 sub-partitions whole warps at a time;
  shared memory goes in units of 128 bytes (256 before 8.0), the runtime's reserve included; with the default
  carveout a block may use all of the SM's shared memory;
- each GPU's NVIDIA data sheet or architecture whitepaper: SMs, boost clock, DRAM bandwidth, L2 (named on its row);
- kp.gpumodel.gpu_constants: what no data sheet gives (achievable bandwidth, latencies and L2 bandwidth per compute
  capability, the launch floor), each with its source.
"""

import dataclasses
import re

from kp.gpumodel.gpu_constants import (  # noqa: F401 (H100_MEASURED* and h100_measured: read from kp.gpumodel.gpus too)
    ACHIEVABLE_FRACTION,
    DRAM_LATENCY,
    H100_MEASURED,
    H100_MEASURED_BANDWIDTH,
    H100_MEASURED_ON,
    H100_MEASURED_TORCH,
    HIT_CLOCKS,
    ISSUE_PER_SCHEDULER_PER_CLOCK,
    L1_WAVEFRONTS_PER_CLOCK,
    L2_BYTES_PER_CLOCK_PER_SM,
    LAUNCH_FLOOR,
    h100_measured,
)
from kp.table import Table

WARP = 32
KiB, MiB = 1024, 1024**2

# Per compute capability (7.5 Turing, 8.0 A100, 8.6 the other Ampere chips, 8.9 Ada, 9.0 Hopper): the Programming
# Guide's "Technical Specifications per Compute Capability" (warps / blocks / shared memory per SM, most shared memory
# per block with opt-in, the reserve per block), cuda_occupancy.h's shared allocation unit, and the FP32 / FP64
# results per clock per SM from "Throughput of Native Arithmetic Instructions".
#       warps/SM  blocks/SM  shared/SM  shared/block  reserved  unit  fp32  fp64
SM_LIMITS = {
    (7, 5): (32, 16, 64 * KiB, 64 * KiB, 0, 256, 64, 2),
    (8, 0): (64, 32, 164 * KiB, 163 * KiB, KiB, 128, 64, 32),
    (8, 6): (48, 16, 100 * KiB, 99 * KiB, KiB, 128, 128, 2),
    (8, 9): (48, 24, 100 * KiB, 99 * KiB, KiB, 128, 128, 2),
    (9, 0): (64, 32, 228 * KiB, 227 * KiB, KiB, 128, 128, 64),
}


@dataclasses.dataclass(frozen=True)
class GPU:
    """One GPU: its data sheet, its compute capability's per-SM limits, and the constants kp.gpumodel.gputime uses.
    Bandwidths in bytes/s, sizes in bytes, times in seconds; the same on every compute capability here: 65536
    registers per SM and per block, at most 255 per thread, 1024 threads per block, 4 sub-partitions per SM."""

    name: str
    compute_capability: tuple
    sms: int
    boost_clock_ghz: float
    dram_bandwidth: float  # the data sheet's
    achievable_dram_bandwidth: float  # measured or derived: see ACHIEVABLE_FRACTION
    l2_bytes: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    shared_per_sm: int  # what the default carveout lets blocks use
    shared_per_block: int  # the most one block may have (past 48 KiB only as opted-in dynamic shared memory)
    shared_reserved_per_block: int  # kept by the runtime for each block (1 KiB from 8.0 on)
    shared_unit: int  # shared memory is allocated in multiples of this
    fp32_per_clock_per_sm: int
    fp64_per_clock_per_sm: int
    l1_hit_clocks: int
    l2_hit_clocks: int
    l2_bytes_per_clock_per_sm: float  # the L2's bandwidth per SM (kp.gpumodel.gpu_constants)
    dram_latency: float = DRAM_LATENCY
    l1_wavefronts_per_clock: int = L1_WAVEFRONTS_PER_CLOCK  # per SM: shared wavefronts and global 128-byte lines
    launch_floor: float = LAUNCH_FLOOR
    issue_per_scheduler_per_clock: int = ISSUE_PER_SCHEDULER_PER_CLOCK
    registers_per_sm: int = 65536
    max_registers_per_block: int = 65536
    max_registers_per_thread: int = 255
    register_unit: int = 256  # a warp's registers are allocated in multiples of 256
    sub_partitions: int = 4  # each with one warp scheduler
    max_threads_per_block: int = 1024

    @property
    def max_threads_per_sm(self):
        return self.max_warps_per_sm * WARP

    @property
    def clock_hz(self):
        return self.boost_clock_ghz * 1e9

    @property
    def l1_latency(self):
        """An L1 hit's latency, seconds."""
        return self.l1_hit_clocks / self.clock_hz

    @property
    def l2_latency(self):
        """An L2 hit's latency, seconds."""
        return self.l2_hit_clocks / self.clock_hz

    @property
    def l2_bandwidth(self):
        """The L2's bandwidth, bytes/s: bytes per clock per SM x SMs x boost clock."""
        return self.l2_bytes_per_clock_per_sm * self.sms * self.clock_hz

    @property
    def fp32_flops(self):
        """Peak FP32 FLOP/s: SMs x results per clock x 2 (a fused multiply-add is two) x boost clock."""
        return self.sms * self.fp32_per_clock_per_sm * 2 * self.clock_hz

    @property
    def fp64_flops(self):
        """Peak FP64 FLOP/s (not tensor cores), likewise."""
        return self.sms * self.fp64_per_clock_per_sm * 2 * self.clock_hz


def _gpu(name, cc, sms, boost_clock_ghz, dram_bandwidth, l2_mib, achievable=None):
    """A GPU row: its data sheet numbers, and the rest from its compute capability's SM_LIMITS."""
    achievable = achievable or dram_bandwidth * ACHIEVABLE_FRACTION
    return GPU(
        name, cc, sms, boost_clock_ghz, dram_bandwidth, achievable, int(l2_mib * MiB), *SM_LIMITS[cc], *HIT_CLOCKS[cc],
        L2_BYTES_PER_CLOCK_PER_SM[cc],
    )  # fmt: skip


# The SM counts are the data sheets' CUDA cores / FP32 lanes per SM (e.g. 16,896 / 128 = 132 on the H100 SXM).
GPUS = {
    g.name: g
    for g in (
        # NVIDIA H100 Tensor Core GPU data sheet, SXM5 80GB: 132 SMs, 1.98 GHz boost, 3.35 TB/s HBM3, 50 MB L2;
        # the one GPU whose achievable bandwidth this project measured.
        _gpu("H100 SXM", (9, 0), 132, 1.98, 3.35e12, 50, achievable=H100_MEASURED_BANDWIDTH),
        # Same data sheet, PCIe 80GB: 114 SMs, 1.755 GHz boost, 2.0 TB/s HBM2e, 50 MB L2.
        _gpu("H100 PCIe", (9, 0), 114, 1.755, 2.0e12, 50),
        # NVIDIA A100 data sheet and Ampere whitepaper, SXM4 80GB: 108 SMs, 1.41 GHz boost, 2,039 GB/s HBM2e, 40 MB L2.
        _gpu("A100", (8, 0), 108, 1.41, 2.039e12, 40),
        # NVIDIA L4 data sheet (7,424 CUDA cores) and Ada whitepaper (AD104): 58 SMs, 2.04 GHz boost, 300 GB/s GDDR6,
        # 48 MB L2.
        _gpu("L4", (8, 9), 58, 2.04, 300e9, 48),
        # NVIDIA T4 data sheet (2,560 CUDA cores) and Turing whitepaper: 40 SMs, 1.59 GHz boost, 320 GB/s GDDR6,
        # 4 MB L2.
        _gpu("T4", (7, 5), 40, 1.59, 320e9, 4),
        # NVIDIA Ada Lovelace whitepaper, GeForce RTX 4090: 128 SMs, 2.52 GHz boost, 1,008 GB/s GDDR6X, 72 MB L2.
        _gpu("RTX 4090", (8, 9), 128, 2.52, 1008e9, 72),
        # NVIDIA Turing whitepaper, GeForce RTX 2080 Ti (reference board): 68 SMs (4,352 CUDA cores), 1.545 GHz
        # boost, 616 GB/s GDDR6, 5.5 MB L2 (5,632 KB: taken as 5.5 MiB).
        _gpu("RTX 2080 Ti", (7, 5), 68, 1.545, 616e9, 5.5),
        # NVIDIA A10 data sheet (9,216 CUDA cores, 600 GB/s GDDR6) and the Ampere GA102 whitepaper (6 MB L2):
        # 72 SMs, 1.695 GHz boost.
        _gpu("A10", (8, 6), 72, 1.695, 600e9, 6),
        # NVIDIA Ampere GA102 whitepaper, GeForce RTX 3090: 82 SMs (10,496 CUDA cores), 1.695 GHz boost, 936 GB/s
        # GDDR6X, 6 MB L2.
        _gpu("RTX 3090", (8, 6), 82, 1.695, 936e9, 6),
        # Same whitepaper, GeForce RTX 3080 (10 GB): 68 SMs (8,704 CUDA cores), 1.71 GHz boost, 760 GB/s GDDR6X,
        # 5 MB L2.
        _gpu("RTX 3080", (8, 6), 68, 1.71, 760e9, 5),
        # NVIDIA RTX A6000 data sheet (10,752 CUDA cores, 768 GB/s GDDR6) and the GA102 whitepaper (6 MB L2): 84 SMs,
        # 1.80 GHz boost.
        _gpu("RTX A6000", (8, 6), 84, 1.80, 768e9, 6),
    )
}

ALIASES = {"h100": "H100 SXM", "h100sxm5": "H100 SXM", "a100sxm": "A100", "a10080gb": "A100", "4090": "RTX 4090",
           "a6000": "RTX A6000", "3090": "RTX 3090", "3080": "RTX 3080", "2080ti": "RTX 2080 Ti"}  # fmt: skip


def _key(name):
    return re.sub(r"[\s_-]+", "", name).lower()


def gpu(name):
    """The GPU called `name`, in any case, spaces and dashes optional ("H100" is the H100 SXM); a GPU is returned as is.
    Raises ValueError naming the known GPUs."""
    if isinstance(name, GPU):
        return name
    by_key = {_key(n): g for n, g in GPUS.items()}
    found = by_key.get(_key(name)) or GPUS.get(ALIASES.get(_key(name), ""))
    if found is None:
        raise ValueError(f"unknown GPU {name!r}: known GPUs are {', '.join(GPUS)} ('H100' is the H100 SXM)")
    return found


def gpu_table():
    """The GPU table as people read it: one row per GPU."""
    rows = [
        {
            "GPU": g.name,
            "compute capability": "{}.{}".format(*g.compute_capability),
            "SMs": g.sms,
            "boost clock (MHz)": round(g.boost_clock_ghz * 1000),
            "DRAM (TB/s, data sheet)": g.dram_bandwidth / 1e12,
            "DRAM (TB/s, achievable)": g.achievable_dram_bandwidth / 1e12,
            "L2 (MiB)": g.l2_bytes // MiB,
            "FP32 (TFLOP/s)": g.fp32_flops / 1e12,
            "FP64 (TFLOP/s)": g.fp64_flops / 1e12,
            "warps / blocks per SM": f"{g.max_warps_per_sm} / {g.max_blocks_per_sm}",
            "shared memory per SM / block (KiB)": f"{g.shared_per_sm // KiB} / {g.shared_per_block // KiB}",
        }
        for g in GPUS.values()
    ]
    return Table(rows, "GPUs (kp.gpumodel.gpus; achievable DRAM bandwidth measured on the H100 SXM, derived elsewhere)")


# What can stop one more block from fitting on an SM, in the order `limited_by` names ties.
FACTORS = ("threads", "registers", "shared memory", "blocks")


@dataclasses.dataclass(frozen=True)
class Occupancy:
    """How many blocks of one kernel an SM holds at once, and what stops one more."""

    gpu: str
    threads_per_block: int
    registers_per_thread: int
    shared_bytes_per_block: int
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float  # resident warps / the SM's most warps
    limited_by: str  # the first of FACTORS that allows no more blocks
    limits: dict  # factor -> blocks per SM it alone allows (a factor that allows any number is absent)
    registers_per_block: int  # as allocated: per warp rounded up to the register unit
    shared_per_block: int  # as allocated: with the runtime's reserve, rounded up to the shared unit

    def describe(self):
        n = self.shared_bytes_per_block
        shared = (f", {n // KiB} KiB shared" if n % KiB == 0 else f", {n} bytes shared") if n else ""
        also = [f for f in FACTORS if f != self.limited_by and self.limits.get(f) == self.blocks_per_sm]
        tied = f"; {' and '.join(also)} would allow exactly {self.blocks_per_sm} too" if also else ""
        article = "an" if self.gpu[0] in "AEFHILMNORSX" else "a"  # as the letter is said: "an H100", "a T4"
        blocks = f"{self.blocks_per_sm} block{'s' if self.blocks_per_sm != 1 else ''}"
        return (
            f"{self.registers_per_thread} registers x {self.threads_per_block} threads{shared} -> "
            f"{blocks} ({self.warps_per_sm} warps) per SM on {article} {self.gpu}: "
            f"{self.occupancy:.0%} occupancy (limited by {self.limited_by}{tied})"
        )


def _round_up(x, unit):
    return -(-x // unit) * unit


def occupancy(gpu_or_name, threads_per_block, registers_per_thread, shared_bytes_per_block=0):
    """Blocks per SM, warps per SM, occupancy and the limiting factor of a kernel, by cuda_occupancy.h's rules (default
    carveout, no partitioned global caching). `shared_bytes_per_block` is static plus dynamic shared memory.
    Raises ValueError for a configuration that cannot launch at all."""
    g = gpu(gpu_or_name)
    if not 1 <= threads_per_block <= g.max_threads_per_block:
        raise ValueError(f"{threads_per_block} threads per block: a block has 1 to {g.max_threads_per_block} threads")
    if not 0 <= registers_per_thread <= g.max_registers_per_thread:
        raise ValueError(f"{registers_per_thread} registers per thread: at most {g.max_registers_per_thread}")
    if shared_bytes_per_block < 0:
        raise ValueError(f"{shared_bytes_per_block} bytes of shared memory per block")
    warps = -(-threads_per_block // WARP)
    limits = {"threads": g.max_warps_per_sm // warps, "blocks": g.max_blocks_per_sm}
    # Registers: a warp gets registers x 32 rounded up to the register unit. The hardware checks a block against the
    # per-block limit as if its warps were a multiple of the sub-partitions; each sub-partition holds a quarter of the
    # register file, in whole warps.
    per_warp = _round_up(registers_per_thread * WARP, g.register_unit)
    if per_warp * _round_up(warps, g.sub_partitions) > g.max_registers_per_block:
        raise ValueError(
            f"{registers_per_thread} registers x {threads_per_block} threads cannot launch on {g.name}: "
            f"{per_warp} registers per warp x {_round_up(warps, g.sub_partitions)} warps "
            f"> {g.max_registers_per_block} per block"
        )
    if per_warp:
        warps_by_registers = g.registers_per_sm // g.sub_partitions // per_warp * g.sub_partitions
        limits["registers"] = warps_by_registers // warps
    # Shared memory: what the block asks for plus the runtime's reserve, rounded up to the allocation unit.
    shared = _round_up(shared_bytes_per_block + g.shared_reserved_per_block, g.shared_unit)
    if shared > g.shared_per_block + g.shared_reserved_per_block:
        raise ValueError(
            f"{shared_bytes_per_block} bytes of shared memory per block cannot launch on {g.name}: a block may have "
            f"at most {g.shared_per_block} ({g.shared_per_block / KiB:g} KiB, past 48 KiB as opted-in dynamic memory)"
        )
    if shared:
        limits["shared memory"] = g.shared_per_sm // shared
    blocks = min(limits.values())
    return Occupancy(
        gpu=g.name,
        threads_per_block=threads_per_block,
        registers_per_thread=registers_per_thread,
        shared_bytes_per_block=shared_bytes_per_block,
        blocks_per_sm=blocks,
        warps_per_sm=blocks * warps,
        occupancy=blocks * warps / g.max_warps_per_sm,
        limited_by=next(f for f in FACTORS if limits.get(f) == blocks),
        limits={f: limits[f] for f in FACTORS if f in limits},
        registers_per_block=per_warp * warps,
        shared_per_block=shared,
    )
