"""The lessons' exercises (issue 35): `exercise("01_grid_stride")` grades the learner's kernel in
exercises/01_grid_stride.cu with kp.grade, the puzzles' checker: correct in check mode on ragged sizes, then the GPU
model's counters against the exercise's performance goals (a FAIL names the counter, its value, the goal and the
line). Owns the exercises' folder (exercises/specs.py's table, the files, finding one by name) and their hints; never
checks anything itself. The files live outside kernels/, so that a lesson's own cells keep working whatever the
learner does to them.
"""

from kp.files import ROOT, module_from_file
from kp.grade import grade_task, show_code

EXERCISES_DIR = ROOT / "exercises"


def exercises():
    """The exercises, in lesson order: exercises/specs.py's table (read on first use, as kp.puzzle reads its own)."""
    return module_from_file("kp_exercise_specs", EXERCISES_DIR / "specs.py").EXERCISES


def find_exercise(name):
    """An exercise by its file's stem ("01_grid_stride", "01_grid_stride.cu"), its name ("grid_stride") or its
    lesson's number (1)."""
    every, stem = exercises(), str(name).rsplit("/", 1)[-1].removesuffix(".cu")
    for e in every:
        if name == e.number or stem in (e.name, e.file[:-3]):
            return e
    raise ValueError(f"no exercise {name!r}; the exercises: {', '.join(e.file[:-3] for e in every)}")


def exercise(name, solution=False, hint=0, target=None, quiet=False, profile=False):
    """Grade exercises/NN_<name>.cu (`solution=True`: exercises/solutions/NN_<name>.cu) against its spec, on every
    size in check mode, then against its performance goals in the GPU model's counters. Prints PASS or FAIL (a FAIL
    never raises: the notebook goes on); returns kp.grade's result (`.passed`, `.missed`, `.profile`). `hint=1`, `2`
    or `3` prints a hint instead (a nudge, the approach, a sketch) and checks nothing, as `puzzle(name, hint=N)`."""
    e = find_exercise(name)
    title = f"exercise {e.number:02d} · {e.name}"
    return grade_task("exercise", e, EXERCISES_DIR, title, e.hints, solution, hint, target, quiet, profile)


def show_exercise(name):
    """Display exercises/NN_<name>.cu, the learner's file, with syntax highlighting (plain text outside IPython)."""
    show_code(EXERCISES_DIR / find_exercise(name).file)
