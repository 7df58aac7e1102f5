"""`make run`: execute every notebook in a fresh kernel; write executed copies, HTML and an index page.

Output: build/report/<notebook>.ipynb, <notebook>.html, <notebook>.json (what the notebook recorded
with kp.report.record: build, gradcheck, toy model metric, benchmark ratio) and index.html, which
shows all of it for every notebook, with what ptxas made of each kernel. Exits 1 if any notebook
failed (the report is written all the same).

The notebooks build their kernels in their own folder (build/report/ext). It is kept between runs: its builds are
keyed by their sources' content, so a kernel whose files did not change loads its last build, and one that changed
builds anew (never a stale module). `--cold` (`make run COLD=1`) empties it first, so that the build column is each
kernel's cold build. The stand-in's runtime, which every kernel shares, is built before the notebooks run.
"""

import html
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python tools/run_notebooks.py` finds kp
from kp import report  # noqa: E402
from kp.files import ROOT  # noqa: E402
from kp.notebooks import all_notebooks, execute  # noqa: E402

REPORT = ROOT / "build" / "report"
COLUMNS = ["notebook", "status", "gradcheck", "toy model", "build", "benchmark", "run time"]


def failure(run):
    """`FAILED in code cell N: ErrorName: message` (the message's first line), or None if it ran."""
    if run.error is None:
        return None
    code_cells = [c for c in run.notebook.cells if c.cell_type == "code"]
    errors = [o for o in code_cells[run.failed_cell].outputs if o.get("output_type") == "error"]
    what = f"{errors[0].ename}: {errors[0].evalue.splitlines()[0] if errors[0].evalue else ''}" if errors else ""
    return f"FAILED in code cell {run.failed_cell}" + (f": {what}" if what else "")


def summarize(records, key, missing="not reached"):
    """The records of one key as one cell: a single value, or `passed (3 of 3)` for gradchecks."""
    values = records.get(key, [])
    if not values:
        return missing
    if key == "gradcheck":
        passed = sum(v.startswith("passed") for v in values)
        failed = [v for v in values if not v.startswith("passed")]
        return f"passed ({passed} of {len(values)})" if not failed else "; ".join(failed)
    if key == "build":  # one line per load; the first load of each kernel is its build
        firsts = {}
        for v in values:
            firsts.setdefault(v.split(":", 1)[0], v)
        return "; ".join(firsts.values())
    return "; ".join(values)


def row(name, run_seconds, status, records):
    return {
        "notebook": name,
        "status": status or "ran OK",
        "gradcheck": summarize(records, "gradcheck"),
        "toy model": summarize(records, "metric"),
        "build": summarize(records, "build"),
        "benchmark": summarize(records, "bench"),
        "run time": f"{run_seconds:.1f} s",
    }


def resources_section():
    """ptxas's registers, shared memory and spills of every kernel (nvcc compile-only: no GPU needed)."""
    from kp.diagnostics import (
        KernelBuildError,  # imported here: kp.gpumodel.ptxas imports torch, which the runs do not need
    )
    from kp.files import KERNELS
    from kp.gpumodel.ptxas import resources_table, spills
    from kp.toolchain import ToolchainError

    parts = ["<h2>What nvcc made of each kernel</h2>"]
    for cu in sorted(KERNELS.glob("*.cu")):
        try:
            parts.append(resources_table([cu]).html(row_class=lambda row: "bad" if spills(row) else ""))
        except (ToolchainError, KernelBuildError) as e:
            parts.append(f"<p class='bad'>{html.escape(cu.name)}: {html.escape(str(e).splitlines()[0])}</p>")
    return "".join(parts)


def render_index(rows, resources=""):
    ran = sum(r["status"] == "ran OK" for r in rows)
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    body = []
    for r in rows:
        cells = [f"<td><a href='{html.escape(r['notebook'])}.html'>{html.escape(r['notebook'])}</a></td>"]
        for c in COLUMNS[1:]:
            bad = (c == "status" and r[c] != "ran OK") or (c == "gradcheck" and not r[c].startswith("passed"))
            cells.append(f"<td class='{'bad' if bad else 'ok' if c in ('status', 'gradcheck') else ''}'>")
            cells[-1] += f"{html.escape(r[c])}</td>"
        body.append("<tr>" + "".join(cells) + "</tr>")
    bench = "<p>Benchmarks of every op, build latency and the stand-in's costs: <code>make bench</code> writes"
    bench += " <a href='bench.md'>bench.md</a>.</p>"
    return (
        "<!doctype html><meta charset='utf-8'><title>Kernel Playground report</title>"
        "<style>body{font-family:sans-serif;margin:2em} td,th{padding:.3em .8em;text-align:left;vertical-align:top}"
        "tr:nth-child(even){background:#f6f6f6} .ok{color:#080}.bad{color:#b00020;font-weight:bold}</style>"
        f"<h1>Kernel Playground report</h1><p>{ran} of {len(rows)} notebooks ran top to bottom.</p>"
        f"<table><tr>{head}</tr>{''.join(body)}</table>{bench}{resources}"
    )


def main(argv=()):
    REPORT.mkdir(parents=True, exist_ok=True)
    if "--cold" in argv:
        shutil.rmtree(REPORT / "ext", ignore_errors=True)
    os.environ["KP_BUILD_DIR"] = str(REPORT / "ext")  # read by kp.files in every notebook's kernel
    subprocess.run([sys.executable, "-c", "import kp.build; kp.build.cpu_runtime()"], check=True)
    rows = []
    for path in all_notebooks():
        print(f"running {path.relative_to(ROOT)} ...", flush=True)
        records_path = REPORT / f"{path.stem}.json"
        records_path.unlink(missing_ok=True)
        os.environ[report.ENV] = str(records_path)  # the kernel inherits it; kp.report.record writes there
        run = execute(path)
        nbformat.write(run.notebook, REPORT / path.name)
        body, _ = HTMLExporter().from_notebook_node(run.notebook)
        (REPORT / f"{path.stem}.html").write_text(body)
        records = report.read_records(records_path)
        rows.append(row(path.stem, run.seconds, failure(run), records))
        print(f"  {rows[-1]['status']} in {run.seconds:.1f} s", flush=True)
        if run.error:
            print(run.error[-3000:], file=sys.stderr)
    os.environ.pop(report.ENV, None)
    (REPORT / "index.html").write_text(render_index(rows, resources_section()))
    print(f"report: {(REPORT / 'index.html').relative_to(ROOT)}")
    return 1 if any(r["status"] != "ran OK" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
