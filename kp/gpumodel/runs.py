"""How often each basic block of a kernel's SASS ran, warp-level, from what the stand-in's trace knows (issue 31).
Owns the equations kp.gpumodel.cfg solves: which of a kernel's SASS instructions ran a line's requests, which branches
no warp diverged at, a loop's runs from its condition's evaluations, nvcc's 64-bit division slow side (never run), a
subroutine's runs from its calls. Takes the SASS (kp.gpumodel.sass.Instruction), the profile's Line and Branch records
and the warps launched as its caller (kp.gpumodel.compiled) gives them; never reads a trace or a listing itself, and
models no time.
"""

import re

from kp.gpumodel.cfg import block_counts, blocks

# nvcc's 64-bit integer division and remainder (`i / n`, `i % n` on int64_t): a 32-bit fast path inline, and a CALL
# to this routine on the other side of a branch on whether both operands fit in 32 bits (the CUDA Math API's integer
# intrinsics; seen in the SASS of kernels/mul_add.cu's broadcast_offsets).
JUMPS = re.compile(r"\b(?:continue|break|return|goto)\b")  # an `if` whose body leaves: nvcc jumps when it holds
SLOW_DIVISION = re.compile(r"__cuda_sm\d+_(?:div|rem)_[su]64")


def slow_division(instructions):
    """The offsets of nvcc's 64-bit division slow side in one function's SASS (address order): each CALL of
    SLOW_DIVISION's routine with the stretch it lies in (from after the conditional BRA that skips to the 32-bit
    path, to the BRA that rejoins it), and the routine itself. Its operands are element indices and sizes here, which
    take the 32-bit path below 2^32 elements; the trace does not see which path ran, so the model assumes that one."""
    out = {i.offset for i in instructions if SLOW_DIVISION.search(i.routine or "")}
    for at, i in enumerate(instructions):
        if i.opcode.startswith("CALL") and SLOW_DIVISION.search(i.text):
            start = next((k for k in range(at - 1, -1, -1) if instructions[k].opcode.startswith("BRA")), -1) + 1
            end = next((k for k in range(at + 1, len(instructions)) if instructions[k].opcode.startswith("BRA")), at)
            out |= {j.offset for j in instructions[start : end + 1]}
    return out


def block_runs(found, lines, branches, warps, source_lines):
    """{offset: (runs, bound)}: the warp-level runs of the basic block holding that instruction of one kernel's SASS
    (`found`, kp.gpumodel.sass.Instruction in address order), or None where the trace does not fix them, and the most
    it can have run (kp.gpumodel.cfg); {} where blocks() finds no graph (an indirect jump). Its equations: the warps
    launched enter block 0; a line's memory instructions of one space and kind, none of them predicated, ran the
    line's requests of that space and kind between them (as kp.gpumodel.counts.as_compiled regroups the lanes'
    accesses into nvcc's instructions); nvcc's 64-bit division slow side (slow_division) never ran; a branch whose
    line no warp ever diverged at (the trace's Branch.divergent) sends its block's runs down its two edges; a loop
    nvcc kept (one backward conditional BRA at its line) runs its body once per evaluation that continued; a line's
    uniform branches that went one way every time (Branch.none 0 or all) sent nothing down the other edge; a
    subroutine (Instruction.routine) runs once per call, its own branches not followed.
    lines: the kernel's Line records as compiled (kp.gpumodel.counts.as_compiled); branches: its Branch records;
    warps: the warps it launched; source_lines: a `.cu` file's lines by its name (kp.gpumodel.sass.source_lines)."""
    out = {}
    graph = blocks(found)
    if graph:
        equations = [({o: 1.0}, 0.0) for o in slow_division(found)]
        for ln in (ln for ln in lines if ln.space in ("global", "shared")):
            mine = [i for i in found if (i.file, i.line, i.space, i.kind) == (ln.file, ln.line, ln.space, ln.kind)]
            # a predicated one (`@P0 LDG`) issues with no lane on, which the trace's requests do not count
            if mine and not any(i.text.startswith("@") for i in mine):
                equations.append(({i.offset: 1.0 for i in mine}, float(ln.requests)))
        branch = {(b.file, b.line): b for b in branches}
        uniform, loops, latches, slow = set(), [], {}, slow_division(found)
        for b in graph:  # the blocks that jump back, per line
            last = b.instructions[-1]
            if any(kind == "jump" and s <= b.index for s, kind in b.successors):
                latches.setdefault((last.file, last.line), []).append(b)
        for b in graph:
            last = b.instructions[-1]
            record = branch.get((last.file, last.line))
            if record is None or not last.opcode.startswith("BRA"):
                continue
            # not nvcc's own branch to its 64-bit division's slow side, which the source line does not evaluate
            if record.divergent == 0 and not any(graph[t].instructions[0].offset in slow for t, _ in b.successors):
                uniform.add(last.offset)
            head = [graph[s] for s, kind in b.successors if kind == "jump" and s <= b.index]
            if latches.get((last.file, last.line)) == [b] and head:
                # a latch that tests (`@!P1 BRA` back): the body runs once per evaluation that continued; an
                # unconditional jump back to a test at the top: the test runs once per evaluation
                runs = record.executions - (record.none if b.successors[-1][1] == "fall" else 0)
                loops.append(({head[0].instructions[0].offset: 1.0}, float(runs)))
        splits = {}
        for b in graph:
            last = b.instructions[-1]
            record = branch.get((last.file, last.line))
            if last.offset in uniform and len(b.successors) == 2 and (last.file, last.line) not in latches:
                source = source_lines(last.file)
                text = source[last.line - 1] if 0 < last.line <= len(source) else ""
                # which edge is the condition's truth: `if (c) continue;` jumps when c holds, `if (c) {...}`
                # falls into its body; block_counts tries the other way where this one disagrees with the rest
                held, failed = record.executions - record.none, record.none
                totals = (held, failed) if JUMPS.search(text) else (failed, held)
                splits.setdefault((last.file, last.line, totals), []).append(last.offset)
        splits = [(offsets, key[2]) for key, offsets in splits.items()]
        counts, bounds = block_counts(graph, warps, equations, loops, uniform=uniform, splits=splits)
        out = {i.offset: (counts[b.index], bounds[b.index]) for b in graph for i in b.instructions}
        for routine in {i.routine for i in found if i.routine}:  # once per call (its own branches not followed)
            calls = [out[i.offset] for i in found if i.opcode.startswith("CALL") and routine in i.text]
            known = all(c is not None for c, _ in calls)
            runs = (sum(c for c, _ in calls) if known else None, sum(b for _, b in calls))
            out |= {i.offset: runs for i in found if i.routine == routine}
    return out
