"""Pictures of a profile (matplotlib), as GPU-Puzzles and triton-viz draw them: which block, warp or thread touched
which element of a tensor or `__shared__` array (`touch_map` gives the picture's numbers, `picture` draws them);
for one shared-memory line, its worst warp request's 32 lanes against the 32 banks (`bank_map`, `banks`); and for
one branch line, which lanes of which warps took it (`branch_map`, `branch_lanes`). Takes kp.gpumodel.profile's records
(duck-typed: `.arrays`, `.touches`, `.launches`, `.worst`, `.branch_lanes`); never counts or runs anything.
"""

import numpy as np

BY = ("thread", "warp", "block")


def _array(profile, what, shape=None):
    """The profiled array `what` names: a tensor (matched by its data pointer) or a name; (array record, shape):
    `shape` where given (an output tensor the profile did not hand back, drawn as its op's caller sees it)."""
    arrays = profile.arrays
    if hasattr(what, "data_ptr"):
        found = [a for a in arrays if a.begin == what.data_ptr()]
    else:
        found = [a for a in arrays if a.name == what]
    if not found:
        names = ", ".join(sorted({f"'{a.name}'" for a in arrays})) or "none"
        raise ValueError(f"the profile saw no access to {what!r} (it saw {names})")
    array = found[0]
    if shape is not None:
        if int(np.prod(shape)) != array.elements:
            raise ValueError(
                f"shape {tuple(shape)} has {int(np.prod(shape))} elements; '{array.name}' has {array.elements}"
            )
        return array, tuple(shape)
    shape = tuple(what.shape) if hasattr(what, "data_ptr") else array.dims or (array.elements,)
    if int(np.prod(shape)) != array.elements:
        shape = (array.elements,)
    return array, tuple(shape)


def touch_map(profile, what, by="thread", kind=None, shape=None):
    """An array of the shape of `what` (a tensor, or the name of a tensor or `__shared__` array): for each element,
    the linear id of the last thread (`by="thread"`: its index in its block), warp (`"warp"`: block x warps per block
    + warp) or block (`"block"`) that touched it in the profile (or `kind`: "load", "store" or "atomic"); -1 where
    none did."""
    if by not in BY:
        raise ValueError(f"by is one of {BY}, got {by!r}")
    array, shape = _array(profile, what, shape)
    out = np.full(array.elements, -1, dtype=np.int64)
    kinds = {"load": 0, "store": 1, "atomic": 2}
    for t in profile.touches:
        if t.array != array.id or (kind and t.kind != kinds[kind]):
            continue
        threads = int(np.prod(profile.launches[t.launch].block))
        warps = -(-threads // 32)
        out[t.index] = {"thread": t.tid, "warp": t.block * warps + t.tid // 32, "block": t.block}[by]
    return out.reshape(shape)


def picture(profile, what, by="thread", kind=None, ax=None, shape=None):
    """`touch_map` drawn: one cell per element, coloured by who touched it, numbered where the array is small."""
    import matplotlib.pyplot as plt

    grid = touch_map(profile, what, by, kind, shape)
    grid2 = grid.reshape(1, -1) if grid.ndim == 1 else grid.reshape(grid.shape[0], -1)
    if ax is None:
        _, ax = plt.subplots(figsize=(min(12, 1 + 0.35 * grid2.shape[1]), min(8, 1 + 0.35 * grid2.shape[0])))
    shown = np.ma.masked_less(grid2, 0)
    ax.imshow(shown, cmap="tab20", interpolation="nearest", aspect="equal")
    if grid2.size <= 1024:
        for (r, c), v in np.ndenumerate(grid2):
            if v >= 0:
                ax.text(c, r, str(v), ha="center", va="center", fontsize=6)
    array, _ = _array(profile, what)
    verb = {"load": "loaded", "store": "stored", "atomic": "updated", None: "touched"}[kind]
    ax.set_title(f"{array.name}: the {by} that {verb} each element last (a model)")
    ax.set_xticks([])
    ax.set_yticks([])
    return ax.figure


def bank_map(profile, line):
    """For the shared-memory access at `line` (a line number or "file:line"): its worst warp request as a 32 x 32
    array, lanes by banks: the word (counted from 1 within that bank) each lane reads in each bank, 0 where none.
    A column with more than one distinct word is a bank conflict."""
    found = [w for w in profile.worst if line in (w.line, f"{w.file}:{w.line}")]
    if not found:
        lines = ", ".join(f"{w.file}:{w.line}" for w in profile.worst) or "none"
        raise ValueError(f"no shared-memory access was counted at {line!r} (shared lines: {lines})")
    worst = found[0]
    grid = np.zeros((32, 32), dtype=np.int64)
    words = {}
    for lane, address in enumerate(worst.addresses):
        if not (worst.lanes >> lane) & 1:
            continue
        for word in range(address // 4, (address + worst.size - 1) // 4 + 1):
            bank = word % 32
            per_bank = words.setdefault(bank, [])
            if word not in per_bank:
                per_bank.append(word)
            grid[lane, bank] = per_bank.index(word) + 1
    return grid


def banks(profile, line, ax=None):
    """`bank_map` drawn: lanes down, banks across, each cell coloured by the word it reads in that bank."""
    import matplotlib.pyplot as plt

    grid = bank_map(profile, line)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 7))
    ax.imshow(np.ma.masked_equal(grid, 0), cmap="tab20", interpolation="nearest")
    ways = int(max((len(set(grid[:, b]) - {0}) for b in range(32)), default=0))
    ax.set_xlabel("bank")
    ax.set_ylabel("lane")
    ax.set_title(f"line {line}: {ways}-way (distinct words in the busiest bank; a model)")
    return ax.figure


def branch_map(profile, line, kernel=None):
    """For the branch condition at `line` (a line number or "file:line"; `kernel`: a name its kernel's begins with,
    where several kernels share the line): (taken, evaluated), two arrays of warps x 32 lanes of one block (the first
    counted of the first launch that reached it): the times each lane found the condition true, and the times it
    evaluated it. A warp whose row mixes counts took the branch with some lanes and not others: it diverged."""
    found = [
        b
        for b in profile.branch_lanes
        if line in (b.line, f"{b.file}:{b.line}") and (kernel is None or b.kernel.startswith(kernel))
    ]
    if not found:
        lines = ", ".join(sorted({f"{b.file}:{b.line} ({b.kernel})" for b in profile.branch_lanes})) or "none"
        raise ValueError(f"no branch condition was counted at {line!r} (branch lines: {lines})")
    if len({b.kernel for b in found}) > 1:
        kernels = ", ".join(sorted({b.kernel for b in found}))
        raise ValueError(f"line {line!r} is a branch of several kernels ({kernels}): name one with kernel=")
    warps = max(b.warp for b in found) + 1
    taken, evaluated = np.zeros((warps, 32), dtype=np.int64), np.zeros((warps, 32), dtype=np.int64)
    for b in found:
        taken[b.warp], evaluated[b.warp] = b.taken, b.evaluated
    return taken, evaluated


def branch_lanes(profile, line, kernel=None, ax=None, title=None):
    """`branch_map` drawn: warps down, lanes across, each lane coloured and numbered by the times it took the branch
    (grey: never evaluated it). A warp's row of one colour went one way at every evaluation; of several, it diverged."""
    import matplotlib.pyplot as plt

    taken, evaluated = branch_map(profile, line, kernel)
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.8 + 0.3 * taken.shape[0]))
    ax.set_facecolor("0.85")
    ax.imshow(np.ma.masked_where(evaluated == 0, taken), cmap="viridis", interpolation="nearest", aspect="equal",
              vmin=0, vmax=max(1, int(evaluated.max())))  # fmt: skip
    for (r, c), v in np.ndenumerate(taken):
        if evaluated[r, c]:
            ax.text(
                c, r, str(v), ha="center", va="center", fontsize=6, color="white" if v < evaluated.max() / 2 else "k"
            )
    ax.set_xlabel("lane")
    ax.set_ylabel("warp")
    ax.set_xticks(range(0, 32, 4))
    ax.set_yticks(range(taken.shape[0]))
    mixed = sum(len(set(row[ev > 0])) > 1 for row, ev in zip(taken, evaluated))
    ax.set_title(title or f"line {line}: times each lane took the branch, one block ({mixed} warps mixed; a model)",
                 fontsize=9)  # fmt: skip
    return ax.figure
