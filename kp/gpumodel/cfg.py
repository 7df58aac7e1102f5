"""The control-flow graph of one kernel's SASS (issue 31). Owns splitting a function's instructions
(kp.gpumodel.sass.Instruction, address order) into basic blocks (basic_blocks: the model's one split, which
kp.gpumodel.register_banks and kp.gpumodel.charges take too) and their edges, and finding its loops (strongly
connected components: components; the blocks on one: cyclic) and nvcc's test before the two versions of a loop it
unswitched (hoisted_tests, which kp.gpumodel.runs takes as going one way). How often each block ran is
kp.gpumodel.flow's (the equations solved); never reads a trace or a listing itself and models no time.
"""

import re
from collections import namedtuple
from itertools import pairwise

TARGET = re.compile(r"`\((\.L_x_\d+)\)")
# Opcodes that end a basic block; BSSY names a reconvergence point (a leader) and falls through.
ENDS = ("BRA", "BRX", "JMP", "JMX", "EXIT", "RET", "CALL", "KILL", "BREAK")
INDIRECT = ("BRX", "JMX")

Block = namedtuple("Block", "index instructions successors")  # successors: ((block index, kind), ...)


def base_opcode(i):
    """An instruction's opcode without its modifiers: BRA for `BRA.U`, EXIT, BSSY."""
    return i.opcode.split(".")[0]


def conditional(i):
    """A predicated branch (`@P0 BRA`, or `BRA P0, target`: a condition among its operands) or exit."""
    if i.text.startswith("@") and not re.match(r"^@!?U?PT\b", i.text):
        return True
    return base_opcode(i) == "BRA" and bool(re.search(r"BRA(?:\.\S+)?\s+!?U?P\d", i.text))


def basic_blocks(instructions):
    """The basic blocks of SASS instructions (`instructions`, address order, of one function or more), each a list of
    instructions in the order given: each function's body and each of its subroutines (Instruction.routine) split at
    its leaders: its first instruction, each label a branch or BSSY in it names, the one after a branch, call, return
    or exit (ENDS; not after BSSY, BSYNC, WARPSYNC or a barrier, past which control flows on). A body's are blocks()'
    Blocks, in their order (also where an indirect jump leaves blocks() no graph)."""
    parts, out = {}, []
    for i in instructions:
        parts.setdefault((i.function, i.routine), []).append(i)
    for part in parts.values():
        at = {label: k for k, i in enumerate(part) for label in (i.labels or "").split()}
        named = {at[t] for i in part for t in TARGET.findall(i.text) if t in at}
        starts = sorted({0} | named | {k + 1 for k, i in enumerate(part[:-1]) if base_opcode(i) in ENDS})
        out += [part[a:b] for a, b in pairwise(starts + [len(part)])]
    return out


def block_of(instructions):
    """{offset: its basic block's index in basic_blocks(instructions)} of one function's SASS."""
    return {i.offset: n for n, found in enumerate(basic_blocks(instructions)) for i in found}


def blocks(instructions):
    """The basic blocks of one function's SASS (the kernel's body: instructions of a subroutine, Instruction.routine,
    are left out) and their edges, a list of Blocks; None where a branch's target is not known (BRX, JMX: an indirect
    jump). Its blocks are basic_blocks()'. An edge's kind: "fall" (to the next instruction), "jump" (a taken branch)."""
    body = [i for i in instructions if not i.routine]
    if not body or any(base_opcode(i) in INDIRECT for i in body):
        return None
    split = basic_blocks(body)
    first = {t: b for b, found in enumerate(split) for t in (found[0].labels or "").split()}  # a named label leads
    if any(t not in first for i in body if base_opcode(i) in ("BRA", "JMP") for t in TARGET.findall(i.text)):
        return None  # a target outside the listing: the edges are not known
    out = []
    for b, found in enumerate(split):
        last, succ = found[-1], []
        op = base_opcode(last)
        falls = op not in ("BRA", "EXIT", "RET", "KILL", "JMP") or conditional(last)
        if op in ("BRA", "JMP"):
            succ += [(first[t], "jump") for t in TARGET.findall(last.text)[:1]]
        if falls and b + 1 < len(split):
            succ.append((b + 1, "fall"))
        out.append(Block(b, found, tuple(succ)))
    return out


def components(graph):
    """{block index: its strongly connected component, named by one of its blocks} for the graph of blocks(): two
    blocks share one where each reaches the other (a loop of the SASS with the loops nested in it). Tarjan's algorithm:
    one depth-first pass, each edge once; iterative, since nvcc's unrolled kernels pass Python's recursion limit."""
    order, low, stack, on, out, work = {}, {}, [], set(), {}, []

    def enter(v):
        order[v] = low[v] = len(order)
        stack.append(v), on.add(v), work.append((v, iter(graph[v].successors)))

    for root in (r for r in range(len(graph)) if r not in order):
        enter(root)
        while work:
            v, edges = work[-1]
            for w, _ in edges:
                if w not in order:  # a tree edge: down it, and back to v's next edge after
                    enter(w)
                    break
                if w in on:  # an edge into the component being built
                    low[v] = min(low[v], order[w])
            else:  # v's edges all done: its low to its parent; a component's first block takes the stack above it
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                while low[v] == order[v] and v not in out:
                    w = stack.pop()
                    on.discard(w), out.update({w: v})
    return out


def hoisted_tests(graph, branch, latches, uniform, warps):
    """The indices of the blocks whose branch is nvcc's test of a loop-invariant condition, hoisted before the loop
    it versioned on it (involution's `s.stride > 1`, put at the line of the loop's first `if`): a conditional BRA
    outside every loop of the SASS whose two edges lead into two different loops, each reached down its edge only
    and holding a copy of the line, inlined at the same call site, at a uniform branch (a copy of the loop per
    outcome). Not a guard that skips the one loop (`if (y < 0 || ...) continue;` peeled before involution's kh loop:
    one edge leads into none), nor a test before an unrolled loop and its remainder (the remainder is reached down
    both edges). The line's evaluations do not count it; it sent all its block ran one way (block_counts' one_way).
    Not a loop's own guard (a line in `latches`, {(file, line): blocks jumping back}); only a line the trace saw
    evaluated more often than once per warp (in a loop: a branch outside every loop runs at most once per warp).
    A loop versioned inside an outer loop (its test then inside that loop) is not found: no kernel here has one."""
    component, looped = components(graph), cyclic(graph)

    def copies(start, test):  # the loops reached from block `start` that hold a uniform copy of `test`'s line
        seen, todo = set(), [start]
        while todo:
            if (k := todo.pop()) not in seen:
                seen.add(k)
                todo += [s for s, _ in graph[k].successors]
        at, ends = (*line_of(test), test.instructions[-1].site), {k: graph[k].instructions[-1] for k in seen & looped}
        return {component[k] for k, i in ends.items() if (i.file, i.line, i.site) == at and i.offset in uniform}

    out = set()
    for b in graph:
        last, place = b.instructions[-1], line_of(b)
        if b.index in looped or place in latches or place not in branch or branch[place].executions <= warps:
            continue
        if last.opcode.startswith("BRA") and conditional(last) and len(b.successors) == 2:
            one, other = (copies(s, b) for s, _ in b.successors)
            if one - other and other - one:
                out.add(b.index)
    return out


def line_of(block):
    """(file, line) of a block's last instruction."""
    return block.instructions[-1].file, block.instructions[-1].line


def cyclic(graph):
    """The indices of the blocks of blocks() that lie on a cycle (a loop of the SASS): those with an edge into their
    own strongly connected component (kp.gpumodel.cfg.components, Tarjan's algorithm), to another block or itself."""
    component = components(graph)
    return {b.index for b in graph if any(component[s] == component[b.index] for s, _ in b.successors)}
