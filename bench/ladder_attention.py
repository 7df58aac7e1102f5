"""Attention, naive against fused (notebook 10, kernels/attention.cu), as the sequence grows: each version modelled on
an H100 by the GPU model, and measured with F.scaled_dot_product_attention beside it where a GPU is present. Prints a
markdown table.

    python bench/ladder_attention.py          # N = 256 to 2048, 16 heads of head_dim 64 (a few minutes on 2 cores)
    python bench/ladder_attention.py --quick  # N = 64 and 128, 4 heads of head_dim 32

Causal attention in float32, (batch x heads, N, head_dim) = (16, N, 64): version 1 writes the N x N scores (the column
"scores MiB": 4·16·N² bytes) and reads them twice; version 2 (flash-attention's forward) keeps them on chip. The model
counts a check-mode build on the CPU stand-in (kp.gpumodel.profile; at most about MAX_BLOCKS blocks of each launch run
and are counted, the rest scaled from them) and times it on an H100 (kp.gpumodel.gputime); "DRAM MiB" is the distinct
32-byte sectors the launches read and wrote (the counted blocks', scaled), what DRAM moves when the L2 keeps each
sector between its uses. The trace does not count arithmetic: the model is given 2·heads·N²·d FLOPs (causal_flops). On
a GPU both versions and SDPA(is_causal=True) are measured (CUDA events, kp.bench.median_ms); without one the
measurement is pending.
"""

import argparse
import sys
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/ladder_attention.py` finds kp

import helpers  # noqa: E402
from kp.bench import median_ms  # noqa: E402
from kp.gpumodel.profile import profile  # noqa: E402
from kp.table import Table, number  # noqa: E402

MAX_BLOCKS = 4  # the fused kernel's blocks are long (64 rows x every key): a few of them cost seconds to count
GPU = "H100"
VERSIONS = {1: "naive", 2: "fused"}


def causal_flops(heads, N, d):
    """Q Kᵀ and P V, 2·N²·d FLOPs each per head (a multiply-add is two), half of each under the causal mask."""
    return 2 * heads * N * N * d


def modelled(checked, q, k, v, version):
    """(µs on the GPU, DRAM MiB) of one causal call, as the GPU model counts and times it."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        counted = profile(checked.attention, q, k, v, True, version, max_blocks=MAX_BLOCKS)
    sectors = sum(la.distinct_read + la.distinct_written for la in counted.launches)
    return counted.estimate(GPU, flops=causal_flops(*q.shape)) * 1e6, sectors * 32 / 2**20


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two short sequences, 4 heads of head_dim 32")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    heads, d, seqs = (4, 32, [64, 128]) if args.quick else (16, 64, [256, 512, 1024, 2048])
    checked = helpers.load_kernel("attention", target="cpu", check=True, quiet=True)
    gpu = helpers.load_kernel("attention", target="cuda", quiet=True) if torch.cuda.is_available() else None
    rows = []
    for N in seqs:
        q, k, v = (torch.randn(heads, N, d) for _ in range(3))
        row = {"N": N, "scores MiB": number(4 * heads * N * N / 2**20)}
        us = {}
        for version, name in VERSIONS.items():
            us[version], mib = modelled(checked, q, k, v, version)
            row[f"{name}: model µs ({GPU})"] = number(us[version])
            row[f"{name}: model DRAM MiB"] = number(mib)
        row["naive ÷ fused (model)"] = f"{us[1] / us[2]:.2f}"
        if gpu is not None:
            on_gpu = tuple(t.cuda() for t in (q, k, v))
            for version, name in VERSIONS.items():
                ms, _ = median_ms(gpu.attention, (*on_gpu, True, version))
                row[f"{name}: measured µs"] = number(ms * 1e3)
            ms, _ = median_ms(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), on_gpu)
            row["SDPA: measured µs"] = number(ms * 1e3)
        rows.append(row)
    where = torch.cuda.get_device_name() if gpu is not None else "no GPU here: the measurement is pending"
    print(
        f"Causal attention, float32, {heads} heads of head_dim {d}: the GPU model ({GPU}, counted on the CPU "
        f"stand-in) and measured ({where})\n"
    )
    print(Table(rows).markdown())


if __name__ == "__main__":
    main()
