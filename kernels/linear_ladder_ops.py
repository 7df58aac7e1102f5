"""linear_ladder's Python side of torch.library (kernels: linear_ladder.cu, binding: linear_ladder_binding.cpp).

load_kernel("linear_ladder") calls register(ops) for every version it loads: a fake implementation (the output's
shape, dtype and device without running a kernel), after the binding's checks, and the autograd formula, in torch's
own ops (the ladder's kernels are forward products; notebook 05's `linear` has backward kernels of its own):
dL/dx = G W, dL/dw = Gᵀ x, dL/db = the column sums of G.

Version 7 takes one of the tile configurations TILES (`linear_ladder(x, w, b, 7, tiles)`, an index into it;
DEFAULT_TILES where not given). register(ops) also hands them out with the ops: `ops.tiles` (TILES) and
`ops.autotune(x, w, b)`, which times each configuration on these inputs (measured on a GPU, modelled elsewhere).
"""

from typing import NamedTuple

from kp.bench import median_ms
from kp.binding import require_floating
from kp.gpumodel.profile import modelled

VERSIONS = 7


class Tiles(NamedTuple):
    """One tile configuration of version 7: a block computes bm x bn outputs of Y in steps of bk along k, each of its
    threads a tm x tn fragment."""

    bm: int
    bn: int
    bk: int
    tm: int
    tn: int

    @property
    def threads(self):
        return self.bm // self.tm * (self.bn // self.tn)

    def __str__(self):
        return f"{self.bm}x{self.bn}, BK={self.bk}, {self.tm}x{self.tn} per thread, {self.threads} threads"


# linear_ladder.cu's linear_v7_launch, case by case, in its order (a test holds the two to the same numbers).
TILES = (
    Tiles(64, 64, 8, 4, 4),
    Tiles(128, 64, 8, 8, 4),
    Tiles(64, 128, 8, 4, 8),
    Tiles(128, 128, 8, 8, 8),
    Tiles(128, 128, 16, 8, 8),
)
# The binding's default (`tiles=` in its schema): at 4096³ float32 the GPU model (H100) has it tied with tiles 3 for
# the fastest (autotune's min picks 3); its BK = 16 halves the barriers per k. An H100 measurement is to decide.
DEFAULT_TILES = 4


def fake(x, w, b, version=VERSIONS, tiles=DEFAULT_TILES):
    require_floating("linear_ladder", "x", x)
    if x.dim() != 2 or w.dim() != 2 or b.dim() != 1 or w.shape[1] != x.shape[1] or b.shape[0] != w.shape[0]:
        raise RuntimeError(f"linear_ladder: w {list(w.shape)} and b {list(b.shape)} do not fit x {list(x.shape)}")
    if not 1 <= version <= VERSIONS:
        raise RuntimeError(f"linear_ladder: version must be 1 to {VERSIONS}, got {version}")
    if not 0 <= tiles < len(TILES):
        raise RuntimeError(
            f"linear_ladder: tiles must be 0 to {len(TILES) - 1} (version 7's tile configurations), got {tiles}"
        )
    return x.new_empty(x.shape[0], w.shape[0])


def autotune(ladder, x, w, b, gpu="H100", max_blocks=8):
    """(the index into TILES of version 7's fastest configuration for x, w, b; {index: seconds} of each). On CUDA
    tensors each configuration is measured (CUDA events: kp.bench.median_ms, the median of 25 runs after 3 warm-up
    runs); elsewhere it is modelled on `gpu` by the GPU model (kp.gpumodel.profile, counting at most about `max_blocks`
    blocks of each launch, with 2·M·N·K FLOPs), which needs `ladder` loaded in check mode:
    load_kernel("linear_ladder", check=True)."""
    if x.is_cuda:
        seconds = {i: median_ms(ladder.linear_ladder, (x, w, b, 7, i))[0] / 1e3 for i in range(len(TILES))}
    else:
        flops = 2 * x.shape[0] * x.shape[1] * w.shape[0]
        model = modelled(ladder.linear_ladder, gpu, max_blocks, flops=lambda *_: flops)
        seconds = {i: model(x, w, b, 7, i) for i in range(len(TILES))}
    return min(seconds, key=seconds.get), seconds


def register(ops):
    ops.register_fake("linear_ladder", fake)
    ops.tiles = TILES
    ops.autotune = lambda x, w, b, **kwargs: autotune(ops, x, w, b, **kwargs)

    def setup_context(ctx, inputs, output):
        x, w, *_ = inputs
        ctx.save_for_backward(x, w)

    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad @ w, grad.T @ x, grad.sum(0), None, None

    ops.register_autograd("linear_ladder", backward, setup_context=setup_context)
