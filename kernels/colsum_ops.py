"""colsum's Python side of torch.library (kernels: colsum.cu, binding: colsum_binding.cpp).

load_kernel("colsum") calls register(ops) for every version it loads: a fake implementation (the output's shape,
dtype and device without running a kernel: torch.compile, torch.export and opcheck trace with it), after the
binding's checks, and the autograd formula: the gradient of a column sum is the output's gradient, repeated down
every row.
"""

from kp.binding import require_floating


def fake(x, version=5):
    require_floating("colsum", "x", x)
    if x.dim() != 2:
        raise RuntimeError(f"colsum: x must be a matrix (rows, columns), got shape {list(x.shape)}")
    if not 1 <= version <= 5:
        raise RuntimeError(f"colsum: version must be 1 to 5, got {version}")
    return x.new_empty(x.shape[1])


def register(ops):
    ops.register_fake("colsum", fake)

    def setup_context(ctx, inputs, output):
        ctx.rows = inputs[0].shape[0]

    def backward(ctx, grad):
        return grad.expand(ctx.rows, -1), None

    ops.register_autograd("colsum", backward, setup_context=setup_context)
