"""softmax (kernels/softmax.cu), the row-reduction ladder of notebook 09: every version against torch on ragged shapes
(rows not a multiple of a block's 8 or 256, columns not a multiple of 4, one column), very large logits and rows of
-inf, in float32 and float64 and, at their own rounding, float16 and bfloat16, on every target; version 5's 16-byte
loads where C and the pointers allow, its scalar loop where they do not; check mode finds nothing in any version; the
backward by gradcheck in float64 and against torch's; the argument errors name what is wrong."""

import pytest
import torch
from conftest import on

import helpers
from kp.gpumodel.profile import profile

# (1, 1) and (9, 1): one column; 257: not a multiple of 8 (versions 3 to 5) nor of 256 (version 1); 33, 781: not
# multiples of 4; (5, 1024): whole Packs.
SHAPES = [(1, 1), (9, 1), (3, 5), (257, 33), (61, 781), (5, 1024)]
VERSIONS = [1, 2, 3, 4, 5]


@pytest.fixture(scope="module")
def softmax(target):
    return helpers.load_kernel("softmax", target=target, quiet=True)


def assert_softmax(got, x):
    """`got` is the softmax of x's rows to within float rounding: summing C positive terms is off by at most (C - 1)
    eps of the sum (Higham 4.2), x - max by eps/2 |x - max| (so exp by as much, relatively), exp and the division
    by an ulp or two: eps (C + 4 + |x - max|) of each output against the float64 softmax of the same inputs. NaN
    exactly where torch.softmax has NaN (rows of -inf); the smallest normal as the floor for underflowing exps."""
    assert got.shape == x.shape and got.dtype == x.dtype
    nan = torch.softmax(x, -1).isnan()
    assert torch.equal(got.isnan(), nan), "NaN where torch.softmax has none, or the other way round"
    exact = torch.softmax(x.double(), -1)
    finfo = torch.finfo(x.dtype)
    spread = (x.double() - x.double().amax(-1, keepdim=True)).abs().nan_to_num(0, 0, 0)
    bound = finfo.eps * (x.shape[-1] + 4 + spread) * exact + finfo.tiny
    excess = ((got.double() - exact).abs() - bound)[~nan]
    assert (excess <= 0).all(), f"{tuple(x.shape)}: off by more than the bound, by {excess.max().item():.3g}"


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_every_version_matches_torch_on_ragged_shapes(softmax, target_device, version, dtype):
    for shape in SHAPES:
        x = on(target_device, 3 * torch.randn(shape, dtype=dtype))
        assert_softmax(softmax.softmax(x, version), x)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_1823_by_781_matrix(softmax, target_device, version):
    """Triton's tutorial size: neither dimension a multiple of anything."""
    x = on(target_device, torch.randn(1823, 781))
    assert_softmax(softmax.softmax(x, version), x)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_very_large_logits_do_not_overflow(softmax, target_device, version, dtype):
    """exp(1e4) overflows float32 and float64: the max subtracted first keeps every exp at most 1. The last rows
    hold logits near the dtype's largest, whose differences overflow to -inf (and exp to 0), as torch's do."""
    big = torch.finfo(dtype).max / 2
    x = 30 * torch.randn(11, 37, dtype=dtype) + 1e4
    x[9, :] = torch.tensor([big, -big, 0.0] * 12 + [big], dtype=dtype)
    x[10, :] = -1e4 + torch.randn(37, dtype=dtype)
    x = on(target_device, x)
    y = softmax.softmax(x, version)
    assert y.isfinite().all()
    assert_softmax(y, x)
    torch.testing.assert_close(y.sum(-1), torch.ones(11, dtype=dtype, device=y.device))


@pytest.mark.parametrize("version", VERSIONS)
def test_rows_of_minus_infinity_are_nan_as_in_torch_and_masked_entries_zero(softmax, target_device, version):
    """A row of -inf has no softmax: torch gives NaN, so must we. A row partly -inf (a mask) gives those entries 0."""
    x = torch.randn(10, 12)
    x[2] = -torch.inf
    x[7, ::2] = -torch.inf
    x[9, 1:] = -torch.inf  # one finite entry: softmax 1 there
    x = on(target_device, x)
    y = softmax.softmax(x, version)
    assert y[2].isnan().all() and not y[[0, 1, 3, 4, 5, 6, 7, 8, 9]].isnan().any()
    assert (y[7, ::2] == 0).all() and y[9, 0] == 1 and (y[9, 1:] == 0).all()
    assert_softmax(y, x)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_inputs_accumulate_in_float(softmax, target_device, version, dtype):
    """Sums and exps in float, one rounding to the 16-bit type at the end: within an ulp of the float64 softmax of
    the same inputs rounded to the type (plus the smallest subnormal), which is also within an ulp of torch's."""
    x = on(target_device, 3 * torch.randn(67, 131).to(dtype))
    got = softmax.softmax(x, version)
    assert got.dtype == dtype
    exact = torch.softmax(x.double(), -1)
    finfo = torch.finfo(dtype)
    smallest = finfo.smallest_normal * finfo.eps
    assert ((got.double() - exact).abs() <= finfo.eps * exact + smallest).all()
    torch.testing.assert_close(got, torch.softmax(x.float(), -1).to(dtype), rtol=finfo.eps, atol=smallest)


def test_version_5_loads_packs_where_the_columns_and_pointers_allow():
    """(8, 128) float32: one warp per row, 128 columns: versions 4 reads 4 warp loads per row per read, two reads; 5
    one Pack-wide load each. An x one element into its storage (not 16-byte aligned) or 127 columns takes the scalar
    loop."""
    checked = helpers.load_kernel("softmax", target="cpu", check=True, quiet=True)
    x = torch.randn(8, 128)
    unaligned = torch.empty(8 * 128 + 1)[1:].view(8, 128).copy_(x)
    loads = {}
    for name, t, version in [("v4", x, 4), ("v5", x, 5), ("v5 unaligned", unaligned, 5), ("v5 127", x[:, :127], 5)]:
        (launch,) = profile(checked.softmax, t.contiguous() if name == "v5 127" else t, version).launches
        loads[name] = launch.load_requests
        assert_softmax(checked.softmax(t, version), t)
    assert loads == {"v4": 64, "v5": 16, "v5 unaligned": 64, "v5 127": 64}


@pytest.mark.parametrize("version", VERSIONS)
def test_check_mode_finds_nothing_in_any_version(version):
    checked = helpers.load_kernel("softmax", target="cpu", check=True, quiet=True)
    for shape in [(3, 5), (9, 8), (260, 33)]:
        x = torch.randn(shape, dtype=torch.float64)
        assert_softmax(checked.softmax(x, version), x)
        y = checked.softmax(x, version)
        g = torch.randn_like(y)
        torch.testing.assert_close(checked.softmax_backward(g, y), torch._softmax_backward_data(g, y, 1, x.dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_the_backward_matches_torchs(softmax, target_device, dtype):
    for shape in SHAPES:
        x = on(target_device, torch.randn(shape, dtype=dtype))
        y = softmax.softmax(x)
        g = torch.randn_like(y)
        torch.testing.assert_close(softmax.softmax_backward(g, y), torch._softmax_backward_data(g, y, 1, dtype))


@pytest.mark.parametrize("version", VERSIONS)
def test_gradcheck_in_float64(softmax, target_device, version):
    for shape in [(3, 5), (9, 1), (10, 37)]:
        x = on(target_device, torch.randn(shape, dtype=torch.float64)).requires_grad_()
        assert torch.autograd.gradcheck(lambda t: softmax.softmax(t, version), (x,))


@pytest.mark.parametrize(
    "args, message",
    [
        ((torch.randn(5),), r"softmax: x must be a matrix \(rows, columns\), got shape \[5\]"),
        ((torch.randn(3, 4), 6), "softmax: version must be 1 to 5, got 6"),
        ((torch.ones(3, 4, dtype=torch.int32),), "softmax: x must be float32, float64, float16 or bfloat16, got Int"),
    ],
)
def test_bad_arguments_are_named(softmax, target_device, args, message):
    with pytest.raises(RuntimeError, match=message):
        softmax.softmax(on(target_device, args[0]), *args[1:])


def test_a_backward_of_another_shape_is_named(softmax, target_device):
    y, g = on(target_device, torch.rand(3, 4), torch.randn(3, 5))
    with pytest.raises(RuntimeError, match=r"softmax_backward: grad_y has shape \[3, 5\] but y has \[3, 4\]"):
        softmax.softmax_backward(g, y)
