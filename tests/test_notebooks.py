"""Every notebook runs top to bottom in a fresh kernel, which is shut down after, and is committed without outputs."""

import json
import os
import re
import shutil

import pytest
from conftest import run_python

from kp.notebooks import all_notebooks, execute
from kp.table import WIDTH, html_chars

NOTEBOOKS = all_notebooks()
# What a notebook records for `make run`'s report: a lesson on an op builds it, gradchecks it, measures and benchmarks;
# the puzzles (kernels with no op to train or differentiate) record their builds and the score; the ladders train
# nothing (no progress bar) and draw their graph in the contract cell.
RECORDS = {
    "00_puzzles": {"build", "metric"},
    "07_linear_ladder": {"build", "gradcheck", "metric", "bench"},
    "08_reductions": {"build", "gradcheck", "metric", "bench"},
}
OP_LESSON = {"build", "gradcheck", "metric", "bench"}


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_clean(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert not cell.get("outputs") and cell.get("execution_count") is None, f"{path.name} has outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_with_the_metadata_every_kernel_reports(path):
    """What Lab writes into a notebook when its kernel connects (else it shows the notebook as modified), but
    the Python version, which differs per machine: tools/lab.py adds it as Lab reads a notebook."""
    from ipykernel.ipkernel import IPythonKernel
    from ipykernel.kernelspec import get_kernel_dict

    spec = get_kernel_dict()
    language_info = {k: v for k, v in IPythonKernel.language_info.items() if k != "version"}
    kernelspec = {"display_name": spec["display_name"], "language": spec["language"], "name": "python3"}
    assert json.loads(path.read_text())["metadata"] == {"kernelspec": kernelspec, "language_info": language_info}


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's `dot` is missing: every notebook draws a graph")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_runs_top_to_bottom_and_records_what_the_report_shows(path, tmp_path, monkeypatch):
    records = tmp_path / "records.json"
    monkeypatch.setenv("KP_REPORT", str(records))
    run = execute(path)
    assert run.error is None, f"{path.name} failed in code cell {run.failed_cell}:\n{run.error[-4000:]}"
    found = json.loads(records.read_text())
    assert set(found) == RECORDS.get(path.stem, OP_LESSON), found
    assert all(v.startswith("passed: ") for v in found.get("gradcheck", [])), found["gradcheck"]
    assert all(re.search(r"\d", v) for key in ("metric", "bench") for v in found.get(key, [])), found
    assert all(v.strip() for v in found["build"]), found  # "built in 3.1 s", "cached", "python side reloaded", ...
    # Progress as text, not a widget nothing draws here: the bar's last state, not each redraw.
    outputs = [o for cell in run.notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    # Every table fits Lab's output area at 1280x800 with the file browser open (kp.table.html_chars; text and
    # listings wrap there, pictures shrink to it): a wider one hides its last columns behind a scroll bar.
    wide = [
        (i, html_chars(o["data"]["text/html"]))
        for i, cell in enumerate(c for c in run.notebook.cells if c.cell_type == "code")
        for o in cell.outputs
        if html_chars(o.get("data", {}).get("text/html", "")) > WIDTH
    ]
    assert not wide, f"code cells of {path.name} with a table wider than {WIDTH} characters: {wide}"
    if path.stem in RECORDS:
        return  # no training loop, no autograd graph
    stdout = "".join(o["text"] for o in outputs if o.get("name") == "stdout")
    bars = re.findall(r"^.*\| *\d+/\d+ \[.*$", stdout, re.M)  # tqdm's "| 500/500 [00:00<00:00, ...]"
    assert bars and all("100%|" in bar for bar in bars) and "\r" not in stdout, bars
    # The autograd graphs: every box of what a Function saved (torchviz's orange) named as the forward names it.
    graphs = [o["data"]["image/svg+xml"] for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert graphs
    for svg in graphs:
        assert svg.count('fill="orange"') == len(re.findall(r">saved: (?!ctx\.)\w", svg)), svg


def test_a_failing_cell_is_reported_by_index(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("raise ValueError('broken kernel')")]
    )
    path = tmp_path / "99_broken.ipynb"
    nbformat.write(nb, path)
    run = execute(path)
    assert run.failed_cell == 1 and "broken kernel" in run.error


def test_execute_shuts_its_kernel_down(tmp_path):
    """nbclient shuts down only kernels it started itself: execute() shuts down its own, so that none lives on after
    `make run` to print "Parent appears to have exited, shutting down" on the terminal."""
    import nbformat

    path = tmp_path / "pid.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os\nprint(os.getpid())")]), path)
    code = f"from kp.notebooks import execute\nprint(execute({str(path)!r}).notebook.cells[0].outputs[0]['text'])"
    done = run_python(code)  # its stderr is read until every process holding it (a kernel left over too) has exited
    assert done.returncode == 0, done.stderr
    assert "Parent appears to have exited" not in done.stderr and "WARNING" not in done.stderr, done.stderr
    with pytest.raises(ProcessLookupError):
        os.kill(int(done.stdout.split()[0]), 0)  # the kernel is gone, not only quiet


def test_execute_times_each_code_cell_in_wall_and_cpu_seconds(tmp_path):
    """What tools/cell_times.py prints: a cell that sleeps takes wall time and next to no CPU, one that spins both."""
    import nbformat

    cells = [
        nbformat.v4.new_markdown_cell("# not timed"),
        nbformat.v4.new_code_cell("import time\ntime.sleep(0.5)"),
        nbformat.v4.new_code_cell("t = time.process_time()\nwhile time.process_time() - t < 0.6: pass"),
    ]
    path = tmp_path / "timed.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    run = execute(path)
    (sleep_i, sleep_wall, sleep_cpu), (spin_i, spin_wall, spin_cpu) = run.cell_seconds
    assert (sleep_i, spin_i) == (0, 1)  # code cells, counted as the report counts them
    assert sleep_wall >= 0.5 and sleep_cpu < 0.3
    assert spin_wall >= 0.5 and spin_cpu >= 0.5
    assert sorted(row[0] for row in run.slowest(2)) == [0, 1]
    assert run.slowest(1)[0][3] in ("import time", "t = time.process_time()")  # each cell's first line


def test_cell_times_prints_the_total_and_the_slowest_cells_first(tmp_path):
    import nbformat

    from kp.notebooks import Executed
    from tools.cell_times import report

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in ("a = 1\nb = 2", "slow()", "c = 3")])
    run = Executed(tmp_path / "07_x.ipynb", nb, 12.5, None, None, [(0, 1.0, 0.5), (1, 9.0, 8.0), (2, 2.0, 1.0)])
    lines = report(run, top=2)
    assert lines[0] == "07_x.ipynb: ran OK, 12.5 s wall (12.0 s in cells, 9.5 CPU s)"
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["code cell  1", "code cell  2"]
    assert lines[1].endswith("slow()") and "9.0 s wall     8.0 CPU s" in lines[1]
