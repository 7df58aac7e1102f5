"""One SM's four sub-cores issuing a basic block's SASS clock by clock (issue 31, item 4): the resident warps each run
the block again and again, as the compiler's control bits and the shared structures let them. Owns the simulation and
its rules; kp.gpumodel.schedule chooses the blocks and adds their clocks up for kp.gpumodel.gputime's "schedule" term.
Never reads a trace and never combines terms.

Why: the other SM-side terms (issue, the pipes, the L1 data pipe, one warp's path) each bound the time alone, and
their max is reached only where every resource is kept busy while the others are; in-order warps waiting on a busy
unit, a queue or a barrier keep the hardware from it. No constant is fitted here: every rule is a measurement's.

The rules (Huerta, Abaie Shoushtary, Cruz, González, "Dissecting and Modeling the Architecture of Modern GPU Cores",
MICRO 2025, measured on Ampere GA102 boards incl. the RTX A6000, Turing and Blackwell; read in the stored copy
kp.gpumodel.pipes cites; taken for 7.5, 8.0, 8.9 and 9.0 alike, an assumption):
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
  sub-cores; on 8.6 and 8.9, where FP32 and integer share lanes, two half-warp latches, FP32 taking either, integer
  and IMAD only the second: the GA102 whitepaper's two datapaths, one FP32 only, "the other [...] either FP32 or
  INT32", and an answer on NVIDIA's developer forum, "separate-cuda-core-pipeline-for-fp16-and-fp32" post 7: "FMAheavy
  pipe handles IMAD, IDP, and FP32 operations. FMAlite pipe handles FP32");
- the register file (5.3; kp.gpumodel.register_banks' rule, its read_start): two banks, one read a clock each, an
  instruction's reads within three clocks, the reuse cache per bank and operand slot (another warp's read there evicts
  it); where they cannot be read in time the Allocate stage holds the sub-core's pipeline "upwards": no issue until they
  can;
- memory instructions wait in a queue of their sub-core: "each sub-core can buffer five consecutive instructions" (4
  entries and a latch, 5.4), an entry held until its instruction leaves the address calculation; one enters that 7
  clocks after its issue at the earliest (DISPATCH: Table 1), one every four clocks per sub-core; the structures the
  sub-cores share take one every two (kp.gpumodel.pipes' rates per compute capability: 1 per clock on 8.0 and 9.0),
  the sub-cores' queues served in turn; S2R, VOTE and shuffles pass the pipe's issue (one a clock for the SM, the
  forum answers kp.gpumodel.pipes quotes) with no address or data; then the L1 data pipe, shared by the SM, serves an
  access's wavefronts, one a clock (a shared access's bank-conflict wavefronts, a global or local access's 128-byte
  lines: kp.gpumodel.schedule passes their means per instruction);
- results, from Table 2 (Ampere, "issue to the earliest consumer"; kp.gpumodel.issue_rules holds each instruction's): a
  shared load's 24 clocks (26 at 128 bits) after its issue, later by what the queue and the data pipe held it; LDC 26
  with an immediate address, 29 with a register's; LDGSTS's own counter 39; a global or local load's the launch's round
  trip (kp.gpumodel.gputime: L1, L2 or DRAM by the share each serves) after its issue; a memory instruction's sources
  free to overwrite (its read counter) 9-20 clocks after its issue by kind and width (WAR); a fixed-latency result's
  ALU_LATENCY_CLOCKS, and S2R's, MUFU's, the conversions' and FP64's too (an assumption that understates them, as
  kp.gpumodel.depend says);
- BAR.SYNC: a warp waits there until every warp of its block has arrived (the CUDA C++ Programming Guide,
  __syncthreads), or as many as its thread count names (`BAR.SYNC 0x1, 0x40`: 2 warps; the PTX ISA's bar.sync: "wait
  for non-exited threads of all other warps participating in the barrier to arrive": a warp done with its runs no
  longer counts), each barrier of a block apart; then they issue on from the next clock. BAR.ARV arrives without
  waiting;
- DEPBAR.LE SBx, n (4): a warp issues it once at most n of counter x's releases are pending (and the counters it
  lists at zero); a cp.async group (kp.gpumodel.issue_rules: LDGSTS copies, then LDGDEPBAR) holds its commit's
  counter until its last copy has landed, the launch's round trip after that copy's issue, and after the groups
  before it.

Left out: instruction fetch (their stream buffer "behaves close to a perfect instruction cache", 7.3), constant misses,
the L1's and L2's queues (the memory terms bound those from outside), the data pipe pushing back on the queues, memory
instructions' register reads, tensor-core instructions' rates (none), the FP64 pipe's sharing between sub-cores (a
quarter of the SM's rate per sub-core), and what a block's first run inherits (each warp starts with counters at 0: a
pipeline's groups committed before the loop are not pending in it, so its first DEPBAR.LE waits less than it would).
"""

import functools
import math

from kp.gpumodel.issue_rules import COPY_RAW, DISPATCH, MEMORY_LOADS, NONE, QUEUE, SUB_CORES, decode
from kp.gpumodel.pipes import LSU_ADDRESS_PER_CLOCK_PER_SUB_PARTITION, LSU_ISSUE_PER_CLOCK, LSU_MEMORY_PER_CLOCK
from kp.gpumodel.register_banks import BANKS, read_start

__all__ = ["NONE", "QUEUE", "round_clocks", "simulate"]


@functools.lru_cache(maxsize=1024)
def round_clocks(block, cc, per_clock, warps_per_block, blocks, runs, memory_latency, wavefronts, active=None):
    """The clocks the SM needs until each of its resident warps (`blocks` blocks of `warps_per_block`) has run `block`
    `runs` times, from all starting together. `per_clock`: the pipes' results per clock per SM (kp.gpumodel.pipes.rates,
    as sorted items); `memory_latency`: clocks from a global or local load's issue to its result; `wavefronts`: (per
    shared instruction, per global or local instruction) on the L1 data pipe; `active`: how many of the warps run the
    block (None: all), spread over the blocks as evenly as they go, the first warps of each (`if (threadIdx.x < 32)`:
    warp 0 of each block), the others done from the start."""
    return simulate(block, cc, per_clock, warps_per_block, blocks, runs, memory_latency, wavefronts, active=active)


def simulate(block, cc, per_clock, warps_per_block, blocks, runs, memory_latency, wavefronts, log=None, active=None):
    """round_clocks, uncached; `log`, a list, gets (clock, warp, instruction index) for every issue."""
    active = warps_per_block * blocks if active is None else active
    if runs < 1 or warps_per_block < 1 or blocks < 1 or not block or active < 1:
        raise ValueError(f"a simulation needs a block and runs, warps, blocks, active warps: {len(block)}, {runs}, "
                         f"{warps_per_block}, {blocks}, {active}")  # fmt: skip
    decoded = decode(block, cc, per_clock)
    n = len(block)
    memory_gap = 1 / LSU_MEMORY_PER_CLOCK[cc]
    lsu_gap = 1 / LSU_ISSUE_PER_CLOCK[cc]
    address_gap = 1 / LSU_ADDRESS_PER_CLOCK_PER_SUB_PARTITION[cc]
    warps = warps_per_block * blocks
    youngest_first = [[w for w in reversed(range(warps)) if w % SUB_CORES == s] for s in range(SUB_CORES)]
    pc, ready_at = [0] * warps, [0] * warps
    counters = [[[] for _ in range(6)] for _ in range(warps)]  # per warp and counter: its pending releases
    live = [min(warps_per_block, active // blocks + (b < active % blocks)) for b in range(blocks)]  # not done
    done_runs = [0 if w % warps_per_block < live[w // warps_per_block] else runs for w in range(warps)]
    at_barrier = [False] * warps
    arrived, held, need = {}, {}, {}  # (block, barrier): warps arrived since it released, those waiting, its count
    copied, committed = [None] * warps, [None] * warps  # the last LDGSTS since the last LDGDEPBAR, the last group
    latches = [{} for _ in range(SUB_CORES)]  # unit -> the clock it is free
    issue_free = [0] * SUB_CORES  # the register file's ports hold the sub-core
    cache = [{} for _ in range(SUB_CORES)]  # the register file cache: (bank, slot) -> (warp, register)
    ports = [[0] * BANKS for _ in range(SUB_CORES)]  # each bank's first clock with its read port free
    queues = [[] for _ in range(SUB_CORES)]  # (warp, index, issue clock, write slot, read slot)
    address_free = [0] * SUB_CORES
    shared_free = lsu_free = data_free = 0
    last = [None] * SUB_CORES
    clock = first = 0
    finished = warps - sum(live)
    while finished < warps:
        moved = False
        for t in range(SUB_CORES):  # the queues' heads into the shared structures, the sub-cores in turn
            s = (first + t) % SUB_CORES
            q = queues[s]
            if not q or lsu_free > clock:
                continue
            w, k, issued, write, read = q[0]
            base, _, _, kind, result, war, _, space, _, _ = decoded[k]
            if issued + DISPATCH > clock:
                continue
            if kind == "memory" and (address_free[s] > clock or shared_free > clock):
                continue
            q.pop(0)
            moved = True
            first = (s + 1) % SUB_CORES
            lsu_free = clock + lsu_gap
            fronts = 0
            if kind == "memory":
                address_free[s] = clock + address_gap
                shared_free = clock + memory_gap
                fronts = wavefronts[0] if space == "shared" else wavefronts[1]
            start = max(clock, data_free) if fronts else clock
            data_free = start + fronts if fronts else data_free
            if write is not None:
                if base in MEMORY_LOADS:
                    write[0] = issued + max(memory_latency, clock + 1 - issued)
                else:
                    write[0] = math.ceil(start + max(0.0, fronts - 1) + result)
            if read is not None:
                read[0] = max(clock + 1, issued + war)
        for s in range(SUB_CORES):
            if issue_free[s] > clock:
                continue
            pick = None
            for w in ([last[s]] if last[s] is not None else []) + youngest_first[s]:  # greedy, then the youngest
                if ready_at[w] > clock or at_barrier[w] or done_runs[w] >= runs:
                    continue
                k = pc[w]
                units, kind = decoded[k][1], decoded[k][3]
                mask = block[k][5]
                if mask and any(
                    r[0] is None or r[0] > clock for c in range(6) if mask >> c & 1 for r in counters[w][c]
                ):
                    continue
                if units and all(latches[s].get(u, 0) > clock for u in units):
                    continue
                if (depbar := decoded[k][9]) and (
                    sum(r[0] is None or r[0] > clock for r in counters[w][depbar[0]]) > depbar[1]
                    or any(r[0] is None or r[0] > clock for c in depbar[2] for r in counters[w][c])
                ):
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
            if log is not None:
                log.append((clock, w, k))
            _, stall, yield_, write, read, _, reads, _ = block[k]
            _, units, latch, kind, result, _, barrier, _, copies, _ = decoded[k]
            if units:
                unit = next(u for u in units if latches[s].get(u, 0) <= clock)
                latches[s][unit] = clock + latch
            write_slot = [None] if write < 6 or copies == "copy" else None
            read_slot = [None] if read < 6 else None
            if kind:
                queues[s].append((w, k, clock, write_slot, read_slot))
                if copies == "copy":  # its data's landing, for its group; its own counter Table 2's
                    copied[w], write_slot = write_slot, [clock + COPY_RAW] if write < 6 else None
            elif copies == "commit" and write < 6:  # its group's copies landed, and the groups before it
                group = copied[w] or committed[w]
                write_slot = group if group and (group[0] is None or group[0] > clock) else [clock + 1]
                copied[w], committed[w] = None, write_slot
            else:
                if write_slot:
                    write_slot[0] = clock + result
                if read_slot:
                    read_slot[0] = clock + 1
            for c, slot in ((write, write_slot), (read, read_slot)):
                if slot is not None and c < 6:
                    counters[w][c] = [r for r in counters[w][c] if r[0] is None or r[0] > clock] + [slot]
            ready_at[w] = clock + max(1 + bool(yield_), stall)
            issue_free[s] = clock + 1 if reads is None else read_start(reads, w, clock, cache[s], ports[s]) + 1
            b = w // warps_per_block
            if barrier:
                key = (b, barrier[1])
                arrived[key], need[key] = arrived.get(key, 0) + 1, barrier[2] or warps_per_block
                if barrier[0] == "sync":
                    at_barrier[w] = True
                    held.setdefault(key, []).append(w)
            pc[w] += 1
            if pc[w] == n:
                pc[w] = 0
                done_runs[w] += 1
                if done_runs[w] == runs:
                    finished, live[b], barrier = finished + 1, live[b] - 1, True
            done = [key for key in need if key[0] == b and arrived[key] >= min(need[key], live[b])] if barrier else ()
            for key in done:
                arrived[key] = 0  # released: its warps issue on from the next clock
                for x in held.pop(key, ()):
                    at_barrier[x], ready_at[x] = False, max(ready_at[x], clock + 1)
        clock += 1
        if not moved:  # nothing issued or left a queue: on to the next clock anything can change
            later = _next_event(clock, ready_at, counters, latches, issue_free, address_free, (shared_free, lsu_free),
                                queues)  # fmt: skip
            if later is None:
                raise RuntimeError(f"the schedule of a {n}-instruction block is stuck at clock {clock}: no warp can "
                                   "ever issue (a barrier not every warp of a block reaches?)")  # fmt: skip
            clock = later
    return clock


def _next_event(clock, ready_at, counters, latches, issue_free, address_free, shared, queues):
    """The earliest clock at or after `clock` when a warp's stall, a counter, a latch, a sub-core's ports or the memory
    path frees, or a queued instruction's dispatch ends; None when nothing is pending (the schedule is stuck)."""
    times = [t for t in ready_at if t >= clock]
    times += [r[0] for per in counters for c in per for r in c if r[0] is not None and r[0] >= clock]
    times += [t for latch in latches for t in latch.values() if t >= clock]
    times += [t for t in issue_free if t >= clock] + [t for t in address_free if t >= clock]
    times += [t for t in shared if t >= clock] + [e[2] + DISPATCH for q in queues for e in q]
    pending = any(q for q in queues)
    if not times:
        return clock if pending else None
    return max(clock, math.ceil(min(times)))
