"""involution on the CPU stand-in: forward and both gradients against the unfold reference on irregular
cases, gradcheck, the autograd Function launching only the gradients asked for, and every bad input."""

import re

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

import helpers


@pytest.fixture(scope="module")
def ext():
    return helpers.load_kernel("involution", target="cpu", quiet=True)


def involution_reference(input, weight, stride=1, padding=0, dilation=1):
    """The official repository's naive version: unfold the K x K windows, weight them, sum."""
    N, C = input.shape[:2]
    G, KH, KW, H_out, W_out = weight.shape[1:]
    windows = F.unfold(input, (KH, KW), dilation=dilation, padding=padding, stride=stride)
    windows = windows.view(N, G, C // G, KH, KW, H_out, W_out)
    return (weight.unsqueeze(2) * windows).sum(dim=(3, 4)).view(N, C, H_out, W_out)


def make_function(ext):
    """The notebook's autograd Function."""

    class InvolutionFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, stride, padding, dilation):
            ctx.save_for_backward(
                weight if ctx.needs_input_grad[0] else None, input if ctx.needs_input_grad[1] else None
            )
            ctx.geometry = (*input.shape[2:], *weight.shape[1:4], stride, padding, dilation)
            return ext.involution(input, weight, stride, padding, dilation)

        @staticmethod
        def backward(ctx, grad_out):
            weight, input = ctx.saved_tensors
            H, W, G, KH, KW, stride, padding, dilation = ctx.geometry
            grad_input = grad_weight = None
            if ctx.needs_input_grad[0]:
                grad_input = ext.involution_grad_input(grad_out, weight, H, W, stride, padding, dilation)
            if ctx.needs_input_grad[1]:
                grad_weight = ext.involution_grad_weight(grad_out, input, G, KH, KW, stride, padding, dilation)
            return grad_input, grad_weight, None, None, None

    return InvolutionFunction.apply


def out_size(size, k, stride, padding, dilation):
    return (size + 2 * padding - dilation * (k - 1) - 1) // stride + 1


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
def test_forward_and_gradients_match_the_reference(ext, case, dtype):
    N, C, H, W, G, KH, KW, stride, padding, dilation = case
    input, weight = make_inputs(*case, dtype=dtype)
    input.requires_grad_(True)
    weight.requires_grad_(True)
    expected = involution_reference(input, weight, stride, padding, dilation)
    grad_out = torch.randn_like(expected)
    expected_input, expected_weight = torch.autograd.grad(expected, (input, weight), grad_out)

    out = ext.involution(input.detach(), weight.detach(), stride, padding, dilation)
    grad_input = ext.involution_grad_input(grad_out, weight.detach(), H, W, stride, padding, dilation)
    grad_weight = ext.involution_grad_weight(grad_out, input.detach(), G, KH, KW, stride, padding, dilation)
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


def test_the_autograd_function_matches_the_reference(ext):
    involution = make_function(ext)
    case = CASES["K 7, stride 2, dilation 2"]
    input, weight = make_inputs(*case)
    input.requires_grad_(True)
    weight.requires_grad_(True)
    args = case[7:]
    out, expected = involution(input, weight, *args), involution_reference(input, weight, *args)
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
def test_gradcheck_float64(ext, case):
    input, weight = make_inputs(*case)
    input.requires_grad_(True)
    weight.requires_grad_(True)
    involution = make_function(ext)
    assert torch.autograd.gradcheck(lambda x, w: involution(x, w, *case[7:]), (input, weight))


class OpsRun(TorchDispatchMode):
    """Records which ops of `ext` run inside `with OpsRun(ext) as ops:`, backward included."""

    def __init__(self, ext):
        super().__init__()
        self.namespace, self.names = ext.namespace, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace == self.namespace:
            self.names.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize(
    "input_grad, weight_grad, expected",
    [
        (True, True, ["involution", "involution_grad_input", "involution_grad_weight"]),
        (True, False, ["involution", "involution_grad_input"]),
        (False, True, ["involution", "involution_grad_weight"]),
    ],
)
def test_backward_launches_only_the_gradients_asked_for(ext, input_grad, weight_grad, expected):
    involution = make_function(ext)
    input, weight = make_inputs(*CASES["stride 2, groups 4"])
    input.requires_grad_(input_grad)
    weight.requires_grad_(weight_grad)
    with OpsRun(ext) as ops:
        involution(input, weight, 2, 1, 1).sum().backward()
    assert ops.names == expected
    assert (input.grad is not None) == input_grad and (weight.grad is not None) == weight_grad


def test_empty_batch(ext):
    input, weight = make_inputs(0, 4, 7, 5, 2, 3, 3, 1, 1, 1)
    out = ext.involution(input, weight, 1, 1, 1)
    assert out.shape == (0, 4, 7, 5)
    assert ext.involution_grad_input(out, weight, 7, 5, 1, 1, 1).shape == input.shape
    assert ext.involution_grad_weight(out, input, 2, 3, 3, 1, 1, 1).shape == weight.shape


def test_non_contiguous_inputs(ext):
    input, weight = make_inputs(*CASES["stride 2, groups 4"])  # out (2, 8, 7, 5)
    input = input.to(memory_format=torch.channels_last).requires_grad_(True)
    weight = weight.transpose(4, 5).contiguous().transpose(4, 5).requires_grad_(True)
    grad_out = torch.randn(1, 8, 1, 5, dtype=input.dtype).expand(2, 8, 7, 5)  # strides of 0, as backward may pass
    assert not (input.is_contiguous() or weight.is_contiguous() or grad_out.is_contiguous())
    expected = involution_reference(input, weight, 2, 1, 1)
    expected_input, expected_weight = torch.autograd.grad(expected, (input, weight), grad_out)
    torch.testing.assert_close(ext.involution(input.detach(), weight.detach(), 2, 1, 1), expected)
    torch.testing.assert_close(ext.involution_grad_input(grad_out, weight.detach(), 13, 10, 2, 1, 1), expected_input)
    torch.testing.assert_close(ext.involution_grad_weight(grad_out, input.detach(), 4, 3, 3, 2, 1, 1), expected_weight)


def test_the_header_lists_the_kernels_and_the_binding_the_ops(ext):
    cu = (helpers.KERNELS / "involution.cu").read_text()
    header = cu.split("#include")[0]
    defined = set(re.findall(r"__global__ void (\w+)\(", cu))
    assert set(re.findall(r"\binvolution_\w+_kernel\b", header)) == defined
    assert defined == {"involution_fwd_kernel", "involution_bwd_input_kernel", "involution_bwd_weight_kernel"}
    binding = (helpers.KERNELS / "involution_binding.cpp").read_text()
    listed = re.findall(r"^//   (\w+)\(", binding.split("#include")[0], re.M)
    assert listed == ext.ops


def bad(op, *args):
    return op, args


# Valid: input (2, 8, 9, 9), weight (2, 4, 3, 3, 5, 5) with stride 2, padding 1, dilation 1.
X, WT, GO = torch.randn(2, 8, 9, 9), torch.randn(2, 4, 3, 3, 5, 5), torch.randn(2, 8, 5, 5)
BAD_INPUTS = [
    (bad("involution", X.int(), WT, 2, 1, 1), "involution: input must be float32 or float64, got Int"),
    (bad("involution", X, WT.half(), 2, 1, 1), "involution: weight must be float32 or float64, got Half"),
    (bad("involution", X, WT.double(), 2, 1, 1), "involution: weight has dtype Double but input has Float"),
    (
        bad("involution", X.to("meta"), WT, 2, 1, 1),
        "involution: input is on a device other than cpu and cuda, but this build takes cpu tensors",
    ),
    (
        bad("involution", X, WT.to("meta"), 2, 1, 1),
        "involution: weight is on a device other than cpu and cuda, but this build takes cpu tensors",
    ),
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
    (
        bad("involution_grad_input", GO.int(), WT, 9, 9, 2, 1, 1),
        "involution_grad_input: grad_out must be float32 or float64, got Int",
    ),
    (
        bad("involution_grad_input", GO, WT.double(), 9, 9, 2, 1, 1),
        "involution_grad_input: weight has dtype Double but grad_out has Float",
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
    (
        bad("involution_grad_weight", GO, X.double(), 4, 3, 3, 2, 1, 1),
        "involution_grad_weight: input has dtype Double but grad_out has Float",
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


@pytest.mark.parametrize(
    "call, message", BAD_INPUTS, ids=[m.split(":")[0] + f" {i}" for i, (_, m) in enumerate(BAD_INPUTS)]
)
def test_bad_inputs_raise_a_runtime_error_naming_the_argument(ext, call, message):
    op, args = call
    with pytest.raises(RuntimeError, match=message):
        getattr(ext, op)(*args)
