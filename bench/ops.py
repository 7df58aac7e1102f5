"""Every custom op against the native torch op (or a pure-torch reference where torch has none).

    python bench/ops.py              # one markdown section per op, then a summary table
    python bench/ops.py --quick      # tiny sizes, few runs: shows that every op runs, measures little
    python bench/ops.py --threads 2  # torch's intra-op threads (and the stand-in's pool); default 1

Each op of kernels/*.cu runs on the GPU where there is one (target "cuda", CUDA tensors, larger sizes;
`--target cpu` for the stand-in), else through the CPU stand-in (target "cpu"), and is timed with helpers.bench
against its baseline on a few sizes, float32; throughput is given next to the op's bytes or FLOPs
formula. Before timing, the custom op's output is checked against the baseline's on the smallest size,
so a baseline here computes what the op computes. The thread count is pinned for the whole run: the
stand-in's pool follows torch.get_num_threads(), and on a small shared machine more threads mostly
add noise. add's backward and mul_add's sum_to are torch.stable::sum in the binding (no kernel), so
they are not here.
"""

import argparse
import os
import platform
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import randn

import helpers
import kp.files
import kp.table
import kp.toolchain

sys.path.insert(0, str(kp.files.ROOT))
from kp.notebooks import tagged_code  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Baselines where torch has no single op: the pure-torch references of the notebooks, and the
# gradients written out the same way.


# notebooks/06_involution.ipynb's own reference (its cell tagged "reference").
involution_reference = tagged_code("06_involution", "reference", torch=torch, F=F)["involution_reference"]


def involution_grad_input_reference(grad_out, weight, height, width, stride=1, padding=0, dilation=1):
    N, C = grad_out.shape[:2]
    G, KH, KW, H_out, W_out = weight.shape[1:]
    columns = weight.unsqueeze(2) * grad_out.view(N, G, C // G, 1, 1, H_out, W_out)
    columns = columns.reshape(N, C * KH * KW, H_out * W_out)
    return F.fold(columns, (height, width), (KH, KW), dilation=dilation, padding=padding, stride=stride)


def involution_grad_weight_reference(grad_out, input, groups, kernel_h, kernel_w, stride=1, padding=0, dilation=1):
    N, C, H_out, W_out = grad_out.shape
    windows = F.unfold(input, (kernel_h, kernel_w), dilation=dilation, padding=padding, stride=stride)
    windows = windows.view(N, groups, C // groups, kernel_h, kernel_w, H_out, W_out)
    return (grad_out.view(N, groups, C // groups, 1, 1, H_out, W_out) * windows).sum(2)


# ---------------------------------------------------------------------------------------------
# The ops.


@dataclass
class OpBench:
    kernel: str  # kernels/<kernel>.cu
    op: str  # the section's name
    what: str  # what it computes, and what `size` means
    custom: Callable  # module -> the custom op, called as fn(*make_inputs(size))
    baseline_name: str
    baseline: Callable
    make_inputs: Callable
    sizes: list
    quick_sizes: list
    formula: str
    bytes_moved: Callable = None
    flops: Callable = None
    gpu_sizes: list = None  # on a GPU, where the CPU's sizes would measure launch costs only


ELEMENTWISE = [2**12, 2**16, 2**20, 2**22]
ELEMENTWISE_QUICK = [1000, 2**12]
ELEMENTWISE_GPU = [2**20, 2**24, 2**26]
MATRIX = [(37, 53, 29), (128, 128, 128), (256, 256, 256)]  # (B, M, N): X (B, M), W (N, M)
MATRIX_QUICK = [(3, 5, 2), (37, 53, 29)]
INVOLUTION = [(8, 16, 16, 3), (8, 16, 32, 7), (8, 32, 32, 7)]  # (N, C, H = W, K), G = C/16, stride 1, same padding
INVOLUTION_QUICK = [(1, 4, 5, 3), (2, 16, 8, 3)]


def involution_inputs(size):
    N, C, H, K = size
    return randn(N, C, H, H), randn(N, max(C // 16, 1), K, K, H, H), K // 2


def involution_flops(size):
    N, C, H, K = size
    return 2 * N * C * H * H * K * K


def involution_grad_inputs(size):
    x, w, p = involution_inputs(size)
    return randn(*x.shape), w, x, p


def all_ops():
    n = "n float32 elements"
    bytes2, bytes3 = (lambda n: 2 * 4 * n), (lambda n: 3 * 4 * n)
    elementwise = {"sizes": ELEMENTWISE, "quick_sizes": ELEMENTWISE_QUICK, "gpu_sizes": ELEMENTWISE_GPU}
    matrix = {
        "sizes": MATRIX,
        "quick_sizes": MATRIX_QUICK,
        "gpu_sizes": [(256, 256, 256), (1024, 1024, 1024), (4096, 4096, 4096)],
        "flops": lambda s: 2 * s[0] * s[1] * s[2],
    }
    involution = {
        "sizes": INVOLUTION,
        "quick_sizes": INVOLUTION_QUICK,
        "gpu_sizes": [(8, 32, 32, 7), (32, 64, 56, 7)],
        "flops": involution_flops,
    }
    return [
        OpBench(
            kernel="add2",
            op="add2",
            what=f"c = a + b on {n}",
            custom=lambda m: m.add2,
            baseline_name="torch.add",
            baseline=torch.add,
            make_inputs=lambda n: (randn(n), randn(n)),
            formula="3 × 4n bytes: read a and b, write c",
            bytes_moved=bytes3,
            **elementwise,
        ),
        OpBench(
            kernel="add2",
            op="add2_v1",
            what=f"c = a + b on {n}, the first, plain kernel (one element per thread; add2 moves 16-byte Packs)",
            custom=lambda m: m.add2_v1,
            baseline_name="torch.add",
            baseline=torch.add,
            make_inputs=lambda n: (randn(n), randn(n)),
            formula="3 × 4n bytes: read a and b, write c",
            bytes_moved=bytes3,
            **elementwise,
        ),
        OpBench(
            kernel="mul_add",
            op="mul",
            what=f"out = w * x, equal shapes, {n}",
            custom=lambda m: m.mul,
            baseline_name="torch.mul",
            baseline=torch.mul,
            make_inputs=lambda n: (randn(n), randn(n)),
            formula="3 × 4n bytes: read w and x, write out",
            bytes_moved=bytes3,
            **elementwise,
        ),
        OpBench(
            kernel="mul_add",
            op="mul, broadcast",
            what="out = w * x with w (n/1024, 1) and x (1024,): out has n float32 elements",
            custom=lambda m: m.mul,
            baseline_name="torch.mul",
            baseline=torch.mul,
            make_inputs=lambda n: (randn(n // 1024, 1), randn(1024)),
            sizes=[2**16, 2**20, 2**22],
            quick_sizes=[2**12, 2**14],
            gpu_sizes=[2**20, 2**24, 2**26],
            formula="4 × (n + n/1024 + 1024) bytes: read w and x once, write out",
            bytes_moved=lambda n: 4 * (n + n // 1024 + 1024),
        ),
        OpBench(
            kernel="mul_add",
            op="mul_backward",
            what=f"dL/dw = g * x and dL/dx = g * w, equal shapes, {n}",
            custom=lambda m: lambda g, w, x: m.mul_backward(g, w, x, True, True),
            baseline_name="torch.mul twice",
            baseline=lambda g, w, x: (torch.mul(g, x), torch.mul(g, w)),
            make_inputs=lambda n: (randn(n), randn(n), randn(n)),
            formula="5 × 4n bytes: read g, w and x, write both gradients",
            bytes_moved=lambda n: 5 * 4 * n,
            **elementwise,
        ),
        OpBench(
            kernel="mul_add",
            op="add",
            what=f"out = x + b, equal shapes, {n}",
            custom=lambda m: m.add,
            baseline_name="torch.add",
            baseline=torch.add,
            make_inputs=lambda n: (randn(n), randn(n)),
            formula="3 × 4n bytes: read x and b, write out",
            bytes_moved=bytes3,
            **elementwise,
        ),
        OpBench(
            kernel="poly2",
            op="poly2",
            what=f"y = x² + 2x on {n}",
            custom=lambda m: m.poly2,
            baseline_name="torch `x*x + 2*x`",
            baseline=lambda x: x * x + 2 * x,
            make_inputs=lambda n: (randn(n),),
            formula="2 × 4n bytes: read x, write y",
            bytes_moved=bytes2,
            **elementwise,
        ),
        OpBench(
            kernel="poly2",
            op="poly2_backward",
            what=f"dL/dx = g · (2x + 2) on {n}",
            custom=lambda m: m.poly2_backward,
            baseline_name="torch `g * (2*x + 2)`",
            baseline=lambda g, x: g * (2 * x + 2),
            make_inputs=lambda n: (randn(n), randn(n)),
            formula="3 × 4n bytes: read g and x, write dL/dx",
            bytes_moved=bytes3,
            **elementwise,
        ),
        OpBench(
            kernel="exp",
            op="exp",
            what=f"y = exp(x) on {n}",
            custom=lambda m: m.exp,
            baseline_name="torch.exp",
            baseline=torch.exp,
            make_inputs=lambda n: (randn(n),),
            formula="2 × 4n bytes: read x, write y",
            bytes_moved=bytes2,
            **elementwise,
        ),
        OpBench(
            kernel="exp",
            op="exp_backward",
            what=f"dL/dx = g · y, y = exp(x) saved by the forward, on {n}",
            custom=lambda m: m.exp_backward,
            baseline_name="torch.mul",
            baseline=torch.mul,
            make_inputs=lambda n: (randn(n), randn(n).exp()),
            formula="3 × 4n bytes: read g and y, write dL/dx",
            bytes_moved=bytes3,
            **elementwise,
        ),
        OpBench(
            kernel="linear",
            op="linear",
            what="Y = X·Wᵀ + b; size (B, M, N): X (B, M), W (N, M), b (N)",
            custom=lambda m: m.linear,
            baseline_name="F.linear",
            baseline=F.linear,
            make_inputs=lambda s: (randn(s[0], s[1]), randn(s[2], s[1]), randn(s[2])),
            formula="2·B·M·N FLOPs (the product; the bias adds B·N more)",
            **matrix,
        ),
        OpBench(
            kernel="linear",
            op="linear_grad_input",
            what="dL/dX = G·W; size (B, M, N): G (B, N), W (N, M)",
            custom=lambda m: m.linear_grad_input,
            baseline_name="torch.mm",
            baseline=torch.mm,
            make_inputs=lambda s: (randn(s[0], s[2]), randn(s[2], s[1])),
            formula="2·B·M·N FLOPs",
            **matrix,
        ),
        OpBench(
            kernel="linear",
            op="linear_grad_weight",
            what="dL/dW = Gᵀ·X; size (B, M, N): G (B, N), X (B, M)",
            custom=lambda m: m.linear_grad_weight,
            baseline_name="torch.mm(G.t(), X)",
            baseline=lambda g, x: torch.mm(g.t(), x),
            make_inputs=lambda s: (randn(s[0], s[2]), randn(s[0], s[1])),
            formula="2·B·M·N FLOPs",
            **matrix,
        ),
        OpBench(
            kernel="linear",
            op="linear_grad_bias",
            what="dL/db = the column sums of G; size (B, M, N): G (B, N)",
            custom=lambda m: m.linear_grad_bias,
            baseline_name="torch.sum(G, 0)",
            baseline=lambda g: torch.sum(g, 0),
            make_inputs=lambda s: (randn(s[0], s[2]),),
            sizes=[(37, 53, 29), (256, 256, 256), (1024, 256, 1024)],
            quick_sizes=MATRIX_QUICK,
            formula="4 × (B·N + N) bytes: read G, write dL/db",
            bytes_moved=lambda s: 4 * (s[0] * s[2] + s[2]),
        ),
        OpBench(
            kernel="involution",
            op="involution",
            what="per-pixel K×K filters, each shared by a group of C/G channels; size (N, C, H = W, K) with "
            "G = C/16 groups, stride 1, padding K/2",
            custom=lambda m: lambda x, w, p: m.involution(x, w, 1, p, 1),
            baseline_name="unfold reference",
            baseline=lambda x, w, p: involution_reference(x, w, 1, p, 1),
            make_inputs=involution_inputs,
            formula="2·N·C·H·W·K² FLOPs",
            **involution,
        ),
        OpBench(
            kernel="involution",
            op="involution_grad_input",
            what="dL/dinput; size (N, C, H = W, K) as for involution",
            custom=lambda m: lambda g, w, x, p: m.involution_grad_input(g, w, x.shape[2], x.shape[3], 1, p, 1),
            baseline_name="fold reference",
            baseline=lambda g, w, x, p: involution_grad_input_reference(g, w, x.shape[2], x.shape[3], 1, p, 1),
            make_inputs=involution_grad_inputs,
            formula="2·N·C·H·W·K² FLOPs",
            **involution,
        ),
        OpBench(
            kernel="involution",
            op="involution_grad_weight",
            what="dL/dweight; size (N, C, H = W, K) as for involution",
            custom=lambda m: lambda g, w, x, p: m.involution_grad_weight(g, x, *w.shape[1:4], 1, p, 1),
            baseline_name="unfold reference",
            baseline=lambda g, w, x, p: involution_grad_weight_reference(g, x, *w.shape[1:4], 1, p, 1),
            make_inputs=involution_grad_inputs,
            formula="2·N·C·H·W·K² FLOPs",
            **involution,
        ),
    ]


# ---------------------------------------------------------------------------------------------
# The run.


def max_abs_error(got, expected):
    if torch.is_tensor(got):
        got, expected = [got], [expected]
    return max((g - e).abs().max().item() if g.numel() else 0.0 for g, e in zip(got, expected))


def run_op(spec, module, quick, cuda=False):
    """Check the custom op against its baseline on the smallest size, then time both: (BenchResult, max abs error)."""
    custom = spec.custom(module)
    sizes = spec.quick_sizes if quick else (spec.gpu_sizes or spec.sizes) if cuda else spec.sizes
    args = spec.make_inputs(sizes[0])
    got, expected = custom(*args), spec.baseline(*args)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    error = max_abs_error(got, expected)
    reps = {"warmup": 1, "min_reps": 3, "min_seconds": 0.0, "max_reps": 3} if quick else {}
    result = helpers.bench(
        {f"{spec.op} (custom)": custom, spec.baseline_name: spec.baseline},
        sizes,
        spec.make_inputs,
        formula=spec.formula,
        bytes_moved=spec.bytes_moved,
        flops=spec.flops,
        plot=False,
        **reps,
    )
    return result, error


def summary_table(results):
    rows = []
    for spec, result in results:
        size = result.rows[-1]["size"]
        custom = result.throughput(result.custom, size)
        baseline = result.throughput(result.baseline, size)
        rows.append(
            {
                "op": spec.op,
                "size": size,
                "custom": f"{custom:.3g} {result.unit}",
                "baseline": f"{spec.baseline_name}: {baseline:.3g} {result.unit}",
                "ratio": f"{result.ratio():.3g}x",
            }
        )
    return kp.table.Table(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and 3 runs each (for tests)")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads for the run (default 1)")
    parser.add_argument(
        "--only", nargs="+", metavar="OP", help="only these ops, or all ops of these kernels (e.g. add2 linear)"
    )
    parser.add_argument(
        "--target",
        choices=kp.toolchain.TARGETS,
        default=kp.toolchain.default_target(),
        help="default: cuda with a GPU, else cpu",
    )
    args = parser.parse_args(argv)
    cuda = args.target == "cuda"

    torch.set_num_threads(args.threads)  # the stand-in's pool follows torch.get_num_threads() at every launch
    torch.manual_seed(0)
    specs = [s for s in all_ops() if not args.only or s.op in args.only or s.kernel in args.only]
    where = (
        f"on {torch.cuda.get_device_name()} (CUDA tensors, CUDA events)"
        if cuda
        else f"(CPU stand-in), {platform.machine()}, {os.cpu_count()} cores; torch.set_num_threads({args.threads}) for "
        "the whole run (the stand-in's pool follows it)"
    )
    print(
        f"Custom ops {where} against torch, float32, torch {torch.__version__}"
        + ("; --quick: tiny sizes, 3 runs each, the numbers mean little" if args.quick else "")
        + ".\n"
    )
    print(
        "Each time is helpers.bench's median after warm-up; throughput = the stated bytes or FLOPs ÷ that time. "
        "The ratio is custom ÷ baseline throughput: above 1x the custom op is faster. Before timing, the custom "
        "op's output is checked against the baseline's on the smallest size (max abs error shown).\n"
    )
    modules, results, failed = {}, [], []
    for spec in specs:
        print(f"### {spec.op}\n")
        print(f"{spec.what}. Custom: kernels/{spec.kernel}.cu; baseline: {spec.baseline_name}.\n")
        try:
            if spec.kernel not in modules:
                modules[spec.kernel] = helpers.load_kernel(spec.kernel, target=args.target, quiet=True)
            with torch.device("cuda" if cuda else "cpu"):  # make_inputs' tensors on the target's device
                result, error = run_op(spec, modules[spec.kernel], args.quick, cuda)
        except Exception as e:
            traceback.print_exc()
            print(f"**FAILED**: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}\n")
            failed.append(spec.op)
            continue
        print(f"checked against {spec.baseline_name} at size {result.rows[0]['size']}: max abs error {error:.2e}\n")
        print(result.markdown() + "\n", flush=True)
        results.append((spec, result))

    print("### Summary\n")
    print(f"At the largest size of each op, {args.threads} thread(s).\n")
    print(summary_table(results).markdown())
    if failed:
        print(f"\n**FAILED**: {', '.join(failed)} (the tracebacks are on stderr)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
