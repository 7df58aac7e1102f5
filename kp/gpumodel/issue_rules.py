"""Each SASS instruction of a basic block as kp.gpumodel.subcores simulates it: the units it may take and the clocks it
holds their input latch, whether it waits in the memory queue, the clocks to its result (RAW) and to its sources'
release (WAR) from Huerta et al.'s Table 2, its barrier, and what DEPBAR.LE and the cp.async instructions (LDGSTS,
LDGDEPBAR) ask. Owns those per-instruction rules and their constants; the simulation's rules for what the sub-cores
share, and their sources, are kp.gpumodel.subcores' docstring's. Never simulates.

The source throughout: Huerta, Abaie Shoushtary, Cruz, González, "Dissecting and Modeling the Architecture of Modern
GPU Cores", MICRO 2025 (read in the stored copy kp.gpumodel.pipes cites). Its section 4 on DEPBAR.LE: "DEPBAR .LE SB1,
0x3, {4,3,2}, requires the Dependence counter SB1 to have a value less or equal to 3 to continue with the execution.
The last argument ([, {4,3,2}]) is optional, and if used, the instruction cannot be issued until the values of the
Dependence counters specified by those IDs (4, 3, 2 in this example) are equal to 0". The cp.async groups (nvdisasm's
sm_80-sm_90 listings of `__pipeline_memcpy_async`, `__pipeline_commit`, `__pipeline_wait_prior(n)`): each copy an
LDGSTS with no counter for its data, each commit an LDGDEPBAR whose write counter (SB0) the group holds until its
copies have landed, each wait a `DEPBAR.LE SB0, n`; the groups complete in order (PTX ISA, cp.async.wait_group: "wait
till only N or fewer of the most recent cp.async-groups are pending and all the prior cp.async-groups committed by the
executing threads are complete").
"""

import functools
import re

from kp.gpumodel.gpu_constants import ALU_LATENCY_CLOCKS
from kp.gpumodel.pipes import (
    COPIES,
    GLOBAL_LOADS,
    GLOBAL_STORES,
    SHARED_FP32_INTEGER,
    SHARED_LOADS,
    SHARED_STORES,
    pipe_of,
)

QUEUE = 5  # memory instructions a sub-core buffers: 4 queue entries and a latch (Huerta et al. 2025, 5.4)
SUB_CORES = 4
NONE = 7  # a control field naming no dependence counter
# Clocks from a memory instruction's issue to its start in the address calculation: Table 1 (one sub-core) issues the
# first five at cycles 2-6 and the sixth at 13, so the first's entry frees 11 clocks after its issue, the last 4 of
# them in the address calculation (one every 4 clocks): 11 - 4 = 7 before it (the Control stage and the dispatch)
DISPATCH = 7
REGISTER_ADDRESS = re.compile(r"\]\s*\[\s*R\d+")  # a constant bank's offset from a regular register: c[0x3][R2+0x4]
NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+")
DEPBAR_OPERANDS = re.compile(r"SB([0-5])\s*,\s*(0x[0-9a-fA-F]+|\d+)(?:\s*,\s*\{([\d,\s]*)\})?")
# The memory opcodes by what they do (kp.gpumodel.pipes' lists, the one source)
MEMORY_LOADS = {*GLOBAL_LOADS, *COPIES}  # what the launch's round trip brings (a register, or an LDGSTS's copy)
SHARED_LOADS = set(SHARED_LOADS)
STORES = {*GLOBAL_STORES, *SHARED_STORES}
MEMORY = MEMORY_LOADS | SHARED_LOADS | STORES
SHARED_SPACE = SHARED_LOADS | set(SHARED_STORES)
GLOBAL_SPACE = MEMORY_LOADS | set(GLOBAL_STORES)  # their 128-byte lines pass the L1 data pipe
# Huerta et al. 2025, Table 2 (Ampere, a regular register as the address; clocks from issue to the earliest consumer:
# RAW, a reader of the result; WAR, a writer of a source), by width in bytes: 4, 8, 16. Shared loads RAW 24/24/26, WAR
# 9; global loads WAR 11 (their RAW is the launch's round trip); shared stores WAR 12/14/18, global stores 14/16/20;
# LDGSTS WAR 13, RAW 39 (its own write counter, "released when the instruction's read step has finished"; its data
# lands the round trip after its issue); LDC RAW 26 with an immediate address (c[0x0][...]), 29 with a register.
# Atomics, LDSM and local accesses are taken as their space's loads or stores (not in the table).
SHARED_LOAD_RAW = {4: 24, 8: 24, 16: 26}
CONSTANT_LOAD_RAW = {"immediate": 26, "register": 29}
COPY_WAR, COPY_RAW = 13, 39
WAR = {"shared load": {4: 9, 8: 9, 16: 9}, "global load": {4: 11, 8: 11, 16: 11},
       "shared store": {4: 12, 8: 14, 16: 18}, "global store": {4: 14, 8: 16, 16: 20}}  # fmt: skip


def _width(opcode):
    """A memory opcode's bytes per lane: LDS.128 16, LDG.E.64 8, else 4."""
    parts = opcode.split(".")
    return 16 if "128" in parts else 8 if "64" in parts else 4


@functools.lru_cache(maxsize=256)
def decode(block, cc, per_clock):
    """Per instruction: (base opcode, units it may take, latch clocks, queue kind (None, "memory", "lsu"), result
    clocks (after issue; for a queued one, after it starts on the data pipe), read clocks (WAR, after issue), barrier
    (_barrier, or None), space ("shared", "global" or None), cp.async's part ("copy": LDGSTS, "commit":
    LDGDEPBAR, or None), DEPBAR.LE's wait (_depbar) or None). `block`: kp.gpumodel.schedule.as_block's tuples;
    `per_clock`: the pipes' results per clock per SM (kp.gpumodel.pipes.rates, as sorted items)."""
    per_clock = dict(per_clock)
    shared_lanes = cc in SHARED_FP32_INTEGER
    out = []
    for opcode, *_, operands in block:
        base = opcode.split(".")[0]
        pipe = pipe_of(opcode)
        queue = "memory" if base in MEMORY else "lsu" if pipe in ("LSU", "LSU other", "shuffle") else None
        units, latch = (), 0
        if queue is None and pipe is not None and pipe in per_clock:
            latch = max(1, round(32 / (per_clock[pipe] / SUB_CORES)))
            if shared_lanes and pipe == "FP32":
                units, latch = ("A", "B"), 2
            elif shared_lanes and pipe in ("integer", "IMAD"):
                units, latch = ("B",), 2
            else:
                units = ("FMA",) if pipe in ("FP32", "IMAD") else (pipe,)
        width = _width(opcode)
        space = "shared" if base in SHARED_SPACE else "global" if base in GLOBAL_SPACE else None
        result, read = ALU_LATENCY_CLOCKS, 1
        if base in SHARED_LOADS:
            result, read = SHARED_LOAD_RAW[width] - DISPATCH, WAR["shared load"][width]
        elif base == "LDGSTS":
            result, read = 0, COPY_WAR  # its data lands the round trip after its issue, its own counter COPY_RAW
        elif base in MEMORY_LOADS:
            result, read = 0, WAR["global load"][width]  # the round trip, set by the simulation
        elif base in STORES:
            read = WAR[f"{space} store"][width]
        elif base == "LDC":  # `LDC R4, c[0x0][R2+0x160]` reads its address from a register, c[0x0][0x160] does not
            result = CONSTANT_LOAD_RAW["register" if REGISTER_ADDRESS.search(operands) else "immediate"]
        barrier = _barrier(opcode, operands) if base == "BAR" else None
        copies = "copy" if base == "LDGSTS" else "commit" if base == "LDGDEPBAR" else None
        depbar = _depbar(operands) if base == "DEPBAR" else None
        out.append((base, units, latch, queue, result, read, barrier, space, copies, depbar))
    return tuple(out)


def _barrier(opcode, operands):
    """BAR's ("sync" or "arrive", its barrier, the warps that release it: its thread count / 32, None for the block's
    every warp) from nvdisasm's `BAR.SYNC.DEFER_BLOCKING 0x1, 0x40` (barrier 1, 64 threads: 2 warps), `BAR.SYNC
    0x0` (the block), `BAR.ARV 0x2, 0x40`; a count in a register or a predicate (BAR.RED.POPC 0x0, P0) is the block's.
    PTX ISA, bar/barrier: "Operand b specifies the number of threads participating in the barrier. If no thread count
    is specified, all threads in the CTA participate in the barrier. When specifying a thread count, the value must be
    a multiple of the warp size"."""
    ops = [o.strip() for o in operands.split(",")] if operands.strip() else ["0"]
    number = [int(o, 0) if NUMBER.fullmatch(o) else o for o in ops]
    count = number[1] if len(number) > 1 and isinstance(number[1], int) else 0
    return ("arrive" if "ARV" in opcode.split(".") else "sync", number[0], -(-count // 32) or None)


def _depbar(operands):
    """DEPBAR.LE's operands ("SB0, 0x3" or "SB1, 0x3, {4,3,2}") as (counter, the most it may hold, the counters that
    must be at zero); None for another form (no wait)."""
    m = DEPBAR_OPERANDS.fullmatch(operands)
    return m and (int(m[1]), int(m[2], 0), tuple(int(c) for c in (m[3] or "").split(",") if c.strip()))


def pipeline_depth(block):
    """The most cp.async groups a DEPBAR.LE of `block` (as_block's tuples) lets pend: n of `DEPBAR.LE SBx, n`; 0
    without one."""
    found = [_depbar(operands) for opcode, *_, operands in block if opcode.startswith("DEPBAR")]
    return max((d[1] for d in found if d), default=0)
