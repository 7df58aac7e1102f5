"""involution's Python side of torch.library (kernels: involution.cu, binding: involution_binding.cpp).

load_kernel("involution") calls register(ops) for every version it loads, with that version's ops:
- a fake implementation of each of the three ops: the output's shape and dtype (contiguous, like the
  kernels' outputs), after the binding's checks, with its messages (dtypes and devices through
  kp.binding's require_floating and require_same_kind, the Python side of kernels/common/binding.h; sizes and
  hyperparameters here), without running a kernel; torch.compile, torch.export and opcheck trace
  with these. Output sizes: H_out = (H + 2·padding − span) // stride + 1,
  span = dilation·(K − 1) + 1 the dilated kernel's extent, and the same for W_out;
- the autograd formula of `involution`, so that the op itself is differentiable, launching only the
  gradient kernels autograd asks for: dL/dinput (involution_grad_input, which reads the weight) and
  dL/dweight (involution_grad_weight, which reads the input).
"""

import torch

from kp.binding import require_floating, require_same_kind


def require_pair(op, a_name, a, b_name, b):
    """`a` and `b`: float32/float64 tensors of one dtype, on one device."""
    require_floating(op, a_name, a)
    require_floating(op, b_name, b)
    require_same_kind(op, b_name, b, a_name, a)


def require_dims(op, name, t, dims, layout):
    torch._check(t.dim() == dims, lambda: f"{op}: {name} must be {dims}-D {layout}, got shape {list(t.shape)}")


def require_size(op, name, t, dim, what, expected, ref):
    """`name`'s size along `dim` (`what`) equals `expected`, which `ref` gave."""
    torch._check(
        t.shape[dim] == expected,
        lambda: f"{op}: {name} has {what} {t.shape[dim]} (dim {dim}) but {ref} has {expected}",
    )


def require_hyper(op, stride, padding, dilation):
    torch._check(stride >= 1, lambda: f"{op}: stride must be >= 1, got {stride}")
    torch._check(padding >= 0, lambda: f"{op}: padding must be >= 0, got {padding}")
    torch._check(dilation >= 1, lambda: f"{op}: dilation must be >= 1, got {dilation}")


def require_groups(op, c_name, C, G, g_what):
    """`C` channels (of `c_name`) in `G` groups, as `g_what` says."""
    torch._check(G >= 1, lambda: f"{op}: {g_what}, but there must be at least 1 group")
    torch._check(C % G == 0, lambda: f"{op}: {c_name} has C = {C} channels, which {g_what} do not divide")


def require_kernel(op, KH, KW, k_what):
    torch._check(KH >= 1 and KW >= 1, lambda: f"{op}: {k_what} = {KH} x {KW}, but the kernel must be at least 1 x 1")


def out_size(op, dim, size, k, stride, padding, dilation):
    """The output size along one dimension, after checking that the dilated kernel fits in the padded input."""
    span = dilation * (k - 1) + 1
    torch._check(
        size + 2 * padding >= span,
        lambda: (
            f"{op}: the input {dim} {size} plus 2 * padding {padding} is smaller than the dilated kernel's "
            f"{span} (dilation * (K - 1) + 1)"
        ),
    )
    return (size + 2 * padding - span) // stride + 1


def require_out(op, name, t, dh, H, W, KH, KW, stride, padding, dilation):
    """`name`'s output sizes, dims `dh` and `dh + 1`, are what an H x W input gives."""
    H_out = out_size(op, "height", H, KH, stride, padding, dilation)
    W_out = out_size(op, "width", W, KW, stride, padding, dilation)
    torch._check(
        t.shape[dh] == H_out and t.shape[dh + 1] == W_out,
        lambda: (
            f"{op}: {name} has H_out x W_out = {t.shape[dh]} x {t.shape[dh + 1]} (dims {dh}, {dh + 1}), but an "
            f"input of {H} x {W} with a {KH} x {KW} kernel, stride {stride}, padding {padding} and dilation {dilation} "
            f"gives {H_out} x {W_out}"
        ),
    )


def register(ops):
    @ops.register_fake("involution")
    def _(input, weight, stride=1, padding=0, dilation=1):
        op = "involution"
        require_pair(op, "input", input, "weight", weight)
        require_dims(op, "input", input, 4, "(N, C, H, W)")
        require_dims(op, "weight", weight, 6, "(N, G, KH, KW, H_out, W_out)")
        require_hyper(op, stride, padding, dilation)
        N, C, H, W = input.shape
        G, KH, KW = weight.shape[1:4]
        require_size(op, "weight", weight, 0, "batch size", N, "input")
        require_groups(op, "input", C, G, f"weight's G = {G} groups (dim 1)")
        require_kernel(op, KH, KW, "weight's KH x KW (dims 2, 3)")
        require_out(op, "weight", weight, 4, H, W, KH, KW, stride, padding, dilation)
        return input.new_empty(N, C, weight.shape[4], weight.shape[5])

    @ops.register_fake("involution_grad_input")
    def _(grad_out, weight, height, width, stride=1, padding=0, dilation=1):
        op = "involution_grad_input"
        require_pair(op, "grad_out", grad_out, "weight", weight)
        require_dims(op, "grad_out", grad_out, 4, "(N, C, H_out, W_out)")
        require_dims(op, "weight", weight, 6, "(N, G, KH, KW, H_out, W_out)")
        require_hyper(op, stride, padding, dilation)
        torch._check(
            height >= 0 and width >= 0, lambda: f"{op}: height and width must be >= 0, got {height} and {width}"
        )
        N, C = grad_out.shape[:2]
        G, KH, KW = weight.shape[1:4]
        require_size(op, "weight", weight, 0, "batch size", N, "grad_out")
        require_groups(op, "grad_out", C, G, f"weight's G = {G} groups (dim 1)")
        require_kernel(op, KH, KW, "weight's KH x KW (dims 2, 3)")
        require_out(op, "weight", weight, 4, height, width, KH, KW, stride, padding, dilation)
        require_size(op, "grad_out", grad_out, 2, "H_out", weight.shape[4], "weight")
        require_size(op, "grad_out", grad_out, 3, "W_out", weight.shape[5], "weight")
        return grad_out.new_empty(N, C, height, width)

    @ops.register_fake("involution_grad_weight")
    def _(grad_out, input, groups, kernel_h, kernel_w, stride=1, padding=0, dilation=1):
        op = "involution_grad_weight"
        require_pair(op, "grad_out", grad_out, "input", input)
        require_dims(op, "grad_out", grad_out, 4, "(N, C, H_out, W_out)")
        require_dims(op, "input", input, 4, "(N, C, H, W)")
        require_hyper(op, stride, padding, dilation)
        N, C, H, W = input.shape
        require_size(op, "grad_out", grad_out, 0, "batch size", N, "input")
        require_size(op, "grad_out", grad_out, 1, "channels", C, "input")
        require_groups(op, "input", C, groups, f"groups = {groups}")
        require_kernel(op, kernel_h, kernel_w, "kernel_h x kernel_w")
        require_out(op, "grad_out", grad_out, 2, H, W, kernel_h, kernel_w, stride, padding, dilation)
        return input.new_empty(N, groups, kernel_h, kernel_w, grad_out.shape[2], grad_out.shape[3])

    def setup_context(ctx, inputs, output):
        input, weight, stride, padding, dilation = inputs
        # dL/dinput reads the weight, dL/dweight the input: save each only when its gradient is wanted.
        ctx.save_for_backward(weight if ctx.needs_input_grad[0] else None, input if ctx.needs_input_grad[1] else None)
        ctx.geometry = (*input.shape[2:], *weight.shape[1:4], stride, padding, dilation)  # H, W, G, KH, KW, ...

    def backward(ctx, grad_out):
        weight, input = ctx.saved_tensors
        H, W, G, KH, KW, stride, padding, dilation = ctx.geometry
        grad_input = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_input = ops.involution_grad_input(grad_out, weight, H, W, stride, padding, dilation)
        if ctx.needs_input_grad[1]:
            grad_weight = ops.involution_grad_weight(grad_out, input, G, KH, KW, stride, padding, dilation)
        return grad_input, grad_weight, None, None, None

    ops.register_autograd("involution", backward, setup_context=setup_context)
