"""add2's Python side of torch.library (kernels: add2.cu, binding: add2_binding.cpp).

load_kernel("add2") calls register(ops) for every version it loads, with that version's ops:
- a fake implementation of add2 and of add2_v1 (the same op with the first, plain kernel): the
  output's shape, dtype and device without running the kernel (torch.compile, torch.export and
  opcheck trace with it), after the binding's checks, with its messages (kp.binding's require_floating
  and require_like, the Python side of kernels/common/binding.h);
- their autograd formula, so that the ops themselves are differentiable: dL/da = dL/db = dL/dc.
"""

from kp.binding import require_floating, require_like


def fake(op):
    def add2(a, b):
        require_floating(op, "a", a)
        require_like(op, "b", b, "a", a)
        return a.new_empty(a.shape)  # contiguous, like the kernel's output

    return add2


def register(ops):
    ops.register_fake("add2", fake("add2"))
    ops.register_fake("add2_v1", fake("add2_v1"))  # the same op with the first, plain kernel

    def backward(ctx, grad_c):
        return grad_c, grad_c

    ops.register_autograd("add2", backward)
    ops.register_autograd("add2_v1", backward)
