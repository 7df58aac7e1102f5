"""Issue 31's notebook-time goal: each notebook's run as `make run` makes it, on this tree and on a base revision
(default fb07f24, the main of the day the issue was filed), timed alternately. Prints a markdown table: per notebook
the median run time on each tree, their ratio (this tree's over the base's) and whether it is within the goal.

    python bench/notebook_times.py --budget 0                   # every notebook, 3 timed runs per tree (~40 min here)
    python bench/notebook_times.py --notebooks 00 02 --repeats 5
    python bench/notebook_times.py --base main~3 --cold         # another base; each timed run's builds cold
    python bench/notebook_times.py --quick                      # notebook 00, one timed run per tree: shows it runs

The goal (issue 31, "How it is checked", last bullet): "no notebook's run in `make run` gets more than 20% slower than
on today's main", today's main being fb07f24 (2026-11-26): a ratio of at most 1.20.

How a run is made: as tools/run_notebooks.py makes it, with each tree's own code. The base is checked out with `git
worktree add --detach` into a temporary folder (removed at the end; the interpreter, so the venv, is this one's).
Each run is a fresh process of this interpreter started in its tree, with PYTHONPATH the tree alone (the venv's
editable install points at one checkout; PYTHONPATH comes first) and KP_BUILD_DIR the tree's build/report/ext, as
`make run` sets it: the process checks that kp was imported from its tree and builds there before it runs, so one
tree's run cannot load the other's builds. Like `make run`, it builds the stand-in's runtime first
(kp.build.cpu_runtime, untimed), then times the notebook with the tree's kp.notebooks.execute: a fresh kernel, from
its start to the last cell's end, the "run time" of `make run`'s report. Each notebook first runs once per tree,
untimed, so that its builds are warm, as in a `make run` after the first (`--cold`: no such run, and the tree's build
folder is emptied before each timed run, so that each run builds its kernels cold; `make run COLD=1` empties it once,
before the first notebook, and a later notebook finds what an earlier one built). Then the timed
runs alternate, base, this tree, base, this tree, ..., so that a drift of the machine's load hits both.

`--budget S` (default 600 s): no run starts past S seconds from the start, nor a timed pair that the pair before it
says would end past them; what is left untimed is said in the table and below it. `make bench` (bench/report.py) gives
a script 900 s, and every notebook takes ~40 minutes on 2 cores (`make run`'s 290 s, eight times over, and the base's
cold builds); `--budget 0` has no limit. Headings are ###: report.py makes its sections from ##.
"""

import argparse
import contextlib
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/report.py, however this file is run
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/notebook_times.py` finds kp

from report import machine_line  # noqa: E402

from kp.files import ROOT  # noqa: E402
from kp.table import Table, number  # noqa: E402

GOAL = 1.20  # issue 31: "no notebook's run in `make run` gets more than 20% slower than on today's main"
BASE = "fb07f24"  # main on 2026-11-26, the day issue 31 was filed
QUICK_NOTEBOOK = "00"  # the shortest notebook in `make run` (2.8-3.5 s warm: README)
BUDGET = 600.0
BASE_PREFIX = "kp-notebook-times-base-"  # the base worktree's folder: this prefix, the process id, a random part

# One timed run, in a fresh process in its tree: argv = tree root, notebook path. The checks say that kp (and so the
# notebook's kernel, which inherits this environment) comes from the tree and builds in its build/report/ext.
CHILD = """
import json, sys
from pathlib import Path
import kp.files
from kp.notebooks import execute
root = Path(sys.argv[1]).resolve()
if kp.files.ROOT != root or kp.files.BUILD_ROOT != root / "build" / "report" / "ext":
    sys.exit(f"kp from {kp.files.ROOT}, building in {kp.files.BUILD_ROOT}: not the tree {root}")
run = execute(Path(sys.argv[2]))
print(json.dumps({"seconds": run.seconds, "error": run.error and run.error[-3000:]}))
"""


@dataclass
class Tree:
    name: str  # "base" or "current"
    root: Path
    label: str  # what it is: "fb07f24 (2026-11-26)", "4bfa7fe and uncommitted changes"

    @property
    def build_dir(self):
        return self.root / "build" / "report" / "ext"  # tools/run_notebooks.py's KP_BUILD_DIR

    def env(self, records):
        """This interpreter's environment for a run in this tree: kp from the tree alone, builds in the tree's folder,
        kp.report.record's file `records` (as `make run` sets it); nothing of another tree's paths."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KP_BUILD_DIR", "KP_REPORT")}
        return {**env, "PYTHONPATH": str(self.root), "KP_BUILD_DIR": str(self.build_dir), "KP_REPORT": str(records)}

    def notebooks(self):
        """{"00": notebooks/00_puzzles.ipynb, ...}: the notebooks `make run` runs (kp.notebooks.all_notebooks)."""
        return {p.name[:2]: p for p in sorted((self.root / "notebooks").glob("[0-9][0-9]_*.ipynb"))}


@dataclass
class Timing:
    """One notebook's timed runs: seconds per tree, in the order run; `note` says why a row has no ratio or fewer runs
    than asked, and `failed` that a run failed (the note says which and how)."""

    notebook: str  # the file's stem on this tree (or on the base, where this tree has none)
    base: list = field(default_factory=list)
    current: list = field(default_factory=list)
    note: str = ""
    failed: bool = False


def ratio(timing):
    """This tree's median over the base's, or None where either has no run."""
    if not timing.base or not timing.current:
        return None
    return statistics.median(timing.current) / statistics.median(timing.base)


def meets(r, goal=GOAL):
    """Whether the ratio `r` is within the goal; a relative 1e-9 for floating point alone (3.6 / 3.0 is
    1.2000000000000002)."""
    return r <= goal * (1 + 1e-9)


def rows(timings, goal=GOAL):
    """The table: per notebook each tree's median and runs, the ratio, and whether it meets the goal."""
    out = []
    for t in timings:
        r = ratio(t)
        verdict = (t.note or "-") if r is None else "yes" if meets(r, goal) else "**no**"
        if r is not None and t.note:
            verdict += f" ({t.note})"
        if t.failed:
            verdict = f"**FAILED**: {t.note}"
        out.append(
            {
                "notebook": t.notebook,
                "base median (s)": number(statistics.median(t.base)) if t.base else "-",
                "current median (s)": number(statistics.median(t.current)) if t.current else "-",
                "current / base": f"{r:.3f}" if r is not None else "-",
                f"≤ {goal:.2f} (goal)": verdict,
                "base runs (s)": ", ".join(number(s) for s in t.base) or "-",
                "current runs (s)": ", ".join(number(s) for s in t.current) or "-",
            }
        )
    return out


def verdict_line(timings, base_label, goal=GOAL):
    compared = [t for t in timings if ratio(t) is not None and not t.failed]
    missed = [t.notebook for t in compared if not meets(ratio(t), goal)]
    line = f"Goal (at most {(goal - 1) * 100:.0f}% slower than on {base_label}): met by {len(compared) - len(missed)}"
    line += f" of {len(compared)} notebooks compared"
    return line + (f"; missed by {', '.join(missed)}" if missed else "")


def git(*args, cwd=ROOT):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def describe(rev):
    """`fb07f24 (2026-11-26)`: a revision's short hash and its commit date."""
    return git("show", "-s", "--format=%h (%cs)", f"{rev}^{{commit}}")


def remove_worktree(folder):
    with contextlib.suppress(subprocess.CalledProcessError):
        git("worktree", "remove", "--force", str(folder))
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(subprocess.CalledProcessError):
        git("worktree", "prune")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        pass
    return True


def remove_stale_bases():
    """The base worktrees of earlier runs that were killed (bench/report.py's timeout kills with SIGKILL, which no
    `finally` outlives): those whose folder names a process that is gone."""
    for line in git("worktree", "list", "--porcelain").splitlines():
        folder = Path(line.removeprefix("worktree "))
        if not (line.startswith("worktree ") and folder.name.startswith(BASE_PREFIX)):
            continue
        pid = folder.name.removeprefix(BASE_PREFIX).split("-")[0]
        if pid.isdigit() and not alive(int(pid)):
            log(f"removing {folder}, the base worktree of an earlier run (process {pid}) that did not end")
            remove_worktree(folder)


@contextlib.contextmanager
def base_tree(rev):
    """The revision `rev` checked out (detached) in a temporary folder, as a Tree; the folder and git's record of the
    worktree are removed at the end, whatever happens (short of SIGKILL: then remove_stale_bases, at the next run)."""
    label = describe(rev)
    remove_stale_bases()
    folder = Path(tempfile.mkdtemp(prefix=f"{BASE_PREFIX}{os.getpid()}-"))
    try:
        git("worktree", "add", "--detach", str(folder), rev)
        yield Tree("base", folder.resolve(), label)
    finally:
        remove_worktree(folder)


def current_tree():
    label = describe("HEAD")
    if git("status", "--porcelain", "--untracked-files=no"):
        label += " and uncommitted changes"
    return Tree("current", ROOT, label)


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)  # stdout is the table (bench/report.py puts it in bench.md)


class Runner:
    """Runs notebooks in trees, as `make run` does; keeps the time since it was made, for the budget."""

    def __init__(self, budget, cold, records):
        self.start, self.budget, self.cold, self.records = time.perf_counter(), budget, cold, records

    def elapsed(self):
        return time.perf_counter() - self.start

    def fits(self, seconds=0.0):
        return not self.budget or self.elapsed() + seconds <= self.budget

    def prepare(self, tree):
        """What `make run` does before the notebooks: (with --cold) an empty build folder, the stand-in's runtime."""
        if self.cold:
            shutil.rmtree(tree.build_dir, ignore_errors=True)
        code = "import kp.build; kp.build.cpu_runtime()"
        subprocess.run([sys.executable, "-c", code], cwd=tree.root, env=tree.env(self.records), check=True)

    def run(self, tree, notebook, what):
        """(seconds, error or None) of one run of `notebook` in `tree`."""
        if self.cold:
            self.prepare(tree)
        records = self.records / f"{tree.name}-{notebook.stem}.json"
        records.unlink(missing_ok=True)
        command = [sys.executable, "-c", CHILD, str(tree.root), str(notebook)]
        done = subprocess.run(command, cwd=tree.root, env=tree.env(records), capture_output=True, text=True)
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            return None, f"its process exited with status {done.returncode}: {done.stderr.strip()[-3000:]}"
        result = json.loads(lines[-1])
        log(f"  {what} {tree.name} {notebook.stem}: {result['seconds']:.2f} s" + (" FAILED" if result["error"] else ""))
        return result["seconds"], result["error"]


def measure(runner, trees, picks, repeats):
    """A Timing per notebook picked ("00", ...; all when empty), in notebook order. The budget is checked before each
    run: a warm-up starts only within it, a timed pair only where the pair before it (if any) would still end within
    it; so a run ends past it by one run at most."""
    found = [t.notebooks() for t in trees]
    names = sorted(set(found[0]) | set(found[1]))
    unknown = [p for p in picks if p not in names]
    if unknown:
        raise SystemExit(f"no notebook {', '.join(unknown)} on either tree (they have {', '.join(names)})")
    timings = []
    for name in [n for n in names if not picks or n in picks]:
        paths = [f.get(name) for f in found]
        t = Timing((paths[1] or paths[0]).stem)
        timings.append(t)
        if None in paths:
            t.note = f"not on the {'base' if paths[0] is None else 'current tree'}"
            continue
        runs = [] if runner.cold else [("warm-up", None)]  # one untimed run per tree first: its builds warm
        runs += [(f"run {i + 1}/{repeats}", (t.base, t.current)) for i in range(repeats)]
        pair = 0.0  # the seconds of the last timed pair
        for what, times in runs:
            if not runner.fits(pair):
                done = len(t.current)
                t.note = f"{done} of {repeats} timed runs: the budget" if done else "not timed: past the budget"
                break
            pair = 0.0
            for i, (tree, path) in enumerate(zip(trees, paths, strict=True)):
                if times is None and i and not runner.fits():  # the second warm-up
                    t.note = "not timed: past the budget"
                    break
                seconds, error = runner.run(tree, path, what)
                if error:
                    t.failed, t.note = True, f"{tree.name} {what}: {error.strip().splitlines()[-1]}"
                    log(error)
                    break
                pair += seconds
                if times:
                    times[i].append(seconds)
            if t.failed or t.note:
                break
    return timings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=BASE, help="the revision to compare against (default: %(default)s)")
    parser.add_argument("--notebooks", nargs="+", default=[], metavar="NN", help="their numbers (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per notebook and tree (default: 3)")
    parser.add_argument("--cold", action="store_true", help="no warm-up run; each timed run's builds cold")
    parser.add_argument("--budget", type=float, default=BUDGET, help="seconds; 0: none (default: %(default)g)")
    parser.add_argument("--quick", action="store_true", help=f"notebook {QUICK_NOTEBOOK}, one timed run per tree")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))  # so that the base worktree goes
    if args.quick:
        args.notebooks, args.repeats = args.notebooks or [QUICK_NOTEBOOK], 1
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    picks = [p.zfill(2) for p in args.notebooks]
    current = current_tree()
    with base_tree(args.base) as base, tempfile.TemporaryDirectory(prefix="kp-notebook-times-") as records:
        runner = Runner(args.budget, args.cold, Path(records))
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        log(f"base {base.label} in {base.root}; current {current.label}; preparing both trees ...")
        if not args.cold:
            for tree in (base, current):
                runner.prepare(tree)
        timings = measure(runner, (base, current), picks, args.repeats)
    now = datetime.datetime.now(datetime.UTC)
    builds = "cold (the build folder emptied before each)" if args.cold else "warm (one untimed run per tree first)"
    print(f"### Notebook run times: {current.label} against {base.label}\n")
    print(f"- date: {now:%Y-%m-%d %H:%M} UTC")
    print(f"- machine: {machine_line()}")
    print(f"- load average (1, 5, 15 min): {load} before, {', '.join(f'{x:.2f}' for x in os.getloadavg())} after")
    print(f"- {args.repeats} timed run(s) per notebook and tree, alternating base and current; builds {builds}")
    print("- a run: `make run`'s run time of the notebook (a fresh kernel, its start to the last cell's end)\n")
    print(Table(rows(timings)).markdown())
    print(f"\n{verdict_line(timings, base.label)}.")
    untimed = [t.notebook for t in timings if t.note.startswith("not ")]
    if untimed:
        print(f"Not compared: {', '.join(untimed)} (see the table; `--budget 0` times every notebook).")
    return 1 if any(t.failed for t in timings) else 0


if __name__ == "__main__":
    sys.exit(main())
