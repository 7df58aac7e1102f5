"""Each exercise of notebooks 02-08 done as a learner does it (the file or the cell it names, edited as it says), then
its notebook run top to bottom in a fresh kernel: no error, and the exercise's cell sees the exercise done. A learner
who has done an exercise re-runs the notebook's earlier cells (a demo of a bug made from a copy of the kernel file, a
check of what the kernel does): those cells must hold for the edited file too. (Notebook 01's, a grid-stride loop
typed into kernels/add2.cu, became its graded exercise in exercises/: tests/test_exercise_kernels.py.)

They run on one copy of the project (notebooks/, kernels/, kp/, exercises/, helpers.py), so the real files are never
edited; its builds are cold (a copy's kernels are other paths), so the first exercise takes minutes on a small
machine, and each notebook takes as long as it does in tests/test_notebooks.py."""

import shutil
from dataclasses import dataclass

import nbformat
import pytest

import kp.files
from kp.notebooks import execute


@dataclass
class Exercise:
    edits: list  # (file relative to the project, or "cell" for the notebook's exercise cell; the text; its new text)
    done: str  # what the exercise's cell prints once it is done


POLY2_FWD = (  # the forward's launcher, to its `threads` (the backward's says the same)
    "void poly2_fwd(const T* x, T* y, int64_t n, cudaStream_t stream) {\n"
    "  if (n == 0) return;  // a grid of zero blocks is an invalid configuration"
)
EXERCISES = {
    "02_mul_add": Exercise(
        [("kernels/mul_add.cu", "(w, x, out, n, bc, packed);", "(w, x, out, n, bc, false);")], "one element per lane"
    ),
    "03_poly2_tan_fit": Exercise(
        [("kernels/poly2.cu", f"{POLY2_FWD}\n  const int threads = 256;", f"{POLY2_FWD}\n  const int threads = 128;")],
        "blocks of 128 threads",
    ),
    "04_exp_activation": Exercise(
        [
            ("kernels/exp.cu", "py.v[k] = exp(px.v[k]);", "py.v[k] = exp(px.v[k] < T(80) ? px.v[k] : T(80));"),
            ("kernels/exp.cu", "y[i] = exp(x[i]);", "y[i] = exp(x[i] < T(80) ? x[i] : T(80));"),
        ],
        "finite. Done.",
    ),
    "05_linear_regression_onnx": Exercise(
        [("kernels/linear.cu", "constexpr int TILE = 16;", "constexpr int TILE = 32;")], "blocks of 1024 threads"
    ),
    "06_involution": Exercise(
        [("kernels/involution.cu", "static const int kThreads = 256;", "static const int kThreads = 64;")],
        "blocks of 64 threads",
    ),
    "07_linear_ladder": Exercise(
        [("cell", '"V5_TM = 8, V5_TN = 4")', '"V5_TM = 8, V5_TN = 8")')], "V5_TM = 8, V5_TN = 8: "
    ),
    "08_reductions": Exercise(
        [("kernels/colsum.cu", "constexpr int CHUNK_ROWS = 256;", "constexpr int CHUNK_ROWS = 64;")],
        "65536 x 32: 1024 blocks in the first launch",
    ),
}


def edit_once(text, old, new, where):
    assert text.count(old) == 1, f"{where} says {old!r} {text.count(old)} times: the exercise's text has moved"
    return text.replace(old, new)


def test_every_notebook_with_an_exercise_has_one_here():
    with_exercise = {
        p.stem
        for p in kp.files.ROOT.glob("notebooks/0[1-8]_*.ipynb")
        if any("Exercise" in c.source for c in nbformat.read(p, as_version=4).cells if c.cell_type == "markdown")
    }
    assert with_exercise == set(EXERCISES)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """One copy of the project for every exercise (each puts back what it edited), so that the builds no exercise
    edits (the stand-in's runtime, the other ops) are made once; with exercises/, which each lesson's last cell
    grades."""
    root = tmp_path_factory.mktemp("project")
    for folder in ("notebooks", "kernels", "kp", "exercises"):
        shutil.copytree(kp.files.ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(kp.files.ROOT / "helpers.py", root / "helpers.py")
    return root


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's `dot` is missing: every notebook draws a graph")
@pytest.mark.parametrize("stem", EXERCISES)
def test_an_exercise_done_leaves_its_notebook_runnable_top_to_bottom(stem, project, monkeypatch):
    path = project / "notebooks" / f"{stem}.ipynb"
    exercise = EXERCISES[stem]
    edited = {path} | {project / file for file, _, _ in exercise.edits if file != "cell"}
    originals = {p: p.read_text() for p in edited}
    try:
        nb = nbformat.read(path, as_version=4)
        # The exercise's cell: the first code cell after the markdown cell that names the exercise.
        heading = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and "Exercise" in c.source)
        cell = next(c for c in nb.cells[heading:] if c.cell_type == "code")
        for file, old, new in exercise.edits:
            if file == "cell":
                cell.source = edit_once(cell.source, old, new, f"{stem}'s exercise cell")
            else:
                (project / file).write_text(edit_once((project / file).read_text(), old, new, file))
        nbformat.write(nb, path)
        # The kernel imports kp and helpers from the copy; builds go to the copy's build/ext.
        monkeypatch.setenv("PYTHONPATH", str(project))
        monkeypatch.delenv("KP_BUILD_DIR", raising=False)
        monkeypatch.delenv("KP_REPORT", raising=False)
        run = execute(path)
    finally:
        for p, text in originals.items():
            p.write_text(text)
    assert run.error is None, f"{stem}, exercise done: code cell {run.failed_cell} failed:\n{run.error[-4000:]}"
    ran = next(c for c in run.notebook.cells[heading:] if c.cell_type == "code")
    printed = "".join(o.get("text", "") for o in ran.outputs)
    assert exercise.done in printed, printed
