"""layernorm (kernels/layernorm.cu), notebook 09: the forward (Welford, one warp per row) and the backward (dx per
row, dweight and dbias as notebook 08's column sums) against torch's layer_norm on ragged shapes in float32 and
float64 (and float16 and bfloat16, summed in float), on every target; rows of a large offset keep their variance (one
pass, no E[x²] - E[x]²); the saved mean and rstd are torch's; eps reaches the kernel; check mode finds nothing;
gradcheck in float64; the argument errors name what is wrong."""

import pytest
import torch
import torch.nn.functional as F
from conftest import on

import helpers

# 257 rows: not a multiple of 8 (rows per block) and past 256 (the column sums' second stage); (1, 1): one column.
SHAPES = [(1, 1), (9, 1), (3, 5), (257, 33), (61, 781), (600, 40)]


@pytest.fixture(scope="module")
def layernorm(target):
    return helpers.load_kernel("layernorm", target=target, quiet=True)


def inputs(device, shape, dtype, offset=0.0):
    x = offset + torch.randn(shape, dtype=dtype)
    w, b = torch.randn(shape[1], dtype=dtype), torch.randn(shape[1], dtype=dtype)
    return [on(device, t).requires_grad_() for t in (x, w, b)]


def assert_sums(got, terms):
    """`got` is the column sums of `terms` (R, C, float64 exact) to within an R-term float sum's rounding (Higham
    4.2), and of the terms' own: 2 (R + C + 8) eps sum|terms| (each term is a product of a few rounded values whose
    row statistics are sums over C)."""
    eps = torch.finfo(got.dtype).eps
    bound = 2 * (terms.shape[0] + terms.shape[1] + 8) * eps * terms.abs().sum(0)
    assert ((got.double() - terms.sum(0)).abs() <= bound).all()


def assert_gradients(dx, dw, db, g, x, w, eps=1e-5):
    """dx, dw, db against the float64 formulas on the same inputs (not torch's float32 gradient, whose own rounding on
    a row of one column, where dx is 0, is 3e-5), within rounding: dx[r, c] = rstd (d - mean d - xhat mean(d xhat))
    sums 2C products, each a few roundings off, of terms at most |d|, mean|d| and |xhat| mean|d xhat|; dw and db are
    column sums (assert_sums)."""
    g, x, w = g.double(), x.detach().double(), w.detach().double()
    rstd = (x.var(1, unbiased=False, keepdim=True) + eps).rsqrt()
    xhat, d = (x - x.mean(1, keepdim=True)) * rstd, g * w
    exact = rstd * (d - d.mean(1, keepdim=True) - xhat * (d * xhat).mean(1, keepdim=True))
    size = rstd * (d.abs() + d.abs().mean(1, keepdim=True) + xhat.abs() * (d * xhat).abs().mean(1, keepdim=True))
    assert ((dx.double() - exact).abs() <= 2 * (x.shape[1] + 8) * torch.finfo(dx.dtype).eps * size).all()
    assert_sums(dw, g * xhat)
    assert_sums(db, g)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_forward_and_backward_match_torch(layernorm, target_device, dtype):
    for shape in SHAPES:
        x, w, b = inputs(target_device, shape, dtype)
        y, mean, rstd = layernorm.layernorm(x, w, b, 1e-5)
        expected = F.layer_norm(x, shape[1:], w, b, 1e-5)
        torch.testing.assert_close(y, expected)
        _, saved_mean, saved_rstd = torch.ops.aten.native_layer_norm(x, shape[1:], w, b, 1e-5)
        torch.testing.assert_close(mean, saved_mean.view(-1))
        torch.testing.assert_close(rstd, saved_rstd.view(-1))
        g = torch.randn_like(y)
        dx, dw, db = torch.autograd.grad(y, (x, w, b), g)
        assert_gradients(dx, dw, db, g, x, w)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_a_large_offset_keeps_the_variance(layernorm, target_device, dtype):
    """Rows of 1e4 + N(0, 1) (seeded): E[x²] - E[x]² cancels 1e8 against 1e8 and keeps no digit of the variance in
    float32 (shown: off by more than 10%, or NaN); Welford subtracts the running mean first and keeps 3 digits of
    rstd. y is as good as its inputs allow: x holds 1e4 to an ulp (eps 1e4), so y[r, c] to 8 such ulps times
    rstd |w[c]|, plus (C + 8) eps |y| of the arithmetic, against the float64 layer norm of the same inputs."""
    gen = torch.Generator().manual_seed(0)
    x = 1e4 + torch.randn(67, 131, generator=gen, dtype=dtype)
    w, b = torch.randn(131, generator=gen, dtype=dtype), torch.randn(131, generator=gen, dtype=dtype)
    x, w, b = on(target_device, x, w, b)
    y, _, rstd = layernorm.layernorm(x, w, b, 1e-5)
    x64, w64 = x.double(), w.double()
    exact_rstd = (x64.var(1, unbiased=False) + 1e-5).rsqrt()
    assert ((rstd.double() - exact_rstd).abs() <= 1e-3 * exact_rstd).all()
    if dtype == torch.float32:
        naive = ((x * x).mean(1) - x.mean(1) ** 2 + 1e-5).rsqrt().double()
        assert not ((naive - exact_rstd).abs() <= 0.1 * exact_rstd).all()
    exact = F.layer_norm(x64, (131,), w64, b.double(), 1e-5)
    eps = torch.finfo(dtype).eps
    bound = 8 * eps * 1e4 * exact_rstd[:, None] * w64.abs() + (131 + 8) * eps * exact.abs()
    assert ((y.double() - exact).abs() <= bound).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_inputs_accumulate_in_float(layernorm, target_device, dtype):
    """16-bit x, weight and bias: every sum in float, mean and rstd saved in float32 (as torch's CUDA layer norm saves
    them), one rounding to the 16-bit type per output. Against the float64 layer norm of the same inputs, y, dx, dw
    and db are within an ulp of the type (eps |exact|, plus the smallest subnormal) plus float32's own rounding of the
    sums (as assert_gradients bounds it, at float32's eps); and y within an ulp of torch's float32 layer norm rounded
    to the type, plus both float32 roundings. Rows of 100 + N(0, 1): a mean rounded to 16 bits would lose xhat's every
    digit."""
    gen = torch.Generator().manual_seed(0)
    R, C = 261, 131  # past 256 rows: the column sums' second stage adds float partial sums
    x = (torch.randn(R, C, generator=gen) + torch.tensor([0.0, 100.0]).repeat(R // 2 + 1)[:R, None]).to(dtype)
    w, b = (torch.randn(C, generator=gen).to(dtype) for _ in range(2))
    x, w, b = (on(target_device, t).requires_grad_() for t in (x, w, b))
    y, mean, rstd = layernorm.layernorm(x, w, b, 1e-5)
    assert y.dtype == dtype and mean.dtype == rstd.dtype == torch.float32
    finfo, f32 = torch.finfo(dtype), torch.finfo(torch.float32).eps
    smallest = finfo.smallest_normal * finfo.eps
    x64, w64, b64 = (t.detach().double() for t in (x, w, b))
    exact_rstd = (x64.var(1, unbiased=False) + 1e-5).rsqrt()
    assert ((mean.double() - x64.mean(1)).abs() <= (C + 8) * f32 * x64.abs().mean(1)).all()
    assert ((rstd.double() - exact_rstd).abs() <= 2 * (C + 8) * f32 * exact_rstd).all()
    exact = F.layer_norm(x64, (C,), w64, b64, 1e-5)
    xhat = (x64 - x64.mean(1, keepdim=True)) * exact_rstd[:, None]
    size = (C + 8) * f32 * (x64.abs() * exact_rstd[:, None] * w64.abs() + b64.abs())
    assert ((y.double() - exact).abs() <= finfo.eps * exact.abs() + size + smallest).all()
    reference = F.layer_norm(x.detach().float(), (C,), w.detach().float(), b.detach().float(), 1e-5).to(dtype)
    # Where xhat w + b cancels to near 0, torch's float32 sums are as far off as ours: both within `size`.
    assert ((y.double() - reference.double()).abs() <= finfo.eps * reference.double().abs() + 2 * size + smallest).all()
    g = torch.randn(R, C, generator=gen).to(dtype)
    dx, dw, db = torch.autograd.grad(y, (x, w, b), on(target_device, g))
    assert dx.dtype == dw.dtype == db.dtype == dtype
    g64 = g.double()
    d = g64 * w64
    exact_dx = exact_rstd[:, None] * (d - d.mean(1, keepdim=True) - xhat * (d * xhat).mean(1, keepdim=True))
    dx_size = exact_rstd[:, None] * (
        d.abs() + d.abs().mean(1, keepdim=True) + xhat.abs() * (d * xhat).abs().mean(1, keepdim=True)
    )
    assert ((dx.double() - exact_dx).abs() <= finfo.eps * exact_dx.abs() + 2 * (C + 8) * f32 * dx_size + smallest).all()
    for got, terms in ((dw, g64 * xhat), (db, g64)):
        bound = finfo.eps * terms.sum(0).abs() + 2 * (R + C + 8) * f32 * terms.abs().sum(0) + smallest
        assert ((got.double() - terms.sum(0)).abs() <= bound).all()


def test_eps_reaches_the_kernel(layernorm, target_device):
    """A constant row has variance 0: its rstd is 1 / sqrt(eps) exactly eps's."""
    x = on(target_device, torch.full((3, 7), 2.0, dtype=torch.float64))
    w, b = on(target_device, torch.ones(7, dtype=torch.float64), torch.zeros(7, dtype=torch.float64))
    for eps in (1e-5, 0.25):
        _, _, rstd = layernorm.layernorm(x, w, b, eps)
        torch.testing.assert_close(rstd, torch.full_like(rstd, eps**-0.5))


def test_no_rows_give_zero_gradients_of_weight_and_bias(layernorm, target_device):
    x, w, b = inputs(target_device, (0, 5), torch.float64)
    y, mean, _ = layernorm.layernorm(x, w, b, 1e-5)
    assert y.shape == (0, 5) and mean.shape == (0,)
    dx, dw, db = torch.autograd.grad(y.sum(), (x, w, b))
    assert dx.shape == (0, 5) and (dw == 0).all() and (db == 0).all()


def test_check_mode_finds_nothing():
    checked = helpers.load_kernel("layernorm", target="cpu", check=True, quiet=True)
    for shape, dtype in [
        ((3, 5), torch.float64),
        ((9, 1), torch.float64),
        ((260, 33), torch.float64),
        ((260, 33), torch.bfloat16),
    ]:
        x, w, b = inputs("cpu", shape, dtype)
        y, _, _ = checked.layernorm(x, w, b, 1e-5)
        # float64 against float64's reference: a float32 reference is off by its own rounding (~1e-7 of |y|, up to
        # 1.1e-6 on unseeded inputs, past atol); bfloat16 against float32's, the precision the kernel computes it in
        wide = torch.float64 if dtype == torch.float64 else torch.float32
        reference = F.layer_norm(x.to(wide), shape[1:], w.to(wide), b.to(wide), 1e-5).to(dtype)
        torch.testing.assert_close(y, reference, rtol=torch.finfo(dtype).eps, atol=1e-6)
        torch.autograd.grad(y.sum(), (x, w, b))


def test_gradcheck_in_float64(layernorm, target_device):
    for shape in [(3, 5), (9, 1), (10, 37)]:
        args = inputs(target_device, shape, torch.float64)
        assert torch.autograd.gradcheck(lambda x, w, b: layernorm.layernorm(x, w, b, 1e-5)[0], args)


@pytest.mark.parametrize(
    "shapes, message",
    [
        (((5,), (5,), (5,)), r"layernorm: x must be a matrix \(rows, columns\), got shape \[5\]"),
        (((3, 0), (0,), (0,)), r"layernorm: x must have at least one column, got shape \[3, 0\]"),
        (((3, 4), (5,), (5,)), r"layernorm: weight has shape \[5\] but x has \[3, 4\]: one weight per column"),
        (((3, 4), (4,), (3,)), r"layernorm: bias has shape \[3\] but weight has \[4\]"),
    ],
)
def test_bad_arguments_are_named(layernorm, target_device, shapes, message):
    x, w, b = (on(target_device, torch.randn(s)) for s in shapes)
    with pytest.raises(RuntimeError, match=message):
        layernorm.layernorm(x, w, b, 1e-5)


def test_a_negative_eps_is_named(layernorm, target_device):
    x, w, b = inputs(target_device, (3, 4), torch.float32)
    with pytest.raises(RuntimeError, match="layernorm: eps must be at least 0, got -1.0"):
        layernorm.layernorm(x, w, b, -1.0)


def test_gradcheck_of_all_three_outputs(layernorm, target_device):
    """The saved mean and rstd are outputs: a loss that uses them differentiates through them too."""
    args = inputs(target_device, (6, 9), torch.float64)
    assert torch.autograd.gradcheck(lambda x, w, b: layernorm.layernorm(x, w, b, 1e-5), args)
    x = args[0]
    assert torch.autograd.gradcheck(lambda x: layernorm.layernorm(x, args[1], args[2], 1e-5)[1:], (x,))


def test_statistics_of_another_dtype_than_layernorm_saves_are_named(layernorm, target_device):
    """mean and rstd are float32 for a float32 or 16-bit x (float64 for float64): a float64 mean for a float32 x is
    named, with the dtype layernorm returns."""
    x, w, _ = inputs(target_device, (3, 4), torch.float32)
    g, mean = torch.randn_like(x), on(target_device, torch.zeros(3, dtype=torch.float64))
    message = "layernorm_backward: mean has dtype Double but x has Float: mean and rstd are Float, as layernorm"
    with pytest.raises(RuntimeError, match=message):
        layernorm.layernorm_backward(g, x.detach(), w.detach(), mean, mean)
