"""The shared driver of the row-and-column ladders (bench/ladder_colsum.py, bench/ladder_softmax.py; next,
bench/ladder_attention.py): each version of one op, modelled on an H100 by the GPU model at a few shapes, and measured
beside the torch op where a GPU is present. Not a script itself: a ladder script describes its op (a Ladder) and calls
main(ladder).

The model counts a check-mode build on the CPU stand-in (kp.gpumodel.profile, at most MAX_BLOCKS blocks of each launch
run and are counted) and times it on an H100 (kp.gpumodel.gputime); GB/s is the bytes the op must move
(bytes_per_element x elements) over that time. On a GPU the same versions and the torch op are measured (CUDA events,
kp.bench.median_ms); without one the measurement is pending.
"""

import argparse
import dataclasses
import sys
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/ladder_*.py` finds kp

import helpers  # noqa: E402
from kp.bench import median_ms  # noqa: E402
from kp.gpumodel.profile import profile  # noqa: E402
from kp.table import Table, number  # noqa: E402

MAX_BLOCKS = 64
GPU = "H100"
QUICK_SHAPES = [(1024, 256)]


@dataclasses.dataclass(frozen=True)
class Ladder:
    """One op's ladder: its kernel file, the op it calls with (x, version), its versions ({version: what changed}),
    its shapes, the bytes per element it must move, the torch op measured beside it (a callable of x, its name),
    and the table's title (what the op is)."""

    kernel: str
    op: str
    steps: dict
    shapes: list
    bytes_per_element: int
    torch_op: object
    torch_name: str
    title: str


def modelled_us(checked, ladder, x, version):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        counted = profile(getattr(checked, ladder.op), x, version, max_blocks=MAX_BLOCKS)
    return counted.estimate(GPU) * 1e6


def rows(ladder, shapes):
    """The table's rows: one per version (modelled, and measured on a GPU), then the torch op's on a GPU."""
    checked = helpers.load_kernel(ladder.kernel, target="cpu", check=True, quiet=True)
    gpu = helpers.load_kernel(ladder.kernel, target="cuda", quiet=True) if torch.cuda.is_available() else None
    out = []
    for version, what in ladder.steps.items():
        row = {"version": version, "what changed": what}
        for shape in shapes:
            x = torch.randn(shape)
            us = modelled_us(checked, ladder, x, version)
            row[f"{shape[0]} x {shape[1]}: model µs ({GPU})"] = number(us)
            row[f"{shape[0]} x {shape[1]}: model GB/s"] = number(x.numel() * ladder.bytes_per_element / us / 1e3)
            if gpu is not None:
                ms, _ = median_ms(getattr(gpu, ladder.op), (x.cuda(), version))
                row[f"{shape[0]} x {shape[1]}: measured µs"] = number(ms * 1e3)
        out.append(row)
    if gpu is not None:
        row = {"version": "torch", "what changed": ladder.torch_name}
        for shape in shapes:
            row[f"{shape[0]} x {shape[1]}: model µs ({GPU})"] = row[f"{shape[0]} x {shape[1]}: model GB/s"] = ""
            ms, _ = median_ms(ladder.torch_op, (torch.randn(shape, device="cuda"),))
            row[f"{shape[0]} x {shape[1]}: measured µs"] = number(ms * 1e3)
        out.append(row)
    return out


def main(ladder, argv=None):
    parser = argparse.ArgumentParser(description=ladder.title)
    parser.add_argument("--quick", action="store_true", help="one small shape")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    table = rows(ladder, QUICK_SHAPES if args.quick else ladder.shapes)
    where = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU here: the measurement is pending"
    print(f"{ladder.title}, float32: the GPU model ({GPU}, counted on the CPU stand-in) and measured ({where})\n")
    print(Table(table).markdown())
