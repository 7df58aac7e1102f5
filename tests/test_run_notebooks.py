"""tools/run_notebooks.py, `make run`'s index page: one row per notebook with its status, gradcheck, toy model,
build and benchmark, from what the notebook recorded (kp.report), and what ptxas made of every kernel."""

import nbformat
import pytest

import helpers
import kp.toolchain
from kp.notebooks import execute
from tools.run_notebooks import COLUMNS, failure, render_index, resources_section, row


def test_a_row_summarizes_the_records():
    records = {
        "build": [
            "poly2: cpu stand-in, built in 3.1 s (2 of 2 objects)",
            "poly2: loaded (cpu stand-in; already in this process, built at 14:03:12)",
        ],
        "gradcheck": ["passed: P2", "passed: P2"],
        "metric": ["MSE 0.0123, 1.01x the optimum"],
        "bench": ["poly2 (custom) 0.41x torch x*x + 2*x at size 1048576 (GB/s)"],
    }
    r = row("03_poly2_tan_fit", 12.34, None, records)
    assert r == {
        "notebook": "03_poly2_tan_fit",
        "status": "ran OK",
        "gradcheck": "passed (2 of 2)",
        "toy model": "MSE 0.0123, 1.01x the optimum",
        "build": "poly2: cpu stand-in, built in 3.1 s (2 of 2 objects)",
        "benchmark": "poly2 (custom) 0.41x torch x*x + 2*x at size 1048576 (GB/s)",
        "run time": "12.3 s",
    }
    assert list(r) == COLUMNS


def test_a_failed_gradcheck_and_missing_records_show():
    r = row("x", 1.0, "FAILED in code cell 7: GradcheckError: Jacobian mismatch", {"gradcheck": ["FAILED: P2: boom"]})
    assert r["gradcheck"] == "FAILED: P2: boom"
    assert r["toy model"] == r["benchmark"] == r["build"] == "not reached"
    page = render_index([row("ok", 2.0, None, {"gradcheck": ["passed: F"]}), r])
    assert "1 of 2 notebooks ran top to bottom" in page
    assert "<td class='bad'>FAILED in code cell 7: GradcheckError: Jacobian mismatch</td>" in page
    assert "<td class='bad'>FAILED: P2: boom</td>" in page
    assert "<td class='ok'>passed (1 of 1)</td>" in page


def test_the_failing_cell_and_its_error_name_the_row(tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("raise ValueError('broken kernel')")]
    )
    path = tmp_path / "99_broken.ipynb"
    nbformat.write(nb, path)
    assert failure(execute(path)) == "FAILED in code cell 1: ValueError: broken kernel"


def test_the_page_shows_what_ptxas_made_of_every_kernel():
    if kp.toolchain.find_cuda_root() is None:
        pytest.skip("no CUDA toolkit here")
    section = resources_section()
    for cu in helpers.KERNELS.glob("*.cu"):
        assert f"kernels/{cu.name}" in section
    assert "<td><code>add2_fwd_kernel&lt;float&gt;</code></td>" in section and "registers" in section


@pytest.mark.parametrize("argv, kept", [((), True), (("--cold",), False)])
def test_make_run_keeps_its_builds_unless_asked_for_cold_ones(tmp_path, monkeypatch, argv, kept):
    """The notebooks' build folder survives a run (builds are keyed by their sources: a changed kernel builds anew);
    `make run COLD=1` empties it first."""
    import tools.run_notebooks as run_notebooks

    built = tmp_path / "ext" / "cpu" / "add2_0123" / "add2.so"
    built.parent.mkdir(parents=True)
    built.write_bytes(b"a build")
    monkeypatch.setattr(run_notebooks, "REPORT", tmp_path)
    monkeypatch.setattr(run_notebooks, "ROOT", tmp_path.parent)
    monkeypatch.setattr(run_notebooks, "all_notebooks", lambda: [])
    monkeypatch.setattr(run_notebooks.subprocess, "run", lambda *a, **k: None)  # the shared runtime's build
    monkeypatch.setattr(run_notebooks, "resources_section", lambda: "")
    monkeypatch.setenv("KP_BUILD_DIR", str(tmp_path / "elsewhere"))  # restored after the test
    assert run_notebooks.main(argv) == 0
    assert built.exists() == kept
    assert (tmp_path / "index.html").exists()
