"""Performance goals of a puzzle or an exercise, stated in the GPU model's counters (issue 35): `Goal(counter, most)`
says that a kernel's counter must stay at or under `most`, and `misses(prof, goals)` reads a Profile
(kp.gpumodel.profile) and returns each Miss: the counter, its value, the goal and the line that misses it, as a
learner reads it ("sectors per request: 32 at 04_map2d.cu:9, the goal is at most 4").

The counters, from the Profile as nvcc's SASS for the H100 serves the accesses (`prof.lines`, `prof.branches`,
`prof.instructions`). `prof.lines` hold the requests of the narrower instructions nvcc re-reads a line with
(kp.gpumodel.charges.reloaded: an LDS beside a line's LDS.128), so "bank-conflict ways" sees a re-read's conflict too,
and a goal of no bank conflicts can miss on it where the wide loads alone would meet it: intended, since the GPU runs
those instructions and Nsight Compute counts their wavefronts (tests/test_goals.py, kernel 5's As line on sm_86):
  "sectors per request"   per line of global loads or stores (`kind` picks one): 32-byte sectors per warp request
  "bank-conflict ways"    per line of shared-memory accesses: its worst request's N of an N-way conflict (1: none)
  "divergent branches"    per line of branch conditions: warp executions whose lanes went both ways, less those split
                          at one lane (lanes 0..k-1 one way: a bounds guard's ragged last warp, which no layout avoids)
  "global atomics per block"  per line of global atomics: the threads' atomics (as the source wrote them) per block
                          launched. Atomics on one address serialise in the L2, which the modelled time does not
                          count: a block's private copy (shared memory) and one atomic per block or per bin do better
  "global loads per FMA"  kernel-wide: the elements the threads loaded from global memory (the source's loads, each
                          lane one) per multiply-add the computation needs (`fmas`, a function of the sizes)
  "modelled time"         kernel-wide: the modelled time on the H100 over a reference kernel's on the same case
Owns the goals and their reading only: never builds or runs a kernel (kp.grade profiles both the kernel and a
"modelled time" goal's reference, and passes the reference's seconds in).

Why the FMAs come from the spec and not from the SASS's FFMAs: how nvcc compiles `acc += c ? a * b : 0` (FMUL, FADD)
is no measure of the loads a kernel saves (and the runs of a fully unrolled loop's line were not exact before the
SASS's basic blocks: the tiled matmul's 720 counted where its 72 warps x 2 tiles make 144, 2026-11-27).
"""

import dataclasses

COUNTERS = (
    "sectors per request", "bank-conflict ways", "divergent branches", "global atomics per block",
    "global loads per FMA", "modelled time",
)  # fmt: skip
KINDS = ("", "load", "store")  # of "sectors per request": "" both


@dataclasses.dataclass(frozen=True)
class Goal:
    """A counter (one of COUNTERS) that must stay at or under `most`. `kind`: for "sectors per request", "load" or
    "store" only ("" both). `reference`: for "modelled time", the kernel `most` is a factor of: a `.cu` file of the
    same spec (a puzzle's solution) or a callable `reference(*inputs, *sizes) -> seconds` on the H100. `fmas`: for
    "global loads per FMA", the multiply-adds the computation needs, a function of the task's sizes (n * m * k)."""

    counter: str
    most: float
    kind: str = ""
    reference: object = None
    fmas: object = None

    def __post_init__(self):
        if self.counter not in COUNTERS:
            raise RuntimeError(f"Goal: counter {self.counter!r} is not one of {', '.join(map(repr, COUNTERS))}")
        if self.kind not in KINDS or (self.kind and self.counter != "sectors per request"):
            raise RuntimeError(f"Goal: kind {self.kind!r} is for \"sectors per request\" only: 'load' or 'store'")
        if (self.reference is None) == (self.counter == "modelled time"):
            raise RuntimeError(f'Goal: reference is what a "modelled time" goal needs, and only it (counter '
                               f"{self.counter!r}, reference {self.reference!r})")  # fmt: skip
        if (self.fmas is None) == (self.counter == "global loads per FMA"):
            raise RuntimeError(f'Goal: fmas is what a "global loads per FMA" goal needs, and only it (counter '
                               f"{self.counter!r}, fmas {self.fmas!r})")  # fmt: skip
        if not self.most >= 0:
            raise RuntimeError(f"Goal: most must be a number at or above 0, not {self.most!r}")

    def __str__(self):
        if self.counter == "modelled time":
            return f"modelled time at most {self.most:g}x the reference's"
        said = {"load": "global loads' ", "store": "global stores' "}.get(self.kind, "")
        return f"{said}{self.counter} at most {self.most:g}"


@dataclasses.dataclass(frozen=True)
class Miss:
    """A goal missed: the value counted and where (`file:line`, by the file's name: for "global loads per FMA", the line
    of the most loads)."""

    goal: Goal
    value: float
    where: str
    detail: str = ""  # what the access is ("load", "store": a line may have both), or the times ("2.5 µs against ...")

    def __str__(self):
        g = self.goal
        if g.counter == "modelled time":
            said = f"modelled time: {self.value:.3g}x the reference's ({self.detail}) for {self.where}"
            return f"{said}, the goal is at most {g.most:g}x"
        access = f" ({'its ' if g.counter == 'sectors per request' else ''}{self.detail})" if self.detail else ""
        return f"{g.counter}: {self.value:.3g} at {self.where}{access}, the goal is at most {g.most:g}"


def misses(prof, goals, reference_seconds=None, sizes=()):
    """Every goal of `goals` that `prof` (a kp.gpumodel.profile.Profile) misses, a Miss per line that misses it, worst
    first within a goal. `reference_seconds(goal) -> float`: a "modelled time" goal's reference on the H100 (kp.grade
    runs it), required where there is one; `sizes`: the profiled case's ints, for a goal's `fmas`."""
    return [m for goal in goals for m in sorted(_misses(prof, goal, reference_seconds, sizes), key=lambda m: -m.value)]


def _where(file, line):
    return f"{file.rsplit('/', 1)[-1]}:{line}"


def _misses(prof, goal, reference_seconds, sizes):
    if goal.counter == "sectors per request":
        kinds = (goal.kind,) if goal.kind else ("load", "store")
        lines = [ln for ln in prof.lines if ln.space == "global" and ln.kind in kinds and ln.requests]
        return [Miss(goal, ln.units / ln.requests, _where(ln.file, ln.line), ln.kind) for ln in lines
                if ln.units / ln.requests > goal.most]  # fmt: skip
    if goal.counter == "bank-conflict ways":
        lines = [ln for ln in prof.lines if ln.space == "shared" and ln.requests]
        return [Miss(goal, max(ln.worst, 1), _where(ln.file, ln.line)) for ln in lines if max(ln.worst, 1) > goal.most]
    if goal.counter == "divergent branches":
        return [Miss(goal, b.divergent - b.split, _where(b.file, b.line)) for b in prof.branches
                if b.divergent - b.split > goal.most]  # fmt: skip
    if goal.counter == "global atomics per block":
        blocks = {}
        for la in prof.launches:
            blocks[la.kernel] = blocks.get(la.kernel, 0) + la.blocks
        lines = [ln for ln in prof.source_lines if ln.space == "global" and ln.kind == "atomic" and ln.requests]
        return [Miss(goal, ln.lanes / blocks[ln.kernel], _where(ln.file, ln.line)) for ln in lines
                if ln.lanes / blocks[ln.kernel] > goal.most]  # fmt: skip
    if goal.counter == "global loads per FMA":
        lines = [ln for ln in prof.source_lines if ln.space == "global" and ln.kind == "load"]
        loads, fmas = sum(ln.lanes for ln in lines), goal.fmas(*sizes)
        value = loads / fmas if fmas else float("inf")
        if value <= goal.most or not lines:
            return []
        top = max(lines, key=lambda ln: ln.lanes)  # the line a learner changes first
        said = f"{loads} loads for {fmas} FMAs, {top.lanes} of the loads at this line"
        return [Miss(goal, value, _where(top.file, top.line), said)]
    if reference_seconds is None:
        raise RuntimeError('misses: a "modelled time" goal needs reference_seconds (its reference\'s seconds)')
    mine, theirs = prof.estimate("H100"), reference_seconds(goal)
    if mine <= goal.most * theirs:
        return []
    kernels = ", ".join(dict.fromkeys(la.kernel for la in prof.launches))
    detail = f"{mine * 1e6:.3g} µs against {theirs * 1e6:.3g} µs on the H100, modelled"
    return [Miss(goal, mine / theirs if theirs else float("inf"), kernels, detail)]
