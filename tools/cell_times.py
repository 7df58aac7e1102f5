"""Where a notebook's run time goes: execute notebooks as `make run` does (kp.notebooks.execute, a fresh kernel) and
print each one's total and its slowest code cells, wall and CPU seconds (the kernel's and its compilers'), with the
load average before and after, since the machine may be shared.

    PYTHONPATH=$PWD .venv/bin/python tools/cell_times.py notebooks/07_linear_ladder.ipynb [--top 8]
"""

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python tools/cell_times.py` finds kp
from kp.notebooks import execute  # noqa: E402


def report(run, top):
    """The lines printed for one run: its total, then its `top` slowest code cells."""
    wall, cpu = sum(t[1] for t in run.cell_seconds), sum(t[2] for t in run.cell_seconds)
    status = "ran OK" if run.error is None else f"FAILED in code cell {run.failed_cell}"
    lines = [f"{run.path.name}: {status}, {run.seconds:.1f} s wall ({wall:.1f} s in cells, {cpu:.1f} CPU s)"]
    for i, w, c, first in run.slowest(top):
        lines.append(f"  code cell {i:>2}: {w:7.1f} s wall {c:7.1f} CPU s  {first[:70]}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=8, help="how many of the slowest cells to print per notebook")
    args = parser.parse_args(argv)
    failed = False
    for path in args.notebooks:
        before = os.getloadavg()[0]
        run = execute(path)
        print(*report(run, args.top), f"  load average {before:.2f} before, {os.getloadavg()[0]:.2f} after", sep="\n")
        failed |= run.error is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
