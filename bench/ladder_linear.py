"""The linear ladder of notebook 07 (kernels/linear_ladder.cu): each version of Y = X·Wᵀ + b modelled on an H100 by
the GPU model, and measured where a GPU is present, against F.linear (cuBLAS, TF32 off). Prints a markdown table.

    python bench/ladder_linear.py          # the model at 1024³, blocks sampled; on a GPU also measured at 4096³
    python bench/ladder_linear.py --quick  # the model at 256³

The model counts a check-mode build on the CPU stand-in (kp.profile: at most MAX_BLOCKS blocks of each launch run and
are counted, the counts scaled up) and times it on an H100 (kp.gputime) with 2·M·N·K FLOPs; a check-mode trace of
4096³ would take hours here, so the model runs at 1024³. On a GPU each version is timed at 4096³ (CUDA events,
kp.bench.median_ms), with F.linear beside it; without one the measurement is pending.
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
from kp.profile import profile  # noqa: E402
from kp.table import Table  # noqa: E402

MAX_BLOCKS = 8
GPU = "H100"
STEPS = {
    1: "one thread per output, threadIdx.x along Y's rows",
    2: "threadIdx.x along Y's columns",
    3: "32 x 32 tiles in shared memory",
    4: "1-D register tiling: 8 outputs per thread",
    5: "2-D register tiling: 4 x 4 outputs per thread",
    6: "v5 with 16-byte loads of the tiles",
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the model at 256³")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    n = 256 if args.quick else 1024
    checked = helpers.load_kernel("linear_ladder", target="cpu", check=True, quiet=True)
    gpu = helpers.load_kernel("linear_ladder", target="cuda", quiet=True) if torch.cuda.is_available() else None
    x, w, b = torch.randn(n, n), torch.randn(n, n), torch.randn(n)
    rows = []
    for version, what in STEPS.items():
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="sampled: ")
            counted = profile(checked.linear_ladder, x, w, b, version, max_blocks=MAX_BLOCKS)
        seconds = counted.estimate(GPU, flops=2 * n**3)
        row = {"version": version, "what changed": what, f"{n}³: model ({GPU})": f"{seconds * 1e6:.3g} µs"}
        row[f"{n}³: model TFLOP/s"] = f"{2 * n**3 / seconds / 1e12:.3g}"
        rows.append(row)
    if gpu is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
        big = [t.cuda() for t in (torch.randn(4096, 4096), torch.randn(4096, 4096), torch.randn(4096))]
        cublas_ms, _ = median_ms(F.linear, big)
        for row, version in zip(rows, STEPS):
            ms, _ = median_ms(gpu.linear_ladder, (*big, version))
            row["4096³: measured TFLOP/s"] = f"{2 * 4096**3 / ms / 1e9:.3g}"
            row["÷ F.linear"] = f"{cublas_ms / ms:.3g}x"
    where = torch.cuda.get_device_name() if gpu is not None else "no GPU here: the measurement is pending"
    print(f"Y = X·Wᵀ + b, float32: the GPU model ({GPU}, counted on the CPU stand-in) and measured ({where})\n")
    print(Table(rows).markdown())


if __name__ == "__main__":
    main()
