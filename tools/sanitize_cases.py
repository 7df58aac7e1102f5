"""Check mode against compute-sanitizer, on a GPU: each bug of tests/cuda_cpu/check.cu run under the
compute-sanitizer tool that looks for its kind, and the correct kernels that look risky under all three. Prints a
markdown table: the case, what check mode names (tests/test_check.py asserts it on the CPU), the tool, and whether
the sanitizer reported it, with its first error line.

    python tools/sanitize_cases.py             # on a machine with a GPU and compute-sanitizer (about a minute)
    python tools/sanitize_cases.py --list      # the cases and their tools, anywhere
    python tools/sanitize_cases.py --case NAME [--target cpu]   # run one case once: what the sanitizer runs

PyTorch's caching allocator hides small overruns from memcheck, so each case runs with
PYTORCH_NO_CUDA_MEMORY_CACHING=1.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python tools/sanitize_cases.py` finds kp

from kp.files import ROOT  # noqa: E402
from kp.table import Table  # noqa: E402

CHECK = ROOT / "tests" / "cuda_cpu" / "check.cu"
N = 100  # as tests/test_check.py: two blocks of 64, the second partly past the end

# check.cu's bugs: what check mode names, and the compute-sanitizer tool that looks for that kind of bug.
BUGS = {
    "read_past_end": ("out-of-bounds global access", "memcheck"),
    "write_without_bound": ("out-of-bounds global access", "memcheck"),
    "read_before_start": ("out-of-bounds global access", "memcheck"),
    "reduce_missing_sync": ("shared-memory race", "racecheck"),
    "warp_tail_without_syncwarp": ("shared-memory race", "racecheck"),
    "tile_loop_without_end_barrier": ("shared-memory race", "racecheck"),
    "shift_left_in_shared": ("out-of-bounds shared access", "memcheck"),
    "read_before_first_odd_array": ("out-of-bounds shared access", "memcheck"),
    "read_before_second_odd_array": ("out-of-bounds shared access", "memcheck"),
    "read_past_first_of_one_declaration": ("out-of-bounds shared access", "memcheck"),
    "read_past_second_of_one_declaration": ("out-of-bounds shared access", "memcheck"),
    "dynamic_past_launch_size": ("out-of-bounds shared access", "memcheck"),
    "barrier_under_if": ("divergent barrier", "synccheck"),
    "barrier_skipped_by_live_threads": ("divergent barrier", "synccheck"),
    "barrier_in_branch": ("divergent barrier", "synccheck"),
    "shuffle_mask_names_absent_lanes": ("divergent barrier", "synccheck"),
    "local_array_off_by_one": ("out-of-bounds local-array access", "memcheck"),
    "lanes_store_different_values": ("shared-memory race", "racecheck"),
    "read_before_write": ("uninitialised shared read (a warning)", "initcheck"),
}
TOOLS = ("memcheck", "racecheck", "synccheck")


def cases():
    """check.cu's cases, in its kCases order."""
    return re.findall(r'^    "(\w+)",$', CHECK.read_text(), re.M)


def run_case(name, target):
    import torch

    import helpers

    k = helpers.load_kernel(CHECK, target=target, quiet=True)
    device = "cuda" if target == "cuda" else "cpu"
    x = torch.randn(N, generator=torch.Generator().manual_seed(0)).to(device)
    out = torch.zeros(N, device=device)
    k.run(cases().index(name), x, out)
    if device == "cuda":
        torch.cuda.synchronize()


def sanitize(name, tool):
    """(reported, the sanitizer's first error line) of case `name` under `tool`."""
    env = {**os.environ, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
    cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "99", sys.executable, __file__, "--case", name]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    lines = [ln.removeprefix("========= ").strip() for ln in (run.stdout + run.stderr).splitlines()]
    errors = [ln for ln in lines if re.search(r"(error|hazard|Invalid|Barrier|Uninitialized)", ln, re.I)]
    return run.returncode == 99, errors[0] if errors else (lines[-1] if lines and run.returncode else "")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="the cases and their tools")
    parser.add_argument("--case", help="run this case once (what the sanitizer runs)")
    parser.add_argument("--target", default="cuda", choices=("cuda", "cpu"), help="with --case")
    args = parser.parse_args(argv)
    if args.case:
        run_case(args.case, args.target)
        return 0
    # Neither a bug for compute-sanitizer's tools nor a kernel that looks risky: a wrong value, and a global race
    # racecheck does not look for (shared memory only).
    risky = [c for c in cases() if c not in BUGS and c not in ("copy_with_one_wrong", "last_block_without_fence")]
    plan = [(c, *BUGS[c]) for c in cases() if c in BUGS] + [(c, "nothing", t) for c in risky for t in TOOLS]
    if args.list:
        print(Table([{"case": c, "check mode": kind, "tool": tool} for c, kind, tool in plan]).markdown())
        return 0
    if shutil.which("compute-sanitizer") is None:
        print("compute-sanitizer is not on PATH: it comes with the CUDA toolkit (its bin/), on a machine with a GPU")
        return 1
    run_case(cases()[0], "cuda")  # builds check.cu with nvcc once, outside the sanitizer
    rows = []
    for case, kind, tool in plan:
        reported, line = sanitize(case, tool)
        rows.append(
            {
                "case": case,
                "check mode": kind,
                "tool": tool,
                "sanitizer": "reported" if reported else "-",
                "its first error": line[:120],
            }
        )
    print(Table(rows).markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
