"""linear_ladder's Python side of torch.library (kernels: linear_ladder.cu, binding: linear_ladder_binding.cpp).

load_kernel("linear_ladder") calls register(ops) for every version it loads: a fake implementation (the output's
shape, dtype and device without running a kernel), after the binding's checks, and the autograd formula, in torch's
own ops (the ladder's kernels are forward products; notebook 05's `linear` has backward kernels of its own):
dL/dx = G W, dL/dw = Gᵀ x, dL/db = the column sums of G.
"""

from kp.binding import require_floating


def fake(x, w, b, version=6):
    require_floating("linear_ladder", "x", x)
    if x.dim() != 2 or w.dim() != 2 or b.dim() != 1 or w.shape[1] != x.shape[1] or b.shape[0] != w.shape[0]:
        raise RuntimeError(f"linear_ladder: w {list(w.shape)} and b {list(b.shape)} do not fit x {list(x.shape)}")
    if not 1 <= version <= 6:
        raise RuntimeError(f"linear_ladder: version must be 1 to 6, got {version}")
    return x.new_empty(x.shape[0], w.shape[0])


def register(ops):
    ops.register_fake("linear_ladder", fake)

    def setup_context(ctx, inputs, output):
        x, w, _, _ = inputs
        ctx.save_for_backward(x, w)

    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad @ w, grad.T @ x, grad.sum(0), None

    ops.register_autograd("linear_ladder", backward, setup_context=setup_context)
