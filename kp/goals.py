"""Performance goals of a puzzle or an exercise, stated in the GPU model's counters (issue 35): `Goal(counter, most)`
says that a kernel's counter must stay at or under `most`, and `misses(prof, goals)` reads a Profile (kp.profile) and
returns each Miss: the counter, its value, the goal and the line that misses it, as a learner reads it
("sectors per request: 32 at 04_map2d.cu:9, the goal is at most 4").

The counters, from the Profile as nvcc's SASS for the H100 serves the accesses (`prof.lines`, `prof.branches`,
`prof.instructions`):
  "sectors per request"   per line of global loads or stores (`kind` picks one): 32-byte sectors per warp request
  "bank-conflict ways"    per line of shared-memory accesses: its worst request's N of an N-way conflict (1: none)
  "divergent branches"    per line of branch conditions: warp executions whose lanes went both ways, less those split
                          at one lane (lanes 0..k-1 one way: a bounds guard's ragged last warp, which no layout avoids)
  "global loads per FMA"  kernel-wide: global load requests per FFMA executed, warp-level (needs nvcc's SASS)
  "modelled time"         kernel-wide: the modelled time on the H100 over a reference kernel's on the same case
Owns the goals and their reading only: never builds or runs a kernel (kp.grade profiles both the kernel and a
"modelled time" goal's reference, and passes the reference's seconds in).
"""

import dataclasses

COUNTERS = ("sectors per request", "bank-conflict ways", "divergent branches", "global loads per FMA", "modelled time")
KINDS = ("", "load", "store")  # of "sectors per request": "" both
FMA = ("FFMA", "FFMA32I")  # SASS's fp32 fused multiply-add opcodes (NVIDIA's "CUDA Binary Utilities", Hopper)


@dataclasses.dataclass(frozen=True)
class Goal:
    """A counter (one of COUNTERS) that must stay at or under `most`. `kind`: for "sectors per request", "load" or
    "store" only ("" both). `reference`: for "modelled time", the kernel `most` is a factor of: a `.cu` file of the
    same spec (a puzzle's solution) or a callable `reference(*inputs, *sizes) -> seconds` on the H100."""

    counter: str
    most: float
    kind: str = ""
    reference: object = None

    def __post_init__(self):
        if self.counter not in COUNTERS:
            raise RuntimeError(f"Goal: counter {self.counter!r} is not one of {', '.join(map(repr, COUNTERS))}")
        if self.kind not in KINDS or (self.kind and self.counter != "sectors per request"):
            raise RuntimeError(f"Goal: kind {self.kind!r} is for \"sectors per request\" only: 'load' or 'store'")
        if (self.reference is None) == (self.counter == "modelled time"):
            raise RuntimeError(f'Goal: reference is what a "modelled time" goal needs, and only it (counter '
                               f"{self.counter!r}, reference {self.reference!r})")  # fmt: skip
        if not self.most >= 0:
            raise RuntimeError(f"Goal: most must be a number at or above 0, not {self.most!r}")

    def __str__(self):
        if self.counter == "modelled time":
            return f"modelled time at most {self.most:g}x the reference's"
        said = {"load": "global loads' ", "store": "global stores' "}.get(self.kind, "")
        return f"{said}{self.counter} at most {self.most:g}"


@dataclasses.dataclass(frozen=True)
class Miss:
    """A goal missed: the value counted and where (`file:line`, by the file's name; the kernels, for kernel-wide
    counters)."""

    goal: Goal
    value: float
    where: str
    detail: str = ""  # what the access is ("load", "store": a line may have both), or the times ("2.5 µs against ...")

    def __str__(self):
        g = self.goal
        if g.counter == "modelled time":
            said = f"modelled time: {self.value:.3g}x the reference's ({self.detail}) for {self.where}"
            return f"{said}, the goal is at most {g.most:g}x"
        access = f" (its {self.detail})" if self.detail else ""
        return f"{g.counter}: {self.value:.3g} at {self.where}{access}, the goal is at most {g.most:g}"


def misses(prof, goals, reference_seconds=None):
    """Every goal of `goals` that `prof` (a kp.profile.Profile) misses, a Miss per line that misses it, worst first
    within a goal. `reference_seconds(goal) -> float`: a "modelled time" goal's reference on the H100 (kp.grade runs
    it); required where there is one. A goal that cannot be counted (`unmeasured`) is no miss."""
    found = []
    for goal in goals:
        if not unmeasured(prof, [goal]):
            found += sorted(_misses(prof, goal, reference_seconds), key=lambda m: -m.value)
    return found


def unmeasured(prof, goals):
    """Why each goal of `goals` cannot be counted in `prof`, in words: "global loads per FMA" needs nvcc's SASS."""
    said = []
    for goal in goals:
        if goal.counter == "global loads per FMA":
            for kernel in dict.fromkeys(la.kernel for la in prof.launches):
                if isinstance(why := prof.kernel_sass(kernel), str):
                    said.append(f"{goal}: not counted, no SASS for {kernel} ({why})")
    return said


def _where(file, line):
    return f"{file.rsplit('/', 1)[-1]}:{line}"


def _misses(prof, goal, reference_seconds):
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
    if goal.counter == "global loads per FMA":
        return [m for kernel in dict.fromkeys(la.kernel for la in prof.launches) if (m := _loads_per_fma(prof, goal,
                kernel))]  # fmt: skip
    if reference_seconds is None:
        raise RuntimeError('misses: a "modelled time" goal needs reference_seconds (its reference\'s seconds)')
    mine, theirs = prof.estimate("H100"), reference_seconds(goal)
    if mine <= goal.most * theirs:
        return []
    kernels = ", ".join(dict.fromkeys(la.kernel for la in prof.launches))
    detail = f"{mine * 1e6:.3g} µs against {theirs * 1e6:.3g} µs on the H100, modelled"
    return [Miss(goal, mine / theirs if theirs else float("inf"), kernels, detail)]


def _loads_per_fma(prof, goal, kernel):
    """Global load requests per FFMA executed by `kernel`, warp-level: each line's FFMAs once through (its SASS) times
    the line's runs (prof.instructions)."""
    once = {}
    for i in prof.kernel_sass(kernel):
        if i.opcode.split(".")[0] in FMA:
            once[(i.file, i.line)] = once.get((i.file, i.line), 0) + 1
    fmas = sum(x.executions * once.get((x.file, x.line), 0) for x in prof.instructions if x.kernel == kernel)
    loads = sum(ln.requests for ln in prof.lines if ln.kernel == kernel and ln.space == "global" and ln.kind == "load")
    value = loads / fmas if fmas else float("inf")
    return Miss(goal, value, f"kernel {kernel}") if value > goal.most else None
