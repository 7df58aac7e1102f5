"""poly2 (y = x² + 2x) on each target (cpu; cuda with a GPU): forward and backward against torch, gradcheck, every bad
input; the ops as torch custom ops (opcheck, their fakes, the op's own autograd formula) and under torch.compile."""

import pytest
import torch
from conftest import on
from torch._subclasses.fake_tensor import FakeTensorMode

import helpers

SHAPES = [(0,), (1,), (1023,), (1025,), (2**20 + 3,), (3, 0, 5), (7, 11, 13)]


pytestmark = pytest.mark.usefixtures("on_target_device")  # every test runs on each target present


@pytest.fixture(scope="module")
def poly2_ext(target):
    return helpers.load_kernel("poly2", target=target, quiet=True)


@pytest.fixture(scope="module")
def poly2(poly2_ext, notebook_code):
    """The notebook's own autograd Function, P2.apply."""
    return notebook_code("03_poly2_tan_fit", "autograd-function", torch=torch, poly2_ext=poly2_ext)["p2"]


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


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", [(1,), (1023,), (1025,), (7, 11, 13)])
def test_half_types_round_each_step_as_torch_does(poly2_ext, shape, dtype):
    """float16 and bfloat16: each + and * through float, rounded to nearest even, in the kernel's order (x*x,
    then 2*x, then the sum; 2*x + 2, then the product), as torch's own half ops round: bit for bit, and the
    same on an unaligned view (the one-by-one path)."""
    x = (torch.randn(shape) * 30).to(dtype)
    grad_y = torch.randn(shape).to(dtype)
    for view in (slice(None), slice(1, None)):
        xv, gv = x.flatten()[view], grad_y.flatten()[view]
        assert torch.equal(poly2_ext.poly2(xv), xv * xv + 2 * xv)
        assert torch.equal(poly2_ext.poly2_backward(gv, xv), gv * (2 * xv + 2))


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
        (torch.ones(3, dtype=torch.int32), "poly2: x must be float32, float64, float16 or bfloat16, got Int"),
        (
            torch.ones(3, dtype=torch.complex64),
            "poly2: x must be float32, float64, float16 or bfloat16, got ComplexFloat",
        ),
        # on the meta device the fake implementation answers, with the binding's checks
        (
            torch.ones(3, dtype=torch.int32, device="meta"),
            "poly2: x must be float32, float64, float16 or bfloat16, got Int",
        ),
    ],
)
def test_bad_forward_inputs_raise_a_runtime_error_naming_the_argument(poly2_ext, target_device, x, message):
    with pytest.raises(RuntimeError, match=message):
        poly2_ext.poly2(on(target_device, x))


@pytest.mark.parametrize(
    "grad_y, x, message",
    [
        (
            torch.ones(3),
            torch.ones(3, dtype=torch.int64),
            "poly2_backward: x must be float32, float64, float16 or bfloat16, got Long",
        ),
        (
            torch.ones(3, dtype=torch.int32),
            torch.ones(3),
            "poly2_backward: grad_y must be float32, float64, float16 or bfloat16, got Int",
        ),
        (torch.ones(3, dtype=torch.float64), torch.ones(3), "poly2_backward: grad_y has dtype Double but x has Float"),
        (torch.ones(4), torch.ones(3), r"poly2_backward: grad_y has shape \[4\] but x has \[3\]"),
        (torch.ones(3, 1), torch.ones(3), r"poly2_backward: grad_y has shape \[3, 1\] but x has \[3\]"),
        # a meta tensor sends the call to the fake implementation, which refuses mixed devices
        (torch.ones(3, device="meta"), torch.ones(3), "poly2_backward: grad_y is on meta but x is on cpu"),
        (torch.ones(3), torch.ones(3, device="meta"), "poly2_backward: grad_y is on cpu but x is on meta"),
    ],
)
def test_bad_backward_inputs_raise_a_runtime_error_naming_the_argument(poly2_ext, target_device, grad_y, x, message):
    with pytest.raises(RuntimeError, match=message.replace("cpu", target_device)):
        poly2_ext.poly2_backward(*on(target_device, grad_y, x))


# --- poly2 and poly2_backward as torch custom ops --------------------------------------------------


def test_the_op_is_differentiable_by_itself(poly2_ext):
    # The formula registered in kernels/poly2_ops.py, without the notebook's Function.
    x = torch.randn(1025, 3, dtype=torch.float64, requires_grad=True)
    y, ref = poly2_ext.poly2(x), poly2_reference(x)
    grad_y = torch.randn_like(y)
    (got,) = torch.autograd.grad(y, x, grad_y)
    (expected,) = torch.autograd.grad(ref, x, grad_y)
    torch.testing.assert_close(got, expected)
    assert torch.autograd.gradcheck(poly2_ext.poly2, (torch.randn(33, dtype=torch.float64, requires_grad=True),))


def test_compiled_model_matches_eager(poly2):
    x = torch.linspace(-1.4, 1.4, 1025)
    a, b, c, d = (torch.randn((), requires_grad=True) for _ in range(4))

    def loss(a, b, c, d, x):  # the notebook's toy model
        return (a + b * poly2(c * x + d) - torch.tan(x)).pow(2).mean()

    helpers.check_compiled(loss, a, b, c, d, x)


def test_the_fake_rejects_bad_inputs_with_the_binding_message(poly2_ext):
    with FakeTensorMode():  # what torch.compile traces with
        x = torch.empty(3, 5)
        y = poly2_ext.poly2_backward(x, x)
        assert y.shape == (3, 5)
        with pytest.raises(RuntimeError, match=r"poly2_backward: grad_y has shape \[5, 3\] but x has \[3, 5\]"):
            poly2_ext.poly2_backward(torch.empty(5, 3), x)
        with pytest.raises(RuntimeError, match="poly2_backward: grad_y has dtype Double but x has Float"):
            poly2_ext.poly2_backward(torch.empty(3, 5, dtype=torch.float64), x)
        with pytest.raises(RuntimeError, match="poly2: x must be float32, float64, float16 or bfloat16, got Long"):
            poly2_ext.poly2(torch.empty(3, dtype=torch.int64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n, offset", [(1, 0), (5, 0), (1027, 0), (5, 1), (1027, 1), (1027, 3)])
def test_16_byte_packs_and_misaligned_views(poly2_ext, n, offset, dtype):
    """The kernels move 16-byte Packs where the tensors are aligned; views starting past a boundary go one by one."""
    x, g = torch.randn(n + offset, dtype=dtype)[offset:], torch.randn(n + 1, dtype=dtype)[1:]
    torch.testing.assert_close(poly2_ext.poly2(x), x * x + 2 * x)
    torch.testing.assert_close(poly2_ext.poly2_backward(g, x), g * (2 * x + 2))
