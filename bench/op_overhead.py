"""What one call of a custom op costs beyond its kernel: add2 against torch.add on a tiny tensor, in µs.

    python bench/op_overhead.py             # on the GPU where there is one, else on the CPU stand-in
    python bench/op_overhead.py --quick     # few calls: shows that it runs, measures little

Each row calls one way into add2 (or torch.add) on two 1024-element float32 tensors, many times in
a loop, and reports the wall-clock time per call (the median of several loops). On a GPU the kernels
are asynchronous: a loop of launches measures what the caller pays per call (the CPU side), which is
what decides small ops; the loop is synchronised before its clock stops. The rows take the layers
apart: `ext.add2` (kp.load.op_caller: the op below autograd when no input requires grad), the op's
overload called as it is (through the Python autograd kernel that torch.library.register_autograd
puts at its Autograd key, which the dispatcher enters on every call), and, with inputs that require
grad, the op and the notebook's own autograd Function around it.
"""

import argparse
import statistics
import sys
import time

import torch

import helpers
import kp.files
import kp.load
import kp.toolchain

sys.path.insert(0, str(kp.files.ROOT))
from kp.notebooks import tagged_code  # noqa: E402

N = 1024


def per_call_us(fn, args, calls, loops, sync):
    """Median over `loops` of (time for `calls` calls of fn(*args)) / calls, in µs."""
    for _ in range(max(calls // 10, 3)):
        fn(*args)
    sync()
    times = []
    for _ in range(loops):
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        sync()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few calls (for tests)")
    parser.add_argument("--target", choices=kp.toolchain.TARGETS, default=kp.toolchain.default_target())
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    device = "cuda" if args.target == "cuda" else "cpu"
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    calls, loops = (200, 3) if args.quick else (5000, 7)

    ext = helpers.load_kernel("add2", target=args.target, quiet=True)
    add2_fn = tagged_code("01_add2_sum_of_squares", "autograd-function", torch=torch, add2_ext=ext)["add2"]
    a, b = torch.randn(N, device=device), torch.randn(N, device=device)
    ga, gb = a.clone().requires_grad_(), b.clone().requires_grad_()
    torch.testing.assert_close(ext.add2(a, b), a + b)

    rows = [
        ("torch.add(a, b)", torch.add, (a, b)),
        ("ext.add2(a, b): the custom op", ext.add2, (a, b)),
        ("ext.add2.default(a, b): the overload through its Python autograd kernel", ext.add2.default, (a, b)),
        ("torch.add(a, b), inputs require grad", torch.add, (ga, gb)),
        ("ext.add2(a, b), inputs require grad", ext.add2, (ga, gb)),
        ("the notebook's AddFunction.apply, inputs require grad", add2_fn, (ga, gb)),
    ]
    where = torch.cuda.get_device_name() if device == "cuda" else "CPU stand-in, 1 thread"
    print(f"Per-call cost on {N} float32 elements, {where}, torch {torch.__version__}; {calls} calls per loop,")
    print(f"median of {loops} loops" + ("; --quick: the numbers mean little" if args.quick else "") + ".\n")
    base = per_call_us(torch.add, (a, b), calls, loops, sync)
    print("| call | µs per call | ÷ torch.add |")
    print("|---|---|---|")
    for name, fn, fn_args in rows:
        us = base if fn is torch.add and fn_args[0] is a else per_call_us(fn, fn_args, calls, loops, sync)
        print(f"| {name} | {us:.2f} | {us / base:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
