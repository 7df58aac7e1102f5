"""layernorm's Python side of torch.library (kernels: layernorm.cu, binding: layernorm_binding.cpp).

load_kernel("layernorm") calls register(ops) for every version it loads: a fake implementation of each op (the
outputs' shapes, dtypes and devices without running a kernel), after the binding's checks with its messages, and
the autograd formula of `layernorm`: one call of layernorm_backward's kernels gives dL/dx (one warp per row) and
dL/dweight, dL/dbias (column sums) from y's gradient; the saved mean and rstd are outputs too, and where a loss uses
them their gradients add to dL/dx in torch's own ops (rare: a short formula, not a kernel).
"""

import torch

from kp.binding import dtype_name, require_floating, require_like, require_same_kind


def stat_dtype(x):
    """mean's and rstd's dtype: the kernels' accumulation type (float32, or float64 for float64)."""
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def require_rows(op, x, weight):
    require_floating(op, "x", x, half=True)
    if x.dim() != 2:
        raise RuntimeError(f"{op}: x must be a matrix (rows, columns), got shape {list(x.shape)}")
    if x.shape[1] < 1:
        raise RuntimeError(f"{op}: x must have at least one column, got shape {list(x.shape)}")
    require_floating(op, "weight", weight, half=True)
    require_same_kind(op, "weight", weight, "x", x)
    if weight.dim() != 1 or weight.shape[0] != x.shape[1]:
        raise RuntimeError(
            f"{op}: weight has shape {list(weight.shape)} but x has {list(x.shape)}: one weight per column"
        )


def fake(x, weight, bias, eps=1e-5):
    require_rows("layernorm", x, weight)
    require_like("layernorm", "bias", bias, "weight", weight, half=True)
    if eps < 0:
        raise RuntimeError(f"layernorm: eps must be at least 0, got {eps:f}")
    stats = x.new_empty(x.shape[0], dtype=stat_dtype(x))
    return x.new_empty(x.shape), stats, torch.empty_like(stats)


def fake_backward(grad_y, x, weight, mean, rstd):
    op = "layernorm_backward"
    require_rows(op, x, weight)
    require_like(op, "grad_y", grad_y, "x", x, half=True)
    torch._check(
        mean.dtype == stat_dtype(x),
        lambda: (
            f"{op}: mean has dtype {dtype_name(mean.dtype)} but x has {dtype_name(x.dtype)}: mean and rstd are "
            f"{dtype_name(stat_dtype(x))}, as layernorm returns them"
        ),
    )
    torch._check(mean.device == x.device, lambda: f"{op}: mean is on {mean.device} but x is on {x.device}")
    if mean.dim() != 1 or mean.shape[0] != x.shape[0]:
        raise RuntimeError(f"{op}: mean has shape {list(mean.shape)} but x has {list(x.shape)}: one mean per row")
    require_like(op, "rstd", rstd, "mean", mean, half=True)
    return x.new_empty(x.shape), x.new_empty(x.shape[1]), x.new_empty(x.shape[1])


def register(ops):
    ops.register_fake("layernorm", fake)
    ops.register_fake("layernorm_backward", fake_backward)

    def setup_context(ctx, inputs, output):
        x, weight, _, _ = inputs
        _, mean, rstd = output
        ctx.set_materialize_grads(False)  # an unused output's gradient stays None: no work for it
        ctx.save_for_backward(x, weight, mean, rstd)

    def backward(ctx, grad_y, grad_mean, grad_rstd):
        x, weight, mean, rstd = ctx.saved_tensors
        need_x, need_weight, need_bias = ctx.needs_input_grad[:3]
        dx = dw = db = None
        if grad_y is not None and (need_x or need_weight or need_bias):
            dx, dw, db = ops.layernorm_backward(grad_y, x, weight, mean, rstd)
        if need_x and (grad_mean is not None or grad_rstd is not None):
            # The statistics are outputs too: d mean / dx[r, c] = 1 / C, d rstd / dx[r, c] = -rstd³ (x - mean) / C.
            extra = torch.zeros_like(x)
            if grad_mean is not None:
                extra = extra + grad_mean[:, None] / x.shape[1]
            if grad_rstd is not None:
                extra = extra - (grad_rstd * rstd**3)[:, None] * (x - mean[:, None]) / x.shape[1]
            extra = extra.to(x.dtype)  # the statistics are float32 for a 16-bit x
            dx = extra if dx is None else dx + extra
        return dx if need_x else None, dw if need_weight else None, db if need_bias else None, None

    ops.register_autograd("layernorm", backward, setup_context=setup_context)
