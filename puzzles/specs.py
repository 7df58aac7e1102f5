"""The puzzles of notebook 00, in order, each with its spec: a torch function of the inputs (and the sizes) that says
what the kernel's `out` must hold, the sizes it is checked on, how it is launched, and the most global and shared
reads and writes one thread may make. kp.puzzle reads this file (`puzzle("map")`); the kernels are puzzles/NN_<name>.cu,
numbered so that a file browser lists them in this order, their solutions puzzles/solutions/NN_<name>.cu.
"""

import dataclasses

import torch
import torch.nn.functional as F

from kp.goals import Goal


@dataclasses.dataclass(frozen=True)
class Puzzle:
    """One puzzle: its kernel's parameters (C types and names, in order), the sizes it is checked on, how it is
    launched for a size, the inputs for a size, and the spec: what `out` must hold."""

    number: int
    name: str
    title: str
    params: tuple  # ("const float* a", "float* out", "int size"): tensors are the pointers, in order
    sizes: tuple  # one case per entry: the ints the kernel takes (size; rows, cols; ...)
    launch: object  # sizes -> (grid, block): (x, y) pairs
    inputs: object  # sizes, generator -> the input tensors (the pointer parameters but out)
    out: object  # sizes, inputs -> out as the kernel finds it (NaN where it must write; zeros where it adds)
    spec: object  # *inputs, *sizes -> what out must hold
    target: dict  # the most accesses one thread may make: {"global reads": 1, ...}; a value may be sizes -> int
    rtol: float = 0.0  # float sums in another order than torch's differ in the last bits
    atol: float = 0.0
    goals: tuple = ()  # kp.goals.Goal: the GPU model's counters the kernel must keep under, part of its score
    host: tuple = ()  # several kernels: their launches in order, C++ of the parameters and gx, gy, bx, by

    @property
    def file(self):
        """Its kernel file's name, in puzzles/ and puzzles/solutions/: `01_map.cu`."""
        return f"{self.number:02d}_{self.name}.cu"


def _f(*shape, g):
    return torch.randn(*shape, generator=g)


def _nan(*shape):
    return torch.full(shape, float("nan"))


def _blocks(n, per):
    return -(-n // per)


NO_CONFLICTS = Goal("bank-conflict ways", 1)  # a warp's shared accesses served in one pass each: no two lanes, one bank


PUZZLES = [
    Puzzle(
        1, "map", "one thread per element", ("const float* a", "float* out", "int size"), ((4,), (33,), (100,)),
        lambda n: ((1, 1), (n, 1)), lambda n, g: [_f(n, g=g)], lambda n, a: _nan(n),
        lambda a, *_: a + 10, {"global reads": 1, "global writes": 1},
    ),
    Puzzle(
        2, "zip", "two inputs", ("const float* a", "const float* b", "float* out", "int size"), ((4,), (33,), (100,)),
        lambda n: ((1, 1), (n, 1)), lambda n, g: [_f(n, g=g), _f(n, g=g)], lambda n, a, b: _nan(n),
        lambda a, b, *_: a + b, {"global reads": 2, "global writes": 1},
    ),
    Puzzle(
        3, "guard", "more threads than elements", ("const float* a", "float* out", "int size"), ((5,), (33,), (100,)),
        lambda n: ((1, 1), (_blocks(n, 32) * 32, 1)), lambda n, g: [_f(n, g=g)], lambda n, a: _nan(n),
        lambda a, *_: a + 10, {"global reads": 1, "global writes": 1},
    ),
    Puzzle(
        4, "map2d", "a 2-D block", ("const float* a", "float* out", "int rows", "int cols"), ((3, 5), (7, 9), (20, 13)),
        lambda r, c: ((1, 1), (_blocks(c, 8) * 8, _blocks(r, 8) * 8)), lambda r, c, g: [_f(r, c, g=g)],
        lambda r, c, a: _nan(r, c), lambda a, *_: a + 10, {"global reads": 1, "global writes": 1},
        goals=(Goal("sectors per request", 4),),  # x along a row: a warp's 2 rows of 13 floats, 104 bytes, 4 sectors
    ),
    Puzzle(
        5, "broadcast", "a column plus a row",
        ("const float* a", "const float* b", "float* out", "int rows", "int cols"),
        ((3, 5), (7, 9), (20, 13)), lambda r, c: ((1, 1), (_blocks(c, 8) * 8, _blocks(r, 8) * 8)),
        lambda r, c, g: [_f(r, g=g), _f(c, g=g)], lambda r, c, a, b: _nan(r, c),
        lambda a, b, *_: a[:, None] + b[None, :], {"global reads": 2, "global writes": 1},
        goals=(Goal("sectors per request", 4),),  # as map2d: x along a row
    ),
    Puzzle(
        6, "blocks", "more elements than a block has threads", ("const float* a", "float* out", "int size"),
        ((5,), (100,), (1000,)), lambda n: ((_blocks(n, 32), 1), (32, 1)), lambda n, g: [_f(n, g=g)],
        lambda n, a: _nan(n), lambda a, *_: a + 10, {"global reads": 1, "global writes": 1},
    ),
    Puzzle(
        7, "blocks2d", "a 2-D grid of 2-D blocks", ("const float* a", "float* out", "int rows", "int cols"),
        ((5, 7), (33, 20), (9, 70)), lambda r, c: ((_blocks(c, 8), _blocks(r, 8)), (8, 8)),
        lambda r, c, g: [_f(r, c, g=g)], lambda r, c, a: _nan(r, c), lambda a, *_: a + 10,
        {"global reads": 1, "global writes": 1},
    ),
    Puzzle(
        8, "shared", "shared memory and a barrier", ("const float* a", "float* out", "int size"),
        ((5,), (100,), (1000,)), lambda n: ((_blocks(n, 32), 1), (32, 1)), lambda n, g: [_f(n, g=g)],
        lambda n, a: _nan(n), lambda a, *_: a + 10,
        {"global reads": 1, "global writes": 1, "shared reads": 1, "shared writes": 1}, goals=(NO_CONFLICTS,),
    ),
    Puzzle(
        9, "pooling", "a 1-D stencil through shared memory", ("const float* a", "float* out", "int size"),
        ((5,), (100,), (1000,)), lambda n: ((_blocks(n, 32), 1), (32, 1)), lambda n, g: [_f(n, g=g)],
        lambda n, a: _nan(n), lambda a, *_: a + F.pad(a, (1, 0))[:-1] + F.pad(a, (2, 0))[:-2],
        {"global reads": 2, "global writes": 1}, rtol=1e-6, atol=1e-6, goals=(NO_CONFLICTS,),
    ),
    Puzzle(
        10, "dot", "a block reduction", ("const float* a", "const float* b", "float* out", "int size"),
        ((1,), (33,), (256,)), lambda n: ((1, 1), (256, 1)), lambda n, g: [_f(n, g=g), _f(n, g=g)],
        lambda n, a, b: _nan(1), lambda a, b, *_: (a * b).sum().reshape(1),
        {"global reads": 2, "global writes": 1}, rtol=1e-5, atol=1e-5, goals=(NO_CONFLICTS,),
    ),
    Puzzle(
        11, "prefix_sum", "an inclusive scan in one block", ("const float* a", "float* out", "int size"),
        ((1,), (33,), (256,)), lambda n: ((1, 1), (256, 1)), lambda n, g: [_f(n, g=g)], lambda n, a: _nan(n),
        lambda a, *_: a.cumsum(0), {"global reads": 1, "global writes": 1}, rtol=1e-5, atol=1e-5,
        goals=(NO_CONFLICTS,),
    ),
    Puzzle(
        12, "axis_sum", "a sum along rows, a block per row", ("const float* a", "float* out", "int rows", "int cols"),
        ((4, 7), (3, 256), (5, 100)), lambda r, c: ((r, 1), (256, 1)), lambda r, c, g: [_f(r, c, g=g)],
        lambda r, c, a: _nan(r), lambda a, *_: a.sum(1), {"global reads": 1, "global writes": 1}, rtol=1e-5, atol=1e-5,
        goals=(NO_CONFLICTS,),
    ),
    Puzzle(
        13, "histogram", "atomics", ("const int* x", "int* counts", "int size", "int bins"),
        ((5, 4), (1000, 10), (3000, 7)), lambda n, bins: ((_blocks(n, 64), 1), (64, 1)),
        lambda n, bins, g: [torch.randint(0, bins, (n,), generator=g, dtype=torch.int32)],
        lambda n, bins, x: torch.zeros(bins, dtype=torch.int32),
        lambda x, size, bins: torch.bincount(x, minlength=bins).int(),
        {"global reads": 1, "global writes": 1},
    ),
    Puzzle(
        14, "warp_sum", "warp shuffles", ("const float* a", "float* out", "int size"), ((5,), (64,), (1000,)),
        lambda n: ((_blocks(n, 64), 1), (64, 1)), lambda n, g: [_f(n, g=g)], lambda n, a: _nan(_blocks(n, 32)),
        lambda a, *_: F.pad(a, (0, -len(a) % 32)).reshape(-1, 32).sum(1),
        {"global reads": 1, "global writes": 1, "shared reads": 0, "shared writes": 0}, rtol=1e-5, atol=1e-5,
    ),
    Puzzle(
        15, "matmul", "a tiled matrix product",
        ("const float* a", "const float* b", "float* out", "int n", "int m", "int k"),
        ((1, 1, 1), (17, 33, 9), (40, 20, 35)), lambda n, m, k: ((_blocks(k, 16), _blocks(n, 16)), (16, 16)),
        lambda n, m, k, g: [_f(n, m, g=g), _f(m, k, g=g)], lambda n, m, k, a, b: _nan(n, k), lambda a, b, *_: a @ b,
        {"global reads": lambda n, m, k: 2 * _blocks(m, 16), "global writes": 1}, rtol=1e-5, atol=1e-5,
        # Each element loaded serves 16 multiply-adds: 2/16 a thread, 0.16 with the edge tiles at 40 x 20 x 35
        goals=(NO_CONFLICTS, Goal("global loads per FMA", 0.25, fmas=lambda n, m, k: n * m * k)),
    ),
    Puzzle(
        16, "conv1d", "a convolution, its halo in shared memory",
        ("const float* a", "const float* w", "float* out", "int size", "int width"), ((6, 3), (100, 4), (1000, 8)),
        lambda n, k: ((_blocks(n, 64), 1), (64, 1)), lambda n, k, g: [_f(n, g=g), _f(k, g=g)],
        lambda n, k, a, w: _nan(n), lambda a, w, n, k: F.conv1d(F.pad(a, (0, k - 1))[None, None], w[None, None])[0, 0],
        {"global reads": 3, "global writes": 1}, rtol=1e-5, atol=1e-5,
        # Staged, each element of a serves `width` multiply-adds: about 1/8 + 2/64 loads per FMA for width 8
        goals=(Goal("global loads per FMA", 0.25, fmas=lambda n, k: n * k),),
    ),
    Puzzle(
        17, "transpose", "a transpose, coalesced both ways", ("const float* a", "float* out", "int rows", "int cols"),
        ((1, 1), (5, 7), (33, 40), (70, 45)), lambda r, c: ((_blocks(c, 32), _blocks(r, 32)), (32, 8)),
        lambda r, c, g: [_f(r, c, g=g)], lambda r, c, a: _nan(c, r), lambda a, *_: a.T.contiguous(),
        {"global reads": 4, "global writes": 4, "shared reads": 4, "shared writes": 4},
        goals=(Goal("sectors per request", 4), NO_CONFLICTS),  # a warp's 32 floats of a row: 128 bytes
    ),
    Puzzle(
        18, "grid_sum", "a sum over many blocks", ("const float* a", "float* out", "int size"),
        ((5,), (300,), (5000,)), lambda n: ((_blocks(n, 128), 1), (128, 1)), lambda n, g: [_f(n, g=g)],
        lambda n, a: torch.zeros(1), lambda a, *_: a.sum().reshape(1), {"global reads": 1, "global writes": 1},
        rtol=1e-4, atol=1e-4, goals=(NO_CONFLICTS, Goal("global atomics per block", 1)),
    ),
    Puzzle(
        19, "scan", "a scan over many blocks, in three launches",
        ("const float* a", "float* sums", "float* out", "int size"), ((5,), (300,), (3000,)),
        lambda n: ((_blocks(n, 256), 1), (256, 1)), lambda n, g: [_f(n, g=g), _nan(_blocks(n, 256))],
        lambda n, a, sums: _nan(n), lambda a, sums, n: a.cumsum(0),
        {"global reads": 2, "global writes": 2}, rtol=1e-4, atol=1e-4,
        host=("scan_blocks<<<gx, bx>>>(a, sums, out, size)", "scan_sums<<<1, bx>>>(sums, gx)",
              "add_sums<<<gx, bx>>>(sums, out, size)"),
    ),
    Puzzle(
        20, "shared_histogram", "a histogram in shared memory", ("const int* x", "int* counts", "int size", "int bins"),
        ((5, 4), (1000, 10), (6000, 64)), lambda n, bins: ((_blocks(n, 256), 1), (256, 1)),
        lambda n, bins, g: [torch.randint(0, bins, (n,), generator=g, dtype=torch.int32)],
        lambda n, bins, x: torch.zeros(bins, dtype=torch.int32),
        lambda x, size, bins: torch.bincount(x, minlength=bins).int(), {"global reads": 1, "global writes": 1},
        goals=(Goal("global atomics per block", 64),),  # at most one per bin: bins <= 64
    ),
    Puzzle(
        21, "block_sum", "a tree without divergent branches", ("const float* a", "float* out", "int size"),
        ((5,), (300,), (2000,)), lambda n: ((_blocks(n, 256), 1), (128, 1)), lambda n, g: [_f(n, g=g)],
        lambda n, a: _nan(_blocks(n, 256)), lambda a, *_: F.pad(a, (0, -len(a) % 256)).reshape(-1, 256).sum(1),
        {"global reads": 2, "global writes": 1}, rtol=1e-5, atol=1e-5,
        goals=(Goal("divergent branches", 0), NO_CONFLICTS),
    ),
    Puzzle(
        22, "softmax", "a row softmax, a warp per row", ("const float* a", "float* out", "int rows", "int cols"),
        ((1, 1), (5, 37), (9, 100)), lambda r, c: ((r, 1), (32, 1)), lambda r, c, g: [10 * _f(r, c, g=g)],
        lambda r, c, a: _nan(r, c), lambda a, *_: torch.softmax(a, 1),
        {"global reads": lambda r, c: 3 * _blocks(c, 32), "global writes": lambda r, c: _blocks(c, 32),
         "shared reads": 0, "shared writes": 0}, rtol=1e-5, atol=1e-6,
        goals=(Goal("sectors per request", 4),),  # the lanes of the warp on neighbouring columns
    ),
]  # fmt: skip
