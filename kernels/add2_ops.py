"""add2's Python side of torch.library (kernels: add2.cu, binding: add2_binding.cpp).

load_kernel("add2") calls register(ops) for every version it loads, with that version's ops:
- a fake implementation: the output's shape, dtype and device without running the kernel, which
  torch.compile, torch.export and opcheck trace with;
- the autograd formula, so that the op itself is differentiable: dL/da = dL/db = dL/dc.
"""

import torch


def register(ops):
    @ops.register_fake("add2")
    def _(a, b):
        torch._check(a.shape == b.shape, lambda: f"add2: b has shape {list(b.shape)} but a has {list(a.shape)}")
        return a.new_empty(a.shape)  # contiguous, like the kernel's output

    def backward(ctx, grad_c):
        return grad_c, grad_c

    ops.register_autograd("add2", backward)
