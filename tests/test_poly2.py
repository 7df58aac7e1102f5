"""poly2 (y = x² + 2x) on the CPU stand-in: forward and backward against torch, gradcheck, every bad input."""

import pytest
import torch

import helpers

SHAPES = [(0,), (1,), (1023,), (1025,), (2**20 + 3,), (3, 0, 5), (7, 11, 13)]


@pytest.fixture(scope="module")
def poly2_ext():
    return helpers.load_kernel("poly2", target="cpu", quiet=True)


@pytest.fixture(scope="module")
def poly2(poly2_ext):
    class P2(torch.autograd.Function):  # as in notebooks/03_poly2_tan_fit.ipynb
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return poly2_ext.poly2(x)

        @staticmethod
        def backward(ctx, grad_y):
            (x,) = ctx.saved_tensors
            return poly2_ext.poly2_backward(grad_y, x) if ctx.needs_input_grad[0] else None

    return P2.apply


def poly2_reference(x):
    return x * x + 2 * x


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_forward_and_backward_match_torch(poly2, shape, dtype):
    x = torch.randn(shape, dtype=dtype, requires_grad=True)
    y, ref = poly2(x), poly2_reference(x)
    assert y.shape == x.shape and y.dtype == dtype
    torch.testing.assert_close(y, ref)
    grad_y = torch.randn_like(y)
    (got,) = torch.autograd.grad(y, x, grad_y)
    (expected,) = torch.autograd.grad(ref, x, grad_y)
    torch.testing.assert_close(got, expected)


def test_backward_is_the_fixed_formula(poly2_ext):
    # dP2/dx = 2x + 2: zero at x = -1, 2 at x = 0, 8 at x = 3 (the seed's typo never ran)
    x = torch.tensor([-1.0, 0.0, 3.0], dtype=torch.float64)
    torch.testing.assert_close(poly2_ext.poly2_backward(torch.ones_like(x), x), torch.tensor([0.0, 2.0, 8.0]).double())
    torch.testing.assert_close(poly2_ext.poly2(x), torch.tensor([-1.0, 0.0, 15.0]).double(), rtol=0, atol=0)


def test_gradcheck_float64(poly2):
    for shape in [(1,), (33,), (5, 7)]:
        x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(poly2, (x,))


def test_non_contiguous_and_expanded_inputs(poly2_ext):
    x = torch.randn(64, 33).t()
    torch.testing.assert_close(poly2_ext.poly2(x), poly2_reference(x))
    grad_y = torch.ones(()).expand(33, 64)  # what the backward of .sum() hands in: stride 0
    torch.testing.assert_close(poly2_ext.poly2_backward(grad_y, x), 2 * x + 2)


@pytest.mark.parametrize(
    "x, message",
    [
        (torch.ones(3, dtype=torch.int32), "poly2: x must be float32 or float64, got Int"),
        (torch.ones(3, dtype=torch.float16), "poly2: x must be float32 or float64, got Half"),
        (
            torch.ones(3, device="meta"),
            "poly2: x is on a device other than cpu and cuda, but this build takes cpu tensors",
        ),
    ],
)
def test_bad_forward_inputs_raise_a_runtime_error_naming_the_argument(poly2_ext, x, message):
    with pytest.raises(RuntimeError, match=message):
        poly2_ext.poly2(x)


@pytest.mark.parametrize(
    "grad_y, x, message",
    [
        (torch.ones(3), torch.ones(3, dtype=torch.int64), "poly2_backward: x must be float32 or float64, got Long"),
        (torch.ones(3, dtype=torch.int32), torch.ones(3), "poly2_backward: grad_y must be float32 or float64, got Int"),
        (torch.ones(3, dtype=torch.float64), torch.ones(3), "poly2_backward: grad_y has dtype Double but x has Float"),
        (torch.ones(4), torch.ones(3), r"poly2_backward: grad_y has shape \[4\] but x has \[3\]"),
        (torch.ones(3, 1), torch.ones(3), r"poly2_backward: grad_y has shape \[3, 1\] but x has \[3\]"),
        (torch.ones(3, device="meta"), torch.ones(3), "poly2_backward: grad_y is on a device other than cpu and cuda"),
        (torch.ones(3), torch.ones(3, device="meta"), "poly2_backward: x is on a device other than cpu and cuda"),
    ],
)
def test_bad_backward_inputs_raise_a_runtime_error_naming_the_argument(poly2_ext, grad_y, x, message):
    with pytest.raises(RuntimeError, match=message):
        poly2_ext.poly2_backward(grad_y, x)
