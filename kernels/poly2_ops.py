"""poly2's Python side of torch.library (kernels: poly2.cu, binding: poly2_binding.cpp).

load_kernel("poly2") calls register(ops) for every version it loads, with that version's ops:
- a fake implementation of poly2 and poly2_backward: the output's shape, dtype and device without
  running a kernel (torch.compile, torch.export and opcheck trace with it), after the binding's
  checks, with its messages;
- the autograd formula of poly2, so that the op itself is differentiable:
  dL/dx = dL/dy * (2x + 2), computed by poly2_backward from the saved x.
"""

import torch

C10_NAMES = {torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16"}
C10_NAMES |= {torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char", torch.uint8: "Byte"}


def name_of(dtype):
    """c10's name of a dtype (Float, Double, Int...), which the binding's messages use."""
    return C10_NAMES.get(dtype, str(dtype))


def check_floating(op, name, t):
    torch._check(
        t.dtype in (torch.float32, torch.float64),
        lambda: f"{op}: {name} must be float32 or float64, got {name_of(t.dtype)}",
    )


def check_like(op, name, t, ref_name, ref):
    """Like the binding's check_like; the device is named as torch names it (cpu, meta, cuda:0)."""
    check_floating(op, name, t)
    torch._check(
        t.dtype == ref.dtype,
        lambda: f"{op}: {name} has dtype {name_of(t.dtype)} but {ref_name} has {name_of(ref.dtype)}",
    )
    torch._check(t.device == ref.device, lambda: f"{op}: {name} is on {t.device} but {ref_name} is on {ref.device}")
    torch._check(
        t.shape == ref.shape,
        lambda: f"{op}: {name} has shape {list(t.shape)} but {ref_name} has {list(ref.shape)}",
    )


def register(ops):
    @ops.register_fake("poly2")
    def _(x):
        check_floating("poly2", "x", x)
        return x.new_empty(x.shape)  # contiguous, like the kernel's output

    @ops.register_fake("poly2_backward")
    def _(grad_y, x):
        check_floating("poly2_backward", "x", x)
        check_like("poly2_backward", "grad_y", grad_y, "x", x)
        return x.new_empty(x.shape)

    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)  # the derivative 2x + 2 needs x

    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        return ops.poly2_backward(grad_y, x) if ctx.needs_input_grad[0] else None

    ops.register_autograd("poly2", backward, setup_context=setup_context)
