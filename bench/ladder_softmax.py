"""The softmax ladder of notebook 09 (kernels/softmax.cu): each version of the row softmax, modelled on an H100 by the
GPU model, and measured where a GPU is present. Prints a markdown table.

    python bench/ladder_softmax.py          # three shapes, 64 blocks of each launch counted (about a minute)
    python bench/ladder_softmax.py --quick  # one small shape

Three float32 shapes: a classifier's or attention's rows (4096 x 1024), many short rows (65536 x 64) and a few long
ones (64 x 32768: a vocabulary), where one thread or one warp per row leaves most of a GPU idle. The model counts a
check-mode build on the CPU stand-in (kp.profile, at most MAX_BLOCKS blocks of each launch run and are counted) and
times it on an H100 (kp.gputime); GB/s is the bytes a softmax must move (x read once, y written once: 8 bytes per
element) over that time. On a GPU the same versions and torch.softmax(x, -1) are measured (CUDA events,
kp.bench.median_ms); without one the measurement is pending.
"""

import argparse
import sys
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/ladder_softmax.py` finds kp

import helpers  # noqa: E402
from kp.bench import median_ms  # noqa: E402
from kp.profile import profile  # noqa: E402
from kp.table import Table  # noqa: E402

MAX_BLOCKS = 64
GPU = "H100"
STEPS = {
    1: "one thread per row, three passes",
    2: "one block per row, shared-memory trees",
    3: "one warp per row, __shfl_xor_sync",
    4: "online softmax (max and sum in one read)",
    5: "16-byte loads and stores",
}
SHAPES = [(4096, 1024), (65536, 64), (64, 32768)]


def modelled_us(checked, x, version):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        counted = profile(checked.softmax, x, version, max_blocks=MAX_BLOCKS)
    return counted.estimate(GPU) * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small shape")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    shapes = [(1024, 256)] if args.quick else SHAPES
    checked = helpers.load_kernel("softmax", target="cpu", check=True, quiet=True)
    gpu = helpers.load_kernel("softmax", target="cuda", quiet=True) if torch.cuda.is_available() else None
    rows = []
    for version, what in STEPS.items():
        row = {"version": version, "what changed": what}
        for shape in shapes:
            x = torch.randn(shape)
            us = modelled_us(checked, x, version)
            row[f"{shape[0]} x {shape[1]}: model µs ({GPU})"] = f"{us:.3g}"
            row[f"{shape[0]} x {shape[1]}: model GB/s"] = f"{x.numel() * 8 / us / 1e3:.3g}"
            if gpu is not None:
                ms, _ = median_ms(gpu.softmax, (x.cuda(), version))
                row[f"{shape[0]} x {shape[1]}: measured µs"] = f"{ms * 1e3:.3g}"
        rows.append(row)
    if gpu is not None:
        row = {"version": "torch", "what changed": "torch.softmax(x, -1)"}
        for shape in shapes:
            row[f"{shape[0]} x {shape[1]}: model µs ({GPU})"] = row[f"{shape[0]} x {shape[1]}: model GB/s"] = ""
            ms, _ = median_ms(torch.softmax, (torch.randn(shape, device="cuda"), -1))
            row[f"{shape[0]} x {shape[1]}: measured µs"] = f"{ms * 1e3:.3g}"
        rows.append(row)
    where = torch.cuda.get_device_name() if gpu is not None else "no GPU here: the measurement is pending"
    print(f"The row softmax, float32: the GPU model ({GPU}, counted on the CPU stand-in) and measured ({where})\n")
    print(Table(rows).markdown())


if __name__ == "__main__":
    main()
