"""attention (kernels/attention.cu), notebook 10: both versions against F.scaled_dot_product_attention with and without
the causal mask on ragged shapes (sequences of 1, 17, 63 and 100 positions: none a whole 16 x 16 tile of the naive
matmuls nor a 64-row block of the fused kernel; head_dim 16, 32, 64 and 128), in float32 and float64, on every target;
the log-sum-exp against torch.logsumexp; the backward (flash-attention-2's, from q, k, v, o and the log-sum-exp)
against SDPA's gradients and by gradcheck in float64, through o and the log-sum-exp both; check mode finds nothing;
the fused version writes no N x N matrix and loads no key tile wholly above the diagonal (the GPU model's counts);
the backward gives the same bits every run (no atomics); the argument errors name what is wrong."""

import pytest
import torch
import torch.nn.functional as F
from conftest import on

import helpers
from kp.gpumodel.profile import profile

SEQS = [1, 17, 63, 100]
HEAD_DIMS = [16, 32, 64]
VERSIONS = [1, 2]
HEADS = 3  # batch x heads


@pytest.fixture(scope="module")
def attention(target):
    return helpers.load_kernel("attention", target=target, quiet=True)


@pytest.fixture(scope="module")
def checked():
    return helpers.load_kernel("attention", target="cpu", check=True, quiet=True)


def qkv(device, BH, N, d, dtype, grad=False):
    return [on(device, torch.randn(BH, N, d, dtype=dtype)).requires_grad_(grad) for _ in range(3)]


def logsumexp(q, k, causal):
    """Each row's log-sum-exp of the scaled, masked scores, by torch."""
    N, d = q.shape[1:]
    s = q @ k.transpose(1, 2) / d**0.5
    if causal:
        s = s.masked_fill(torch.ones(N, N, dtype=torch.bool, device=q.device).triu(1), -torch.inf)
    return torch.logsumexp(s, -1)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_every_version_matches_sdpa_on_ragged_shapes(attention, target_device, version, dtype, causal):
    """torch.testing's default tolerances for the dtype (float32: 1.3e-6 relative, 1e-5 absolute)."""
    for N in SEQS:
        for d in HEAD_DIMS:
            q, k, v = qkv(target_device, HEADS, N, d, dtype)
            o, lse = attention.attention(q, k, v, causal, version)
            torch.testing.assert_close(o, F.scaled_dot_product_attention(q, k, v, is_causal=causal))
            torch.testing.assert_close(lse, logsumexp(q, k, causal))


@pytest.mark.parametrize("version", VERSIONS)
def test_head_dim_128_and_several_blocks_of_rows(attention, target_device, version):
    """The largest head_dim the per-thread arrays hold, and 130 positions: three 64-row blocks, the last of 2 rows."""
    q, k, v = qkv(target_device, 2, 130, 128, torch.float64)
    for causal in [False, True]:
        o, _ = attention.attention(q, k, v, causal, version)
        torch.testing.assert_close(o, F.scaled_dot_product_attention(q, k, v, is_causal=causal))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_the_backward_matches_sdpas_gradients(attention, target_device, dtype, causal):
    """dq, dk, dv of a loss through o and the log-sum-exp, against torch's autograd through SDPA and logsumexp."""
    for N in SEQS:
        for d in [16, 64]:
            q, k, v = qkv(target_device, 2, N, d, dtype, grad=True)
            g_o, g_lse = on(target_device, torch.randn(2, N, d, dtype=dtype), torch.randn(2, N, dtype=dtype))
            o, lse = attention.attention(q, k, v, causal)
            got = torch.autograd.grad((o * g_o).sum() + (lse * g_lse).sum(), (q, k, v))
            ref_o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            ref_lse = logsumexp(q, k, causal)
            want = torch.autograd.grad((ref_o * g_o).sum() + (ref_lse * g_lse).sum(), (q, k, v))
            for name, a, b in zip("qkv", got, want):
                torch.testing.assert_close(a, b, msg=lambda m, where=f"d{name}, N={N}, d={d}": f"{where}: {m}")


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("version", VERSIONS)
def test_gradcheck_in_float64(attention, target_device, version, causal):
    """Through both outputs: gradcheck sums random multiples of o and of the log-sum-exp."""
    for BH, N, d in [(1, 1, 3), (2, 5, 4), (1, 17, 3)]:
        inputs = qkv(target_device, BH, N, d, torch.float64, grad=True)
        assert torch.autograd.gradcheck(lambda q, k, v: attention.attention(q, k, v, causal, version), inputs)


@pytest.mark.parametrize("version", VERSIONS)
def test_check_mode_finds_nothing(checked, version):
    """Every kernel of both versions and of the backward, on shapes that leave tiles and blocks partly empty: the
    first (2, 17, 12), a 16 x 16 tile and a bit; the second (1, 65, 8), one row into a second 64-row block."""
    for BH, N, d in [(2, 17, 12), (1, 65, 8)]:
        for causal in [False, True]:
            q, k, v = qkv("cpu", BH, N, d, torch.float64, grad=True)
            o, lse = checked.attention(q, k, v, causal, version)
            torch.testing.assert_close(o, F.scaled_dot_product_attention(q, k, v, is_causal=causal))
            got = torch.autograd.grad(o.sum() + lse.sum(), (q, k, v))
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal).sum() + logsumexp(q, k, causal).sum()
            torch.testing.assert_close(got, torch.autograd.grad(ref, (q, k, v)))


def test_the_naive_version_writes_the_scores_and_the_fused_one_does_not(checked):
    """(1, 256, 32) float32: the naive scores kernel writes N² floats (8192 sectors of 32 bytes), the softmax the same
    again; the fused kernel writes o and the log-sum-exp alone, (256 x 32 + 256) floats: 1056 distinct sectors."""
    q, k, v = qkv("cpu", 1, 256, 32, torch.float32)
    naive = {la.kernel.removesuffix("<T>"): la for la in profile(checked.attention, q, k, v, False, 1).launches}
    assert list(naive) == ["attention_scores", "attention_softmax", "attention_pv"]
    assert naive["attention_scores"].distinct_written == 256 * 256 * 4 // 32
    (fused,) = profile(checked.attention, q, k, v, False, 2).launches
    assert fused.distinct_written == (256 * 32 + 256) * 4 // 32


def test_the_fused_causal_version_skips_the_key_tiles_above_the_diagonal(checked):
    """(1, 256, 32): four blocks of 64 query rows. Without the mask each loads all 16 key tiles of K and of V; with it
    block b loads 4 (b + 1), 40 in all instead of 64: 24 tiles of 16 rows of 32 floats (4 sectors) fewer, twice."""
    q, k, v = qkv("cpu", 1, 256, 32, torch.float32)
    (full,) = profile(checked.attention, q, k, v, False, 2).launches
    (causal,) = profile(checked.attention, q, k, v, True, 2).launches
    assert full.sectors_read - causal.sectors_read == 24 * 16 * 4 * 2


def test_the_backward_gives_the_same_bits_every_run(attention, target_device):
    """No atomics: each row of dq, dk and dv has one writer, so no order of blocks can change a sum."""
    q, k, v = qkv(target_device, 4, 100, 32, torch.float32, grad=True)
    o, lse = attention.attention(q, k, v, True)
    g_o, g_lse = torch.randn_like(o), torch.randn_like(lse)
    first = attention.attention_backward(g_o, g_lse, q, k, v, o, lse, True)
    for _ in range(3):
        torch.testing.assert_close(
            attention.attention_backward(g_o, g_lse, q, k, v, o, lse, True), first, rtol=0, atol=0
        )


def test_an_unused_output_needs_no_gradient(attention, target_device):
    """A loss of o alone (the usual case) and of the log-sum-exp alone both reach q, k and v."""
    q, k, v = qkv(target_device, 2, 9, 8, torch.float64, grad=True)
    o, lse = attention.attention(q, k, v, True)
    want = torch.autograd.grad(F.scaled_dot_product_attention(q, k, v, is_causal=True).sum(), (q, k, v))
    torch.testing.assert_close(torch.autograd.grad(o.sum(), (q, k, v), retain_graph=True), want)
    want = torch.autograd.grad(logsumexp(q, k, True).sum(), (q, k, v), allow_unused=True)
    got = torch.autograd.grad(lse.sum(), (q, k, v))
    torch.testing.assert_close(got[:2], want[:2])
    assert (got[2] == 0).all()  # the log-sum-exp does not depend on v


@pytest.mark.parametrize(
    "shapes, kwargs, message",
    [
        ([(4, 8)] * 3, {}, r"attention: q must be \(batch x heads, sequence, head_dim\), got shape \[4, 8\]"),
        ([(2, 4, 129)] * 3, {}, r"attention: q's head_dim must be 1 to 128, got shape \[2, 4, 129\]"),
        ([(2, 0, 8)] * 3, {}, r"attention: q must have at least one position, got shape \[2, 0, 8\]"),
        ([(2, 4, 8), (2, 5, 8), (2, 4, 8)], {}, r"attention: k has shape \[2, 5, 8\] but q has \[2, 4, 8\]"),
        ([(2, 4, 8)] * 3, {"version": 3}, "attention: version must be 1 or 2, got 3"),
    ],
)
def test_bad_arguments_are_named(attention, target_device, shapes, kwargs, message):
    q, k, v = (on(target_device, torch.randn(s)) for s in shapes)
    with pytest.raises(RuntimeError, match=message):
        attention.attention(q, k, v, **kwargs)


def test_a_log_sum_exp_of_another_shape_is_named(attention, target_device):
    q, k, v = qkv(target_device, 2, 4, 8, torch.float32)
    o, lse = attention.attention(q, k, v)
    with pytest.raises(RuntimeError, match=r"attention_backward: lse has shape \[2, 3\] but q has \[2, 4, 8\]"):
        attention.attention_backward(torch.ones_like(o), torch.ones_like(lse), q, k, v, o, lse[:, :3], False)
