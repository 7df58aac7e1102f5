"""exp (y = exp(x)) on the CPU stand-in: forward and backward against torch, overflow, gradcheck, every bad input."""

import pytest
import torch

import helpers

SHAPES = [(0,), (1,), (1023,), (1025,), (2**20 + 3,), (3, 0, 5), (7, 11, 13)]


@pytest.fixture(scope="module")
def exp_ext():
    return helpers.load_kernel("exp", target="cpu", quiet=True)


@pytest.fixture(scope="module")
def exp(exp_ext):
    class Exp(torch.autograd.Function):  # as in notebooks/04_exp_activation.ipynb
        @staticmethod
        def forward(ctx, x):
            y = exp_ext.exp(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_y):
            (y,) = ctx.saved_tensors
            return exp_ext.exp_backward(grad_y, y) if ctx.needs_input_grad[0] else None

    return Exp.apply


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_forward_and_backward_match_torch(exp, shape, dtype):
    x = (4 * torch.randn(shape, dtype=dtype)).requires_grad_()  # exp over ~[-20, 20]: many binades
    y, ref = exp(x), torch.exp(x)
    assert y.shape == x.shape and y.dtype == dtype
    torch.testing.assert_close(y, ref)
    grad_y = torch.randn_like(y)
    (got,) = torch.autograd.grad(y, x, grad_y)
    (expected,) = torch.autograd.grad(ref, x, grad_y)
    torch.testing.assert_close(got, expected)


def test_backward_multiplies_by_the_saved_output(exp_ext):
    y = torch.tensor([0.5, 2.0, 0.0, float("inf")], dtype=torch.float64)
    grad_y = torch.tensor([3.0, -1.0, 7.0, 2.0], dtype=torch.float64)
    torch.testing.assert_close(exp_ext.exp_backward(grad_y, y), grad_y * y, rtol=0, atol=0)


@pytest.mark.parametrize(
    "dtype, finite, overflows, underflows",
    [(torch.float32, 88.7, 88.8, -104.0), (torch.float64, 709.7, 709.8, -745.2)],
)
def test_overflow_and_underflow_as_torch(exp_ext, dtype, finite, overflows, underflows):
    x = torch.tensor([finite, overflows, underflows, float("inf"), float("-inf"), float("nan")], dtype=dtype)
    y = exp_ext.exp(x)
    assert torch.isfinite(y[0]) and y[1] == float("inf") and y[2] == 0 and y[3] == float("inf") and y[4] == 0
    assert torch.isnan(y[5])
    torch.testing.assert_close(y, torch.exp(x), equal_nan=True)


def test_gradcheck_float64(exp):
    for shape in [(1,), (33,), (5, 7)]:
        x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(exp, (x,))


def test_non_contiguous_and_expanded_inputs(exp_ext):
    x = torch.randn(64, 33).t()
    torch.testing.assert_close(exp_ext.exp(x), torch.exp(x))
    grad_y = torch.ones(()).expand(33, 64)  # what the backward of .sum() hands in: stride 0
    y = torch.exp(x)
    torch.testing.assert_close(exp_ext.exp_backward(grad_y, y), y)


@pytest.mark.parametrize(
    "x, message",
    [
        (torch.ones(3, dtype=torch.int32), "exp: x must be float32 or float64, got Int"),
        (torch.ones(3, dtype=torch.bfloat16), "exp: x must be float32 or float64, got BFloat16"),
        (
            torch.ones(3, device="meta"),
            "exp: x is on a device other than cpu and cuda, but this build takes cpu tensors",
        ),
    ],
)
def test_bad_forward_inputs_raise_a_runtime_error_naming_the_argument(exp_ext, x, message):
    with pytest.raises(RuntimeError, match=message):
        exp_ext.exp(x)


@pytest.mark.parametrize(
    "grad_y, y, message",
    [
        (torch.ones(3), torch.ones(3, dtype=torch.int64), "exp_backward: y must be float32 or float64, got Long"),
        (torch.ones(3, dtype=torch.int32), torch.ones(3), "exp_backward: grad_y must be float32 or float64, got Int"),
        (torch.ones(3), torch.ones(3, dtype=torch.float64), "exp_backward: grad_y has dtype Float but y has Double"),
        (torch.ones(2), torch.ones(3), r"exp_backward: grad_y has shape \[2\] but y has \[3\]"),
        (torch.ones(1, 3), torch.ones(3), r"exp_backward: grad_y has shape \[1, 3\] but y has \[3\]"),
        (torch.ones(3, device="meta"), torch.ones(3), "exp_backward: grad_y is on a device other than cpu and cuda"),
        (torch.ones(3), torch.ones(3, device="meta"), "exp_backward: y is on a device other than cpu and cuda"),
    ],
)
def test_bad_backward_inputs_raise_a_runtime_error_naming_the_argument(exp_ext, grad_y, y, message):
    with pytest.raises(RuntimeError, match=message):
        exp_ext.exp_backward(grad_y, y)
