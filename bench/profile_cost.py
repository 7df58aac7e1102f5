"""What the GPU model costs a notebook: every profile() the notebooks make (their own profile(...) calls, each size of
a bench(model=modelled(...)), notebook 07's autotune cell), at the notebook's size, timed here. Prints a markdown table.

    python bench/profile_cost.py               # every call (a few minutes: notebook 07's fifteen at 4096³)
    python bench/profile_cost.py --quick       # two small calls: shows that it runs
    python bench/profile_cost.py --notebook 07 # one notebook's calls
    python bench/profile_cost.py --call "v7 tiles 4" --repeat 3  # the calls whose words contain this, 3 times each
    perf record -g python bench/profile_cost.py --call "v7 tiles 4"  # where one call's time goes

The goal (issue 31, "How it is checked", Speed): a profile of any lesson kernel at its notebook size stays under 10 s
on 2 cores. Per call: "profile (s)", profile() itself (the stand-in's run in check mode with the profiler on,
the report parsed and put at its lines, the SASS read from its cache: the build, its SASS and ptxas's registers
are warmed first, as a notebook's earlier cells leave them); "SASS warm (s)", the part of it that reads the SASS
(kp.gpumodel.sass, cached); "model (s)", the estimate from the counts (Profile.estimate_detail, what the notebook
then asks); "total (s)", the two together, which the goal is about; "CPU (s)", the process's CPU seconds for both
(the wall time of a busy machine is longer). The machine's load average is printed above the table: compare runs at
the same load.

The calls are listed once, in CALLS: each names its notebook, the id of the cell it comes from and a piece of that
cell's code verbatim, which tests/test_profile_cost.py checks is still there (and that every cell that profiles is
listed), so the list cannot drift from the notebooks unnoticed.
"""

import argparse
import dataclasses
import gc
import os
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/profile_cost.py` finds kp
import helpers  # noqa: E402
import kp.gpumodel.ptxas  # noqa: E402
import kp.gpumodel.sass  # noqa: E402
from kp.build import resolve_kernel  # noqa: E402
from kp.gpumodel.profile import profile  # noqa: E402
from kp.gpumodel.sass import arch_of  # noqa: E402
from kp.table import Table  # noqa: E402

GOAL_SECONDS = 10.0
GPU = "H100"


@dataclasses.dataclass(frozen=True)
class Call:
    """One profile() a notebook makes. `kernel`: load_kernel's name, or kernel_variant's (op, name, old, new);
    `make(ext)`: (the callable profiled, its arguments) from the kernel's check build; `flops(args)`: what the notebook
    passes to estimate()."""

    notebook: str  # its file's stem, "07_linear_ladder"
    cell: str  # the cell's id
    text: str  # a piece of the cell's code, verbatim
    what: str  # the call, in words
    kernel: object
    make: object
    max_blocks: int = 0
    flops: object = None


def rand(*shapes):
    return tuple(torch.randn(s) for s in shapes)


def modelled_sizes(notebook, cell, text, what, kernel, sizes, make, max_blocks=64, flops=None):
    """A bench(model=modelled(...)) cell: one profile() per size (kp.bench calls the model once per size)."""
    return [Call(notebook, cell, text, f"{what} {size}", kernel, make(size), max_blocks, flops) for size in sizes]


M = 4096  # notebook 07's M = N = K
FLOPS_07 = 2 * M**3
LINEAR = "2 * x.shape[0] * x.shape[1] * w.shape[0]"
TILE = ("linear_ladder", "linear_ladder_tile", "V5_TM = 4, V5_TN = 4", "V5_TM = 8, V5_TN = 4")
UNPADDED_07 = ("linear_ladder", "linear_ladder_unpadded", "__shared__ T Ws[32][33];", "__shared__ T Ws[32][32];")
UNPADDED_08 = ("colsum", "colsum_unpadded", "T partial[32][33];", "T partial[32][32];")


def _linear_flops(args):
    x, w = args[0], args[1]
    return 2 * x.shape[0] * x.shape[1] * w.shape[0]


def _involution_inputs(size):
    n, c, h, k = size
    return rand((n, c, h, h), (n, max(c // 16, 1), k, k, h, h)) + (k // 2,)


def _attention(version, n, bh=32, d=32):
    return lambda ext: (ext.attention, (*rand(*[(bh, n, d)] * 3), True, version))


CALLS = [
    # 01: the picture of who touched what; the two kernels at 2^26; the bench's model column
    Call("01_add2_sum_of_squares", "9d612339", "p = profile(checked.add2_v1, a, b)", "add2_v1 12 x 50", "add2",
         lambda ext: (ext.add2_v1, rand((12, 50), (12, 50)))),
    *[Call("01_add2_sum_of_squares", "ac9a2d52", "p = profile(getattr(checked, name), a, b, max_blocks=64)",
           f"{name} 2^26", "add2", lambda ext, name=name: (getattr(ext, name), rand(2**26, 2**26)), 64)
      for name in ("add2_v1", "add2")],
    *modelled_sizes("01_add2_sum_of_squares", "d09c03ee", "model=modelled(checked.add2)", "add2", "add2",
                    [2**12, 2**16, 2**20, 2**22], lambda n: lambda ext: (ext.add2, rand(n, n))),
    # 02
    *modelled_sizes("02_mul_add", "1ee10c90", "model=modelled(checked.mul)", "mul", "mul_add",
                    [2**12, 2**16, 2**20], lambda n: lambda ext: (ext.mul, rand(n, n))),
    *modelled_sizes("02_mul_add", "bench-broadcast", "model=modelled(checked.mul)", "mul, broadcast", "mul_add",
                    [2**12, 2**16, 2**20], lambda n: lambda ext: (ext.mul, rand((n // 1024, 1), 1024))),
    Call("02_mul_add", "33852ee6", "profile(strict.mul, w, w)", "mul 4096", "mul_add",
         lambda ext: (ext.mul, (torch.randn(4096),) * 2)),
    # 03, 04
    *modelled_sizes("03_poly2_tan_fit", "67a8d1a9", "model=modelled(checked.poly2)", "poly2", "poly2",
                    [2**12, 2**16, 2**20], lambda n: lambda ext: (ext.poly2, rand(n))),
    Call("03_poly2_tan_fit", "f9d8a28d", "profile(strict.poly2, torch.randn(4097))", "poly2 4097", "poly2",
         lambda ext: (ext.poly2, rand(4097))),
    *modelled_sizes("04_exp_activation", "4a3fa86b", "model=modelled(checked.exp)", "exp", "exp",
                    [2**12, 2**16, 2**20], lambda n: lambda ext: (ext.exp, rand(n))),
    # 05
    *[Call("05_linear_regression_onnx", "e64cf666", "p = profile(checked.linear, x, w, b, max_blocks=2)",
           f"linear {s}³", "linear", lambda ext, s=s: (ext.linear, rand((s, s), (s, s), s)), 2, _linear_flops)
      for s in (256, 512, 1024)],
    *modelled_sizes("05_linear_regression_onnx", "06b64067", f"flops=lambda x, w, b: {LINEAR}", "linear", "linear",
                    [(37, 53, 29), (64, 64, 64), (128, 128, 128), (256, 256, 256)],
                    lambda s: lambda ext: (ext.linear, rand((s[0], s[1]), (s[2], s[1]), s[2])), flops=_linear_flops),
    Call("05_linear_regression_onnx", "46cd70df",
         "p = profile(strict.linear, torch.randn(256, 1024), torch.randn(512, 1024), torch.randn(512), max_blocks=16)",
         "linear 256 x 1024 x 512", "linear", lambda ext: (ext.linear, rand((256, 1024), (512, 1024), 512)), 16,
         _linear_flops),
    # 06
    *modelled_sizes("06_involution", "63582ecd", "flops=lambda x, w, p: 2 * x.numel() * w.shape[2] * w.shape[3]",
                    "involution", "involution", [(8, 16, 16, 3), (8, 16, 32, 7), (8, 32, 32, 7)],
                    lambda s: lambda ext: (lambda x, w, p: ext.involution(x, w, 1, p, 1), _involution_inputs(s)),
                    flops=lambda a: 2 * a[0].numel() * a[1].shape[2] * a[1].shape[3]),
    Call("06_involution", "18a8778f", "p = profile(strict.involution, x, w, 1, 3, 1, max_blocks=64)",
         "involution 8 x 32 x 32², K 7", "involution",
         lambda ext: (ext.involution, (*rand((8, 32, 32, 32), (8, 2, 7, 7, 32, 32)), 1, 3, 1)), 64,
         lambda a: 2 * a[0].numel() * 49),
    # 07: the ladder's steps (v7's step reuses the autotune cell's profile of the fastest tiles), the autotune cell's
    # five tile configurations, the unpadded tiles, the bench's model column (the fastest step's arguments: v7 with
    # the op's default tiles here), try_tile
    *[Call("07_linear_ladder", "8fedb6aa",
           "p = profile(checked.linear_ladder, *big, version, *op_args, max_blocks=SAMPLED)",
           f"linear_ladder v{v}{' tiles ' + str(t) if v == 7 else ''} 4096³", "linear_ladder",
           lambda ext, args=(v,) if v < 7 else (7, t): (ext.linear_ladder, (*rand((M, M), (M, M), M), *args)), 2,
           lambda a: FLOPS_07)
      for v, t in [(v, None) for v in range(1, 7)] + [(7, t) for t in range(5)]],
    Call("07_linear_ladder", "63f5d098", "load_kernel(unpadded, check=True).linear_ladder,", "unpadded v3 256³",
         UNPADDED_07, lambda ext: (ext.linear_ladder, (*rand((256, 256), (256, 256), 256), 3)), 8),
    *modelled_sizes("07_linear_ladder", "5f8496a3", "lambda x, w, b: checked.linear_ladder(x, w, b, *args),",
                    "linear_ladder (7, 4)", "linear_ladder", [(64, 64, 64), (128, 128, 128)],
                    lambda s: lambda ext: (lambda x, w, b: ext.linear_ladder(x, w, b, 7, 4),
                                           rand((s[0], s[2]), (s[1], s[2]), s[1])), 8, _linear_flops),
    Call("07_linear_ladder", "f9d15e1a", "p = profile(strict.linear_ladder, *big, versions[-1], max_blocks=SAMPLED)",
         "try_tile v6 8 x 4 4096³", TILE, lambda ext: (ext.linear_ladder, (*rand((M, M), (M, M), M), 6)), 2,
         lambda a: FLOPS_07),
    # 08
    *[Call("08_reductions", "767e33db", "p = profile(checked.colsum, torch.randn(8192, 1024), version, max_blocks=64)",
           f"colsum v{v} 8192 x 1024", "colsum", lambda ext, v=v: (ext.colsum, (torch.randn(8192, 1024), v)), 64)
      for v in range(1, 6)],
    Call("08_reductions", "4e51d141", "colsum, torch.randn(8192, 1024), 3, max_blocks=64)", "unpadded v3 8192 x 1024",
         UNPADDED_08, lambda ext: (ext.colsum, (torch.randn(8192, 1024), 3)), 64),
    *modelled_sizes("08_reductions", "9635b7fd", "model=modelled(lambda x: checked.colsum(x, 5))", "colsum v5",
                    "colsum", [(1024, 256), (4096, 1024), (8192, 1024)],
                    lambda s: lambda ext: (lambda x: ext.colsum(x, 5), rand(s))),
    *[Call("08_reductions", "41397a97", "profile(reduce_checked.reduce_sum, torch.randn(1 << 22), v, max_blocks=64)",
           f"reduce_sum v{v} 2^22", "reduce", lambda ext, v=v: (ext.reduce_sum, (torch.randn(1 << 22), v)), 64)
      for v in range(1, 7)],
    Call("08_reductions", "287f704e", "p = profile(strict.colsum, torch.randn(65536, 32), 5, max_blocks=64)",
         "colsum v5 65536 x 32", "colsum", lambda ext: (ext.colsum, (torch.randn(65536, 32), 5)), 64),
    # 09
    *[Call("09_softmax_layernorm", "75c4a5c3",
           "p = profile(checked.softmax, torch.randn(1024, 512), version, max_blocks=32)", f"softmax v{v} 1024 x 512",
           "softmax", lambda ext, v=v: (ext.softmax, (torch.randn(1024, 512), v)), 32)
      for v in range(1, 6)],
    *modelled_sizes("09_softmax_layernorm", "1237c342",
                    "model=modelled(lambda x: checked.softmax(x, 5), max_blocks=32)", "softmax v5", "softmax",
                    [(256, 128), (1024, 256)],
                    lambda s: lambda ext: (lambda x: ext.softmax(x, 5), rand(s)), 32),
    Call("09_softmax_layernorm", "f32aaf72", "p = profile(strict.softmax, torch.randn(1024, 512), 5, max_blocks=32)",
         "softmax v5 1024 x 512", "softmax", lambda ext: (ext.softmax, (torch.randn(1024, 512), 5)), 32),
    # 10
    *[Call("10_attention", "438a7b49", "p = profile(checked.attention, q, k, v, True, version, max_blocks=4)",
           f"attention v{v} 32 x {n} x 32", "attention", _attention(v, n), 4,
           lambda a: 2 * a[0].shape[0] * a[0].shape[1] ** 2 * a[0].shape[2])
      for n in (128, 256, 512) for v in (1, 2)],
    *modelled_sizes("10_attention", "474c5343",
                    "model=modelled(lambda q, k, v: checked.attention(q, k, v, True, 2), max_blocks=4)",
                    "attention v2", "attention", [(8, 64, 32), (8, 128, 32)],
                    lambda s: lambda ext: (lambda q, k, v: ext.attention(q, k, v, True, 2), rand(*[s] * 3)), 4),
    Call("10_attention", "cb6a842a",
         "p = profile(strict.attention, *(torch.randn(8, 256, 32) for _ in range(3)), True, 2, max_blocks=4)",
         "attention v2 8 x 256 x 32", "attention", lambda ext: (ext.attention, (*rand(*[(8, 256, 32)] * 3), True, 2)),
         4),
]  # fmt: skip
QUICK = [CALLS[0], CALLS[3]]  # add2_v1 12 x 50; add2 at 2^12 (a bench's model column)


def load(kernel):
    """The check build of `kernel` (a name, or kernel_variant's arguments) and its `.cu`."""
    if isinstance(kernel, tuple):
        kernel = helpers.kernel_variant(*kernel)
    cu = Path(kernel) if str(kernel).endswith(".cu") else resolve_kernel(kernel)[0]
    return helpers.load_kernel(kernel, target="cpu", check=True, quiet=True), cu


def timed(fn, *args, **kwargs):
    """(fn's result, its wall seconds, its CPU seconds)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def cost_row(call, built):
    ext, cu = built
    warm(cu)
    _, sass_s, _ = timed(_quiet_sass, cu)
    torch.manual_seed(0)
    fn, args = call.make(ext)
    gc.collect()  # what earlier calls left is not this one's to collect
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "sampled: ...": wanted
        p, profile_s, profile_cpu = timed(profile, fn, *args, max_blocks=call.max_blocks)
    flops = call.flops(args) if call.flops else 0.0
    _, model_s, model_cpu = timed(p.estimate_detail, GPU, flops)
    total = profile_s + model_s
    return {
        "notebook": call.notebook[:2],
        "cell": call.cell,
        "call": call.what,
        "max_blocks": call.max_blocks,
        "blocks counted": ", ".join(f"{la.traced} of {la.blocks}" for la in p.launches),
        "profile (s)": profile_s,
        "SASS warm (s)": sass_s,
        "model (s)": model_s,
        "total (s)": total,
        "CPU (s)": profile_cpu + model_cpu,
        f"goal (< {GOAL_SECONDS:g} s)": "met" if total < GOAL_SECONDS else "missed",
    }


def warm(cu):
    """nvcc's products for `cu` in their disk caches, as a notebook's earlier cells leave them: its SASS and ptxas's
    registers (cold, each is an nvcc run of seconds: bench/gpu_model.py's "SASS cold" column)."""
    _quiet_sass(cu)
    try:
        kp.gpumodel.ptxas.kernel_resources(cu, arch_of(GPU))
    except Exception:  # no nvcc: the model takes 32 registers (kp.gpumodel.ptxas.launch_resources), at no cost
        pass


def _quiet_sass(cu):
    """kp.gpumodel.sass's SASS of `cu`, or None without nvcc (the profile then counts the source and says so; its cost
    is still what a notebook pays)."""
    try:
        return kp.gpumodel.sass.sass(cu, GPU)
    except kp.gpumodel.sass.SassUnavailable:
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two small calls (for tests)")
    parser.add_argument("--notebook", help="only this notebook's calls (its number or its file's stem)")
    parser.add_argument("--call", help="only the calls whose words (the table's `call` column) contain this")
    parser.add_argument("--repeat", type=int, default=1, help="time each call this many times (a row each)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    calls = QUICK if args.quick else CALLS
    if args.notebook:
        calls = [c for c in calls if c.notebook.startswith(args.notebook)]
    if args.call:
        calls = [c for c in calls if args.call in c.what]
    if not calls or args.repeat < 1:
        raise RuntimeError(
            f"no call to time: --notebook {args.notebook!r}, --call {args.call!r} and --repeat "
            f"{args.repeat} leave none (a call's words are the table's `call` column)"
        )
    calls = [c for c in calls for _ in range(args.repeat)]
    builds, rows = {}, []
    for call in calls:
        key = call.kernel if isinstance(call.kernel, str) else call.kernel[1]
        if key not in builds:
            builds[key] = load(call.kernel)
        rows.append(cost_row(call, builds[key]))
    load_average = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"What profile() costs per notebook call, at the notebook's size (CPU stand-in, {os.cpu_count()} cores, load "
        f"average {load_average} at the end; the goal: under {GOAL_SECONDS:g} s each)\n"
    )
    print(Table(rows).markdown())
    slowest = max(rows, key=lambda r: r["total (s)"])
    missed = sum(r[f"goal (< {GOAL_SECONDS:g} s)"] == "missed" for r in rows)
    print(
        f"\n{len(rows) - missed} of {len(rows)} calls under {GOAL_SECONDS:g} s; the slowest: notebook "
        f"{slowest['notebook']}, {slowest['call']}, {slowest['total (s)']:.1f} s"
    )


if __name__ == "__main__":
    main()
