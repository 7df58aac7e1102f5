"""template_op's Python side of torch.library (by `make new-op`; kernels: template_op.cu).

A new f needs no change here. A new argument does: the fakes' parameters, setup_context and backward's
returns (one per forward input: None for a float).

load_kernel("template_op") calls register(ops) for every version it loads, with that version's ops:
- a fake implementation of template_op and of template_op_backward: the output's shape, dtype
  and device without running a kernel (torch.compile, torch.export and opcheck trace with it), after
  the binding's checks, with its messages (kp.binding's require_floating and require_like, the Python
  side of kernels/common/binding.h);
- the autograd formula of template_op, so that the op itself is differentiable:
  dL/dx = dL/dy * df(x, alpha), computed by template_op_backward from the saved x.
"""

from kp.binding import require_floating, require_like


def register(ops):
    @ops.register_fake("template_op")
    def _(x, alpha):
        require_floating("template_op", "x", x)
        return x.new_empty(x.shape)  # contiguous, like the kernel's output

    @ops.register_fake("template_op_backward")
    def _(grad_y, x, alpha):
        require_floating("template_op_backward", "x", x)
        require_like("template_op_backward", "grad_y", grad_y, "x", x)
        return x.new_empty(x.shape)

    def setup_context(ctx, inputs, output):
        x, alpha = inputs  # scalar-only
        # plain: (x,) = inputs
        ctx.save_for_backward(x)  # df needs x
        ctx.alpha = alpha  # a float: kept on ctx, not saved as a tensor  # scalar-only

    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        grad_x = ops.template_op_backward(grad_y, x, ctx.alpha) if ctx.needs_input_grad[0] else None
        return grad_x, None  # alpha is a constant: no gradient  # scalar-only
        # plain: return grad_x

    ops.register_autograd("template_op", backward, setup_context=setup_context)
