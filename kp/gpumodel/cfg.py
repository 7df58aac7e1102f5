"""The control-flow graph of one kernel's SASS (issue 31). Owns splitting a function's instructions
(kp.gpumodel.sass.Instruction, address order) into basic blocks (basic_blocks: the model's one split, which
kp.gpumodel.register_banks and kp.gpumodel.charges take too) and their edges, and finding its loops (strongly
connected components: components). How often each block ran is kp.gpumodel.flow's (the equations solved); never reads
a trace or a listing itself and models no time.
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
