"""template_op, y = f(x, alpha), written by `make new-op`.

On each target (cpu; cuda with a GPU): forward and backward against the notebook's reference on irregular
sizes, gradcheck, every bad input; the ops as torch custom ops (opcheck, their fakes, the op's own autograd
formula) and under torch.compile. tests/test_op_contract.py also holds them to the contract every op keeps
(their sample calls: the line make new-op added to tests/op_samples.py).

A new f needs no change here: the math comes from the notebook's cell tagged `reference`,
in notebooks/NN_template_op.ipynb. Add what is particular to your op: values you know by heart, an edge
(a kink at 0, a large input).
"""

import pytest
import torch
from conftest import on
from torch._subclasses.fake_tensor import FakeTensorMode

import helpers
from kp.notebooks import tagged_code

REFERENCE = tagged_code("NN_template_op", "reference", torch=torch)  # the notebook's own reference
template_op_reference = REFERENCE["template_op_reference"]
ALPHA = REFERENCE["ALPHA"]  # scalar-only
FORWARD, BACKWARD = "template_op", "template_op_backward"  # as the ops' error messages name them
SHAPES = [(0,), (1,), (1023,), (1025,), (2**20 + 3,), (3, 0, 5), (7, 11, 13)]

pytestmark = pytest.mark.usefixtures("on_target_device")  # every test runs on each target present


@pytest.fixture(scope="module")
def ext(target):
    return helpers.load_kernel("template_op", target=target, quiet=True)


@pytest.fixture(scope="module")
def template_op(ext, notebook_code):
    """The notebook's own autograd Function, TemplateOp.apply."""
    names = {"torch": torch, "template_op_ext": ext}
    return notebook_code("NN_template_op", "autograd-function", **names)["template_op"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_forward_and_backward_match_the_reference(template_op, shape, dtype):
    x = (3 * torch.randn(shape, dtype=dtype)).requires_grad_()
    y, ref = template_op(x, ALPHA), template_op_reference(x, ALPHA)
    assert y.shape == x.shape and y.dtype == dtype
    torch.testing.assert_close(y, ref)
    grad_y = torch.randn_like(y)
    (got,) = torch.autograd.grad(y, x, grad_y)
    (expected,) = torch.autograd.grad(ref, x, grad_y)
    torch.testing.assert_close(got, expected)


def test_gradcheck_float64(template_op):
    for shape in [(1,), (33,), (5, 7)]:
        x = (3 * torch.randn(shape, dtype=torch.float64)).requires_grad_()
        assert torch.autograd.gradcheck(template_op, [x, ALPHA])


def test_the_op_is_differentiable_by_itself(ext):
    # The formula registered in kernels/template_op_ops.py, without the notebook's Function.
    x = (3 * torch.randn(1025, 3, dtype=torch.float64)).requires_grad_()
    y, ref = ext.template_op(x, ALPHA), template_op_reference(x, ALPHA)
    grad_y = torch.randn_like(y)
    (got,) = torch.autograd.grad(y, x, grad_y)
    (expected,) = torch.autograd.grad(ref, x, grad_y)
    torch.testing.assert_close(got, expected)
    x = torch.randn(33, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ext.template_op, [x, ALPHA])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n, offset", [(1, 0), (5, 0), (1027, 0), (5, 1), (1027, 1), (1027, 3)])
def test_16_byte_packs_and_misaligned_views(ext, n, offset, dtype):
    """The kernels move 16-byte Packs where the tensors are aligned; views starting past a boundary go one by one."""
    x = (3 * torch.randn(n + offset, dtype=dtype))[offset:].requires_grad_()
    grad_y = torch.randn(n + 1, dtype=dtype)[1:]
    ref = template_op_reference(x, ALPHA)
    (expected,) = torch.autograd.grad(ref, x, grad_y)
    with torch.no_grad():
        torch.testing.assert_close(ext.template_op(x, ALPHA), ref)
        torch.testing.assert_close(ext.template_op_backward(grad_y, x, ALPHA), expected)


def test_non_contiguous_and_expanded_inputs(ext):
    x = torch.randn(64, 33).t()
    torch.testing.assert_close(ext.template_op(x, ALPHA), template_op_reference(x, ALPHA))
    grad_y = torch.ones(()).expand(33, 64)  # what the backward of .sum() hands in: stride 0
    expected = ext.template_op_backward(torch.ones(33, 64), x.contiguous(), ALPHA)
    torch.testing.assert_close(ext.template_op_backward(grad_y, x, ALPHA), expected)


@pytest.mark.parametrize(
    "x, message",
    [
        (torch.ones(3, dtype=torch.int32), f"{FORWARD}: x must be float32 or float64, got Int"),
        (torch.ones(3, dtype=torch.float16), f"{FORWARD}: x must be float32 or float64, got Half"),
        # on the meta device the fake implementation answers, with the binding's checks
        (torch.ones(3, dtype=torch.int32, device="meta"), f"{FORWARD}: x must be float32 or float64, got Int"),
    ],
)
def test_bad_forward_inputs_raise_a_runtime_error_naming_the_argument(ext, target_device, x, message):
    with pytest.raises(RuntimeError, match=message):
        ext.template_op(on(target_device, x), ALPHA)


@pytest.mark.parametrize(
    "grad_y, x, message",
    [
        (torch.ones(3), torch.ones(3, dtype=torch.int64), f"{BACKWARD}: x must be float32 or float64, got Long"),
        (torch.ones(3, dtype=torch.int32), torch.ones(3), f"{BACKWARD}: grad_y must be float32 or float64, got Int"),
        (torch.ones(3, dtype=torch.float64), torch.ones(3), f"{BACKWARD}: grad_y has dtype Double but x has Float"),
        (torch.ones(4), torch.ones(3), rf"{BACKWARD}: grad_y has shape \[4\] but x has \[3\]"),
        # a meta tensor sends the call to the fake implementation, which refuses mixed devices
        (torch.ones(3, device="meta"), torch.ones(3), f"{BACKWARD}: grad_y is on meta but x is on cpu"),
    ],
)
def test_bad_backward_inputs_raise_a_runtime_error_naming_the_argument(ext, target_device, grad_y, x, message):
    with pytest.raises(RuntimeError, match=message.replace("cpu", target_device)):
        ext.template_op_backward(*on(target_device, grad_y, x), ALPHA)


# --- the ops as torch custom ops ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_opcheck(ext, dtype):
    """Schema, fake, autograd registration and dispatch agree with the kernels (torch.library.opcheck)."""
    x = torch.randn(7, 11, 13, dtype=dtype, requires_grad=True)
    grad_y = torch.randn(7, 11, 13, dtype=dtype)
    calls = {FORWARD: [x, ALPHA], BACKWARD: [grad_y, x.detach(), ALPHA]}
    for op, args in calls.items():
        result = torch.library.opcheck(getattr(ext, op).default, args)
        assert set(result.values()) == {"SUCCESS"}, (op, result)


def test_the_fake_rejects_bad_inputs_with_the_binding_message(ext):
    with FakeTensorMode():  # what torch.compile traces with
        x = torch.empty(3, 5)
        assert ext.template_op_backward(x, x, ALPHA).shape == (3, 5)
        with pytest.raises(RuntimeError, match=rf"{BACKWARD}: grad_y has shape \[5, 3\] but x has \[3, 5\]"):
            ext.template_op_backward(torch.empty(5, 3), x, ALPHA)
        with pytest.raises(RuntimeError, match=f"{FORWARD}: x must be float32 or float64, got Long"):
            ext.template_op(torch.empty(3, dtype=torch.int64), ALPHA)


def test_compiled_model_matches_eager(template_op):
    x = torch.linspace(-3, 3, 1025)
    w = torch.randn((), requires_grad=True)

    def loss(w, x):  # a model through the notebook's Function, traced whole (torch.compile(fullgraph=True))
        return (template_op(w * x, ALPHA) - torch.sin(x)).pow(2).mean()

    helpers.check_compiled(loss, w, x)
