"""The checker of a kernel against its spec (notebook 00's puzzles, the lessons' exercises): `grade(task, source)`
builds `source` (the learner's file, a solution, anywhere) with the launcher and binding kp.puzzlefiles makes from
`task` (a Puzzle-shaped spec: puzzles/specs.py), runs it in check mode on the CPU stand-in on every size of the task
(out-of-bounds accesses, races and divergent barriers named at their line), compares `out` with the spec, then scores
the largest size: the most global and shared reads and writes one thread made against the task's target, and the GPU
model's counters against its performance goals (kp.goals). PASS needs all three. Owns the checking and the score's
display; kp.puzzle finds the puzzles and their files, and the exercises theirs.
"""

import dataclasses
from pathlib import Path

import torch

from kp.check import KernelCheckError
from kp.files import display_path
from kp.goals import misses
from kp.gpumodel.profile import Profile, profile
from kp.load import load_kernel
from kp.puzzlefiles import build_files
from kp.table import Table
from kp.verify import first_wrong_element

COUNTS = ("global reads", "global writes", "shared reads", "shared writes")


@dataclasses.dataclass
class PuzzleResult:
    """What `grade()` found: passed, the message, per count the most one thread made and the target, the GPU model's
    Profile of the largest size (None when the kernel did not get that far: a FAIL on the values), the task's goals
    and the ones it missed (kp.goals.Miss)."""

    name: str
    passed: bool
    message: str
    most: dict = dataclasses.field(default_factory=dict)
    target: dict = dataclasses.field(default_factory=dict)
    gpu_model: str = ""
    profile: Profile = None
    goals: tuple = ()
    missed: list = dataclasses.field(default_factory=list)

    def table(self):
        rows = [
            {"": "most by one thread", **{c: self.most.get(c, "") for c in COUNTS}},
            {"": "target", **{c: self.target.get(c, "–") for c in COUNTS}},
        ]
        return Table(rows)

    def __repr__(self):
        return f"<puzzle {self.name}: {'PASS' if self.passed else 'FAIL'}>"


def _load(p, source, target, check):
    return load_kernel(build_files(p, source), target=target, check=check, quiet=True)


def _case(p, sizes, seed, device):
    g = torch.Generator().manual_seed(seed)
    inputs = p.inputs(*sizes, g)
    out = p.out(*sizes, *inputs)
    return [t.to(device) for t in inputs], out.to(device)


def _call(ext, p, sizes, inputs, out):
    grid, block = p.launch(*sizes)
    ext.run(*inputs, out, *sizes, *grid, *block)


def _said(p, sizes):
    """`rows=3, cols=5`: a case as the kernel's int parameters name it."""
    names = [param.split()[-1] for param in p.params if "*" not in param]
    return ", ".join(f"{n}={v}" for n, v in zip(names, sizes))


def _mismatch(p, sizes, got, expected, start, checked):
    """The first wrong element, and where it is NaN, why: out starts filled with NaN (so that an element no thread
    wrote shows), and a check build knows whether a thread wrote it (`checked`; a GPU run does not)."""
    where = first_wrong_element(got, expected, atol=p.atol, rtol=p.rtol)
    if where is None:
        return f"wrong result for {_said(p, sizes)}: the values differ"
    wrong = ~torch.isclose(got, expected.to(got.dtype), rtol=p.rtol, atol=p.atol, equal_nan=True)
    index = tuple(int(i) for i in wrong.nonzero()[0])
    note = ""
    if got.is_floating_point() and got[index].isnan() and start[index].isnan():
        if not checked:
            note = "out starts filled with NaN: no thread wrote this element, or one wrote a value computed from a NaN"
        elif "last written by" in where:
            note = (
                "out starts filled with NaN, and the value written there is NaN too: computed from a NaN, such as "
                "out's own starting value (an atomicAdd onto it, a `+=`)"
            )
        else:
            note = "out starts filled with NaN, and no thread wrote this element"
    return f"wrong result for {_said(p, sizes)}: {where}" + (f" ({note})" if note else "")


def _most(prof):
    """The most global and shared reads and writes (stores and atomics) one thread made, from the profile's touches."""
    space = {a.id: a.space for a in prof.arrays}
    per_thread = {}
    for t in prof.touches:
        key = (t.launch, t.block, t.tid)
        counts = per_thread.setdefault(key, dict.fromkeys(COUNTS, 0))
        counts[f"{space[t.array]} {'reads' if t.kind == 0 else 'writes'}"] += 1
    return {c: max((counts[c] for counts in per_thread.values()), default=0) for c in COUNTS}


def _gpu_model(prof):
    said = []
    loads = [ln for ln in prof.lines if ln.space == "global" and ln.kind == "load" and ln.requests]
    if loads:
        sectors = sum(ln.units for ln in loads) / sum(ln.requests for ln in loads)
        ideal = sum(ln.ideal for ln in loads) / sum(ln.requests for ln in loads)
        said.append(f"global loads: {sectors:.3g} sectors per request (ideal {ideal:.3g})")
    shared = [ln for ln in prof.lines if ln.space == "shared"]  # nvcc's narrower re-reads included (kp.goals)
    if shared:
        worst = max(shared, key=lambda ln: ln.worst)
        said.append(
            f"shared memory: a {worst.worst}-way bank conflict at {worst.file}:{worst.line}"
            if worst.worst >= 2
            else "shared memory: no bank conflicts"
        )
    return "; ".join(said)


def grade(task, source, target=None, quiet=False, profile=False, title=None):
    """Check the kernel in `source` (a path) against `task` (a Puzzle-shaped spec: name, params, sizes, launch, inputs,
    out, spec, target, rtol, atol; goals and host where it has them): in check mode on the CPU stand-in on every size,
    then the counts of one thread against the target and the GPU model's counters against the goals. `target="cuda"`
    (the default where a GPU is present): the same sizes also run the nvcc build on the GPU. Prints PASS or FAIL and
    the score (unless `quiet`; `title` heads it, the task's name by default); `profile=True` shows the GPU model's
    counts per line of the largest size too (in Jupyter as Nsight Compute's source view), with its advice. Returns a
    PuzzleResult."""
    source = Path(source)
    if not source.is_file():
        raise FileNotFoundError(f"no file {display_path(source)}: the kernel of {task.name} goes there")
    result = _check(task, source, target or ("cuda" if torch.cuda.is_available() else "cpu"))
    if not quiet:
        verdict = "PASS" if result.passed else "FAIL"
        print(f"{title or task.name} ({display_path(source)}): {verdict}\n{result.message}")
        if result.most:
            show_table(result.table())
        if result.gpu_model:
            print(f"GPU model (a model, counted on the CPU stand-in): {result.gpu_model}")
    if profile:
        _show_profile(task, result)
    return result


def _check(p, source, target):
    copy = display_path(build_files(p, source))
    checked = _load(p, source, "cpu", check=True)
    for seed, sizes in enumerate(p.sizes):
        inputs, out = _case(p, sizes, seed, "cpu")
        start = out.clone()
        try:
            _call(checked, p, sizes, inputs, out)
        except KernelCheckError as e:
            found = str(e).replace(copy, display_path(source))  # a barrier's finding names the file it was built from
            return PuzzleResult(p.name, False, f"check mode, on {_said(p, sizes)}:\n{found}")
        expected = p.spec(*inputs, *sizes)
        if not _close(p, out, expected):
            return PuzzleResult(p.name, False, _mismatch(p, sizes, out, expected, start, checked=True))
    if target == "cuda":
        gpu = _load(p, source, "cuda", check=False)
        for seed, sizes in enumerate(p.sizes):
            inputs, out = _case(p, sizes, seed, "cuda")
            start = out.cpu()
            _call(gpu, p, sizes, inputs, out)
            expected = p.spec(*inputs, *sizes)
            if not _close(p, out, expected):
                wrong = _mismatch(p, sizes, out.cpu(), expected.cpu(), start, checked=False)
                return PuzzleResult(p.name, False, "on the GPU: " + wrong)
    sizes = p.sizes[-1]
    inputs, out = _case(p, sizes, 0, "cpu")
    prof = profile(_call, checked, p, sizes, inputs, out)
    most = _most(prof)
    limit = {c: (t(*sizes) if callable(t) else t) for c, t in p.target.items()}
    over = [f"{c}: {most[c]}, the target is {limit[c]}" for c in limit if most[c] > limit[c]]
    goals = tuple(getattr(p, "goals", ()))
    missed = misses(prof, goals, lambda goal: _reference_seconds(p, goal, sizes), sizes)
    where = "the CPU stand-in in check mode" + (" and the GPU" if target == "cuda" else "")
    sizes_said = "; ".join(_said(p, s) for s in p.sizes)
    if over:
        message = f"right on every size ({sizes_said}), but one thread makes too many accesses: " + "; ".join(over)
    else:
        message = f"right on every size ({sizes_said}), on {where}, within the targets"
    if missed:
        message += (", but it" if not over else "; and it") + f" misses {'a goal' if len(missed) == 1 else 'goals'} "
        message += f"of the GPU model (for {_said(p, sizes)}): " + "; ".join(map(str, missed))
    elif goals:
        message += f"; it meets the GPU model's goals ({', '.join(map(str, goals))})"
    passed = not over and not missed
    return PuzzleResult(p.name, passed, message, most, limit, _gpu_model(prof), prof, goals, missed)


def _reference_seconds(p, goal, sizes):
    """A "modelled time" goal's reference on the H100, on the graded case: its `.cu` built and profiled as the task's
    kernel is, or its callable asked."""
    inputs, out = _case(p, sizes, 0, "cpu")
    if callable(goal.reference):
        return goal.reference(*inputs, *sizes)
    reference = Path(goal.reference)
    if not reference.is_file():
        raise FileNotFoundError(f"no file {display_path(reference)}: the reference of the goal {goal}")
    return profile(_call, _load(p, reference, "cpu", check=True), p, sizes, inputs, out).estimate("H100")


def _close(p, got, expected):
    if got.shape != expected.shape:
        return False
    return bool(torch.isclose(got, expected.to(got.dtype), rtol=p.rtol, atol=p.atol).all())


def _jupyter():
    """IPython's display in a Jupyter kernel (which renders HTML); None in a terminal or a script."""
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        return None
    shell = get_ipython()
    return (lambda html: display(HTML(html))) if shell and shell.__class__.__name__ == "ZMQInteractiveShell" else None


def show_table(table):
    """A table as a table: HTML in Jupyter, columns aligned in plain text elsewhere."""
    if show := _jupyter():
        show(table.html())
    else:
        print(plain_text(table))


def plain_text(table):
    """A Table as aligned plain text: its title, a header row, a row per row (numbers right-aligned)."""
    columns = list(table.rows[0]) if table.rows else []
    cells = [[str(c) for c in columns]] + [[str(r[c]) for c in columns] for r in table.rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    numeric = [all(isinstance(r[c], (int, float)) for r in table.rows) for c in columns]
    lines = [
        "  ".join(v.rjust(w) if n else v.ljust(w) for v, w, n in zip(row, widths, numeric)).rstrip() for row in cells
    ]
    return "\n".join(([table.title] if table.title else []) + lines)


def _show_profile(p, result):
    prof = result.profile
    if prof is None:
        print("no profile: the GPU model counts a kernel that is right on every size; the FAIL above comes first")
        return
    print(
        f"the GPU model's counts for {_said(p, p.sizes[-1])}, per line of your file (a model, counted on the CPU "
        "stand-in):"
    )
    if show := _jupyter():  # the source view, its advice on top (none: nothing shown)
        show(prof._repr_html_())
        if not prof.advice():
            print(prof.advice())
    else:
        print(plain_text(prof.table()))
        print(prof.advice())


HINT_LEVELS = ("a nudge", "the approach", "a sketch, not the kernel")


def grade_task(kind, task, folder, title, hints, solution=False, hint=0, target=None, quiet=False, profile=False):
    """What `puzzle()` and `exercise()` do with a task found in `folder` (puzzles/, exercises/): with `hint` 1, 2 or
    3, print that hint of `hints` (a nudge, the approach, a sketch) and check nothing (None); else grade
    folder/<task.file> (`solution`: folder/solutions/<task.file>). `kind` ("puzzle") and `title` name it."""
    if hint:
        if hint not in (1, 2, 3):
            raise RuntimeError(f"{kind}: hint must be 1, 2 or 3 ({', '.join(HINT_LEVELS)}), not {hint!r}")
        more = f" (hint={hint + 1}: {HINT_LEVELS[hint]})" if hint < 3 else ""
        print(f"{title}, hint {hint} of 3, {HINT_LEVELS[hint - 1]}{more}:\n{hints[hint - 1]}")
        return None
    source = folder / "solutions" / task.file if solution else folder / task.file
    if not source.is_file():
        raise FileNotFoundError(f"no file {display_path(source)}: the {kind}'s kernel goes there")
    return grade(task, source, target, quiet, profile, title=title)


def show_code(path):
    """Display a learner's kernel file with syntax highlighting (plain text outside IPython)."""
    text = Path(path).read_text()
    try:
        from IPython.display import Code, display
    except ImportError:
        print(text)
        return
    display(Code(text, language="cuda"))
