"""How often each basic block of a kernel's SASS ran, warp-level, from what the stand-in's trace knows (issue 31). Owns
the equations kp.gpumodel.flow solves: which of a kernel's SASS instructions ran a line's requests, which branches no
warp diverged at, a loop's runs from its condition's evaluations and its trip counts (the bodies nvcc unrolled it
into: trip_equations), the warps a conditional EXIT let go, nvcc's 64-bit division slow side (never run), the
branches at a condition the trace never evaluated (never run: unevaluated), nvcc's test before the copies of a
loop it versioned (kp.gpumodel.cfg.hoisted_tests), one way, a subroutine's runs from its calls. Takes the SASS
(kp.gpumodel.sass.Instruction), the profile's Line and Branch records and the warps launched as its caller
(kp.gpumodel.compiled) gives them; never reads a trace or a listing itself, and models no time.
"""

import re
from collections import Counter

from kp.gpumodel.cfg import block_of, blocks, conditional, hoisted_tests
from kp.gpumodel.charges import re_reads
from kp.gpumodel.counts import LOST_TRIPS
from kp.gpumodel.flow import block_counts

CLASS_ORDER = {"memory": 0, "fp32": 1}  # the opcodes whose copies count an unrolled loop's bodies, in this order
JUMPS = re.compile(r"\b(?:continue|break|return|goto)\b")  # an `if` whose body leaves: nvcc jumps when it holds
# nvcc's 64-bit integer division and remainder (`i / n`, `i % n` on int64_t): a 32-bit fast path inline, and a CALL
# to this routine on the other side of a branch on whether both operands fit in 32 bits (the CUDA Math API's integer
# intrinsics; seen in the SASS of kernels/mul_add.cu's broadcast_offsets).
SLOW_DIVISION = re.compile(r"__cuda_sm\d+_(?:div|rem)_[su]64")
# a line the stand-in's translator wraps in KP_BRANCH (every `if`, `while` and `for` of device code): the trace has a
# Branch record for it once any thread of a traced block evaluated it
CONDITION = re.compile(r"\b(?:if|while|for)\s*\(")


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
    it can have run (kp.gpumodel.flow); {} where blocks() finds no graph (an indirect jump). Its equations: the warps
    launched enter block 0; a line's memory instructions of one space and kind, none of them predicated, nor shared
    ones that re-read (kp.gpumodel.charges.re_reads), ran the line's requests of that space and kind between them (as
    kp.gpumodel.compiled.as_compiled regroups the lanes' accesses into nvcc's instructions); nvcc's 64-bit division
    slow side (slow_division) never ran; a branch whose line no warp ever diverged at (the trace's Branch.divergent)
    sends its block's runs down its two edges; a loop nvcc kept (one backward conditional BRA at its line) runs its
    body once per evaluation that continued; a line's uniform branches that went one way every time (Branch.none 0
    or all) sent nothing down the other edge, a branch at a condition the trace never evaluated ran none
    (unevaluated), nvcc's test before a loop's versions sent all its block ran one way and is no evaluation of its
    line (hoisted_tests); a subroutine (Instruction.routine) runs once per call, its own branches not followed.
    lines: the kernel's Line records as compiled (kp.gpumodel.compiled.as_compiled); branches: its Branch records;
    warps: the warps it launched; source_lines: a `.cu` file's lines by its name (kp.gpumodel.sass.source_lines)."""
    out = {}
    graph = blocks(found)
    if graph:
        equations = [({o: 1.0}, 0.0) for o in slow_division(found)]
        block = block_of(found)
        for ln in (ln for ln in lines if ln.space in ("global", "shared")):
            mine = [i for i in found if (i.file, i.line, i.space, i.kind) == (ln.file, ln.line, ln.space, ln.kind)]
            # a predicated one (`@P0 LDG`) issues with no lane on, which the trace's requests do not count; a shared
            # line's narrower instructions that re-read (charges.re_reads) ran more than its requests
            if mine and not any(i.text.startswith("@") for i in mine) and not re_reads(mine, block):
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
        equations += unevaluated(graph, branch, source_lines)
        trials = [[e] for e in exits(graph, branch, source_lines)]
        for place, record in branch.items():
            if place in latches and record.trips and record.divergent == 0:
                trials.append(trip_equations(graph, place, latches[place], dict(record.trips)))
        splits, hoisted = {}, hoisted_tests(graph, branch, latches, uniform, warps)
        for b in graph:
            last = b.instructions[-1]
            record = branch.get((last.file, last.line))
            if b.index in hoisted:
                continue
            if last.offset in uniform and len(b.successors) == 2 and (last.file, last.line) not in latches:
                source = source_lines(last.file)
                text = source[last.line - 1] if 0 < last.line <= len(source) else ""
                # which edge is the condition's truth: `if (c) continue;` jumps when c holds, `if (c) {...}`
                # falls into its body; block_counts tries the other way where this one disagrees with the rest
                held, failed = record.executions - record.none, record.none
                totals = (held, failed) if JUMPS.search(text) else (failed, held)
                splits.setdefault((last.file, last.line, totals), []).append(last.offset)
        splits = [(offsets, key[2]) for key, offsets in splits.items()]
        # a branch to the division's slow side sends all its block ran the other way (no lane takes the slow side)
        fast = {b.instructions[-1].offset for b in graph if any(graph[t].instructions[0].offset in slow
                                                                 for t, _ in b.successors)}  # fmt: skip
        one_way = [graph[k].instructions[-1].offset for k in hoisted]
        counts, bounds = block_counts(graph, warps, equations, loops, uniform=uniform | fast, splits=splits,
                                      trials=trials, one_way=one_way)  # fmt: skip
        out = {i.offset: (counts[b.index], bounds[b.index]) for b in graph for i in b.instructions}
        for routine in {i.routine for i in found if i.routine}:  # once per call (its own branches not followed)
            calls = [out[i.offset] for i in found if i.opcode.startswith("CALL") and routine in i.text]
            known = all(c is not None for c, _ in calls)
            runs = (sum(c for c, _ in calls) if known else None, sum(b for _, b in calls))
            out |= {i.offset: runs for i in found if i.routine == routine}
    return out


def digits(sizes, trips):
    """{U: (runs, entries)} for a loop nvcc laid out as bodies of `sizes` copies (16, 8, 4, 1: each a multiple of the
    next), over its trip counts {t: entries}: an entry of t trips runs the U body floor(t mod U' / U) times, U' the
    next larger size (t = 16 a + 8 b + 4 c + d: a, b, c, d), whatever order nvcc runs them in; `entries` counts the
    entries that ran it at all."""
    out, larger = {}, None
    for u in sorted(sizes, reverse=True):
        runs = {t: (t % larger if larger else t) // u for t in trips}
        out[u] = (sum(runs[t] * e for t, e in trips.items()), sum(e for t, e in trips.items() if runs[t]))
        larger = u
    return out


def trip_equations(graph, place, latches, trips):
    """The equations a loop's trip counts (Branch.trips, {t: entries}, a line no warp diverged at) give on the
    blocks of its line `place` (file, line), whose latches (blocks jumping back) are `latches`:
    - the loop's guard, the first forward conditional branch of the line that skips past its last latch, jumped for
      the entries of no trip (nvcc's rotated loop: `@!P0 BRA` past it, then the body with its test at the bottom);
    - nvcc unrolled it where the line has several latches: the copies of the body in each block of the line's stretch
      (from its first block to its last) are the counts of one opcode of its largest latch (of one `.cu` line; a
      memory access first, then fp32 arithmetic, then the most frequent: CLASS_ORDER), unpredicated, over the fewest
      any of them holds (the remainder: 1). A block alone with its U ran digits()'s runs, and if a latch, entered
      its loop (its head's runs less its back edge) digits()'s entries times; a remainder nvcc unrolled whole
      (straight blocks of one copy each, the last with its last copies predicated: `@P0 FFMA`), its j-th block where
      t mod U' >= j (U' the smallest U above 1); nothing where other blocks share a U;
    - a loop kept whole (one latch that tests at the bottom) was entered by the entries of one trip or more.
    Nothing where the trace lost some of the trip counts (LOST_TRIPS) or the copies are not multiples of each other."""
    if LOST_TRIPS in trips:
        return []
    mine = [b.index for b in graph if any((i.file, i.line) == place for i in b.instructions)]
    last = max(b.index for b in latches)
    stretch = graph[mine[0] : mine[-1] + 1]
    out = []
    skips = [
        b
        for b in stretch
        if b.instructions[-1].opcode.startswith("BRA")
        and conditional(b.instructions[-1])
        and (b.instructions[-1].file, b.instructions[-1].line) == place
        and b.successors[0][0] > last
    ]
    if skips:
        out.append(({(skips[0].instructions[0].offset, "jump"): 1.0}, float(trips.get(0, 0))))
    tested = [b for b in latches if b.successors[-1][1] == "fall"]
    if len(latches) == 1:
        (b,) = latches
        if tested:
            head = graph[b.successors[0][0]].instructions[0].offset
            out.append(
                ({head: 1.0, (b.instructions[0].offset, "jump"): -1.0}, float(sum(trips.values()) - trips.get(0, 0)))
            )
        return out
    largest = max(latches, key=lambda b: len(b.instructions))
    ops = Counter((i.opcode, i.file, i.line, i.cls) for i in largest.instructions
                  if i.cls != "control" and not i.text.startswith("@"))  # fmt: skip
    if not ops:
        return out
    # the body's own work, not its address arithmetic (colsum v1's 4-copy loop holds 6 IADD3 to 4 LDG and 4 FADD,
    # its remainder 1 IADD3 to 1 LDG): its memory accesses, else its fp32 arithmetic, else the most frequent opcode
    *op, _ = min(ops, key=lambda o: (CLASS_ORDER.get(o[3], 2), -ops[o]))
    op = tuple(op)
    held = {b.index: sum((i.opcode, i.file, i.line) == op and not i.text.startswith("@") for i in b.instructions)
            for b in stretch}  # fmt: skip
    unit = min((n for n in held.values() if n), default=0)
    if not unit:  # every copy predicated
        return out
    copies = {k: n // unit for k, n in held.items() if n}
    sizes = sorted(set(copies.values()), reverse=True)
    if any(n % unit for n in held.values()) or any(a % b for a, b in zip(sizes, sizes[1:])) or sizes[-1] != 1:
        return out
    for u, (runs, entries) in digits(sizes, trips).items():
        (b, *more) = [graph[k] for k, c in copies.items() if c == u]
        if u == 1 and len(sizes) > 1 and not any(x in latches for x in (b, *more)):  # a remainder nvcc unrolled whole
            for j, block in enumerate([b, *more], 1):  # block j runs where t mod U' >= j (its last: `@P0 FFMA` too)
                below = sizes[-2]
                out.append(
                    ({block.instructions[0].offset: 1.0}, float(sum(e for t, e in trips.items() if t % below >= j)))
                )
            continue
        if more or u == 1 and b not in latches:
            continue
        out.append(({b.instructions[0].offset: 1.0}, float(runs)))
        if b in tested:
            head = graph[b.successors[0][0]].instructions[0].offset
            out.append(({head: 1.0, (b.instructions[0].offset, "jump"): -1.0}, float(entries)))
    return out


def unevaluated(graph, branch, source_lines):
    """The equations "ran none" of the blocks that end in a conditional BRA at a line whose condition (CONDITION) the
    trace never evaluated (no Branch record of the line, where the kernel has some): the stand-in records every
    condition it evaluates, so no warp reached that branch. nvcc's loop versioning needs it: it tests a
    loop-invariant condition (`if (s.stride > 1)` in involution's loops) once before the loop and lays out a copy of
    the loop for each outcome; the copy that never ran holds the branches of the lines under the condition, which
    the trace never saw, and nothing else the trace counts (its loop's trips and its line's memory requests are the
    other copy's too) fixes its runs."""
    if not branch:
        return []
    out = []
    for b in graph:
        last = b.instructions[-1]
        if not (last.opcode.startswith("BRA") and conditional(last)) or (last.file, last.line) in branch:
            continue
        source = source_lines(last.file)
        if 0 < last.line <= len(source) and CONDITION.search(source[last.line - 1]):
            out.append(({last.offset: 1.0}, 0.0))
    return out


def exits(graph, branch, source_lines):
    """The equations of the warps that left at a conditional EXIT (`@P0 EXIT`, nvcc's `if (i >= n) return;`, or an
    `if (i < n) {...}` that ends the kernel): what its block ran less what went on (its fall edge), where its line
    has that one EXIT (its other branches, nvcc's 64-bit division's, do not leave): the evaluations where every lane
    held (an `if` whose body leaves: JUMPS) or none did (the rest leave past the body). A warp whose lanes went both
    ways runs on."""
    out, found = [], [i for b in graph for i in b.instructions]
    for b in graph:
        last = b.instructions[-1]
        record = branch.get((last.file, last.line))
        if record is None or last.opcode.split(".")[0] != "EXIT" or not conditional(last):
            continue
        there = [i for i in found if (i.file, i.line) == (last.file, last.line) and i.opcode.split(".")[0] == "EXIT"]
        if len(there) != 1:
            continue
        source = source_lines(last.file)
        text = source[last.line - 1] if 0 < last.line <= len(source) else ""
        left = record.executions - record.none - record.divergent if JUMPS.search(text) else record.none
        out.append(({last.offset: 1.0, (last.offset, "fall"): -1.0}, float(left)))
    return out
