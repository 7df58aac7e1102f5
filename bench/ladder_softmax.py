"""The softmax ladder of notebook 09 (kernels/softmax.cu): each version of the row softmax, modelled on an H100 by the
GPU model, and measured where a GPU is present. Prints a markdown table (the driver: bench/ladder.py).

    python bench/ladder_softmax.py          # three shapes, 64 blocks of each launch counted (about a minute)
    python bench/ladder_softmax.py --quick  # one small shape

Three float32 shapes: a classifier's or attention's rows (4096 x 1024), many short rows (65536 x 64) and a few long
ones (64 x 32768: a vocabulary), where one thread or one warp per row leaves most of a GPU idle. GB/s is the bytes a
softmax must move (x read once, y written once: 8 bytes per element) over the modelled time; on a GPU,
torch.softmax(x, -1) is measured beside the versions.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ladder.py, however this file is run

from ladder import Ladder, main  # noqa: E402

SOFTMAX = Ladder(
    kernel="softmax",
    op="softmax",
    steps={
        1: "one thread per row, three passes",
        2: "one block per row, shared-memory trees",
        3: "one warp per row, __shfl_xor_sync",
        4: "online softmax (max and sum in one read)",
        5: "16-byte loads and stores",
    },
    shapes=[(4096, 1024), (65536, 64), (64, 32768)],
    bytes_per_element=8,
    torch_op=lambda x: torch.softmax(x, -1),
    torch_name="torch.softmax(x, -1)",
    title="The row softmax",
)

if __name__ == "__main__":
    main(SOFTMAX)
