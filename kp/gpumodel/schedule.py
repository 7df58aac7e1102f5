"""The schedule term's inputs and clocks (issue 31, item 4): which basic blocks of a kernel's SASS kp.gpumodel.subcores
simulates and as what (scheduled_blocks, as_block), and the busiest SM's clocks for a launch's runs of them, wave by
wave (block_clocks, schedule_clocks, schedule_seconds: kp.gpumodel.gputime's "schedule" term). Owns the bookkeeping
between a profile's counts and the simulation; never simulates (kp.gpumodel.subcores) and never combines terms.
"""

import math
import re

from kp.gpumodel.cfg import blocks as basic_blocks
from kp.gpumodel.issue_rules import GLOBAL_SPACE, SHARED_SPACE, pipeline_depth
from kp.gpumodel.pipes import rates
from kp.gpumodel.register_banks import _applies, sources
from kp.gpumodel.subcores import round_clocks

GUARD = re.compile(r"^@!?U?P\w+\s+")  # an instruction's predicate: `@!P0 LDG.E R2, [R4.64]`
SIMULATED_SHARE = 0.01  # blocks issuing less than this share of a kernel's instructions are left to the issue rate


def scheduled_blocks(counts, kernel, gpu="H100", share=1.0):
    """((warp-level runs x `share`, block), ...) of `kernel`'s basic blocks in `gpu`'s SASS that the simulation takes:
    those whose runs the trace fixes (counts: a kp.gpumodel.profile.Profile; its block_runs), whose listing has control
    bits, and which issue at least SIMULATED_SHARE of those blocks' instructions; a block as as_block gives it. A
    global, local or shared access at a line where the trace saw none of its space ran predicated off (nvcc
    if-converts short branches: `@P0 LDG` under a false P0 moves nothing): it is simulated as a NOP. One at a line
    that did run is simulated as run (a line's `@P0` and `@!P0` forms both wait). () without SASS or control bits."""
    found = counts.kernel_sass(kernel, gpu)
    graph = None if isinstance(found, str) else basic_blocks(found)
    if not graph:
        return ()
    at, accessed = counts.block_runs(kernel, gpu), _accessed(counts, kernel)
    known = []
    for b in graph:
        runs = at.get(b.instructions[0].offset, (None, 0))[0]
        if runs and all(i.control_bits for i in b.instructions):
            known.append((runs, b.instructions))
    issued = sum(runs * len(ins) for runs, ins in known)
    return tuple(
        (runs * share, as_block(ins, accessed)) for runs, ins in known if runs * len(ins) >= SIMULATED_SHARE * issued
    )


def memory_instructions(counts, kernel, gpu="H100", share=1.0):
    """(shared, global or local) warp instructions of `kernel`'s SASS for `gpu`, every basic block's x `share` (counts'
    instruction runs: exact where the trace fixes a block's runs, a line's rule elsewhere), those at lines the trace
    saw an access of their space at (the others ran predicated off, as scheduled_blocks takes them): what a launch's
    shared wavefronts and 128-byte lines are shared out over, the simulated blocks' and the others'. (0.0, 0.0)
    without SASS."""
    found, accessed = counts._instruction_runs(gpu).get(kernel, ()), _accessed(counts, kernel)
    ran = [(i.opcode.split(".")[0], runs * share) for i, runs in found if i.space and _ran(i, accessed)]
    return sum(r for op, r in ran if op in SHARED_SPACE), sum(r for op, r in ran if op in GLOBAL_SPACE)


def _accessed(counts, kernel):
    return {(ln.file, ln.line, ln.space) for ln in counts.source_lines if ln.kernel == kernel and ln.requests}


def _ran(instruction, accessed):
    """Whether a memory instruction moved anything: the trace saw an access of its space at its line (a local one's
    as global), or `accessed` is None (all ran)."""
    i = instruction
    spaces = {i.space, "global" if i.space == "local" else i.space}
    return accessed is None or not i.space or any((i.file, i.line, space) in accessed for space in spaces)


def as_block(instructions, accessed=None):
    """A basic block's kp.gpumodel.sass Instructions (with control bits) as the simulation reads them: (opcode, stall,
    yield, write counter, read counter, wait mask, register sources, operands) each, the sources ((slot, register,
    reuse), ...) of an instruction that reads its operands through the register file's ports
    (kp.gpumodel.register_banks), else None; the operands as nvdisasm prints them after the opcode ("SB0, 0x3" of
    `DEPBAR.LE SB0, 0x3`, "0x1, 0x40" of `BAR.SYNC.DEFER_BLOCKING 0x1, 0x40`). `accessed`: the (file, line, space)
    the trace saw accesses at; a memory instruction elsewhere becomes a NOP (None: every one ran)."""

    def opcode(i):
        return i.opcode if _ran(i, accessed) else "NOP"

    def operands(i):
        return "" if opcode(i) == "NOP" else GUARD.sub("", i.text).partition(" ")[2].strip()

    return tuple(
        (opcode(i), i.control_bits.stall, bool(i.control_bits.yield_), i.control_bits.write, i.control_bits.read,
         i.control_bits.wait, tuple(sources(i.text)) if _applies(i) else None, operands(i))
        for i in instructions
    )  # fmt: skip


def block_clocks(g, block, warps_per_block, blocks, runs_per_warp, memory_latency, wavefronts):
    """The clocks one SM needs for `blocks` resident blocks of `warps_per_block` warps to run a basic block
    `runs_per_warp` times each: one run from all the warps starting together, then each further run at the steady
    state's clocks (what a loop's first run pays, it pays once): two runs' less one run's, or, where a DEPBAR.LE lets
    up to n cp.async groups pend (kp.gpumodel.issue_rules.pipeline_depth), the mean over the m = n + 1 runs after the
    first m (the pipeline filled, its waits repeating every m runs at most); a loop of no more than 2m runs simulated
    whole. Under one run (a block some warps skip: `if (threadIdx.x < 32)`), ceil(runs x the warps) of them run it
    once (round_clocks' `active`), not all of them a share of a run (a single warp's latency is not shared out); under
    one warp a block (a block only some blocks run: `if (blockIdx.x == 0)`), one warp's run times the warps of the
    wave that run it on average (charged whole in every wave, a block of one warp of the launch cost each wave a run).
    `block` as as_block gives it; `memory_latency` in clocks; `wavefronts` (per shared, per global instruction)."""
    on = (tuple(g.compute_capability), tuple(sorted(rates(g).items())), warps_per_block, blocks)
    memory = (round(memory_latency), tuple(round(f, 3) for f in wavefronts))
    if runs_per_warp < 1:  # the warps that run it, once each
        running = runs_per_warp * warps_per_block * blocks
        if runs_per_warp * warps_per_block < 1:  # fewer than a warp a block: some blocks' one warp, a share of it
            return round_clocks(block, *on, 1, *memory, 1) * running
        return round_clocks(block, *on, 1, *memory, math.ceil(running))
    once = round_clocks(block, *on, 1, *memory)
    if runs_per_warp == 1:
        return once
    m = pipeline_depth(block) + 1
    if m > 1 and runs_per_warp <= 2 * m:
        whole = math.ceil(runs_per_warp)
        return round_clocks(block, *on, whole, *memory) * runs_per_warp / whole
    filled = once if m == 1 else round_clocks(block, *on, m, *memory)
    steady = (round_clocks(block, *on, 2 * m, *memory) - filled) / m
    return once + (runs_per_warp - 1) * steady


def schedule_clocks(g, scheduled, warps_per_block, resident, blocks_on_sm, memory_latency, wavefronts):
    """(the clocks the busiest SM's schedule takes, the warp instructions it holds): `scheduled` ((runs per warp,
    block), ...) of the simulated blocks; `blocks_on_sm` the blocks the SM runs over the launch, `resident` at once:
    full waves of `resident`, then the rest together (a last wave of fewer warps hides less: simulated apart)."""
    full, rest = divmod(blocks_on_sm, resident)
    clocks = instructions = 0.0
    for runs, block in scheduled:
        wave = block_clocks(g, block, warps_per_block, resident, runs, memory_latency, wavefronts)
        clocks += full * wave
        if rest:
            clocks += block_clocks(g, block, warps_per_block, rest, runs, memory_latency, wavefronts)
        instructions += runs * len(block) * warps_per_block * blocks_on_sm
    return clocks, instructions


def schedule_seconds(g, work, resident, warps_per_block, trip_s, l1_lines, issue_rate):
    """The schedule term of the busiest SM (kp.gpumodel.subcores): the blocks it runs over the launch, `resident` at a
    time, their warps running the simulated blocks as often as the launch's warps do; each global or local load's
    result `trip_s` after its issue (the launch's round trip, unloaded: where DRAM's or the L2's bandwidth binds, their
    terms bound the launch from outside, and a load the simulation waits for twice, as predicated forms of one line
    are, would wait a loaded latency twice), each shared instruction the launch's shared wavefronts over its shared
    instructions, each global or local one its 128-byte lines over those (the launch's, work.memory_instructions,
    where it has them: blocks left out hold some; else the simulated blocks'); the instructions of the blocks not
    simulated at `issue_rate` beside. 0.0 without simulated blocks."""
    if not work.scheduled:
        return 0.0
    simulated = tuple(
        sum(r * sum(op.split(".")[0] in space for op, *_ in b) for r, b in work.scheduled)
        for space in (SHARED_SPACE, GLOBAL_SPACE)
    )
    shared, other = (max(n, s) for n, s in zip(work.memory_instructions or simulated, simulated))
    wavefronts = (work.shared_wavefronts / shared if shared else 1.0, l1_lines / other if other else 1.0)
    per_warp = tuple((r / work.warps, b) for r, b in work.scheduled)
    on_sm = math.ceil(work.grid_blocks / g.sms)
    clocks, simulated = schedule_clocks(g, per_warp, warps_per_block, min(resident, on_sm), on_sm,
                                        trip_s * g.clock_hz, tuple(max(1.0, f) for f in wavefronts))  # fmt: skip
    rest = max(0.0, work.issued * on_sm / work.grid_blocks - simulated)
    return clocks / g.clock_hz + rest / issue_rate
