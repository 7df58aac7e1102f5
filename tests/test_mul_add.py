"""mul (w * x) and add (x + b) with broadcasting on each target (cpu; cuda with a GPU): forward and backward against
torch for every broadcast case, gradcheck, the dim limit, and every bad input; the ops as torch custom ops (opcheck,
their fakes, the ops' own autograd formulas) and the notebook's Functions under torch.compile."""

import pytest
import torch
from conftest import on
from torch._subclasses.fake_tensor import FakeTensorMode

import helpers

N = 2**20 + 3
# (shape of the first input, shape of the second): every broadcast case the ops promise.
CASES = {
    "equal-0": ((0,), (0,)),
    "equal-1": ((1,), (1,)),
    "equal-1023": ((1023,), (1023,)),
    "equal-1025": ((1025,), (1025,)),
    "equal-2^20+3": ((N,), (N,)),
    "equal-3d": ((7, 11, 13), (7, 11, 13)),
    "0dim-first": ((), (1025,)),
    "0dim-second": ((1023, 3), ()),
    "0dim-both": ((), ()),
    "0dim-vs-empty": ((), (0,)),
    "size1-first": ((1,), (N,)),
    "size1-second": ((1025,), (1,)),
    "size1-vs-2d": ((1, 1), (7, 11)),
    "size1-vs-empty": ((1,), (3, 0)),
    "row-vs-column": ((1, 1023), (5, 1)),
    "column-vs-row": ((37, 1), (1024,)),  # bench/ops.py's "mul, broadcast": Packs of x, one value of w per row
    "middle-dim": ((3, 1, 5), (4, 1)),
    "interleaved": ((2, 1, 3), (1, 4, 1)),
    "leading-dims": ((7, 11, 13), (13,)),
    "mixed-3d": ((7, 1, 13), (7, 11, 1)),
}


pytestmark = pytest.mark.usefixtures("on_target_device")  # every test runs on each target present


@pytest.fixture(scope="module")
def mul_add_ext(target):
    return helpers.load_kernel("mul_add", target=target, quiet=True)


@pytest.fixture(scope="module")
def functions(mul_add_ext, notebook_code):
    """The notebook's own autograd Functions: {"mul": CustomMul.apply, "add": CustomAdd.apply, ...}."""
    return notebook_code("02_mul_add", "autograd-function", torch=torch, mul_add_ext=mul_add_ext)


@pytest.fixture(scope="module")
def mul(functions):
    return functions["mul"]


@pytest.fixture(scope="module")
def add(functions):
    return functions["add"]


def check_forward_and_backward(op, reference, shape_a, shape_b, dtype):
    a = torch.randn(shape_a, dtype=dtype, requires_grad=True)
    b = torch.randn(shape_b, dtype=dtype, requires_grad=True)
    out, ref = op(a, b), reference(a, b)
    assert out.shape == ref.shape and out.dtype == dtype
    torch.testing.assert_close(out, ref, rtol=0, atol=0)  # one rounding, as torch does
    grad_out = torch.randn_like(out)
    got = torch.autograd.grad(out, (a, b), grad_out)
    for g, e, bound, inp in zip(got, *exact_gradients(reference, a, b, grad_out), (a, b)):
        assert g.shape == inp.shape and g.dtype == dtype  # a broadcast input's gradient is summed back to its shape
        assert ((g.double() - e).abs() <= bound).all(), (g, e, bound)


def exact_gradients(reference, a, b, grad_out):
    """The gradients of reference(a, b) in float64, and how far a `dtype` kernel may be from them: a broadcast input's
    gradient sums n products of its dtype, in whatever order, off by at most (n + 1) eps sum|terms| (Higham, Accuracy
    and Stability of Numerical Algorithms, 3.1 and 4.2); torch's own float32 sum is within that too."""
    a64, b64 = (t.detach().double().requires_grad_() for t in (a, b))
    exact = torch.autograd.grad(reference(a64, b64), (a64, b64), grad_out.double())
    a_abs, b_abs = (t.detach().double().abs().requires_grad_() for t in (a, b))
    sums = torch.autograd.grad(reference(a_abs, b_abs), (a_abs, b_abs), grad_out.double().abs())
    eps = torch.finfo(a.dtype).eps
    bounds = [(grad_out.numel() / max(t.numel(), 1) + 1) * eps * s for t, s in zip((a, b), sums)]
    return exact, bounds


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_mul_matches_torch(mul, case, dtype):
    check_forward_and_backward(mul, torch.mul, *CASES[case], dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_add_matches_torch(add, case, dtype):
    check_forward_and_backward(add, torch.add, *CASES[case], dtype)


# Small shapes: gradcheck builds the full Jacobian, one column per input element.
GRADCHECK_CASES = [((33,), (33,)), ((), (5, 7)), ((17,), (1,)), ((3, 1, 5), (4, 1)), ((3, 1, 5), (3, 4, 1))]


@pytest.mark.parametrize("shape_a, shape_b", GRADCHECK_CASES, ids=str)
def test_gradcheck_float64(mul, add, shape_a, shape_b):
    for op in (mul, add):
        a = torch.randn(shape_a, dtype=torch.float64, requires_grad=True)
        b = torch.randn(shape_b, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(op, (a, b))


def test_the_seed_example(mul, add):
    w = torch.tensor([[2.0, 3.0]], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    x = torch.tensor([[4.0, 5.0]])
    out = add(b, mul(w, x).sum())
    out.backward()
    assert out.tolist() == [26.0]
    assert w.grad.tolist() == [[4.0, 5.0]] and b.grad.tolist() == [1.0] and x.grad is None


def test_a_gradient_that_is_not_needed_is_not_computed(mul_add_ext, mul, add):
    w, x = torch.randn(3, 1), torch.randn(4)
    grad_out = torch.randn(3, 4)
    assert mul_add_ext.mul_backward(grad_out, w, x, False, False) == (None, None)
    grad_w, grad_x = mul_add_ext.mul_backward(grad_out, w, x, True, False)
    assert grad_x is None
    torch.testing.assert_close(grad_w, (grad_out * x).sum(1, keepdim=True))
    grad_w, grad_x = mul_add_ext.mul_backward(grad_out, w, x, False, True)
    assert grad_w is None
    torch.testing.assert_close(grad_x, (grad_out * w).sum(0))
    for op in (mul, add):  # through the Functions: only the input that asks gets a gradient
        w = torch.randn(3, 1, requires_grad=True)
        op(w, x).sum().backward()
        assert w.grad is not None and w.grad.shape == w.shape and x.grad is None


def test_non_contiguous_offset_and_expanded_inputs(mul_add_ext):
    base = torch.randn(40, 67)
    a = base.t()[5:, 3:]  # transposed, with a storage offset
    b = torch.randn(62, 1).expand(62, 37)  # stride 0 along dim 1, not a copy
    c = torch.randn(74)[::2]  # a strided 1-d view
    for x, y in [(a, b), (a, c), (b, c), (c, a)]:
        torch.testing.assert_close(mul_add_ext.mul(x, y), x * y, rtol=0, atol=0)
        torch.testing.assert_close(mul_add_ext.add(x, y), x + y, rtol=0, atol=0)
    # Rows of whole Packs, from views that start off 16-byte alignment: a column broadcast along the rows
    # needs no alignment (one value per row); a row that the threads step through does.
    column, row = torch.randn(38, 1)[1:], torch.randn(1025)[1:]
    for x, y in [(column, torch.randn(1024)), (torch.randn(37, 1), row), (column, row)]:
        torch.testing.assert_close(mul_add_ext.mul(x, y), x * y, rtol=0, atol=0)
        torch.testing.assert_close(mul_add_ext.add(x, y), x + y, rtol=0, atol=0)
    grad_out = torch.ones(()).expand(62, 37)  # what the backward of .sum() hands in
    grad_w, grad_x = mul_add_ext.mul_backward(grad_out, a, c, True, True)
    torch.testing.assert_close(grad_w, c.expand(62, 37))
    torch.testing.assert_close(grad_x, a.sum(0))


def test_sum_to(mul_add_ext):
    g = torch.randn(3, 4, 5, dtype=torch.float64)
    for shape in [(3, 4, 5), (4, 5), (5,), (1, 5), (3, 1, 5), (3, 4, 1), (1, 1, 1), (1,), ()]:
        expected = g.sum_to_size(shape) if shape else g.sum()
        got = mul_add_ext.sum_to(g, list(shape))
        assert got.shape == torch.Size(shape)
        torch.testing.assert_close(got, expected)
    # nothing to sum: still a new tensor, not g itself (the schema declares no alias)
    assert mul_add_ext.sum_to(g, [3, 4, 5]).data_ptr() != g.data_ptr()


def test_at_most_eight_dims_after_merging(mul_add_ext):
    # Alternating broadcast dims cannot merge: 8 such dims work, 9 are refused with the limit named.
    for ndim, ok in [(8, True), (9, False)]:
        a = torch.randn([2 if d % 2 else 1 for d in range(ndim)])
        b = torch.randn([1 if d % 2 else 3 for d in range(ndim)])
        if ok:
            torch.testing.assert_close(mul_add_ext.mul(a, b), a * b, rtol=0, atol=0)
            torch.testing.assert_close(mul_add_ext.add(a, b), a + b, rtol=0, atol=0)
        else:
            for op in ("mul", "add"):
                with pytest.raises(
                    RuntimeError,
                    match=f"{op}: .* broadcast to 9 dims that do not merge, but the kernels take at most 8",
                ):
                    getattr(mul_add_ext, op)(a, b)
    # Dims that merge do not count: equal contiguous shapes are one dim, however many they have.
    a, b = torch.randn([2] * 12), torch.randn([2] * 12)
    torch.testing.assert_close(mul_add_ext.mul(a, b), a * b, rtol=0, atol=0)


F32, F64 = torch.float32, torch.float64


@pytest.mark.parametrize("op, first, second", [("mul", "w", "x"), ("add", "x", "b")])
@pytest.mark.parametrize(
    "a, b, message",
    [
        (torch.ones(3, dtype=torch.int32), torch.ones(3), "{first} must be float32 or float64, got Int"),
        (torch.ones(3), torch.ones(3, dtype=torch.float16), "{second} must be float32 or float64, got Half"),
        (torch.ones(3), torch.ones(3, dtype=F64), "{second} has dtype Double but {first} has Float"),
        (torch.ones(3, dtype=F64), torch.ones(()), "{second} has dtype Float but {first} has Double"),
        (
            torch.ones(3),
            torch.ones(4),
            r"{first} has shape \[3\] and {second} has \[4\], which do not broadcast \(sizes 3 and 4 at dim 0 of the result\)",  # noqa: E501
        ),
        (
            torch.ones(2, 3),
            torch.ones(3, 2),
            r"{first} has shape \[2, 3\] and {second} has \[3, 2\], which do not broadcast \(sizes 2 and 3 at dim 0",
        ),
        (
            torch.ones(5, 1, 4),
            torch.ones(3, 3),
            r"{first} has shape \[5, 1, 4\] and {second} has \[3, 3\], which do not broadcast \(sizes 4 and 3 at dim 2",
        ),
        # a meta tensor sends the call to the fake implementation, which refuses mixed devices
        (torch.ones(3, device="meta"), torch.ones(3), "{second} is on cpu but {first} is on meta"),
        (torch.ones(3), torch.ones(3, device="meta"), "{second} is on meta but {first} is on cpu"),
    ],
)
def test_bad_inputs_raise_a_runtime_error_naming_the_argument(
    mul_add_ext, target_device, op, first, second, a, b, message
):
    message = message.format(first=first, second=second).replace("cpu", target_device)
    with pytest.raises(RuntimeError, match=f"{op}: " + message):
        getattr(mul_add_ext, op)(*on(target_device, a, b))


@pytest.mark.parametrize(
    "grad_out, w, x, message",
    [
        (torch.ones(2, 3), torch.ones(2, 1), torch.ones(3), None),  # fine: the reference row
        (
            torch.ones(3, 2),
            torch.ones(2, 1),
            torch.ones(3),
            r"grad_out has shape \[3, 2\] but w and x broadcast to \[2, 3\]",
        ),
        (torch.ones(3), torch.ones(2, 1), torch.ones(3), r"grad_out has shape \[3\] but w and x broadcast to \[2, 3\]"),
        (torch.ones(2, 3, dtype=F64), torch.ones(2, 1), torch.ones(3), "grad_out has dtype Double but w has Float"),
        (
            torch.ones(2, 3, dtype=torch.int64),
            torch.ones(2, 1),
            torch.ones(3),
            "grad_out must be float32 or float64, got Long",
        ),
        (torch.ones(2, 3, device="meta"), torch.ones(2, 1), torch.ones(3), "grad_out is on meta but w is on cpu"),
        (torch.ones(2, 3), torch.ones(2, 1), torch.ones(3, dtype=F64), "x has dtype Double but w has Float"),
        (torch.ones(2, 3), torch.ones(2, 1, dtype=torch.int32), torch.ones(3), "w must be float32 or float64, got Int"),
        (
            torch.ones(2, 3),
            torch.ones(2, 2),
            torch.ones(3),
            r"w has shape \[2, 2\] and x has \[3\], which do not broadcast",
        ),
    ],
)
def test_bad_mul_backward_inputs_raise_a_runtime_error_naming_the_argument(
    mul_add_ext, target_device, grad_out, w, x, message
):
    grad_out, w, x = on(target_device, grad_out, w, x)
    message = message and message.replace("cpu", target_device)
    if message is None:
        grad_w, grad_x = mul_add_ext.mul_backward(grad_out, w, x, True, True)
        assert grad_w.shape == w.shape and grad_x.shape == x.shape
        return
    with pytest.raises(RuntimeError, match="mul_backward: " + message):
        mul_add_ext.mul_backward(grad_out, w, x, True, True)


@pytest.mark.parametrize(
    "grad, shape, message",
    [
        (torch.ones(3, 4), [5], r"sum_to: shape \[5\] does not broadcast to grad's shape \[3, 4\]"),
        (torch.ones(3, 4), [2, 3, 4], r"sum_to: shape \[2, 3, 4\] does not broadcast to grad's shape \[3, 4\]"),
        (torch.ones(3, 4), [3, 2], r"sum_to: shape \[3, 2\] does not broadcast to grad's shape \[3, 4\]"),
        (torch.ones(3, dtype=torch.int32), [3], "sum_to: grad must be float32 or float64, got Int"),
        # on the meta device the fake implementation answers, with the binding's checks
        (
            torch.ones(3, 4, device="meta"),
            [4, 3],
            r"sum_to: shape \[4, 3\] does not broadcast to grad's shape \[3, 4\]",
        ),
        (torch.ones(3, dtype=torch.int32, device="meta"), [3], "sum_to: grad must be float32 or float64, got Int"),
    ],
)
def test_bad_sum_to_inputs_raise_a_runtime_error_naming_the_argument(mul_add_ext, target_device, grad, shape, message):
    with pytest.raises(RuntimeError, match=message):
        mul_add_ext.sum_to(on(target_device, grad), shape)


# --- mul, mul_backward, add and sum_to as torch custom ops ------------------------------------------


def randn(shape, dtype, requires_grad=False):
    return torch.randn(shape, dtype=dtype, requires_grad=requires_grad)


@pytest.mark.parametrize("case", ["equal-1025", "0dim-first", "row-vs-column", "mixed-3d"])
def test_the_ops_are_differentiable_by_themselves(mul_add_ext, case):
    # The formulas registered in kernels/mul_add_ops.py, without the notebook's Functions.
    for op, reference in [(mul_add_ext.mul, torch.mul), (mul_add_ext.add, torch.add)]:
        a = randn(CASES[case][0], torch.float64, requires_grad=True)
        b = randn(CASES[case][1], torch.float64, requires_grad=True)
        out, ref = op(a, b), reference(a, b)
        grad_out = torch.randn_like(out)
        got = torch.autograd.grad(out, (a, b), grad_out)
        expected = torch.autograd.grad(ref, (a, b), grad_out)
        for g, e, inp in zip(got, expected, (a, b)):
            assert g.shape == inp.shape
            torch.testing.assert_close(g, e)
    a = randn((3, 1, 5), torch.float64, requires_grad=True)
    b = randn((4, 1), torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(mul_add_ext.mul, (a, b)) and torch.autograd.gradcheck(mul_add_ext.add, (a, b))
    w, x = randn((3, 1), torch.float64, requires_grad=True), randn(4, torch.float64)
    mul_add_ext.mul(w, x).sum().backward()  # only the input that asks gets a gradient
    assert w.grad.shape == w.shape and x.grad is None


def test_compiled_model_matches_eager(mul, add):
    w = torch.randn(1, requires_grad=True)
    b = torch.randn(1, requires_grad=True)
    x = torch.randn(1000)
    y = 2.5 * x - 0.7

    def mse(w, b, x, y):  # the notebook's toy model: w and b of shape [1] broadcast against the batch
        return (add(mul(w, x), b) - y).pow(2).mean()

    helpers.check_compiled(mse, w, b, x, y)


def test_compiled_broadcasting_matches_eager(mul, add):
    w = torch.randn(3, 1, 5, requires_grad=True)
    x = torch.randn(4, 1, requires_grad=True)
    b = torch.randn((), requires_grad=True)
    helpers.check_compiled(lambda w, x, b: add(mul(w, x), b), w, x, b)


def test_the_fakes_reject_bad_inputs_with_the_binding_messages(mul_add_ext):
    with FakeTensorMode():  # what torch.compile traces with
        w, x = torch.empty(5, 1, 4), torch.empty(3, 1)
        assert mul_add_ext.mul(w, x).shape == (5, 3, 4)
        with pytest.raises(
            RuntimeError,
            match=r"mul: w has shape \[5, 1, 4\] and x has \[3, 3\], which do not broadcast \(sizes 4 and 3 at dim 2",
        ):
            mul_add_ext.mul(w, torch.empty(3, 3))
        with pytest.raises(RuntimeError, match=r"add: x has shape \[3\] and b has \[4\], which do not broadcast"):
            mul_add_ext.add(torch.empty(3), torch.empty(4))
        with pytest.raises(RuntimeError, match="add: b has dtype Double but x has Float"):
            mul_add_ext.add(torch.empty(3), torch.empty((), dtype=torch.float64))
        with pytest.raises(
            RuntimeError, match=r"mul_backward: grad_out has shape \[5, 4\] but w and x broadcast to \[5, 3, 4\]"
        ):
            mul_add_ext.mul_backward(torch.empty(5, 4), w, x, True, True)
        with pytest.raises(
            RuntimeError, match=r"sum_to: shape \[2, 3, 4\] does not broadcast to grad's shape \[3, 4\]"
        ):
            mul_add_ext.sum_to(torch.empty(3, 4), [2, 3, 4])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    "w_shape, x_shape, offset",
    [
        ((64, 8), (8,), 0),  # rows of 8: Packs from w, x repeated along nothing
        ((64, 1), (8,), 0),  # w broadcast along the row: one value repeated
        ((64, 8), (64, 8), 1),  # a view past a 16-byte boundary: one by one
        ((64, 6), (6,), 0),  # a row of 6 floats is not a whole number of Packs
        ((3, 1, 8), (5, 8), 0),
    ],
)
def test_rows_move_as_16_byte_packs_where_they_can(mul_add_ext, w_shape, x_shape, offset, dtype):
    w = torch.randn(torch.Size(w_shape).numel() + offset, dtype=dtype)[offset:].view(w_shape)
    x = torch.randn(x_shape, dtype=dtype, requires_grad=True)
    w.requires_grad_()
    for op, ref in ((mul_add_ext.mul, torch.mul), (mul_add_ext.add, torch.add)):
        out, expected = op(w, x), ref(w, x)
        torch.testing.assert_close(out, expected)
        g = torch.randn_like(out)
        for got, want in zip(torch.autograd.grad(out, (w, x), g), torch.autograd.grad(expected, (w, x), g)):
            torch.testing.assert_close(got, want)
