"""attention's Python side of torch.library (kernels: attention.cu, binding: attention_binding.cpp).

load_kernel("attention") calls register(ops) for every version it loads: a fake implementation of each op (the
outputs' shapes, dtypes and devices without running a kernel), after the binding's checks with its messages, and
the autograd formula of `attention`: attention_backward's kernels (flash-attention-2's backward, P recomputed from
q, k and the saved log-sum-exp) give dq, dk and dv from o's gradient and, since the log-sum-exp is an output too,
from its gradient (folded into D: d lse_i / d S_ij = P_ij). Both versions share it: the naive one saves lse as well.
"""

from kp.binding import require_floating, require_like, require_same_kind

VERSIONS = 2
MAX_HEAD_DIM = 128  # attention.cu's per-thread arrays
MAX_HEADS = 65535  # the grids' y and z limit


def require_heads(op, q, k, v):
    require_floating(op, "q", q)
    if q.dim() != 3:
        raise RuntimeError(f"{op}: q must be (batch x heads, sequence, head_dim), got shape {list(q.shape)}")
    if q.shape[1] < 1:
        raise RuntimeError(f"{op}: q must have at least one position, got shape {list(q.shape)}")
    if not 1 <= q.shape[2] <= MAX_HEAD_DIM:
        raise RuntimeError(f"{op}: q's head_dim must be 1 to {MAX_HEAD_DIM}, got shape {list(q.shape)}")
    if q.shape[0] > MAX_HEADS:
        raise RuntimeError(f"{op}: q has more than {MAX_HEADS} heads (batch x heads), got shape {list(q.shape)}")
    require_like(op, "k", k, "q", q)
    require_like(op, "v", v, "q", q)


def fake(q, k, v, causal=False, version=VERSIONS):
    require_heads("attention", q, k, v)
    if version not in (1, 2):
        raise RuntimeError(f"attention: version must be 1 or 2, got {version}")
    return q.new_empty(q.shape), q.new_empty(q.shape[:2])


def fake_backward(grad_o, grad_lse, q, k, v, o, lse, causal=False):
    op = "attention_backward"
    require_floating(op, "grad_o", grad_o)  # the first argument checked first, as the binding does
    require_heads(op, q, k, v)
    require_like(op, "o", o, "q", q)
    require_like(op, "grad_o", grad_o, "q", q)
    require_floating(op, "lse", lse)
    require_same_kind(op, "lse", lse, "q", q)
    if lse.shape != q.shape[:2]:
        raise RuntimeError(f"{op}: lse has shape {list(lse.shape)} but q has {list(q.shape)}: one log-sum-exp per row")
    require_like(op, "grad_lse", grad_lse, "lse", lse)
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def register(ops):
    ops.register_fake("attention", fake)
    ops.register_fake("attention_backward", fake_backward)

    def setup_context(ctx, inputs, output):
        q, k, v, causal, _ = inputs
        o, lse = output
        ctx.causal = causal
        ctx.set_materialize_grads(False)  # an unused output's gradient stays None: no zeros made for it
        ctx.save_for_backward(q, k, v, o, lse)

    def backward(ctx, grad_o, grad_lse):
        q, k, v, o, lse = ctx.saved_tensors
        need = ctx.needs_input_grad[:3]
        if not any(need) or (grad_o is None and grad_lse is None):
            return None, None, None, None, None
        grad_o = o.new_zeros(o.shape) if grad_o is None else grad_o
        grad_lse = lse.new_zeros(lse.shape) if grad_lse is None else grad_lse
        grads = ops.attention_backward(grad_o, grad_lse, q, k, v, o, lse, ctx.causal)
        return *(g if n else None for g, n in zip(grads, need)), None, None

    ops.register_autograd("attention", backward, setup_context=setup_context)
