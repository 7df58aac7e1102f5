"""involution on each target (cpu; cuda with a GPU): forward and both gradients against the unfold reference on
irregular cases, gradcheck, the notebook's autograd Function and the op's own autograd formula
(kernels/involution_ops.py) launching only the gradients asked for, opcheck, torch.compile, and every bad input (in
the binding and in the fake implementations)."""

import re

import pytest
import torch
import torch.nn.functional as F
from conftest import on

import helpers
from kp.notebooks import tagged_code

pytestmark = pytest.mark.usefixtures("on_target_device")  # every test runs on each target present


@pytest.fixture(scope="module")
def involution_ext(target):
    return helpers.load_kernel("involution", target=target, quiet=True)


# The notebook's pure-torch reference (the official repository's naive version: unfold the K x K windows,
# weight them, sum), from its cell tagged "reference".
REFERENCE = tagged_code("06_involution", "reference", torch=torch, F=F)
involution_reference, out_size = REFERENCE["involution_reference"], REFERENCE["out_size"]


@pytest.fixture(scope="module")
def notebook(involution_ext, notebook_code):
    """The notebook's cells tagged autograd-function: InvolutionFunction, `involution` (its apply) and the
    Involution2d layer, over this build."""
    return notebook_code("06_involution", "autograd-function", torch=torch, nn=torch.nn, involution_ext=involution_ext)


@pytest.fixture(scope="module")
def involution_fn(notebook):
    return notebook["involution"]


def make_inputs(N, C, H, W, G, KH, KW, stride, padding, dilation, dtype=torch.float64):
    input = torch.randn(N, C, H, W, dtype=dtype)
    H_out, W_out = out_size(H, KH, stride, padding, dilation), out_size(W, KW, stride, padding, dilation)
    weight = torch.randn(N, G, KH, KW, H_out, W_out, dtype=dtype)
    return input, weight


# (N, C, H, W, G, KH, KW, stride, padding, dilation). The kernels launch 256 threads per block; no launch
# of these cases is a multiple of it, and some are smaller than one block (the test below checks).
CASES = {
    "odd H W, groups 1, K 3": (2, 6, 9, 11, 1, 3, 3, 1, 1, 1),
    "stride 2, groups 4": (2, 8, 13, 10, 4, 3, 3, 2, 1, 1),
    "dilation 2, K 7, groups 4": (1, 4, 15, 17, 4, 7, 7, 1, 6, 2),
    "K 7, stride 2, dilation 2": (2, 8, 19, 14, 2, 7, 7, 2, 5, 2),
    "K 3 x 5, no padding": (2, 4, 7, 9, 2, 3, 5, 1, 0, 1),
    "K 1, stride 3: pixels no window reads": (1, 2, 10, 8, 2, 1, 1, 3, 0, 1),
    "padding beyond the kernel": (1, 4, 6, 5, 1, 3, 3, 1, 3, 1),
    "smaller than a block": (1, 2, 5, 3, 1, 3, 3, 1, 1, 1),
    "many blocks": (3, 16, 23, 21, 4, 3, 3, 1, 1, 1),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_forward_and_gradients_match_the_reference(involution_ext, case, dtype):
    N, C, H, W, G, KH, KW, stride, padding, dilation = case
    input, weight = make_inputs(*case, dtype=dtype)
    input.requires_grad_(True)
    weight.requires_grad_(True)
    expected = involution_reference(input, weight, stride, padding, dilation)
    grad_out = torch.randn_like(expected)
    expected_input, expected_weight = torch.autograd.grad(expected, (input, weight), grad_out)

    out = involution_ext.involution(input.detach(), weight.detach(), stride, padding, dilation)
    grad_input = involution_ext.involution_grad_input(grad_out, weight.detach(), H, W, stride, padding, dilation)
    grad_weight = involution_ext.involution_grad_weight(grad_out, input.detach(), G, KH, KW, stride, padding, dilation)
    assert out.dtype == grad_input.dtype == grad_weight.dtype == dtype
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(grad_input, expected_input)
    torch.testing.assert_close(grad_weight, expected_weight)


def test_the_cases_cover_partial_blocks_and_a_launch_smaller_than_a_block():
    counts = []  # threads of each launch: one per out element, per input element, per (n, g, h_out, w_out)
    for N, C, H, W, G, KH, KW, stride, padding, dilation in CASES.values():
        H_out, W_out = out_size(H, KH, stride, padding, dilation), out_size(W, KW, stride, padding, dilation)
        counts += [N * C * H_out * W_out, N * C * H * W, N * G * H_out * W_out]
    assert all(n % 256 for n in counts)
    assert min(counts) < 256 < max(counts)


@pytest.mark.parametrize("via", ["notebook Function", "op itself"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("case", ["K 7, stride 2, dilation 2", "K 3 x 5, no padding"])
def test_the_autograd_function_and_the_op_itself_match_the_reference(involution_ext, involution_fn, via, dtype, case):
    """The notebook's Function, and the op alone through the autograd formula that kernels/involution_ops.py
    registers: outputs and both gradients, by torch.autograd.grad."""
    involution = involution_fn if via == "notebook Function" else involution_ext.involution
    case = CASES[case]
    input, weight = make_inputs(*case, dtype=dtype)
    input.requires_grad_(True)
    weight.requires_grad_(True)
    args = case[7:]
    out, expected = involution(input, weight, *args), involution_reference(input, weight, *args)
    assert out.grad_fn is not None
    torch.testing.assert_close(out, expected)
    grad_out = torch.randn_like(out)
    for got, want in zip(
        torch.autograd.grad(out, (input, weight), grad_out), torch.autograd.grad(expected, (input, weight), grad_out)
    ):
        torch.testing.assert_close(got, want)


@pytest.mark.parametrize(
    "case",
    [(2, 4, 5, 6, 2, 3, 3, 2, 1, 2), (1, 4, 6, 5, 4, 3, 2, 1, 1, 1)],
    ids=["stride 2, dilation 2, groups 2", "K 3 x 2, groups 4"],
)
@pytest.mark.parametrize("via", ["notebook Function", "op itself"])
def test_gradcheck_float64(involution_ext, involution_fn, via, case):
    input, weight = make_inputs(*case)
    input.requires_grad_(True)
    weight.requires_grad_(True)
    involution = involution_fn if via == "notebook Function" else involution_ext.involution
    assert torch.autograd.gradcheck(lambda x, w: involution(x, w, *case[7:]), (input, weight))


@pytest.mark.parametrize(
    "input_grad, weight_grad, expected",
    [
        (True, True, ["involution", "involution_grad_input", "involution_grad_weight"]),
        (True, False, ["involution", "involution_grad_input"]),
        (False, True, ["involution", "involution_grad_weight"]),
    ],
)
@pytest.mark.parametrize("via", ["notebook Function", "op itself"])
def test_backward_launches_only_the_gradients_asked_for(
    involution_ext, involution_fn, via, input_grad, weight_grad, expected
):
    involution = involution_fn if via == "notebook Function" else involution_ext.involution
    input, weight = make_inputs(*CASES["stride 2, groups 4"])
    input.requires_grad_(input_grad)
    weight.requires_grad_(weight_grad)
    with helpers.OpsRun(involution_ext) as ops:
        involution(input, weight, 2, 1, 1).sum().backward()
    assert ops.names == expected
    assert (input.grad is not None) == input_grad and (weight.grad is not None) == weight_grad


def test_empty_batch(involution_ext):
    input, weight = make_inputs(0, 4, 7, 5, 2, 3, 3, 1, 1, 1)
    out = involution_ext.involution(input, weight, 1, 1, 1)
    assert out.shape == (0, 4, 7, 5)
    assert involution_ext.involution_grad_input(out, weight, 7, 5, 1, 1, 1).shape == input.shape
    assert involution_ext.involution_grad_weight(out, input, 2, 3, 3, 1, 1, 1).shape == weight.shape


def test_non_contiguous_inputs(involution_ext):
    input, weight = make_inputs(*CASES["stride 2, groups 4"])  # out (2, 8, 7, 5)
    input = input.to(memory_format=torch.channels_last).requires_grad_(True)
    weight = weight.transpose(4, 5).contiguous().transpose(4, 5).requires_grad_(True)
    grad_out = torch.randn(1, 8, 1, 5, dtype=input.dtype).expand(2, 8, 7, 5)  # strides of 0, as backward may pass
    assert not (input.is_contiguous() or weight.is_contiguous() or grad_out.is_contiguous())
    expected = involution_reference(input, weight, 2, 1, 1)
    expected_input, expected_weight = torch.autograd.grad(expected, (input, weight), grad_out)
    torch.testing.assert_close(involution_ext.involution(input.detach(), weight.detach(), 2, 1, 1), expected)
    torch.testing.assert_close(
        involution_ext.involution_grad_input(grad_out, weight.detach(), 13, 10, 2, 1, 1), expected_input
    )
    torch.testing.assert_close(
        involution_ext.involution_grad_weight(grad_out, input.detach(), 4, 3, 3, 2, 1, 1), expected_weight
    )


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_the_fakes_answer_the_kernels_shapes_on_meta_tensors(involution_ext, case):
    N, C, H, W, G, KH, KW, stride, padding, dilation = case
    input, weight = (t.to("meta") for t in make_inputs(*case))
    out = involution_ext.involution(input, weight, stride, padding, dilation)
    assert out.shape == (N, C, *weight.shape[4:]) and out.device.type == "meta" and out.is_contiguous()
    grad_input = involution_ext.involution_grad_input(out, weight, H, W, stride, padding, dilation)
    grad_weight = involution_ext.involution_grad_weight(out, input, G, KH, KW, stride, padding, dilation)
    assert grad_input.shape == input.shape and grad_weight.shape == weight.shape
    assert grad_input.is_contiguous() and grad_weight.is_contiguous()


def test_compiled_model_matches_eager(notebook):
    """The notebook's Involution2d layers (its Function inside) trace whole under torch.compile(fullgraph=True),
    backward included, and give eager's outputs and gradients. In float64: in float32, the compiled graph's
    reordered sums alone move some gradients by ~2e-5, past the default tolerances. Even H and W: on odd ones,
    the strided layer's ceil_mode AvgPool2d hits an inductor bug of its own (its backward divides the
    overhanging windows by the full 2 x 2, pytorch/pytorch#198119), which has nothing to do with the kernels."""
    Involution2d = notebook["Involution2d"]
    model = torch.nn.Sequential(Involution2d(8, 3, dilation=2), Involution2d(8, 5, stride=2)).double()
    helpers.check_compiled(model, torch.randn(2, 8, 10, 12, dtype=torch.float64, requires_grad=True))


def test_the_header_lists_the_kernels_and_the_binding_the_ops(involution_ext):
    cu = (helpers.KERNELS / "involution.cu").read_text()
    header = cu.split("#include")[0]
    defined = set(re.findall(r"__global__ void (\w+)\(", cu))
    assert set(re.findall(r"\binvolution_\w+_kernel\b", header)) == defined
    assert defined == {"involution_fwd_kernel", "involution_bwd_input_kernel", "involution_bwd_weight_kernel"}
    binding = (helpers.KERNELS / "involution_binding.cpp").read_text()
    listed = re.findall(r"^//   (\w+)\(", binding.split("#include")[0], re.M)
    assert listed == involution_ext.ops


def bad(op, *args):
    return op, args


# Valid: input (2, 8, 9, 9), weight (2, 4, 3, 3, 5, 5) with stride 2, padding 1, dilation 1.
X, WT, GO = torch.randn(2, 8, 9, 9), torch.randn(2, 4, 3, 3, 5, 5), torch.randn(2, 8, 5, 5)
# What the binding refuses, and the fake implementations with the same message (dtypes named as c10
# names them: Int, Half, Double).
BAD_DTYPES = [
    (bad("involution", X.int(), WT, 2, 1, 1), "involution: input must be float32 or float64, got Int"),
    (bad("involution", X, WT.half(), 2, 1, 1), "involution: weight must be float32 or float64, got Half"),
    (bad("involution", X, WT.double(), 2, 1, 1), "involution: weight has dtype Double but input has Float"),
    (
        bad("involution_grad_input", GO.int(), WT, 9, 9, 2, 1, 1),
        "involution_grad_input: grad_out must be float32 or float64, got Int",
    ),
    (
        bad("involution_grad_input", GO, WT.double(), 9, 9, 2, 1, 1),
        "involution_grad_input: weight has dtype Double but grad_out has Float",
    ),
    (
        bad("involution_grad_weight", GO, X.double(), 4, 3, 3, 2, 1, 1),
        "involution_grad_weight: input has dtype Double but grad_out has Float",
    ),
]

# What the binding refuses, and the fake implementations with the same message.
BAD_SHAPES = [
    (bad("involution", X[0], WT, 2, 1, 1), r"involution: input must be 4-D \(N, C, H, W\), got shape \[8, 9, 9\]"),
    (
        bad("involution", X, WT[0], 2, 1, 1),
        r"involution: weight must be 6-D \(N, G, KH, KW, H_out, W_out\), got shape \[4, 3, 3, 5, 5\]",
    ),
    (bad("involution", X, WT, 0, 1, 1), "involution: stride must be >= 1, got 0"),
    (bad("involution", X, WT, 2, -1, 1), "involution: padding must be >= 0, got -1"),
    (bad("involution", X, WT, 2, 1, 0), "involution: dilation must be >= 1, got 0"),
    (
        bad("involution", X, torch.randn(3, 4, 3, 3, 5, 5), 2, 1, 1),
        r"involution: weight has batch size 3 \(dim 0\) but input has 2",
    ),
    (
        bad("involution", X[:, :6], WT, 2, 1, 1),
        r"involution: input has C = 6 channels, which weight's G = 4 groups \(dim 1\) do not divide",
    ),
    (
        bad("involution", X, WT[:, :0], 2, 1, 1),
        r"involution: weight's G = 0 groups \(dim 1\), but there must be at least 1 group",
    ),
    (
        bad("involution", X, WT[:, :, :0], 2, 1, 1),
        r"involution: weight's KH x KW \(dims 2, 3\) = 0 x 3, but the kernel must be at least 1 x 1",
    ),
    (
        bad("involution", X, WT, 1, 1, 1),
        r"involution: weight has H_out x W_out = 5 x 5 \(dims 4, 5\), but an input of 9 x 9 with a 3 x 3 kernel, "
        r"stride 1, padding 1 and dilation 1 gives 9 x 9",
    ),
    (
        bad("involution", X, torch.randn(2, 4, 3, 3, 5, 4), 2, 1, 1),
        r"involution: weight has H_out x W_out = 5 x 4 \(dims 4, 5\), but an input of 9 x 9 .* gives 5 x 5",
    ),
    (
        bad("involution", X[:, :, :3], WT, 2, 0, 2),
        r"involution: the input height 3 plus 2 \* padding 0 is smaller than the dilated kernel's 5",
    ),
    (bad("involution_grad_input", GO[0], WT, 9, 9, 2, 1, 1), r"involution_grad_input: grad_out must be 4-D"),
    (
        bad("involution_grad_input", GO, WT, -9, 9, 2, 1, 1),
        "involution_grad_input: height and width must be >= 0, got -9 and 9",
    ),
    (
        bad("involution_grad_input", GO, WT, 9, 12, 2, 1, 1),
        r"involution_grad_input: weight has H_out x W_out = 5 x 5 \(dims 4, 5\), but an input of 9 x 12 .* gives 5 x 6",
    ),
    (
        bad("involution_grad_input", GO[:, :, :4], WT, 9, 9, 2, 1, 1),
        r"involution_grad_input: grad_out has H_out 4 \(dim 2\) but weight has 5",
    ),
    (
        bad("involution_grad_input", GO[:, :6], WT, 9, 9, 2, 1, 1),
        r"involution_grad_input: grad_out has C = 6 channels, which weight's G = 4 groups \(dim 1\) do not divide",
    ),
    (
        bad("involution_grad_input", GO[:1], WT, 9, 9, 2, 1, 1),
        r"involution_grad_input: weight has batch size 2 \(dim 0\) but grad_out has 1",
    ),
    (bad("involution_grad_weight", GO, X[0], 4, 3, 3, 2, 1, 1), r"involution_grad_weight: input must be 4-D"),
    (
        bad("involution_grad_weight", GO[:, :4], X, 4, 3, 3, 2, 1, 1),
        r"involution_grad_weight: grad_out has channels 4 \(dim 1\) but input has 8",
    ),
    (
        bad("involution_grad_weight", GO, X, 3, 3, 3, 2, 1, 1),
        "involution_grad_weight: input has C = 8 channels, which groups = 3 do not divide",
    ),
    (
        bad("involution_grad_weight", GO, X, 4, 3, 0, 2, 1, 1),
        "involution_grad_weight: kernel_h x kernel_w = 3 x 0, but the kernel must be at least 1 x 1",
    ),
    (
        bad("involution_grad_weight", GO, X, 4, 5, 5, 2, 1, 1),
        r"involution_grad_weight: grad_out has H_out x W_out = 5 x 5 \(dims 2, 3\), but an input of 9 x 9 with a 5 x 5 "
        r"kernel, stride 2, padding 1 and dilation 1 gives 4 x 4",
    ),
    (bad("involution_grad_weight", GO, X, 4, 3, 3, 2, 1, 0), "involution_grad_weight: dilation must be >= 1, got 0"),
]


def ids(rows):
    return [m.split(":")[0] + f" {i}" for i, (_, m) in enumerate(rows)]


@pytest.mark.parametrize("where", ["binding", "fake"])
@pytest.mark.parametrize("call, message", BAD_DTYPES + BAD_SHAPES, ids=ids(BAD_DTYPES + BAD_SHAPES))
def test_bad_dtypes_and_shapes_raise_a_runtime_error_naming_the_argument(
    involution_ext, target_device, where, call, message
):
    """On the target's tensors the binding checks; on meta tensors the fake implementation does, with the same words."""
    device = target_device if where == "binding" else "meta"
    op, args = call
    args = [a.to(device) if torch.is_tensor(a) else a for a in args]
    with pytest.raises(RuntimeError, match=message):
        getattr(involution_ext, op)(*args)


# A meta tensor among cpu tensors reaches the fake implementation (Meta outranks CPU in dispatch), not the
# binding's "is on a device other than cpu and cuda": the fake refuses the mix, as the binding would.
FAKE_ONLY = [
    (bad("involution", X.to("meta"), WT, 2, 1, 1), "involution: weight is on cpu but input is on meta"),
    (bad("involution", X, WT.to("meta"), 2, 1, 1), "involution: weight is on meta but input is on cpu"),
    (
        bad("involution_grad_weight", GO.to("meta"), X, 4, 3, 3, 2, 1, 1),
        "involution_grad_weight: input is on cpu but grad_out is on meta",
    ),
]


@pytest.mark.parametrize("call, message", FAKE_ONLY, ids=ids(FAKE_ONLY))
def test_the_fakes_refuse_mixed_devices(involution_ext, target_device, call, message):
    op, args = call
    args = [on(target_device, a) if torch.is_tensor(a) else a for a in args]
    with pytest.raises(RuntimeError, match=message.replace("cpu", target_device)):
        getattr(involution_ext, op)(*args)
