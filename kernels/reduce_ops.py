"""reduce's Python side of torch.library (kernels: reduce.cu, binding: reduce_binding.cpp).

load_kernel("reduce") calls register(ops) for every version it loads: a fake implementation (a 0-dimensional output
of x's dtype and device without running a kernel: torch.compile, torch.export and opcheck trace with it), after the
binding's checks, and the autograd formula: the gradient of a sum is the output's gradient, repeated over x's shape.
"""

from kp.binding import require_floating


def fake(x, version=6):
    require_floating("reduce_sum", "x", x)
    if not 1 <= version <= 6:
        raise RuntimeError(f"reduce_sum: version must be 1 to 6, got {version}")
    return x.new_empty(())


def register(ops):
    ops.register_fake("reduce_sum", fake)

    def setup_context(ctx, inputs, output):
        ctx.shape = inputs[0].shape

    def backward(ctx, grad):
        return grad.expand(ctx.shape), None

    ops.register_autograd("reduce_sum", backward, setup_context=setup_context)
