"""CUDA puzzles (notebook 00): `puzzle("map")` checks the learner's kernel in puzzles/01_map.cu with kp.grade: in check
mode against its spec (a torch function) on ragged sizes and non-uniform data, then PASS or FAIL with a score: the
most global and shared reads and writes one thread made, against the target, and the GPU model's counters against
the puzzle's performance goals (kp.goals: sectors per request, bank conflicts, divergent branches...).
`puzzle("map", profile=True)` shows the GPU model's counts per line too (the Profile). Owns the puzzles' folder (the
table, the files, finding one by name), the scoreboard and the hints; `grade` is re-exported from kp.grade.

A puzzle's `.cu` holds only its kernel; kp.puzzlefiles makes what runs it. The files are numbered (01_map.cu ...) so
that a file browser lists them in order; a puzzle is named by its name ("map"), its file's stem or its number. The
solutions are in puzzles/solutions/. The order follows GPU-Puzzles (github.com/srush/GPU-Puzzles), in CUDA C++.
"""

from pathlib import Path

from kp.files import ROOT, module_from_file
from kp.grade import COUNTS, PuzzleResult, grade, grade_task, plain_text, show_code, show_table
from kp.table import Table

__all__ = ["COUNTS", "PuzzleResult", "grade", "hints", "plain_text", "puzzle", "puzzles", "scoreboard", "show_puzzle"]

PUZZLES_DIR = ROOT / "puzzles"


def puzzles():
    """The puzzles, in order: puzzles/specs.py's table, which lives beside the puzzles (read on first use, so that
    helpers imports where there is no puzzles/ folder: a copy of the project, a packaged op)."""
    return module_from_file("kp_puzzle_specs", PUZZLES_DIR / "specs.py").PUZZLES


def _find(name):
    """A puzzle by its name ("map"), its file ("01_map", "01_map.cu", a path to it) or its number (1)."""
    every, stem = puzzles(), Path(str(name)).name.removesuffix(".cu")
    for p in every:
        if name == p.number or stem in (p.name, p.file[:-3]):
            return p
    raise ValueError(f"no puzzle {name!r}; the puzzles, in order: {', '.join(p.name for p in every)}")


def hints(name):
    """The puzzle's three hints (a nudge, the approach, a sketch), from puzzles/hints.py beside the specs."""
    p = _find(name)
    return module_from_file("kp_puzzle_hints", PUZZLES_DIR / "hints.py").HINTS[p.name]


def puzzle(name, solution=False, target=None, quiet=False, profile=False, hint=0):
    """Check puzzles/NN_<name>.cu (`solution=True`: puzzles/solutions/NN_<name>.cu) against its spec with kp.grade:
    in check mode on the CPU stand-in on every size of the puzzle, then the counts of one thread against the target
    and the GPU model's counters against the puzzle's goals. `target="cuda"` (the default where a GPU is present):
    the same sizes also run the nvcc build on the GPU. Prints PASS or FAIL and the score (unless `quiet`);
    `profile=True` shows the GPU model's counts per line of the largest size too. Returns a PuzzleResult; its
    `.profile` is that Profile. `hint=1`, `2` or `3` prints a hint instead (a nudge, the approach, a sketch), and
    checks nothing."""
    p = _find(name)
    title = f"puzzle {p.number} · {p.name}"
    return grade_task(
        "puzzle", p, PUZZLES_DIR, title, hints(p.name) if hint else (), solution, hint, target, quiet, profile
    )


def show_puzzle(name):
    """Display puzzles/NN_<name>.cu, the learner's file, with syntax highlighting (plain text outside IPython)."""
    show_code(PUZZLES_DIR / _find(name).file)


GOAL_NAMES = {  # a goal's counter in the scoreboard's narrow column
    "sectors per request": "coalesced",
    "bank-conflict ways": "no bank conflicts",
    "divergent branches": "no divergence",
    "global atomics per block": "few atomics",
    "global loads per FMA": "loads per FMA",
    "modelled time": "modelled time",
}


def scoreboard():
    """Every puzzle checked again (quietly: the builds are cached), shown as a table in order (HTML in Jupyter, text
    elsewhere): its performance goals, and PASS, FAIL, or "FAIL: goal" (right, but a goal missed); returns the number
    solved."""
    rows = []
    for p in puzzles():
        result = puzzle(p.name, quiet=True)
        verdict = "PASS" if result.passed else "FAIL: goal" if result.missed else "FAIL"
        goals = ", ".join(dict.fromkeys(GOAL_NAMES[g.counter] for g in p.goals)) or "–"
        rows.append({"puzzle": f"{p.number} · {p.name}", "what it teaches": p.title, "goals": goals, "": verdict})
    solved = sum(row[""] == "PASS" for row in rows)
    show_table(Table(rows, f"{solved} of {len(rows)} puzzles solved"))
    return solved
