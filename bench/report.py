"""`make bench`: run every benchmark under bench/ and write their markdown to build/report/bench.md.

    python bench/report.py                   # everything: several minutes on 2 cores
    python bench/report.py --quick           # tiny sizes, few runs, the seed's slow build skipped: about 1 minute
    python bench/report.py ops kernel_resources --out /tmp/bench.md    # only these scripts (names or paths)

Each script runs in a fresh process of this interpreter (build_latency times first builds, which a
warm process would hide) and prints markdown; the report puts each under its own section, after a
header with the date, the machine, torch's version and the command. `--quick` is passed on to every
script. A script that fails gets its exit status and the end of its stderr in its section, the rest
still runs, and report.py exits 1 once everything is written.
"""

import argparse
import datetime
import os
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/report.py` finds kp
from kp.files import ROOT, display_path, write_atomically  # noqa: E402

BENCH = ROOT / "bench"
DEFAULT_OUT = ROOT / "build" / "report" / "bench.md"

SCRIPTS = {  # name -> section title, in the report's order
    "build_latency": "Build latency: load_kernel against the seed's way",
    "cpu_standin": "What the CPU stand-in costs",
    "check_mode": "What check mode costs: each op's check-mode build against its normal one",
    "gpu_model": "The GPU model against the H100's measurements",
    "profile_cost": "What the GPU model costs a notebook: each profile() the notebooks make, timed",
    "ladder_linear": "The linear ladder (notebook 07): Y = X·Wᵀ + b, modelled on an H100 and measured on a GPU",
    "ladder_colsum": "The reductions ladder (notebook 08): the column sum, modelled on an H100 and measured on a GPU",
    "ladder_softmax": "The softmax ladder (notebook 09): the row softmax, modelled on an H100 and measured on a GPU",
    "ladder_attention": "Attention (notebook 10): naive against fused as the sequence grows, modelled on an H100 and "
    "measured on a GPU",
    "published_gemm": "The GPU model against published timings of kernels no one here wrote: siboehm's SGEMM kernels "
    "on each GPU a source publishes them for",
    "ops": "Every op against torch",
    "op_overhead": "What one call of a custom op costs: add2 against torch.add on a tiny tensor",
    "kernel_resources": "What nvcc made of each kernel (ptxas, compile-only CUDA build)",
    "notebook_times": "Issue 31's notebook-time goal: each notebook's `make run` time on this tree against fb07f24's "
    "(here the first ones, in a 600 s budget; every notebook: python bench/notebook_times.py --budget 0)",
}
STDERR_LINES = 40  # of a failed script's stderr, in its section


@dataclass
class Run:
    title: str
    command: list
    returncode: int  # None: timed out
    seconds: float
    stdout: str
    stderr: str

    @property
    def ok(self):
        return self.returncode == 0


def resolve_script(name):
    """`ops` -> (bench/ops.py, its title); a path to any .py file -> (that file, its name)."""
    if name in SCRIPTS:
        return BENCH / f"{name}.py", SCRIPTS[name]
    path = Path(name)
    if path.suffix == ".py" and path.is_file():
        return path.resolve(), path.name
    raise ValueError(f"no bench script {name!r}: give one of {', '.join(SCRIPTS)} or a path to a .py file")


def cpu_model(cpuinfo_text):
    """The first `model name` of /proc/cpuinfo's text, or None."""
    for line in cpuinfo_text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return " ".join(value.split())
    return None


def machine_line():
    model = None
    try:
        model = cpu_model(Path("/proc/cpuinfo").read_text())
    except OSError:
        pass
    model = model or platform.processor() or "unknown CPU"
    return f"{os.cpu_count()} cores, {model}, {platform.machine()}, {platform.system()} {platform.release()}"


def torch_line():
    """torch's version (with its CUDA build: 2.14.1+cu130), python's, and what the kernels run on: the line the
    notebooks print too (kp.display.environment_line)."""
    from kp.display import environment_line  # here, not at the top: --help and a bad script name answer at once

    return environment_line()


def header(command):
    now = datetime.datetime.now().astimezone()
    return "\n".join(
        [
            "# Kernel Playground benchmarks",
            "",
            f"- date: {now:%Y-%m-%d %H:%M %Z}",
            f"- machine: {machine_line()}",
            f"- {torch_line()}",
            f"- command: `{command}`",
        ]
    )


def as_text(output):
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def run_script(path, title, args, timeout):
    """Run one bench script in a fresh process of this interpreter; returns a Run."""
    command = [sys.executable, str(path), *args]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))  # `import helpers`
    env.pop("KP_REPORT", None)  # a notebook's record file (make run), not ours
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout)
        returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as e:  # what it printed so far comes as bytes, even with text=True
        returncode, stdout, stderr = None, as_text(e.stdout), as_text(e.stderr)
    return Run(title, command, returncode, time.perf_counter() - start, stdout, stderr)


def section(run):
    """One script's part of the report: its title, command, time and status, then what it printed."""
    command = shlex.join([display_path(run.command[1]), *run.command[2:]])
    lines = [f"## {run.title}", "", f"`{command}`: {'ok' if run.ok else 'FAILED'} in {run.seconds:.0f} s", ""]
    if not run.ok:
        why = f"it exited with status {run.returncode}"
        if run.returncode is None:
            why = f"it ran past the timeout ({run.seconds:.0f} s)"
        lines += [f"**FAILED**: {why}. What it printed before, then the end of its stderr:", ""]
    if run.stdout.strip():
        lines += [run.stdout.strip(), ""]
    if not run.ok:
        tail = run.stderr.rstrip().splitlines()[-STDERR_LINES:]
        lines += ["```text", *(tail or ["(nothing on stderr)"]), "```", ""]
    return "\n".join(lines)


def render(head, runs):
    status = ["| section | script | status | seconds |", "|---|---|---|---|"]
    for r in runs:
        status.append(
            f"| {r.title} | {display_path(r.command[1])} | {'ok' if r.ok else '**FAILED**'} | {r.seconds:.0f} |"
        )
    return "\n\n".join([head, "\n".join(status), *(section(r).rstrip() for r in runs)]) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scripts", nargs="*", help=f"names ({', '.join(SCRIPTS)}) or paths; default: all, in order")
    parser.add_argument("--quick", action="store_true", help="pass --quick to every script: tiny sizes, few runs")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default: {display_path(DEFAULT_OUT)}")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per script (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        scripts = [resolve_script(s) for s in args.scripts or SCRIPTS]
    except ValueError as e:
        parser.error(str(e))
    head = header(shlex.join([display_path(sys.executable), display_path(Path(__file__)), *argv]))
    extra = ["--quick"] if args.quick else []
    runs = []
    for i, (path, title) in enumerate(scripts, 1):
        print(
            f"[{i}/{len(scripts)}] {shlex.join([display_path(path), *extra])} ...", end=" ", file=sys.stderr, flush=True
        )
        run = run_script(path, title, extra, args.timeout)
        runs.append(run)
        print(f"{'ok' if run.ok else 'FAILED'} in {run.seconds:.0f} s", file=sys.stderr, flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(args.out, render(head, runs))  # after each script: an interrupted run leaves what it had
    failed = [r.title for r in runs if not r.ok]
    print(f"wrote {display_path(args.out)}" + (f"; FAILED: {', '.join(failed)}" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
