"""linear's Python side of torch.library (kernels: linear.cu, binding: linear_binding.cpp).

load_kernel("linear") calls register(ops) for every version it loads, with that version's ops:
- a fake implementation of each of the four ops: the output's shape and dtype (contiguous, like the
  kernels' outputs), after the binding's checks, with its messages (dtypes and devices through
  kp.binding's require_floating and require_same_kind, the Python side of kernels/common/binding.h; shapes
  and the grid's column limit here), without running a kernel; torch.compile, torch.export (so the
  ONNX exporter) and opcheck trace with these;
- the autograd formula of `linear`, so that the op itself is differentiable, launching only the
  gradient kernels autograd asks for: dL/dX = G·W (linear_grad_input), dL/dW = Gᵀ·X
  (linear_grad_weight), dL/db = the column sums of G (linear_grad_bias).
"""

import torch

from kp.binding import require_floating, require_same_kind

# linear.cu puts output columns on grid.y: at most 65535 tiles of 16 (the binding's kMaxColumns).
MAX_COLUMNS = 65535 * 16


def require_matrix(op, name, t, dim, layout):
    """`t` is a float32/float64 tensor of `dim` dimensions (`layout` names them)."""
    require_floating(op, name, t)
    torch._check(t.dim() == dim, lambda: f"{op}: {name} must be {dim}-D {layout}, got shape {list(t.shape)}")


def require_sizes_match(op, a_name, a, d, b_name, b, e, what):
    """Dimension `d` of `a` equals dimension `e` of `b`."""
    torch._check(
        a.shape[d] == b.shape[e],
        lambda: f"{op}: {a_name} has shape {list(a.shape)} but {b_name} has {list(b.shape)}: {what} must match",
    )


def require_columns(op, name, columns, what):
    torch._check(
        columns <= MAX_COLUMNS,
        lambda: f"{op}: {name} has {columns} {what}, more than the kernels' grid takes ({MAX_COLUMNS})",
    )


def register(ops):
    @ops.register_fake("linear")
    def _(input, weight, bias):
        op = "linear"
        require_matrix(op, "input", input, 2, "(batch, in_features)")
        require_matrix(op, "weight", weight, 2, "(out_features, in_features)")
        require_matrix(op, "bias", bias, 1, "(out_features)")
        require_same_kind(op, "weight", weight, "input", input)
        require_same_kind(op, "bias", bias, "input", input)
        require_sizes_match(op, "weight", weight, 1, "input", input, 1, "their in_features (last dimensions)")
        require_sizes_match(op, "bias", bias, 0, "weight", weight, 0, "their out_features (first dimensions)")
        require_columns(op, "weight", weight.shape[0], "out_features")
        require_columns(op, "input", input.shape[1], "in_features")  # the backward's column count
        return input.new_empty(input.shape[0], weight.shape[0])

    @ops.register_fake("linear_grad_input")
    def _(grad_output, weight):
        op = "linear_grad_input"
        require_matrix(op, "grad_output", grad_output, 2, "(batch, out_features)")
        require_matrix(op, "weight", weight, 2, "(out_features, in_features)")
        require_same_kind(op, "weight", weight, "grad_output", grad_output)
        what = "their out_features (weight's first, grad_output's last dimension)"
        require_sizes_match(op, "weight", weight, 0, "grad_output", grad_output, 1, what)
        require_columns(op, "weight", weight.shape[1], "in_features")
        return grad_output.new_empty(grad_output.shape[0], weight.shape[1])

    @ops.register_fake("linear_grad_weight")
    def _(grad_output, input):
        op = "linear_grad_weight"
        require_matrix(op, "grad_output", grad_output, 2, "(batch, out_features)")
        require_matrix(op, "input", input, 2, "(batch, in_features)")
        require_same_kind(op, "input", input, "grad_output", grad_output)
        require_sizes_match(
            op, "input", input, 0, "grad_output", grad_output, 0, "their batch sizes (first dimensions)"
        )
        require_columns(op, "input", input.shape[1], "in_features")
        return grad_output.new_empty(grad_output.shape[1], input.shape[1])

    @ops.register_fake("linear_grad_bias")
    def _(grad_output):
        require_matrix("linear_grad_bias", "grad_output", grad_output, 2, "(batch, out_features)")
        return grad_output.new_empty(grad_output.shape[1])

    def setup_context(ctx, inputs, output):
        input, weight, _ = inputs
        # dL/dX needs W, dL/dW needs X, dL/db neither: save only what the wanted gradients read.
        ctx.save_for_backward(input if ctx.needs_input_grad[1] else None, weight if ctx.needs_input_grad[0] else None)

    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        need_input, need_weight, need_bias = ctx.needs_input_grad
        grad_input = ops.linear_grad_input(grad_output, weight) if need_input else None
        grad_weight = ops.linear_grad_weight(grad_output, input) if need_weight else None
        grad_bias = ops.linear_grad_bias(grad_output) if need_bias else None
        return grad_input, grad_weight, grad_bias

    ops.register_autograd("linear", backward, setup_context=setup_context)
