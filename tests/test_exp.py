"""exp (y = exp(x)) on each target (cpu; cuda with a GPU): forward and backward against torch, overflow, gradcheck,
every bad input; the ops as torch custom ops (opcheck, their fakes, the op's own autograd formula) and under
torch.compile."""

import pytest
import torch
from conftest import on
from torch._subclasses.fake_tensor import FakeTensorMode

import helpers

SHAPES = [(0,), (1,), (1023,), (1025,), (2**20 + 3,), (3, 0, 5), (7, 11, 13)]


pytestmark = pytest.mark.usefixtures("on_target_device")  # every test runs on each target present


@pytest.fixture(scope="module")
def exp_ext(target):
    return helpers.load_kernel("exp", target=target, quiet=True)


@pytest.fixture(scope="module")
def exp(exp_ext, notebook_code):
    """The notebook's own autograd Function, Exp.apply."""
    return notebook_code("04_exp_activation", "autograd-function", torch=torch, exp_ext=exp_ext)["exp"]


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
        # on the meta device the fake implementation answers, with the binding's checks
        (torch.ones(3, dtype=torch.int32, device="meta"), "exp: x must be float32 or float64, got Int"),
    ],
)
def test_bad_forward_inputs_raise_a_runtime_error_naming_the_argument(exp_ext, target_device, x, message):
    with pytest.raises(RuntimeError, match=message):
        exp_ext.exp(on(target_device, x))


@pytest.mark.parametrize(
    "grad_y, y, message",
    [
        (torch.ones(3), torch.ones(3, dtype=torch.int64), "exp_backward: y must be float32 or float64, got Long"),
        (torch.ones(3, dtype=torch.int32), torch.ones(3), "exp_backward: grad_y must be float32 or float64, got Int"),
        (torch.ones(3), torch.ones(3, dtype=torch.float64), "exp_backward: grad_y has dtype Float but y has Double"),
        (torch.ones(2), torch.ones(3), r"exp_backward: grad_y has shape \[2\] but y has \[3\]"),
        (torch.ones(1, 3), torch.ones(3), r"exp_backward: grad_y has shape \[1, 3\] but y has \[3\]"),
        # a meta tensor sends the call to the fake implementation, which refuses mixed devices
        (torch.ones(3, device="meta"), torch.ones(3), "exp_backward: grad_y is on meta but y is on cpu"),
        (torch.ones(3), torch.ones(3, device="meta"), "exp_backward: grad_y is on cpu but y is on meta"),
    ],
)
def test_bad_backward_inputs_raise_a_runtime_error_naming_the_argument(exp_ext, target_device, grad_y, y, message):
    with pytest.raises(RuntimeError, match=message.replace("cpu", target_device)):
        exp_ext.exp_backward(*on(target_device, grad_y, y))


# --- exp and exp_backward as torch custom ops ------------------------------------------------------


def test_the_op_is_differentiable_by_itself(exp_ext):
    # The formula registered in kernels/exp_ops.py, without the notebook's Function.
    x = (4 * torch.randn(1025, 3, dtype=torch.float64)).requires_grad_()
    y, ref = exp_ext.exp(x), torch.exp(x)
    grad_y = torch.randn_like(y)
    (got,) = torch.autograd.grad(y, x, grad_y)
    (expected,) = torch.autograd.grad(ref, x, grad_y)
    torch.testing.assert_close(got, expected)
    assert torch.autograd.gradcheck(exp_ext.exp, (torch.randn(33, dtype=torch.float64, requires_grad=True),))


def test_compiled_model_matches_eager(exp):
    x = torch.randn(1025, 3)
    k = torch.poisson(torch.full((1025,), 2.0))
    w = (0.1 * torch.randn(3)).requires_grad_()
    b = torch.zeros((), requires_grad=True)

    def poisson_nll(w, b, x, k):  # the notebook's toy model
        eta = x @ w + b
        return (exp(eta) - k * eta).mean()

    helpers.check_compiled(poisson_nll, w, b, x, k)


def test_the_fake_rejects_bad_inputs_with_the_binding_message(exp_ext):
    with FakeTensorMode():  # what torch.compile traces with
        y = torch.empty(3, 5)
        assert exp_ext.exp_backward(y, y).shape == (3, 5)
        with pytest.raises(RuntimeError, match=r"exp_backward: grad_y has shape \[15\] but y has \[3, 5\]"):
            exp_ext.exp_backward(torch.empty(15), y)
        with pytest.raises(RuntimeError, match="exp_backward: grad_y has dtype Double but y has Float"):
            exp_ext.exp_backward(torch.empty(3, 5, dtype=torch.float64), y)
        with pytest.raises(RuntimeError, match="exp: x must be float32 or float64, got BFloat16"):
            exp_ext.exp(torch.empty(3, dtype=torch.bfloat16))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n, offset", [(1, 0), (5, 0), (1027, 0), (5, 1), (1027, 1), (1027, 3)])
def test_16_byte_packs_and_misaligned_views(exp_ext, n, offset, dtype):
    """The kernels move 16-byte Packs where the tensors are aligned; views starting past a boundary go one by one."""
    x, g = torch.randn(n + offset, dtype=dtype)[offset:], torch.randn(n + 1, dtype=dtype)[1:]
    torch.testing.assert_close(exp_ext.exp(x), torch.exp(x))
    torch.testing.assert_close(exp_ext.exp_backward(g, x), g * x, rtol=0, atol=0)
