"""mul_add's Python side of torch.library (kernels: mul_add.cu, binding: mul_add_binding.cpp).

load_kernel("mul_add") calls register(ops) for every version it loads, with that version's ops:
- a fake implementation of mul, mul_backward, add and sum_to: the output's shape, dtype and device
  without running a kernel (torch.compile, torch.export and opcheck trace with it), after the
  binding's checks, with its messages (kp.binding's require_floating and require_same_kind, the Python side
  of kernels/common/binding.h, and broadcast_shape here);
- the autograd formulas of mul and add, so that the ops themselves are differentiable:
  mul: dL/dw = sum_to(dL/dout * x, w.shape), dL/dx = sum_to(dL/dout * w, x.shape) (mul_backward);
  add: dL/dx = sum_to(dL/dout, x.shape), dL/db = sum_to(dL/dout, b.shape).
The fakes do not repeat one runtime check: at most 8 dims after merging (it depends on strides).
"""

import torch

from kp.binding import require_floating, require_same_kind


def broadcast_shape(op, a_name, a, b_name, b):
    """The shape that a and b broadcast to, with the binding's message when they do not."""
    nd = max(a.dim(), b.dim())
    shape = []
    for d in range(nd):
        da, db = d - (nd - a.dim()), d - (nd - b.dim())
        sa = a.shape[da] if da >= 0 else 1
        sb = b.shape[db] if db >= 0 else 1
        torch._check(
            sa == sb or sa == 1 or sb == 1,
            lambda sa=sa, sb=sb, d=d: (
                f"{op}: {a_name} has shape {list(a.shape)} and {b_name} has {list(b.shape)}, which do not "
                f"broadcast (sizes {sa} and {sb} at dim {d} of the result)"
            ),
        )
        shape.append(sb if sa == 1 else sa)
    return shape


def register(ops):
    @ops.register_fake("mul")
    def _(w, x):
        require_floating("mul", "w", w)
        require_floating("mul", "x", x)
        require_same_kind("mul", "x", x, "w", w)
        return w.new_empty(broadcast_shape("mul", "w", w, "x", x))  # contiguous, like the kernel's output

    @ops.register_fake("mul_backward")
    def _(grad_out, w, x, need_w, need_x):
        require_floating("mul_backward", "w", w)
        require_floating("mul_backward", "x", x)
        require_same_kind("mul_backward", "x", x, "w", w)
        require_floating("mul_backward", "grad_out", grad_out)
        require_same_kind("mul_backward", "grad_out", grad_out, "w", w)
        shape = broadcast_shape("mul_backward", "w", w, "x", x)
        torch._check(
            list(grad_out.shape) == shape,
            lambda: f"mul_backward: grad_out has shape {list(grad_out.shape)} but w and x broadcast to {shape}",
        )
        # None (an undefined tensor in C++) for a gradient that is not needed, as the kernel returns.
        return (w.new_empty(w.shape) if need_w else None, w.new_empty(x.shape) if need_x else None)

    @ops.register_fake("add")
    def _(x, b):
        require_floating("add", "x", x)
        require_floating("add", "b", b)
        require_same_kind("add", "b", b, "x", x)
        return x.new_empty(broadcast_shape("add", "x", x, "b", b))

    @ops.register_fake("sum_to")
    def _(grad, shape):
        require_floating("sum_to", "grad", grad)
        lead = grad.dim() - len(shape)
        torch._check(
            lead >= 0 and all(s == 1 or s == grad.shape[lead + j] for j, s in enumerate(shape)),
            lambda: f"sum_to: shape {list(shape)} does not broadcast to grad's shape {list(grad.shape)}",
        )
        return grad.new_empty(shape)

    def save_inputs(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def mul_backward(ctx, grad_out):
        w, x = ctx.saved_tensors
        return ops.mul_backward(grad_out, w, x, *ctx.needs_input_grad)

    ops.register_autograd("mul", mul_backward, setup_context=save_inputs)

    def save_shapes(ctx, inputs, output):
        x, b = inputs
        ctx.x_shape, ctx.b_shape = list(x.shape), list(b.shape)  # the gradient does not depend on x or b

    def add_backward(ctx, grad_out):
        grad_x = ops.sum_to(grad_out, ctx.x_shape) if ctx.needs_input_grad[0] else None
        grad_b = ops.sum_to(grad_out, ctx.b_shape) if ctx.needs_input_grad[1] else None
        return grad_x, grad_b

    ops.register_autograd("add", add_backward, setup_context=save_shapes)
