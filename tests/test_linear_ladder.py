"""linear_ladder (kernels/linear_ladder.cu), notebook 07's steps from a naive kernel to register tiling: every version
against F.linear on ragged shapes (no dimension a multiple of any tile) in float32 and float64, on every target,
within the bound of a K-term dot product's rounding; check mode finds nothing in any version; the argument errors
name what is wrong."""

import pytest
import torch
import torch.nn.functional as F
from conftest import on

import helpers

# (M, K, N): no dimension a multiple of a tile; K = 36 and 128 take v6's 16-byte loads, the others its fallback
SHAPES = [
    (1, 1, 1),
    (3, 5, 7),
    (65, 33, 129),
    (127, 255, 63),
    (65, 36, 70),
    (33, 128, 17),
    (0, 4, 5),
    (4, 0, 5),
    (4, 5, 0),
]
VERSIONS = [1, 2, 3, 4, 5, 6]


@pytest.fixture(scope="module")
def ladder(target):
    return helpers.load_kernel("linear_ladder", target=target, quiet=True)


def inputs(M, K, N, dtype, device="cpu"):
    return [on(device, torch.randn(shape, dtype=dtype)) for shape in [(M, K), (N, K), (N,)]]


def assert_linear(y, x, w, b):
    """y is x wᵀ + b within a dot product's rounding: K products and K additions in any order, off by at most
    (K + 1) eps sum|terms| (Higham, Accuracy and Stability of Numerical Algorithms, 3.1), against float64."""
    exact = F.linear(x.double(), w.double(), b.double())
    bound = (x.shape[1] + 1) * torch.finfo(x.dtype).eps * F.linear(x.double().abs(), w.double().abs(), b.double().abs())
    assert y.shape == exact.shape and y.dtype == x.dtype
    assert ((y.double() - exact).abs() <= 2 * bound).all()  # twice: float64's own rounding in the reference


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_every_version_is_f_linear(ladder, target_device, version, dtype):
    torch.backends.cuda.matmul.allow_tf32 = False
    for M, K, N in SHAPES:
        x, w, b = inputs(M, K, N, dtype, target_device)
        assert_linear(ladder.linear_ladder(x, w, b, version), x, w, b)


@pytest.mark.parametrize("version", VERSIONS)
def test_check_mode_finds_nothing_in_any_version(version):
    checked = helpers.load_kernel("linear_ladder", target="cpu", check=True, quiet=True)
    for M, K, N in [(3, 5, 7), (65, 33, 70), (17, 36, 9)]:
        x, w, b = inputs(M, K, N, torch.float64)
        assert_linear(checked.linear_ladder(x, w, b, version), x, w, b)


@pytest.mark.parametrize(
    "shapes, version, message",
    [
        (((3, 4), (5, 3), (5,)), 1, r"linear_ladder: w \[5, 3\] and b \[5\] do not fit x \[3, 4\]"),
        (((3, 4), (5, 4), (5,)), 9, "linear_ladder: version must be 1 to 6, got 9"),
        (((3,), (5, 4), (5,)), 1, r"linear_ladder: x must be \(rows, in_features\)"),
    ],
)
def test_bad_arguments_are_named(ladder, target_device, shapes, version, message):
    x, w, b = (on(target_device, torch.randn(s)) for s in shapes)
    with pytest.raises(RuntimeError, match=message):
        ladder.linear_ladder(x, w, b, version)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_v6_on_a_tensor_that_is_not_16_byte_aligned_loads_element_by_element(ladder, target_device, dtype):
    """K = 36 takes 16-byte Packs where x and w are aligned; x starting one element into its storage is contiguous
    but not aligned, so the same call takes the element-by-element path, with the same result."""
    x, w, b = inputs(65, 36, 70, dtype, target_device)
    shifted = on(target_device, torch.empty(1 + x.numel(), dtype=dtype))[1:].view(x.shape).copy_(x)
    assert shifted.is_contiguous() and shifted.data_ptr() % 16 != 0
    assert torch.equal(ladder.linear_ladder(shifted, w, b, 6), ladder.linear_ladder(x, w, b, 6))
    assert_linear(ladder.linear_ladder(x, w, b, 6), x, w, b)


def test_the_autograd_formula_passes_gradcheck(ladder, target_device):
    x, w, b = (t.requires_grad_() for t in inputs(5, 7, 3, torch.float64, target_device))
    assert torch.autograd.gradcheck(lambda x, w, b: ladder.linear_ladder(x, w, b, 4), (x, w, b))
