"""What check mode costs: every op of bench/ops.py in its check-mode build against its normal CPU stand-in build.
Prints a markdown table.

    python bench/check_mode.py          # about a minute (the check builds, then the timings)
    python bench/check_mode.py --quick  # the smallest sizes, 3 runs each

Check mode (load_kernel(..., check=True)) instruments every memory access of the kernels and runs a launch's
blocks one at a time on one thread; its issue allows 10-50x. Both builds run on 1 thread here, so the ratio is
the instrumentation's cost alone (the normal build's pool would widen it by the core count). Each op is timed
on bench/ops.py's smallest size (its quick size with --quick), after checking that both builds agree.
"""

import argparse
import importlib.util
import os
import platform
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/check_mode.py` finds kp
import helpers  # noqa: E402
import kp.bench  # noqa: E402
import kp.table  # noqa: E402


def bench_ops():
    """bench/ops.py, for its list of ops and their inputs."""
    spec = importlib.util.spec_from_file_location("bench_ops", Path(__file__).with_name("ops.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the smallest sizes, 3 runs each (for tests)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    reps = {"warmup": 1, "min_reps": 3} if args.quick else {"warmup": 2, "min_reps": 11, "min_seconds": 0.5}
    modules, rows = {}, []
    for spec in bench_ops().all_ops():
        if spec.kernel not in modules:
            modules[spec.kernel] = [helpers.load_kernel(spec.kernel, target="cpu", check=c, quiet=True) for c in (0, 1)]
        normal, checked = (spec.custom(m) for m in modules[spec.kernel])
        size = spec.quick_sizes[0] if args.quick else spec.sizes[0]
        inputs = spec.make_inputs(size)
        torch.testing.assert_close(checked(*inputs), normal(*inputs))  # and no finding: it would raise
        normal_ms, _ = kp.bench.median_ms(normal, inputs, **reps)
        check_ms, _ = kp.bench.median_ms(checked, inputs, **reps)
        rows.append(
            {
                "op": f"`{spec.op}`",
                "size": str(size),
                "normal (ms)": normal_ms,
                "check mode (ms)": check_ms,
                "check / normal": f"{check_ms / normal_ms:.1f}x",
            }
        )
    print(f"CPU stand-in, 1 thread, {platform.processor() or platform.machine()}, {os.cpu_count()} cores; medians")
    print()
    print(kp.table.Table(rows).markdown())


if __name__ == "__main__":
    main()
