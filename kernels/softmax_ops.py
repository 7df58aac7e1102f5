"""softmax's Python side of torch.library (kernels: softmax.cu, binding: softmax_binding.cpp).

load_kernel("softmax") calls register(ops) for every version it loads: a fake implementation of each op (the
output's shape, dtype and device without running a kernel; torch.compile, torch.export and opcheck trace with it),
after the binding's checks with its messages, and the autograd formula of `softmax`: dL/dx = y (g - rowsum(g y)),
by softmax_backward's kernel, from the saved output y alone (x is not needed).
"""

from kp.binding import require_floating, require_like

VERSIONS = 5


def require_rows(op, name, t):
    require_floating(op, name, t, half=True)
    if t.dim() != 2:
        raise RuntimeError(f"{op}: {name} must be a matrix (rows, columns), got shape {list(t.shape)}")


def fake(x, version=VERSIONS):
    require_rows("softmax", "x", x)
    if not 1 <= version <= VERSIONS:
        raise RuntimeError(f"softmax: version must be 1 to {VERSIONS}, got {version}")
    return x.new_empty(x.shape)


def fake_backward(grad_y, y):
    require_rows("softmax_backward", "y", y)
    require_like("softmax_backward", "grad_y", grad_y, "y", y, half=True)
    return y.new_empty(y.shape)


def register(ops):
    ops.register_fake("softmax", fake)
    ops.register_fake("softmax_backward", fake_backward)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)  # y alone: the gradient needs neither x nor the version

    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return (ops.softmax_backward(grad, y) if ctx.needs_input_grad[0] else None), None

    ops.register_autograd("softmax", backward, setup_context=setup_context)
