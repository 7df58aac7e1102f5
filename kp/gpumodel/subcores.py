"""One SM's four sub-cores issuing a basic block's SASS clock by clock (issue 31, item 4): the resident warps each run
the block again and again, as the compiler's control bits and the shared structures let them. Owns the simulation and
its rules; kp.gpumodel.gputime turns its clocks into the "schedule" term, kp.gpumodel.profile hands it the blocks
(kp.gpumodel.cfg, their runs from the trace). Never reads a trace and never combines terms.

Why a simulation: the model's other SM-side terms (issue, the arithmetic pipes, the load/store pipe, the L1 data pipe,
one warp's dependent path) each bound the time alone, and their max is what the hardware reaches only when every
resource is kept busy while the others are. In-order warps, each holding an instruction a busy unit cannot take,
barriers that line a block's warps up, and loads whose results a warp waits for, keep the hardware from it: published
GEMM timings sit 15-35% above the max on kernels where three of those terms are within 20% of each other. No constant
is fitted here: every rule below is a published measurement's, and the clocks come out of them.

The rules (Huerta, Abaie Shoushtary, Cruz, González, "Dissecting and Modeling the Architecture of Modern GPU Cores",
MICRO 2025, measured on Ampere GA102 boards incl. the RTX A6000, Turing and Blackwell; read in the stored copy
kp.gpumodel.pipes cites):
- warps are placed on sub-cores "in a round robin manner (i.e., warp ID %4)" (5.2); each sub-core "can issue a single
  instruction per cycle" (4);
- the issue policy, CGGTY (5.1.2): "a greedy policy that selects an instruction from the same warp if it meets the
  eligibility criteria [...] If this warp is not eligible, then the scheduler selects an instruction from the youngest
  warp that meets the eligibility criteria" (youngest: the highest slot here, a later block's warps younger);
- eligible (4, 5.1.1): the warp's stall counter at zero (the previous instruction's stall count elapsed; a yield keeps
  the warp from the next clock), every dependence counter in its wait mask at zero, and "for fixed-latency
  instructions [...] all needed resources for its execution will be available once issued": "Execution units have an
  input latch that must be free when the instruction reaches the execution stage. This latch is occupied for two
  cycles if the width of the execution unit is just half warp, and for one cycle if its width is a full warp" (a unit
  of k lanes per sub-core: 32 / k clocks; the lanes are kp.gpumodel.pipes' results per clock per SM over the four
  sub-cores; on 8.6 and 8.9, where FP32 and integer share lanes, two half-warp latches, FP32 and IMAD taking either,
  integer only the second: the GA102 whitepaper's two datapaths, "one [...] FP32 [...] the other [...] either FP32 or
  INT32");
- the register file's bubbles (kp.gpumodel.register_banks: the Allocate stage holds the sub-core's pipeline "upwards"
  until its ports are free, 5.3): an instruction with b bubbles keeps its sub-core from issuing for b more clocks;
- memory instructions (and the load/store pipe's others: shuffles, S2R, VOTE) wait in a queue of the sub-core:
  "each sub-core can buffer five consecutive instructions" (4 entries and a latch, 5.4; a sixth's issue stalls); each
  sub-core's address calculation takes one memory instruction every four clocks, the structures the sub-cores share
  one every two (kp.gpumodel.pipes' rates per compute capability: 1 per clock on 8.0 and 9.0); then the L1 data pipe,
  shared by the SM, serves the instruction's wavefronts, one a clock (a shared access's bank-conflict wavefronts, a
  global or local access's 128-byte lines: kp.gpumodel.gputime passes their means per instruction);
- results (kp.gpumodel.depend.latency): a shared load's dependence counter is released SHARED_LOAD_CLOCKS after its
  last wavefront starts; a global or local load's the launch's round-trip latency after it leaves the queue
  (kp.gpumodel.gputime: L1, L2 or DRAM by the share each serves); a fixed-latency result's its latency after issue; a
  read counter a clock after the instruction leaves the queue (its sources read);
- BAR.SYNC: a warp waits there until every warp of its block has arrived (the CUDA C++ Programming Guide,
  __syncthreads); then all issue on from the next clock.

What it leaves out: instruction fetch (Huerta et al.'s stream buffer "behaves close to a perfect instruction cache"
for loops, 7.3), constant-cache misses, the L1's and L2's queues (the memory terms bound those from outside), the
FP64 and tensor pipes' sharing between sub-cores (FP64 taken per sub-core at a quarter of the SM's rate), and what a
block's first run inherits from the block before (each warp starts with its counters at zero).
"""

import functools

from kp.gpumodel.cfg import blocks as basic_blocks
from kp.gpumodel.gpu_constants import ALU_LATENCY_CLOCKS, CONSTANT_LOAD_CLOCKS, SHARED_LOAD_CLOCKS
from kp.gpumodel.pipes import (
    LSU_ADDRESS_PER_CLOCK_PER_SUB_PARTITION,
    LSU_ISSUE_PER_CLOCK,
    LSU_MEMORY_PER_CLOCK,
    SHARED_FP32_INTEGER,
    pipe_of,
    rates,
)
from kp.gpumodel.register_banks import BANKS, WINDOW, _applies, sources

QUEUE = 5  # memory instructions a sub-core buffers: 4 queue entries and a latch (Huerta et al. 2025, 5.4)
SUB_CORES = 4
NONE = 7  # a control field naming no dependence counter
MEMORY_LOADS = {"LDG", "LD", "LDL", "ATOM", "ATOMG", "LDGSTS"}  # results the launch's round trip brings
SHARED_LOADS = {"LDS", "LDSM", "ATOMS"}
CONSTANT_LOADS = {"LDC"}
MEMORY = MEMORY_LOADS | SHARED_LOADS | {"STG", "ST", "STL", "STS", "STSM", "RED", "REDG"}
SHARED_SPACE = SHARED_LOADS | {"STS", "STSM"}


@functools.lru_cache(maxsize=256)
def _decode(block, cc, per_clock):
    """Per instruction: (base opcode, units it may take, latch clocks, the queue's kind: None, "memory", "lsu", its
    result's latency, bar). `block`: ((opcode, stall, yield, write, read, wait, bubbles), ...)."""
    per_clock = dict(per_clock)
    shared_lanes = cc in SHARED_FP32_INTEGER
    out = []
    for opcode, *_ in block:
        base = opcode.split(".")[0]
        pipe = pipe_of(opcode)
        queue = "memory" if base in MEMORY else "lsu" if pipe in ("LSU", "LSU other", "shuffle") else None
        units, latch = (), 0
        if queue is None and pipe is not None and pipe in per_clock:
            latch = max(1, round(32 / (per_clock[pipe] / SUB_CORES)))
            if shared_lanes and pipe in ("FP32", "IMAD"):
                units, latch = ("A", "B"), 2
            elif shared_lanes and pipe == "integer":
                units, latch = ("B",), 2
            else:
                units = ("FMA",) if pipe in ("FP32", "IMAD") else (pipe,)
        if base in SHARED_LOADS:
            result = SHARED_LOAD_CLOCKS[cc]
        elif base in CONSTANT_LOADS:
            result = CONSTANT_LOAD_CLOCKS[cc]
        else:
            result = ALU_LATENCY_CLOCKS
        out.append((base, units, latch, queue, result, base == "BAR"))
    return tuple(out)


@functools.lru_cache(maxsize=512)
def round_clocks(block, cc, per_clock, warps_per_block, blocks, runs, memory_latency, wavefronts):
    """The clocks the SM needs until each of its resident warps (`blocks` blocks of `warps_per_block`) has run `block`
    `runs` times, from all starting together. `per_clock`: the pipes' results per clock per SM (kp.gpumodel.pipes.rates,
    as sorted items); `memory_latency`: clocks a global or local load's result takes; `wavefronts`: (per shared
    instruction, per global or local instruction) on the L1 data pipe."""
    decoded = _decode(block, cc, per_clock)
    n = len(block)
    memory_gap = 1 / LSU_MEMORY_PER_CLOCK[cc]
    lsu_gap = 1 / LSU_ISSUE_PER_CLOCK[cc]
    address_gap = 1 / LSU_ADDRESS_PER_CLOCK_PER_SUB_PARTITION[cc]
    warps = warps_per_block * blocks
    sub_core = [w % SUB_CORES for w in range(warps)]
    on = [[w for w in range(warps) if sub_core[w] == s] for s in range(SUB_CORES)]
    pc, done_runs, ready_at = [0] * warps, [0] * warps, [0] * warps
    counters = [[[] for _ in range(6)] for _ in range(warps)]  # per warp, per counter: release clocks (None: pending)
    at_barrier, arrived = [False] * warps, [0] * blocks
    latches = [{} for _ in range(SUB_CORES)]  # unit -> the clock it is free
    issue_free = [0] * SUB_CORES  # the register file's bubbles hold the sub-core
    cache = [{} for _ in range(SUB_CORES)]  # the register file cache: (bank, slot) -> (warp, register)
    ports = [set() for _ in range(SUB_CORES)]  # (bank, clock) read ports reserved
    queues = [[] for _ in range(SUB_CORES)]  # (warp, index, write slot, read slot)
    address_free = [0.0] * SUB_CORES
    shared_free = data_free = 0.0
    last = [None] * SUB_CORES
    clock, finished = 0, 0

    def waits(w, mask, now):
        for c in range(6):
            if mask >> c & 1 and any(r[0] is None or r[0] > now for r in counters[w][c]):
                return True
        return False

    while finished < warps:
        moved = False
        for s in range(SUB_CORES):  # the head of each sub-core's queue into the shared structures
            q = queues[s]
            if not q or address_free[s] > clock:
                continue
            w, k, write, read = q[0]
            kind = decoded[k][3]
            if (shared_free if kind == "memory" else 0) > clock:
                continue
            q.pop(0)
            moved = True
            base = decoded[k][0]
            if kind == "memory":
                address_free[s] = clock + address_gap
                shared_free = clock + memory_gap
                fronts = wavefronts[0] if base in SHARED_SPACE else wavefronts[1]
            else:  # S2R, VOTE, shuffles: the pipe's issue, no memory access
                shared_free = max(shared_free, clock + lsu_gap)
                fronts = 0
            start = max(clock, data_free) if fronts else clock
            data_free = start + fronts if fronts else data_free
            if write is not None:
                if base in MEMORY_LOADS:
                    write[0] = clock + memory_latency
                else:
                    write[0] = start + max(0.0, fronts - 1) + decoded[k][4]
            if read is not None:
                read[0] = clock + 1
        for s in range(SUB_CORES):
            if issue_free[s] > clock:
                continue
            pick = None
            order = [last[s]] if last[s] is not None else []
            for w in order + sorted(on[s], reverse=True):  # greedy, then the youngest
                if ready_at[w] > clock or at_barrier[w] or done_runs[w] >= runs:
                    continue
                k = pc[w]
                base, units, latch, kind, result, bar = decoded[k]
                if waits(w, block[k][5], clock):
                    continue
                if units and all(latches[s].get(u, 0) > clock for u in units):
                    continue
                if kind and len(queues[s]) + (address_free[s] > clock) >= QUEUE:
                    continue  # the instruction in the address calculation holds its entry until it leaves
                pick = w
                break
            if pick is None:
                continue
            moved = True
            w, k = pick, pc[pick]
            last[s] = w
            _, stall, yield_, write, read, _, reads = block[k]
            base, units, latch, kind, result, bar = decoded[k]
            if units:
                unit = next(u for u in units if latches[s].get(u, 0) <= clock)
                latches[s][unit] = clock + latch
            write_slot = [None] if write < 6 else None
            read_slot = [None] if read < 6 else None
            if kind:
                queues[s].append((w, k, write_slot, read_slot))
            else:
                if write_slot:
                    write_slot[0] = clock + result
                if read_slot:
                    read_slot[0] = clock + 1
            for c, slot in ((write, write_slot), (read, read_slot)):
                if slot is not None:
                    kept = [r for r in counters[w][c] if r[0] is None or r[0] > clock]
                    counters[w][c] = kept + [slot]
            ready_at[w] = clock + max(1 + bool(yield_), stall)
            issue_free[s] = clock + 1 if reads is None else _read_ports(reads, w, clock, cache[s], ports[s]) + 1
            if bar:
                at_barrier[w] = True
                b = w // warps_per_block
                arrived[b] += 1
                if arrived[b] == warps_per_block:
                    arrived[b] = 0
                    for x in range(b * warps_per_block, (b + 1) * warps_per_block):
                        at_barrier[x] = False
                        ready_at[x] = max(ready_at[x], clock + 1)
            pc[w] += 1
            if pc[w] == n:
                pc[w] = 0
                done_runs[w] += 1
                finished += done_runs[w] == runs
        clock += 1
        if not moved:  # nothing issued or left a queue: on to the next clock anything can change
            clock = max(clock, _next_event(clock, ready_at, counters, latches, issue_free, address_free, shared_free))
    return clock


def _read_ports(reads, warp, clock, cache, reserved):
    """The clock from which an instruction issued at `clock` reads its sources (kp.gpumodel.register_banks' rule, its
    sources' words): each bank gives one read a clock, the instruction's reads falling in WINDOW clocks; an operand
    whose register the cache holds for this warp at its bank and slot is not read, and every read there replaces
    what the cache held (kept only where its reuse bit is set). Reserves the ports; a later clock than `clock` holds
    the sub-core's issue until then (the Allocate stage stalls the pipeline behind it)."""
    need = [0] * BANKS
    for slot, register, reuse in reads:
        bank = register % BANKS
        need[bank] += cache.get((bank, slot)) != (warp, register)
        cache[(bank, slot)] = (warp, register) if reuse else None
    start = clock
    while not all(sum((b, start + k) not in reserved for k in range(WINDOW)) >= n for b, n in enumerate(need)):
        start += 1
    for bank, n in enumerate(need):
        free = [start + k for k in range(WINDOW) if (bank, start + k) not in reserved]
        reserved.update((bank, c) for c in free[:n])
    if len(reserved) > 64:
        reserved.difference_update([p for p in reserved if p[1] < clock])
    return start


def _next_event(clock, ready_at, counters, latches, issue_free, address_free, shared_free):
    """The earliest clock at or after `clock` when a warp's stall, a counter, a latch, a sub-core's bubbles or the
    memory path frees (`clock` itself when none is pending or one frees then)."""
    times = [t for t in ready_at if t >= clock]
    times += [r[0] for per in counters for c in per for r in c if r[0] is not None and r[0] >= clock]
    times += [t for latch in latches for t in latch.values() if t >= clock]
    times += [t for t in issue_free if t >= clock] + [t for t in address_free if t >= clock]
    times += [shared_free] if shared_free >= clock else []
    return min(times, default=clock)


SIMULATED_SHARE = 0.01  # blocks issuing less than this share of a kernel's instructions are left to the issue rate


def scheduled_blocks(counts, kernel, gpu="H100", share=1.0):
    """((warp-level runs x `share`, block), ...) of `kernel`'s basic blocks in `gpu`'s SASS that the simulation takes:
    those whose runs the trace fixes (counts: a kp.gpumodel.profile.Profile; its block_runs), whose listing has control
    bits, and which issue at least SIMULATED_SHARE of those blocks' instructions; a block as the simulation reads it
    ((opcode, stall, yield, write counter, read counter, wait mask, register-bank bubbles) per instruction). () without
    SASS or control bits."""
    found = counts.kernel_sass(kernel, gpu)
    graph = None if isinstance(found, str) else basic_blocks(found)
    if not graph:
        return ()
    at = counts.block_runs(kernel, gpu)
    known = []
    for b in graph:
        runs = at.get(b.instructions[0].offset, (None, 0))[0]
        if runs and all(i.control_bits for i in b.instructions):
            known.append((runs, b.instructions))
    issued = sum(runs * len(ins) for runs, ins in known)
    return tuple((runs * share, as_block(ins)) for runs, ins in known if runs * len(ins) >= SIMULATED_SHARE * issued)


def as_block(instructions):
    """A basic block's kp.gpumodel.sass Instructions (with control bits) as the simulation reads them: (opcode, stall,
    yield, write counter, read counter, wait mask, register sources) each, the sources ((slot, register, reuse), ...)
    of an instruction that reads its operands through the register file's ports (kp.gpumodel.register_banks), else
    None."""
    return tuple(
        (i.opcode, i.control_bits.stall, bool(i.control_bits.yield_), i.control_bits.write, i.control_bits.read,
         i.control_bits.wait, tuple(sources(i.text)) if _applies(i) else None)
        for i in instructions
    )  # fmt: skip


def block_clocks(g, block, warps_per_block, blocks, runs_per_warp, memory_latency, wavefronts):
    """(clocks for one run of a basic block by each resident warp, the runs simulated): `block` as as_block gives it;
    `blocks` resident on the SM, `warps_per_block` each; `runs_per_warp` how often each warp runs it over the launch;
    `memory_latency` in clocks; `wavefronts` (per shared, per global instruction). A block each warp runs twice or more
    is taken in steady state: the clocks of 3 runs less those of 1, over 2 (what the loop's first run pays, it pays
    once); else one run's clocks from all the warps starting together."""
    on = (tuple(g.compute_capability), tuple(sorted(rates(g).items())), warps_per_block, blocks)
    memory = (round(memory_latency), tuple(round(f, 3) for f in wavefronts))
    once = round_clocks(block, *on, 1, *memory)
    if runs_per_warp < 2:
        return once, 1
    return (round_clocks(block, *on, 3, *memory) - once) / 2, 3


def schedule_clocks(g, scheduled, warps_per_block, blocks, warps, memory_latency, wavefronts):
    """(the clocks the busiest SM's schedule takes for its share of the simulated blocks' runs, the warp instructions
    they hold): `scheduled` ((launch-wide warp-level runs on that SM, block), ...), `warps` the launch's warps, the
    rest as block_clocks. A block's runs on the SM over its resident warps are rounds, each a simulated round's
    clocks."""
    clocks = instructions = 0.0
    resident = warps_per_block * blocks
    launch_warps = max(1, warps)
    for runs, block in scheduled:
        per_round, _ = block_clocks(g, block, warps_per_block, blocks, runs / launch_warps, memory_latency, wavefronts)
        clocks += per_round * runs / resident
        instructions += runs * len(block)
    return clocks, instructions
