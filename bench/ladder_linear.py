"""The linear ladder of notebook 07 (kernels/linear_ladder.cu): each version of Y = X·Wᵀ + b modelled on an H100 by
the GPU model, and measured where a GPU is present, against F.linear (cuBLAS, float32, TF32 off). Prints a markdown
table.

    python bench/ladder_linear.py          # the model at 1024³ and at 4096³ (the goal's size); on a GPU, measured
    python bench/ladder_linear.py --quick  # the model at 256³; on a GPU, measured at 256³
    python bench/ladder_linear.py --gpu A100  # the model on another GPU of kp.gpumodel.gpus (÷ cuBLAS: H100 only)

The model counts a check-mode build on the CPU stand-in (kp.gpumodel.profile) and times it on an H100
(kp.gpumodel.gputime) with 2·M·N·K FLOPs. A check-mode trace of every block of 4096³ would take hours here, so at most
MAX_BLOCKS[n] blocks of each launch run and are counted and the counts are scaled to the whole grid (every block of a
size that the tiles divide does the same work; what the scaling gets wrong is the L2: the distinct sectors of the
counted blocks, scaled up, are charged to DRAM). cuBLAS's figure is the H100's measurement of F.linear at 4096³
(kp.gpumodel.gpus.h100_measured). On a GPU each version is timed at 4096³ (at 256³ with --quick: a quick run stays
quick) with CUDA events (kp.bench.median_ms), F.linear beside it; without one the measurement is pending.
"""

import argparse
import sys
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/ladder_linear.py` finds kp

import helpers  # noqa: E402
from kp.bench import median_ms  # noqa: E402
from kp.gpumodel.gpus import gpu as named_gpu  # noqa: E402
from kp.gpumodel.gpus import h100_measured  # noqa: E402
from kp.gpumodel.profile import profile  # noqa: E402
from kp.table import Table, number  # noqa: E402

MAX_BLOCKS = {256: 8, 1024: 8, 4096: 2}  # blocks of each launch the model runs and counts, per size
SIZES, QUICK_SIZES, GOAL = (1024, 4096), (256,), 4096
STEPS = {
    1: "one thread per output, threadIdx.x along Y's rows",
    2: "threadIdx.x along Y's columns",
    3: "32 x 32 tiles in shared memory",
    4: "1-D register tiling: 8 outputs per thread",
    5: "2-D register tiling: 4 x 4 outputs per thread",
    6: "v5 with 16-byte loads of the tiles",
}


def steps(tiles):
    """(version, the op's arguments after x, w, b, what changed) for each row of the table: versions 1 to 6, then
    version 7 at each of its tile configurations `tiles` (the op's `tiles`: linear_ladder_ops.TILES)."""
    return [(version, (version,), what) for version, what in STEPS.items()] + [
        (7, (7, i), f"padded tiles, 16-byte shared reads; tiles {i}: {t}") for i, t in enumerate(tiles)
    ]


def modelled_seconds(checked, n, args, gpu):
    x, w, b = torch.randn(n, n), torch.randn(n, n), torch.randn(n)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        counted = profile(checked.linear_ladder, x, w, b, *args, max_blocks=MAX_BLOCKS[n])
    return counted.estimate(gpu, flops=2 * n**3)


def measured_ms(gpu, todo, n):
    """({op_args: ms} of each step of `todo` at n³ on the GPU (`gpu`: the CUDA build), F.linear's ms at n³)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    big = [t.cuda() for t in (torch.randn(n, n), torch.randn(n, n), torch.randn(n))]
    f_linear_ms, _ = median_ms(F.linear, big)
    return {op_args: median_ms(gpu.linear_ladder, (*big, *op_args))[0] for _, op_args, _ in todo}, f_linear_ms


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the model at 256³ (and on a GPU, the measurement)")
    parser.add_argument("--gpu", default="H100", help="the GPU the model times (a name of kp.gpumodel.gpus)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    sizes, model_gpu = QUICK_SIZES if args.quick else SIZES, args.gpu
    measure = QUICK_SIZES[-1] if args.quick else GOAL  # the size a GPU times the steps at
    on_h100 = named_gpu(model_gpu) == named_gpu("H100")  # an unknown name: kp.gpumodel.gpus's error, before any trace
    checked = helpers.load_kernel("linear_ladder", target="cpu", check=True, quiet=True)
    gpu = helpers.load_kernel("linear_ladder", target="cuda", quiet=True) if torch.cuda.is_available() else None
    cublas_size, cublas, cublas_where = h100_measured("F.linear")
    todo = steps(checked.tiles)
    modelled = {(op_args, n): modelled_seconds(checked, n, op_args, model_gpu) for _, op_args, _ in todo for n in sizes}
    measured, f_linear_ms = {}, None
    if gpu is not None:
        measured, f_linear_ms = measured_ms(gpu, todo, measure)
    rows = []
    for version, op_args, what in todo:
        row = {"version": version, "what changed": what}
        for n in sizes:
            seconds = modelled[op_args, n]
            unit, scale = ("ms", 1e3) if n >= GOAL else ("µs", 1e6)
            row[f"{n}³: model {unit} ({model_gpu})"] = number(seconds * scale)
            row[f"{n}³: model TFLOP/s"] = number(2 * n**3 / seconds / 1e12)
            if (n,) * 3 == cublas_size and on_h100:
                row[f"{n}³: model ÷ cuBLAS"] = f"{2 * n**3 / seconds / cublas:.2f}x"
        if measured:
            row[f"{measure}³: measured TFLOP/s"] = number(2 * measure**3 / measured[op_args] / 1e9)
            row[f"{measure}³: ÷ F.linear, measured"] = f"{f_linear_ms / measured[op_args]:.2f}x"
        rows.append(row)
    if measured:
        rows.append(
            {
                **dict.fromkeys(rows[0], ""),
                "version": "F.linear",
                "what changed": "cuBLAS, float32, TF32 off",
                f"{measure}³: measured TFLOP/s": number(2 * measure**3 / f_linear_ms / 1e9),
            }
        )
    where = torch.cuda.get_device_name() if gpu is not None else "no GPU here: the measurement is pending"
    counted = ", ".join(f"{n}³: {MAX_BLOCKS[n]} blocks of each launch counted" for n in sizes)
    print(
        f"Y = X·Wᵀ + b, float32: the GPU model ({model_gpu}, counted on the CPU stand-in; {counted}) "
        f"and measured ({where})"
    )
    print(f"\n{Table(rows).markdown()}\n")
    v7 = [op_args for version, op_args, _ in todo if version == 7]
    for n in sizes:
        best = min(v7, key=lambda a: modelled[a, n])
        print(f"Version 7 autotuned by the model at {n}³: tiles {best[1]}, {checked.tiles[best[1]]}.")
    if measured:
        best = min(v7, key=measured.get)
        print(f"Version 7 autotuned by measurement at {measure}³: tiles {best[1]}, {checked.tiles[best[1]]}.")
    size = "x".join(map(str, cublas_size))
    print(
        f"cuBLAS: F.linear at {size}, {cublas / 1e12:.3g} TFLOP/s measured on {cublas_where}; model ÷ cuBLAS sets the "
        "model's time against that measurement."
    )


if __name__ == "__main__":
    main()
