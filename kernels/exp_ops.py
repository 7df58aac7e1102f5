"""exp's Python side of torch.library (kernels: exp.cu, binding: exp_binding.cpp).

load_kernel("exp") calls register(ops) for every version it loads, with that version's ops:
- a fake implementation of exp and exp_backward: the output's shape, dtype and device without
  running a kernel (torch.compile, torch.export and opcheck trace with it), after the binding's
  checks, with its messages (kp.binding's require_floating and require_like, the Python side of
  kernels/common/binding.h);
- the autograd formula of exp, so that the op itself is differentiable:
  dL/dx = dL/dy * y, computed by exp_backward from the saved output y.
"""

from kp.binding import require_floating, require_like


def register(ops):
    @ops.register_fake("exp")
    def _(x):
        require_floating("exp", "x", x)
        return x.new_empty(x.shape)  # contiguous, like the kernel's output

    @ops.register_fake("exp_backward")
    def _(grad_y, y):
        require_floating("exp_backward", "y", y)
        require_like("exp_backward", "grad_y", grad_y, "y", y)
        return y.new_empty(y.shape)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)  # the derivative is the output itself

    def backward(ctx, grad_y):
        (y,) = ctx.saved_tensors
        return ops.exp_backward(grad_y, y) if ctx.needs_input_grad[0] else None

    ops.register_autograd("exp", backward, setup_context=setup_context)
