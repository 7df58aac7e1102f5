"""`make run`: execute every notebook in a fresh kernel; write executed copies, HTML and an index.

Output: build/report/<notebook>.ipynb, build/report/<notebook>.html and build/report/index.html.
Exits 1 if any notebook failed (the report is written all the same).
"""

import html
import sys
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebooks import ROOT, all_notebooks, execute  # noqa: E402

REPORT = ROOT / "build" / "report"


def main():
    REPORT.mkdir(parents=True, exist_ok=True)
    rows, failed = [], 0
    for path in all_notebooks():
        print(f"running {path.relative_to(ROOT)} ...", flush=True)
        run = execute(path)
        nbformat.write(run.notebook, REPORT / path.name)
        body, _ = HTMLExporter().from_notebook_node(run.notebook)
        (REPORT / f"{path.stem}.html").write_text(body)
        status = "ran OK" if run.error is None else f"FAILED in code cell {run.failed_cell}"
        failed += run.error is not None
        print(f"  {status} in {run.seconds:.1f} s", flush=True)
        if run.error:
            print(run.error[-3000:], file=sys.stderr)
        rows.append(
            f"<tr><td><a href='{path.stem}.html'>{html.escape(path.stem)}</a></td>"
            f"<td class='{'ok' if run.error is None else 'bad'}'>{status}</td><td>{run.seconds:.1f} s</td></tr>"
        )
    (REPORT / "index.html").write_text(
        "<!doctype html><meta charset='utf-8'><title>Kernel Playground report</title>"
        "<style>body{font-family:sans-serif;margin:2em} td,th{padding:.3em 1em;text-align:left}"
        ".ok{color:#080}.bad{color:#b00020;font-weight:bold}</style>"
        f"<h1>Kernel Playground report</h1><p>{len(rows) - failed} of {len(rows)} notebooks ran top to bottom.</p>"
        "<table><tr><th>notebook</th><th>status</th><th>time</th></tr>" + "".join(rows) + "</table>"
    )
    print(f"report: {(REPORT / 'index.html').relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
