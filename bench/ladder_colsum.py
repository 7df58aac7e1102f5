"""The reductions ladder of notebook 08 (kernels/colsum.cu): each version of the column sum, modelled on an H100 by the
GPU model, and measured where a GPU is present. Prints a markdown table.

    python bench/ladder_colsum.py          # three shapes, 64 blocks of each launch counted (about a minute)
    python bench/ladder_colsum.py --quick  # one small shape

Three float32 shapes: a bias gradient of a wide layer (8192 rows x 1024 columns), a tall, narrow matrix (65536 x 32)
where one thread per column leaves a GPU idle, and a short, wide one (32 x 65536). The model counts a check-mode build
on the CPU stand-in (kp.profile, at most MAX_BLOCKS blocks of each launch run and are counted) and times it on an H100
(kp.gputime); GB/s is the matrix's bytes (each element read once) over that time. On a GPU the same versions and
torch.sum(x, 0) are measured (CUDA events, kp.bench.median_ms); without one the measurement is pending.
"""

import argparse
import sys
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/ladder_colsum.py` finds kp

import helpers  # noqa: E402
from kp.bench import median_ms  # noqa: E402
from kp.profile import profile  # noqa: E402
from kp.table import Table  # noqa: E402

MAX_BLOCKS = 64
GPU = "H100"
STEPS = {
    1: "one thread per column",
    2: "32 columns x 8 rows, a shared-memory tree",
    3: "32 x 32, warp shuffles",
    4: "row chunks over the grid, atomicAdd",
    5: "row chunks, two stages (deterministic)",
}
SHAPES = [(8192, 1024), (65536, 32), (32, 65536)]


def modelled_us(checked, x, version):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        counted = profile(checked.colsum, x, version, max_blocks=MAX_BLOCKS)
    return counted.estimate(GPU) * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small shape")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    shapes = [(1024, 256)] if args.quick else SHAPES
    checked = helpers.load_kernel("colsum", target="cpu", check=True, quiet=True)
    gpu = helpers.load_kernel("colsum", target="cuda", quiet=True) if torch.cuda.is_available() else None
    rows = []
    for version, what in STEPS.items():
        row = {"version": version, "what changed": what}
        for shape in shapes:
            x = torch.randn(shape)
            us = modelled_us(checked, x, version)
            row[f"{shape[0]} x {shape[1]}: model µs ({GPU})"] = f"{us:.3g}"
            row[f"{shape[0]} x {shape[1]}: model GB/s"] = f"{x.numel() * 4 / us / 1e3:.3g}"
            if gpu is not None:
                ms, _ = median_ms(gpu.colsum, (x.cuda(), version))
                row[f"{shape[0]} x {shape[1]}: measured µs"] = f"{ms * 1e3:.3g}"
        rows.append(row)
    if gpu is not None:
        row = {"version": "torch", "what changed": "torch.sum(x, 0)"}
        for shape in shapes:
            row[f"{shape[0]} x {shape[1]}: model µs ({GPU})"] = row[f"{shape[0]} x {shape[1]}: model GB/s"] = ""
            ms, _ = median_ms(torch.sum, (torch.randn(shape, device="cuda"), 0))
            row[f"{shape[0]} x {shape[1]}: measured µs"] = f"{ms * 1e3:.3g}"
        rows.append(row)
    where = torch.cuda.get_device_name() if gpu is not None else "no GPU here: the measurement is pending"
    print(f"The column sum, float32: the GPU model ({GPU}, counted on the CPU stand-in) and measured ({where})\n")
    print(Table(rows).markdown())


if __name__ == "__main__":
    main()
