"""The reductions ladder of notebook 08 (kernels/colsum.cu): each version of the column sum, modelled on an H100 by the
GPU model, and measured where a GPU is present. Prints a markdown table (the driver: bench/ladder.py).

    python bench/ladder_colsum.py          # three shapes, 64 blocks of each launch counted (about a minute)
    python bench/ladder_colsum.py --quick  # one small shape

Three float32 shapes: a bias gradient of a wide layer (8192 rows x 1024 columns), a tall, narrow matrix (65536 x 32)
where one thread per column leaves a GPU idle, and a short, wide one (32 x 65536). GB/s is the matrix's bytes (each
element read once) over the modelled time; on a GPU, torch.sum(x, 0) is measured beside the versions.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ladder.py, however this file is run

from ladder import Ladder, main  # noqa: E402

COLSUM = Ladder(
    kernel="colsum",
    op="colsum",
    steps={
        1: "one thread per column",
        2: "32 columns x 8 rows, a shared-memory tree",
        3: "32 x 32, warp shuffles",
        4: "row chunks over the grid, atomicAdd",
        5: "row chunks, two stages (deterministic)",
    },
    shapes=[(8192, 1024), (65536, 32), (32, 65536)],
    bytes_per_element=4,
    torch_op=lambda x: torch.sum(x, 0),
    torch_name="torch.sum(x, 0)",
    title="The column sum",
)

if __name__ == "__main__":
    main(COLSUM)
