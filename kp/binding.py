"""The bindings' argument checks in Python, for the fakes in kernels/<op>_ops.py: require_floating,
require_same_kind and require_like are the twins of kp::check_floating, kp::check_same_kind and
kp::check_like (kernels/common/binding.h), with the same conditions and messages, so an error reads the
same traced (a fake) or run (the binding). They raise, as C++'s checks do (TORCH_CHECK's sense); in Python
the name check_* is kept for the verifications that print and assert (kp.verify).

Imports torch only; never loads, builds or prints.
"""

import torch

C10_DTYPE_NAMES = {torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16"}
C10_DTYPE_NAMES |= {torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char"}
C10_DTYPE_NAMES |= {torch.uint8: "Byte", torch.bool: "Bool", torch.complex64: "ComplexFloat"}


def dtype_name(dtype):
    """c10's name of a dtype (Float, Double, Int...), as the bindings' messages give it."""
    return C10_DTYPE_NAMES.get(dtype, str(dtype).removeprefix("torch."))


def require_floating(op, name, t, half=False):
    """`t` is float32 or float64, with `half` float16 or bfloat16 too (the device is the dispatcher's business
    under a fake)."""
    kinds = (torch.float32, torch.float64, torch.float16, torch.bfloat16) if half else (torch.float32, torch.float64)
    words = "float32, float64, float16 or bfloat16" if half else "float32 or float64"
    torch._check(t.dtype in kinds, lambda: f"{op}: {name} must be {words}, got {dtype_name(t.dtype)}")


def require_same_kind(op, name, t, ref_name, ref):
    """`t` has the dtype and the device of `ref`."""
    torch._check(
        t.dtype == ref.dtype,
        lambda: f"{op}: {name} has dtype {dtype_name(t.dtype)} but {ref_name} has {dtype_name(ref.dtype)}",
    )
    torch._check(t.device == ref.device, lambda: f"{op}: {name} is on {t.device} but {ref_name} is on {ref.device}")


def require_like(op, name, t, ref_name, ref, half=False):
    """`t` is a float tensor (`half`: as require_floating) with the dtype, device and shape of `ref`."""
    require_floating(op, name, t, half)
    require_same_kind(op, name, t, ref_name, ref)
    torch._check(
        t.shape == ref.shape, lambda: f"{op}: {name} has shape {list(t.shape)} but {ref_name} has {list(ref.shape)}"
    )
