"""The lessons' exercises (notebooks 01-09 each end with one), in the shape of puzzles/specs.py's Puzzle so that one
checker grades both (kp.grade): each kernel's parameters, the sizes it is checked on (ragged first, the last one the
size the GPU model counts), how it is launched, its inputs, what `out` must hold (a torch function), the most reads
and writes one thread may make, and its performance goals in the GPU model's counters (kp.goals). kp.exercise reads
this file (`exercise("01_grid_stride")`); the learner's kernels are exercises/NN_<name>.cu (NN: the lesson), the
answers exercises/solutions/NN_<name>.cu.
"""

import dataclasses

import torch

from kp.goals import Goal


@dataclasses.dataclass(frozen=True)
class Exercise:
    """One lesson's exercise: Puzzle's fields (puzzles/specs.py; `number` is the lesson's), its goals, and hints from a
    nudge to a sketch (`exercise(name, hint=1)`, 2, 3). Puzzles keep their hints in puzzles/hints.py; an exercise's
    three sit with its spec."""

    number: int
    name: str
    title: str
    params: tuple  # ("const float* a", "float* out", "int size"): tensors are the pointers, in order
    sizes: tuple  # one case per entry: the ints the kernel takes; the last is the one the GPU model counts
    launch: object  # sizes -> (grid, block): (x, y) pairs
    inputs: object  # sizes, generator -> the input tensors (the pointer parameters but out)
    out: object  # sizes, inputs -> out as the kernel finds it (NaN where it must write)
    spec: object  # *inputs, *sizes -> what out must hold
    target: dict  # the most accesses one thread may make; a value may be sizes -> int
    goals: tuple  # kp.goals.Goal: the GPU model's counters the kernel must keep under
    hints: tuple = ()  # a nudge, the approach, a sketch (`exercise(name, hint=N)` prints one)
    rtol: float = 0.0
    atol: float = 0.0

    @property
    def file(self):
        """Its kernel file's name, in exercises/ and exercises/solutions/: `01_grid_stride.cu`."""
        return f"{self.number:02d}_{self.name}.cu"


def _f(*shape, g, scale=1.0):
    return torch.randn(*shape, generator=g) * scale


def _nan(*shape):
    return torch.full(shape, float("nan"))


def _blocks(n, per):
    return -(-n // per)


SECTORS = Goal("sectors per request", 4)  # a warp's 32 floats side by side, aligned: 128 bytes, 4 sectors
NO_DIVERGENCE = Goal("divergent branches", 0)  # kp.goals leaves out the splits at one lane (a bounds check)

EXERCISES = [
    Exercise(
        1, "grid_stride", "a grid-stride loop, coalesced",
        ("const float* a", "const float* b", "float* out", "int size"),
        ((5,), (1000,), (4096,)), lambda n: ((4, 1), (64, 1)), lambda n, g: [_f(n, g=g), _f(n, g=g)],
        lambda n, a, b: _nan(n), lambda a, b, *_: a * a + b * b,
        {"global reads": lambda n: 2 * _blocks(n, 256), "global writes": lambda n: _blocks(n, 256)}, (SECTORS,),
        ("256 threads for 4096 elements: each thread takes 16. Which 16 decides how a warp's loads coalesce.",
         "At each step of its loop a warp's lanes should read 32 neighbouring floats: thread t takes t, t + 256, ...",
         "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size; i += gridDim.x * blockDim.x) out[i] = ..."),
        rtol=1e-6, atol=1e-6,
    ),
    Exercise(
        2, "broadcast", "a broadcast that coalesces",
        ("const float* a", "const float* w", "const float* bias", "float* out", "int rows", "int cols"),
        ((3, 5), (37, 41), (64, 128)), lambda r, c: ((_blocks(c, 16), _blocks(r, 16)), (16, 16)),
        lambda r, c, g: [_f(r, c, g=g), _f(c, g=g), _f(r, g=g)], lambda r, c, *_: _nan(r, c),
        lambda a, w, bias, *_: a * w[None, :] + bias[:, None], {"global reads": 3, "global writes": 1}, (SECTORS,),
        ("A warp is 32 threads of consecutive threadIdx.x (then y): 16 x 2 of the 16 x 16 block.",
         "Let threadIdx.x run along a row (the column index): neighbouring lanes, neighbouring floats.",
         "int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y; if (r < rows && "
         "c < cols) out[r * cols + c] = ..."),
        rtol=1e-6, atol=1e-6,
    ),
    Exercise(
        3, "odd_poly", "a select, not a divergent branch",
        ("const float* x", "const float* coef", "float* out", "int size"),
        ((5,), (100,), (2048,)), lambda n: ((_blocks(n, 128), 1), (128, 1)), lambda n, g: [_f(n, g=g), _f(3, g=g)],
        lambda n, *_: _nan(n),
        lambda x, coef, *_: torch.where(x >= 0, 1.0, -1.0) * (coef[0] + x.abs() * (coef[1] + x.abs() * coef[2])),
        {"global reads": 4, "global writes": 1}, (NO_DIVERGENCE,),
        ("An `if` on x's sign sends some lanes of a warp one way and some the other: the warp runs both paths.",
         "Compute the polynomial of |x| on every lane, then put the sign back with arithmetic (copysignf).",
         "float ax = fabsf(v); out[i] = copysignf(1.0f, v) * (coef[0] + ax * (coef[1] + ax * coef[2]));"),
        rtol=1e-5, atol=1e-5,
    ),
    Exercise(
        4, "exp_rows", "a warp per row, lanes striding it", ("const float* x", "float* out", "int rows", "int cols"),
        ((3, 5), (7, 100), (16, 512)), lambda r, c: ((r, 1), (32, 1)), lambda r, c, g: [_f(r, c, g=g)],
        lambda r, c, *_: _nan(r, c), lambda x, *_: torch.exp(x),
        {"global reads": lambda r, c: _blocks(c, 32), "global writes": lambda r, c: _blocks(c, 32)}, (SECTORS,),
        ("One warp owns a row of 512 floats: 16 per lane. Which 16?",
         "A lane's own chunk of 16 puts the lanes 64 bytes apart; striding by 32 puts them side by side.",
         "for (int c = threadIdx.x; c < cols; c += 32) o[c] = expf(row[c]);"),
        rtol=1e-6, atol=1e-6,
    ),
    Exercise(
        5, "transpose", "a transpose through shared memory, no bank conflict",
        ("const float* a", "float* out", "int rows", "int cols"), ((3, 5), (37, 41), (64, 96)),
        lambda r, c: ((_blocks(c, 32), _blocks(r, 32)), (32, 8)), lambda r, c, g: [_f(r, c, g=g)],
        lambda r, c, *_: _nan(c, r), lambda a, *_: a.t().contiguous(), {"global reads": 4, "global writes": 4},
        (SECTORS, Goal("bank-conflict ways", 1)),
        ("Read a 32 x 32 tile along a's rows into shared memory, write it along out's rows: both coalesce.",
         "The second pass reads a column of the tile: 32 words 32 apart share one bank. Pad each row by one float.",
         "__shared__ float tile[32][33]; tile[k][threadIdx.x] = a[...]; __syncthreads(); out[...] = "
         "tile[threadIdx.x][k];"),
    ),
    Exercise(
        6, "box3", "a stencil's halo in shared memory", ("const float* x", "float* out", "int size"),
        ((5,), (200,), (2048,)), lambda n: ((_blocks(n, 128), 1), (128, 1)), lambda n, g: [_f(n, g=g)],
        lambda n, *_: _nan(n),
        lambda x, *_: torch.nn.functional.avg_pool1d(torch.nn.functional.pad(x, (1, 1))[None], 3, 1)[0],
        {"global reads": 2, "global writes": 1}, (SECTORS,),
        ("Three global reads per output read each float three times, and x[i - 1] by a warp spans 5 sectors.",
         "Load the block's 128 floats once into shared memory, plus one neighbour at each end (the halo).",
         "__shared__ float s[130]; s[threadIdx.x + 1] = x[i]; thread 0 loads x[i - 1] into s[0], thread 127 x[i + 1] "
         "into s[129]; __syncthreads(); then add s[t], s[t + 1], s[t + 2]."),
        rtol=1e-6, atol=1e-6,
    ),
    Exercise(
        7, "matmul_tiled", "the ladder's next rung: shared-memory tiles",
        ("const float* a", "const float* b", "float* out", "int n", "int m", "int k"),
        ((1, 1, 1), (17, 33, 9), (64, 64, 64)), lambda n, m, k: ((_blocks(k, 16), _blocks(n, 16)), (16, 16)),
        lambda n, m, k, g: [_f(n, m, g=g), _f(m, k, g=g)], lambda n, m, k, *_: _nan(n, k), lambda a, b, *_: a @ b,
        {"global reads": lambda n, m, k: 2 * _blocks(m, 16), "global writes": 1},
        (Goal("global loads per FMA", 0.25, fmas=lambda n, m, k: n * m * k),),
        ("Every element of a is read by every block of its row of out: 16 threads of a block read the same one.",
         "Stage a 16 x 16 tile of a and one of b in shared memory per step of m; each thread does 16 FMAs from them.",
         "for (t = 0; t < m; t += 16) { as[ty][tx] = a[row * m + t + tx]; bs[ty][tx] = b[(t + ty) * k + col]; "
         "__syncthreads(); for j < 16: sum += as[ty][j] * bs[j][tx]; __syncthreads(); }"),
        rtol=1e-4, atol=1e-4,
    ),
    Exercise(
        8, "row_sum", "a row sum with shuffles", ("const float* a", "float* out", "int rows", "int cols"),
        ((3, 5), (5, 300), (8, 1024)), lambda r, c: ((r, 1), (128, 1)), lambda r, c, g: [_f(r, c, g=g)],
        lambda r, c, *_: _nan(r), lambda a, *_: a.sum(1),
        {"global reads": lambda r, c: _blocks(c, 128), "global writes": 1}, (NO_DIVERGENCE,),
        ("A tree whose adding threads are every 2nd, 4th, ... lane keeps every warp divergent (the reduction ladder).",
         "Add within each warp with __shfl_down_sync (offsets 16 to 1), then the 4 warps' sums in warp 0.",
         "v += __shfl_down_sync(0xffffffff, v, offset); lane 0 stores warp_sums[warp]; __syncthreads(); warp 0: "
         "v = lane < 4 ? warp_sums[lane] : 0, shuffle again, lane 0 writes out."),
        rtol=1e-5, atol=1e-4,
    ),
    Exercise(
        9, "softmax_warp", "a row softmax, one warp per row", ("const float* x", "float* out", "int rows", "int cols"),
        ((3, 5), (7, 100), (16, 256)), lambda r, c: ((r, 1), (32, 1)), lambda r, c, g: [_f(r, c, g=g)],
        lambda r, c, *_: _nan(r, c), lambda x, *_: torch.softmax(x, 1),
        {"global reads": lambda r, c: 3 * _blocks(c, 32), "global writes": lambda r, c: _blocks(c, 32)}, (SECTORS,),
        ("Three passes over the row (max, sum of exps, output), each a loop of the warp's lanes over the columns.",
         "Lanes stride the row by 32; __shfl_xor_sync (offsets 16 to 1) leaves the max, then the sum, in every lane.",
         "for (c = threadIdx.x; c < cols; c += 32) m = fmaxf(m, row[c]); then m = fmaxf(m, __shfl_xor_sync(0xffffffff, "
         "m, offset)); the same for the sum of expf(row[c] - m); then o[c] = expf(row[c] - m) / sum."),
        rtol=1e-5, atol=1e-6,
    ),
]  # fmt: skip
