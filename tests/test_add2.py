"""add2 (c = a + b) on each target (cpu; cuda with a GPU): against torch on irregular sizes, and every bad input; the
op as a torch custom op (opcheck, its fake, its own autograd formula) and the notebook's Function under
torch.compile."""

import pytest
import torch
from conftest import on
from torch._subclasses.fake_tensor import FakeTensorMode

import helpers

pytestmark = pytest.mark.usefixtures("on_target_device")  # every test runs on each target present


@pytest.fixture(scope="module")
def add2_ext(target):
    return helpers.load_kernel("add2", target=target, quiet=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(0,), (1,), (1023,), (1025,), (2**20 + 3,), (3, 0, 5), (7, 11, 13)])
def test_matches_torch(add2_ext, shape, dtype):
    a, b = torch.randn(shape, dtype=dtype), torch.randn(shape, dtype=dtype)
    c = add2_ext.add2(a, b)
    assert c.shape == a.shape and c.dtype == dtype
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)  # one rounding, as torch does


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", [1, 3, 4, 5, 1023, 4099])
@pytest.mark.parametrize("offset", [0, 1, 2])  # views that start past a 16-byte boundary take the plain path
def test_both_kernels_on_aligned_and_misaligned_views(add2_ext, n, offset, dtype):
    a, b = torch.randn(n + offset, dtype=dtype)[offset:], torch.randn(n + 3, dtype=dtype)[3:]
    for op in (add2_ext.add2, add2_ext.add2_v1):
        torch.testing.assert_close(op(a, b), a + b, rtol=0, atol=0)


def test_non_contiguous_inputs(add2_ext):
    a, b = torch.randn(64, 33).t(), torch.randn(33, 64)
    torch.testing.assert_close(add2_ext.add2(a, b), a + b, rtol=0, atol=0)


@pytest.mark.parametrize(
    "a, b, message",
    [
        (
            torch.ones(3, dtype=torch.int32),
            torch.ones(3, dtype=torch.int32),
            "add2: a must be float32 or float64, got Int",
        ),
        (torch.ones(3), torch.ones(3, dtype=torch.float16), "add2: b must be float32 or float64, got Half"),
        (torch.ones(3), torch.ones(3, dtype=torch.bool), "add2: b must be float32 or float64, got Bool"),
        (torch.ones(3), torch.ones(3, dtype=torch.float64), "add2: b has dtype Double but a has Float"),
        (torch.ones(3), torch.ones(4), r"add2: b has shape \[4\] but a has \[3\]"),
        (torch.ones(2, 3), torch.ones(3, 2), r"add2: b has shape \[3, 2\] but a has \[2, 3\]"),
        # a meta tensor sends the call to the fake implementation, which makes the binding's checks too
        (torch.ones(3), torch.ones(3, device="meta"), "add2: b is on meta but a is on cpu"),
        (torch.ones(3, device="meta"), torch.ones(3), "add2: b is on cpu but a is on meta"),
        (torch.ones(3, device="meta"), torch.ones(4, device="meta"), r"add2: b has shape \[4\] but a has \[3\]"),
        (
            torch.ones(3, dtype=torch.int64, device="meta"),
            torch.ones(3, device="meta"),
            "add2: a must be float32 or float64, got Long",
        ),
        (
            torch.ones(3, device="meta"),
            torch.ones(3, dtype=torch.bool, device="meta"),
            "add2: b must be float32 or float64, got Bool",  # c10's name, as the binding gives it
        ),
    ],
)
def test_bad_inputs_raise_a_runtime_error_naming_the_argument(add2_ext, target_device, a, b, message):
    with pytest.raises(RuntimeError, match=message.replace("cpu", target_device)):
        add2_ext.add2(*on(target_device, a, b))


# --- add2 as a torch custom op ----------------------------------------------------------------------


def add2_reference(a, b):
    return a + b


@pytest.fixture(scope="module")
def add2_fn(add2_ext, notebook_code):
    """The notebook's own autograd Function, AddFunction.apply."""
    return notebook_code("01_add2_sum_of_squares", "autograd-function", torch=torch, add2_ext=add2_ext)["add2"]


def test_the_op_is_differentiable_by_itself(add2_ext):
    # The formula registered in kernels/add2_ops.py, without the notebook's Function.
    a = torch.randn(1025, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(1025, 3, dtype=torch.float64, requires_grad=True)
    c, ref = add2_ext.add2(a * a, b), add2_reference(a * a, b)
    grad_c = torch.randn_like(c)
    got = torch.autograd.grad(c, (a, b), grad_c)
    expected = torch.autograd.grad(ref, (a, b), grad_c)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=0, atol=0)
    inputs = [torch.randn(33, dtype=torch.float64, requires_grad=True) for _ in range(2)]
    assert torch.autograd.gradcheck(add2_ext.add2, inputs) and torch.autograd.gradcheck(add2_ext.add2_v1, inputs)


def test_notebook_function_matches_torch(add2_fn):
    a = torch.randn(1025, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(1025, 3, dtype=torch.float64, requires_grad=True)
    out, ref = add2_fn(a, b), add2_reference(a, b)
    torch.testing.assert_close(out, ref, rtol=0, atol=0)
    grad = torch.randn_like(out)
    for g, e in zip(torch.autograd.grad(out, (a, b), grad), torch.autograd.grad(ref, (a, b), grad)):
        torch.testing.assert_close(g, e, rtol=0, atol=0)


def test_compiled_model_matches_eager(add2_fn):
    a = torch.randn(1025, 3, requires_grad=True)
    b = torch.randn(1025, 3, requires_grad=True)

    def sum_of_squares(a, b):  # the notebook's toy model
        return add2_fn(a * a, b * b).sum()

    helpers.check_compiled(sum_of_squares, a, b)


def test_the_fake_rejects_bad_inputs_with_the_binding_message(add2_ext):
    with FakeTensorMode():  # what torch.compile traces with
        a = torch.empty(3, 5)
        assert add2_ext.add2(a, a).shape == (3, 5)
        with pytest.raises(RuntimeError, match=r"add2: b has shape \[5, 3\] but a has \[3, 5\]"):
            add2_ext.add2(a, torch.empty(5, 3))
        with pytest.raises(RuntimeError, match="add2: b has dtype Double but a has Float"):
            add2_ext.add2(a, torch.empty(3, 5, dtype=torch.float64))
