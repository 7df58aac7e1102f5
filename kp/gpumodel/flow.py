"""How often each basic block of a kernel's SASS ran, warp-level (issue 31). Owns solving for the blocks' runs (the
graph of kp.gpumodel.cfg.blocks) from what the trace knows exactly: the runs of the blocks that hold a line's memory
instructions, flow conservation between blocks, a loop's back edge from its branch evaluations, and the most runs a
block left open can have made. Never reads a trace or a listing itself (kp.gpumodel.runs writes the equations) and
models no time.

What is exact and what is not: a count is returned only where the equations fix it (the block's unit vector lies in
their row space); any other block is None, and its caller falls back to its per-line rule. The equations hold at
warp level where every branch is warp-uniform or reconverges at its BSSY's target; a branch that diverges inside a
warp runs both of its sides, which forward-branch out-flow does not assume (it is left out) and the reconvergence
point's count (that of its BSSY block) keeps right.
"""

import numpy as np

from kp.gpumodel.cfg import ENDS, TARGET, base_opcode, conditional

try:  # the solves are small: OpenBLAS's threads only contend for the cores (50x slower on a busy 2-core machine)
    from threadpoolctl import threadpool_limits
except ImportError:  # without it the answer is the same, only slower where the machine is busy
    threadpool_limits = None


def block_counts(*args, **kwargs):
    """_block_counts (below) with the BLAS library held to one thread."""
    if threadpool_limits is None:
        return _block_counts(*args, **kwargs)
    with threadpool_limits(limits=1, user_api="blas"):
        return _block_counts(*args, **kwargs)


def _block_counts(graph, entry, equations, loops=(), uniform=(), splits=(), trials=(), one_way=(), tolerance=1e-6):
    """({block index: warp-level runs, or None where the equations leave it open}, upper_bounds()) for the graph of
    blocks(). entry: the warps that started the function (block 0's runs from outside). equations: [({offset:
    coefficient}, value)], each "the sum of coefficient x runs of the block holding that offset is value" (a line's
    memory instructions: its requests; a path the model assumes never runs: 0); a key (offset, kind) stands for what
    the edge of that kind ("jump", "fall") out of that offset's block carried. loops: the same form, weighed less
    where they disagree (a loop's branch evaluations). trials: groups of equations of the same form and weight, each
    kept only where it does not leave the rest further from agreeing (what a loop's trip counts say, read against
    the layout nvcc gives an unrolled loop: a loop it unswitched instead, two versions side by side, disagrees).
    Flow: a block runs as often as its in-edges carry (block 0 also `entry`), except a BSSY's target, which runs as
    often as the blocks holding its BSSYs (a branch that diverged in between reconverges there once); a block that
    ends in no branch, an unconditional one or a backward one (a loop's latch) sends out what it ran; a forward
    conditional branch's two edges are left free (a warp that diverges there runs both sides) unless its offset is in
    `uniform` (no warp diverged there: what its block ran goes down its two edges). splits: [(offsets, (jumped, fell))],
    the uniform branches of one line: their jump edges carried `jumped` runs between them, their fall edges `fell`
    (a total of 0: each edge none), or the other way round where that leaves the equations closer to agreeing, or
    neither where both leave them further apart than they were (nvcc tests `packed` of `if (packed && i < n)` once,
    before the loop it sits in, and the rest in each copy: the line's evaluations are not its branches' runs) (which
    way a condition's truth branches in SASS is nvcc's choice: `if (c) continue;` jumps when c holds, an `if` whose
    body nvcc placed out of line too). A block no warp can reach but through a block that ran none ran none, and a
    block that ran none sent none down its edges (both as equations, added until they fix nothing new).
    Trials are facts of the trace and of nvcc's layout, kept where they agree to lstsq's rounding at the
    equations' magnitude (~1e-16 x the condition x the largest value: 1e-10 x it; a 4096-trip loop in 524288 warps
    leaves 5e-6); splits and one_way, assumptions, by their residuals only to 1e-6, and a split that fits them also
    by the strict misfit (to rounding): at large counts a split can fit the residuals and yet need runs below zero.
    one_way: the offsets of branches that sent all their block ran down one edge, the one that leaves the equations
    as close to agreeing as they were (solve's strict misfit) where the other does not (nvcc's test of a
    loop-invariant condition before the versions of a loop it made for its two outcomes); neither where both do or
    neither does. Solved by least squares (numpy)."""
    edges = [(b.index, s, kind) for b in graph for s, kind in b.successors]
    nb, where = len(graph), {i.offset: b.index for b in graph for i in b.instructions}
    label, reconverge = {t: c.index for c in graph for t in (c.instructions[0].labels or "").split()}, {}
    for b in graph:
        for t in (t for i in b.instructions if base_opcode(i) == "BSSY" for t in TARGET.findall(i.text) if t in label):
            reconverge.setdefault(label[t], []).append(b.index)
    outflow = set()  # the blocks that send out what they ran
    for b in graph:
        last = b.instructions[-1]
        # a predicated branch or exit; not a block that ends in another predicated instruction (`@!P1 LOP3` before a
        # label): all of it runs on, its lanes off or on
        forward = base_opcode(last) in ENDS and conditional(last)
        forward = forward and (base_opcode(last) != "BRA" or all(t > b.index for t, _ in b.successors))
        if b.successors and not (forward and last.offset not in uniform):
            outflow.add(b.index)
    # an edge out of a block that sends all it ran down it is that block's runs: no unknown of its own
    free = [e for e, (src, _, _) in enumerate(edges) if not (src in outflow and len(graph[src].successors) == 1)]
    col = {e: edges[e][0] for e in range(len(edges))} | {e: nb + k for k, e in enumerate(free)}
    rows, values, weights = [], [], []

    def add(coefficients, value, weight=1.0):
        row = np.zeros(nb + len(free))
        for k, c in coefficients:
            row[k] += c
        rows.append(row), values.append(value), weights.append(weight)

    for b in graph:
        if b.index in reconverge:
            add([(b.index, 1.0)] + [(s, -1.0) for s in reconverge[b.index]], 0.0)
        else:
            add([(b.index, 1.0)] + [(col[e], -1.0) for e, (_, t, _) in enumerate(edges) if t == b.index],
                entry if b.index == 0 else 0.0)  # fmt: skip
        if b.index in outflow and len(b.successors) > 1:
            add([(b.index, 1.0)] + [(col[e], -1.0) for e, (s, _, _) in enumerate(edges) if s == b.index], 0.0)

    def column(key):  # an offset: its block's runs; (offset, kind): the edge of that kind out of its block
        if not isinstance(key, tuple):
            return where.get(key)
        found = [e for e, (src, _, kind) in enumerate(edges) if src == where.get(key[0]) and kind == key[1]]
        return col[found[0]] if found else None

    def equate(group, weight):  # each equation of the form block_counts takes whose offsets and edges all exist
        for coefficients, value in group:
            columns = [(column(o), c) for o, c in coefficients.items()]
            if all(k is not None for k, _ in columns):
                add(columns, value, weight)

    equate(equations, 1.0), equate(loops, 0.1)

    def fixed(a):  # the columns the equations fix: each outside every direction they leave open
        _, sigma, vt = np.linalg.svd(a, full_matrices=a.shape[0] < a.shape[1])  # all of V where it has more columns
        null = vt[(sigma > tolerance * max(sigma.max(), 1.0)).sum() :]
        return np.abs(null).max(axis=0) <= 1e-6 if len(null) else np.ones(a.shape[1], dtype=bool)

    def solve(strict=False):
        """(equations, solution, misfit): the weighted residuals; `strict`, also the runs below zero of the blocks
        and edges that the equations fix, and the runs they fix in blocks no warp can reach: an assumption (one_way)
        that needs either disagrees with the trace as much as a residual would. Not for trials and splits: an SVD
        per solve, and a kernel has many of those (linear's 512^3 model took 3.4 s, against 0.008)."""
        a, v, w = np.array(rows), np.array(values, dtype=float), np.array(weights)
        x = np.linalg.lstsq(a * w[:, None], v * w, rcond=None)[0]
        if not strict:
            return a, x, float(np.abs((a @ x - v) * w).sum())
        known = fixed(a)
        below = np.where(known, np.minimum(x, 0.0), 0.0).sum()
        dead = sum(abs(x[k]) for k in unreached(known, x) if known[k])
        return a, x, float(np.abs((a @ x - v) * w).sum() - below + dead)

    def unreached(known, x):  # the blocks no warp reaches without passing a block the equations fix at none
        live, todo = set(), [0]
        while todo:
            k = todo.pop()
            if k not in live and not (known[k] and abs(x[k]) <= 1e-6 * (1 + entry)):
                live.add(k)
                todo += [s for s, _ in graph[k].successors]
        return set(range(nb)) - live

    def worse(now, then, rounding=False):  # a misfit beyond then's; `rounding`: by more than lstsq's rounding
        return now > then + 1e-6 * (1 + then) + (1e-10 * max(map(abs, values), default=0.0) if rounding else 0.0)

    misfit = solve()[2] if trials else 0.0
    for group in trials:  # kept only where it leaves the equations as close to agreeing as they were
        before = len(rows)
        equate(group, 0.1)
        now = solve()[2] if len(rows) > before else misfit
        if worse(now, misfit, rounding=True):
            del rows[before:], values[before:], weights[before:]
        else:
            misfit = now

    def split(blocks_, totals):  # the rows "the jump (fall) edges out of these blocks carried totals[0] ([1])"
        for kind, total in zip(("jump", "fall"), totals):
            out = [col[e] for e, (src, _, k) in enumerate(edges) if src in blocks_ and k == kind]
            for group in [[e] for e in out] if total == 0 else [out]:  # none: each edge none
                add([(e, 1.0) for e in group], float(total))

    def fits(blocks_, way):  # the misfit with these rows added (then taken out again)
        before = len(rows)
        split(blocks_, way)
        misfit = solve()[2]
        del rows[before:], values[before:], weights[before:]
        return misfit

    def keeps(blocks_, way):  # adds the split's rows where they leave the equations as close to agreeing as they were
        nonlocal base, signed
        if worse(misfit := fits(blocks_, way), base):
            return False
        before = len(rows)
        split(blocks_, way)
        # and no block or edge the equations fix below zero or run where no warp can reach (one SVD per split that
        # fits): the residuals alone can fit a split that needs either, and at large counts miss it by rounding
        if worse(now := solve(strict=True)[2], signed, rounding=True):
            del rows[before:], values[before:], weights[before:]
            return False
        base, signed = misfit, now
        return True

    base, signed = (solve()[2], solve(strict=True)[2]) if splits else (0.0, 0.0)
    for offsets, totals in splits:
        every = sorted({where[o] for o in offsets if o in where})
        given, swapped = tuple(totals), tuple(totals)[::-1]
        # all of the line's branches, then (where they fit neither way) all but one: nvcc tests a loop-invariant
        # part of a condition once, before the loop (it unswitches it), and the line's evaluations are the rest's
        for blocks_ in [every] + ([[b for b in every if b != k] for k in every] if len(every) > 1 else []):
            if any(keeps(blocks_, way) for way in dict.fromkeys((given, swapped))):
                break

    base = solve(strict=True)[2] if one_way else 0.0
    for offset in one_way:
        fit = {}
        for kind in ("jump", "fall"):
            if (k := column((offset, kind))) is not None:
                add([(k, 1.0)], 0.0)
                fit[k] = solve(strict=True)[2]
                del rows[-1], values[-1], weights[-1]
        agree = [k for k, misfit in fit.items() if not worse(misfit, base)]
        if len(agree) == 1 and len(fit) == 2:
            add([(agree[0], 1.0)], 0.0)
            base = fit[agree[0]]
    zeroed = set()
    while True:  # a block no warp can reach but through a block that ran none ran none, and sent none down its edges
        a, solution, _ = solve()
        known = fixed(a)
        none = {k for k in range(nb) if known[k] and abs(solution[k]) <= 1e-6 * (1 + entry)}
        found = {k for k in unreached(known, solution) | none}
        found |= {col[e] for e, (src, _, _) in enumerate(edges) if src in found}
        if not found - zeroed:
            break
        for k in found - zeroed:
            add([(k, 1.0)], 0.0)
        zeroed |= found
    open_ = ~known[:nb]  # where a direction the equations leave open moves the block's runs
    counts = {k: None if open_[k] else max(0.0, round(float(solution[k]), 6)) for k in range(nb)}
    return counts, upper_bounds(graph, entry, counts)


def upper_bounds(graph, entry, counts):
    """{block index: most runs it can have made}: its count where known, else the sum of what its predecessors ran
    (an edge carries at most its source's runs, a diverged warp's two sides included; block 0 also `entry`); inf
    where a predecessor is open and unbounded (a loop among open blocks)."""
    preds = {b.index: [] for b in graph}
    for b in graph:
        for s, _ in b.successors:
            preds[s].append(b.index)
    bound = {k: (c if c is not None else float("inf")) for k, c in counts.items()}
    for _ in range(len(graph)):
        changed = False
        for b in graph:
            if counts[b.index] is None:
                new = sum(bound[p] for p in preds[b.index]) + (entry if b.index == 0 else 0.0)
                changed |= new < bound[b.index]
                bound[b.index] = min(bound[b.index], new)
        if not changed:
            break
    return bound
