"""poly2's Python side of torch.library (kernels: poly2.cu, binding: poly2_binding.cpp).

load_kernel("poly2") calls register(ops) for every version it loads, with that version's ops:
- a fake implementation of poly2 and poly2_backward: the output's shape, dtype and device without
  running a kernel (torch.compile, torch.export and opcheck trace with it), after the binding's
  checks, with its messages (kp.binding's require_floating and require_like, the Python side of
  kernels/common/binding.h);
- the autograd formula of poly2, so that the op itself is differentiable:
  dL/dx = dL/dy * (2x + 2), computed by poly2_backward from the saved x.
"""

from kp.binding import require_floating, require_like


def register(ops):
    @ops.register_fake("poly2")
    def _(x):
        require_floating("poly2", "x", x, half=True)  # the kernels take float16 and bfloat16 too
        return x.new_empty(x.shape)  # contiguous, like the kernel's output

    @ops.register_fake("poly2_backward")
    def _(grad_y, x):
        require_floating("poly2_backward", "x", x, half=True)
        require_like("poly2_backward", "grad_y", grad_y, "x", x, half=True)
        return x.new_empty(x.shape)

    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)  # the derivative 2x + 2 needs x

    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        return ops.poly2_backward(grad_y, x) if ctx.needs_input_grad[0] else None

    ops.register_autograd("poly2", backward, setup_context=setup_context)
