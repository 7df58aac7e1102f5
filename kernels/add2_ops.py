"""add2's Python side of torch.library (kernels: add2.cu, binding: add2_binding.cpp).

load_kernel("add2") calls register(ops) for every version it loads, with that version's ops:
- a fake implementation: the output's shape, dtype and device without running the kernel
  (torch.compile, torch.export and opcheck trace with it), after the binding's checks, with its
  messages (helpers' check_floating and check_like, the Python side of kernels/common/binding.h);
- the autograd formula, so that the op itself is differentiable: dL/da = dL/db = dL/dc.
"""

from helpers import check_floating, check_like


def register(ops):
    @ops.register_fake("add2")
    def _(a, b):
        check_floating("add2", "a", a)
        check_like("add2", "b", b, "a", a)
        return a.new_empty(a.shape)  # contiguous, like the kernel's output

    def backward(ctx, grad_c):
        return grad_c, grad_c

    ops.register_autograd("add2", backward)
