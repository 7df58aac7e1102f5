"""add2's Python side of torch.library (kernels: add2.cu, binding: add2_binding.cpp).

load_kernel("add2") calls register(ops) for every version it loads, with that version's ops:
- a fake implementation: the output's shape, dtype and device without running the kernel
  (torch.compile, torch.export and opcheck trace with it), after the binding's checks, with its
  messages;
- the autograd formula, so that the op itself is differentiable: dL/da = dL/db = dL/dc.
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
    @ops.register_fake("add2")
    def _(a, b):
        check_floating("add2", "a", a)
        check_like("add2", "b", b, "a", a)
        return a.new_empty(a.shape)  # contiguous, like the kernel's output

    def backward(ctx, grad_c):
        return grad_c, grad_c

    ops.register_autograd("add2", backward)
