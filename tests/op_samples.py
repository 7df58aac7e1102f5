"""Sample calls of every op of every kernel, for the contracts all ops keep (tests/test_op_contract.py): the
small cousin of torch's OpInfo sample inputs. SAMPLES["<kernel>.<op>"](dtype) gives argument tuples made on
the CPU; the contract tests move them to each target's device. Irregular sizes, so that no launch is a
whole number of blocks; a forward op's tensors require grad, so that opcheck also traces its backward."""

import torch


def randn(*shape, dtype, grad=False):
    return torch.randn(shape, dtype=dtype, requires_grad=grad)


def elementwise(*shapes, grad):
    """Calls of an op of same-shaped tensors: one per shape in `shapes`, `arity` tensors each."""

    def samples(dtype, arity):
        return [tuple(randn(*s, dtype=dtype, grad=grad) for _ in range(arity)) for s in shapes]

    return samples


ELEMENTWISE = [(1,), (1025,), (7, 11, 13)]
forward, backward = elementwise(*ELEMENTWISE, grad=True), elementwise(*ELEMENTWISE, grad=False)

# (shape of w or x, shape of x or b): equal shapes, a 0-dim, a size-1 dim and both inputs broadcast.
BROADCASTS = [((1025,), (1025,)), ((), (1025,)), ((1, 1023), (5, 1)), ((7, 1, 13), (7, 11, 1))]


def broadcast_pairs(dtype):
    return [(randn(*a, dtype=dtype, grad=True), randn(*b, dtype=dtype, grad=True)) for a, b in BROADCASTS]


def mul_backward(dtype):
    calls = []
    for (a, b), need in zip(BROADCASTS, [(True, True), (True, False), (False, True), (False, False)]):
        grad_out = randn(*torch.broadcast_shapes(a, b), dtype=dtype)
        calls.append((grad_out, randn(*a, dtype=dtype), randn(*b, dtype=dtype), *need))
    return calls


def sum_to(dtype):
    # (3, 4, 5) itself: nothing to sum, still a new tensor (the schema declares no alias).
    return [(randn(3, 4, 5, dtype=dtype), shape) for shape in ([4, 5], [1, 5], [3, 1, 5], [], [3, 4, 5])]


# linear: (B, M, N) = (37, 53, 29) crosses the 16 x 16 tiles' edges everywhere.
B, M, N = 37, 53, 29

# involution: (N, C, H, W, G, KH, KW, stride, padding, dilation) with odd sizes, a non-square kernel, stride,
# padding and dilation all other than 1 and two groups; its output is H_out x W_out = 4 x 6.
INV_N, INV_C, INV_H, INV_W, INV_G, INV_KH, INV_KW, STRIDE, PADDING, DILATION = 3, 4, 9, 11, 2, 3, 2, 2, 1, 2
INV_OUT = (4, 6)


def involution_input(dtype, grad=False):
    return randn(INV_N, INV_C, INV_H, INV_W, dtype=dtype, grad=grad)


def involution_weight(dtype, grad=False):
    return randn(INV_N, INV_G, INV_KH, INV_KW, *INV_OUT, dtype=dtype, grad=grad)


def involution_grad_out(dtype):
    return randn(INV_N, INV_C, *INV_OUT, dtype=dtype)


HYPER = (STRIDE, PADDING, DILATION)

# The ops whose kernels take float16 and bfloat16 as well as float32 and float64.
HALF = {
    "poly2.poly2",
    "poly2.poly2_backward",
    "softmax.softmax",
    "softmax.softmax_backward",
    "layernorm.layernorm",
    "layernorm.layernorm_backward",
}


def attention_backward_args(BH, N, d, causal, dtype):
    """(grad_o, grad_lse, q, k, v, o, lse, causal): o and the log-sum-exp as torch computes them for q, k, v."""
    q, k, v = (randn(BH, N, d, dtype=dtype) for _ in range(3))
    s = q @ k.transpose(1, 2) / d**0.5
    if causal:
        s = s.masked_fill(torch.ones(N, N, dtype=torch.bool).triu(1), -torch.inf)
    o = torch.softmax(s, -1) @ v
    return randn(BH, N, d, dtype=dtype), randn(BH, N, dtype=dtype), q, k, v, o, torch.logsumexp(s, -1), causal


def layernorm_backward_args(R, C, dtype):
    """(grad_y, x, weight, mean, rstd): the statistics torch saves for x, in the dtype layernorm saves them (float32
    for a 16-bit x, as torch's CUDA layer norm)."""
    x, w, b = randn(R, C, dtype=dtype), randn(C, dtype=dtype), randn(C, dtype=dtype)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x.double(), [C], w.double(), b.double(), 1e-5)
    stats = torch.float64 if dtype == torch.float64 else torch.float32
    return randn(R, C, dtype=dtype), x, w, mean.view(R).to(stats), rstd.view(R).to(stats)


SAMPLES = {
    "add2.add2": lambda dtype: forward(dtype, 2),
    "add2.add2_v1": lambda dtype: forward(dtype, 2),
    "exp.exp": lambda dtype: forward(dtype, 1),
    "exp.exp_backward": lambda dtype: backward(dtype, 2),
    "poly2.poly2": lambda dtype: forward(dtype, 1),
    "poly2.poly2_backward": lambda dtype: backward(dtype, 2),
    "mul_add.mul": broadcast_pairs,
    "mul_add.add": broadcast_pairs,
    "mul_add.mul_backward": mul_backward,
    "mul_add.sum_to": sum_to,
    "linear.linear": lambda dtype: [
        (randn(B, M, dtype=dtype, grad=True), randn(N, M, dtype=dtype, grad=True), randn(N, dtype=dtype, grad=True))
    ],
    "linear.linear_grad_input": lambda dtype: [(randn(B, N, dtype=dtype), randn(N, M, dtype=dtype))],
    "linear.linear_grad_weight": lambda dtype: [(randn(B, N, dtype=dtype), randn(B, M, dtype=dtype))],
    "linear.linear_grad_bias": lambda dtype: [(randn(B, N, dtype=dtype),)],
    "linear_ladder.linear_ladder": lambda dtype: (
        [
            (
                randn(B, M, dtype=dtype, grad=True),
                randn(N, M, dtype=dtype, grad=True),
                randn(N, dtype=dtype, grad=True),
                v,
            )
            for v in range(1, 7)
        ]
        + [
            (
                randn(B, M, dtype=dtype, grad=True),
                randn(N, M, dtype=dtype, grad=True),
                randn(N, dtype=dtype, grad=True),
                7,
                t,
            )
            for t in range(5)  # version 7 at each of its tile configurations
        ]
    ),
    # every version; 600 rows: three chunks of 256 for versions 4 and 5; (0, 3): empty columns sum to 0
    "colsum.colsum": lambda dtype: (
        [(randn(600, 37, dtype=dtype, grad=True), v) for v in range(1, 6)] + [(randn(0, 3, dtype=dtype, grad=True), 5)]
    ),
    # every version on 1000 elements (two launches below v4, 512 per block from v4 on), a 3-D x, and an empty one
    "reduce.reduce_sum": lambda dtype: (
        [(randn(1000, dtype=dtype, grad=True), v) for v in range(1, 7)]
        + [(randn(5, 7, 3, dtype=dtype, grad=True), 6), (randn(0, 4, dtype=dtype, grad=True), 6)]
    ),
    # every version; 41 columns: no whole Packs; 12: version 5's Packs
    "softmax.softmax": lambda dtype: (
        [(randn(37, 41, dtype=dtype, grad=True), v) for v in range(1, 6)] + [(randn(9, 12, dtype=dtype, grad=True), 5)]
    ),
    "softmax.softmax_backward": lambda dtype: [
        (randn(37, 41, dtype=dtype), torch.softmax(randn(37, 41, dtype=dtype), -1))
    ],
    # 300 rows: the column sums' second stage; 41 columns: no whole warp of them
    "layernorm.layernorm": lambda dtype: [
        (randn(R, C, dtype=dtype, grad=True), randn(C, dtype=dtype, grad=True), randn(C, dtype=dtype, grad=True), 1e-5)
        for R, C in [(37, 41), (300, 7)]
    ],
    "layernorm.layernorm_backward": lambda dtype: [layernorm_backward_args(37, 41, dtype)],
    # both versions, both masks; 19 positions: no whole tile of 16 (naive) or 64 rows (fused); head_dim 12: a ragged
    # slice of the naive matmuls' 16-wide tiles
    "attention.attention": lambda dtype: [
        (*(randn(3, 19, 12, dtype=dtype, grad=True) for _ in range(3)), causal, v)
        for v in (1, 2)
        for causal in (False, True)
    ],
    "attention.attention_backward": lambda dtype: [
        attention_backward_args(3, 19, 12, causal, dtype) for causal in (False, True)
    ],
    "involution.involution": lambda dtype: [
        (involution_input(dtype, grad=True), involution_weight(dtype, grad=True), *HYPER)
    ],
    "involution.involution_grad_input": lambda dtype: [
        (involution_grad_out(dtype), involution_weight(dtype), INV_H, INV_W, *HYPER)
    ],
    "involution.involution_grad_weight": lambda dtype: [
        (involution_grad_out(dtype), involution_input(dtype), INV_G, INV_KH, INV_KW, *HYPER)
    ],
}


def made_by_new_op(name, scalar=False):
    """The sample calls of an op that `make new-op` wrote (kp.newop): name(x[, alpha]), elementwise, and
    name_backward(grad_y, x[, alpha]); alpha 1.5."""
    extra = (1.5,) if scalar else ()
    return {
        f"{name}.{name}": lambda dtype: [(*args, *extra) for args in forward(dtype, 1)],
        f"{name}.{name}_backward": lambda dtype: [(*args, *extra) for args in backward(dtype, 2)],
    }


# `make new-op NAME=...` adds one line here per op it writes.
