"""colsum (kernels/colsum.cu), the reductions ladder of notebook 08: every version against torch.sum(x, 0) on ragged
shapes in float32 and float64, on every target; check mode finds nothing in any version; version 5 gives the same
bits on every run, version 4 (atomics) the same sums to rounding, its bits those of the order its blocks ran in;
mul_add's sum_to is version 5, bit for bit; the argument errors name what is wrong."""

import functools
import warnings

import pytest
import torch
from conftest import on

import helpers
from kp.gpumodel.profile import profile

SHAPES = [(1, 1), (3, 5), (257, 33), (1000, 7), (33, 1025), (600, 40)]
VERSIONS = [1, 2, 3, 4, 5]


def assert_column_sums(got, x):
    """`got` is x's column sums to within summation's rounding: any order of R additions is off by at most
    (R - 1) eps sum|x| (Higham, Accuracy and Stability of Numerical Algorithms, 4.2), and so is torch's own sum in
    float64, the reference: twice that apart at most."""
    exact = x.double().sum(0)
    bound = 2 * max(x.shape[0] - 1, 0) * torch.finfo(x.dtype).eps * x.double().abs().sum(0)
    assert got.shape == exact.shape and got.dtype == x.dtype
    excess = (got.double() - exact).abs() - bound
    assert (excess <= 0).all(), f"{tuple(x.shape)}: column {excess.argmax().item()} is off by more than the bound"


@pytest.fixture(scope="module")
def colsum(target):
    return helpers.load_kernel("colsum", target=target, quiet=True)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_every_version_sums_the_columns(colsum, target_device, version, dtype):
    for shape in SHAPES:
        x = on(target_device, torch.randn(shape, dtype=dtype))
        assert_column_sums(colsum.colsum(x, version), x)


@pytest.mark.parametrize("version", VERSIONS)
def test_empty_columns_sum_to_zero_and_no_columns_to_nothing(colsum, target_device, version):
    assert torch.equal(colsum.colsum(on(target_device, torch.zeros(0, 3)), version), on(target_device, torch.zeros(3)))
    assert colsum.colsum(on(target_device, torch.zeros(4, 0)), version).shape == (0,)


def test_the_two_stage_version_gives_the_same_bits_every_run(colsum, target_device):
    x = on(target_device, torch.randn(5000, 33))
    first = colsum.colsum(x, 5)
    assert all(torch.equal(colsum.colsum(x, 5), first) for _ in range(5))
    assert_column_sums(colsum.colsum(x, 4), x)  # atomics: the same sums, to rounding


def test_atomics_add_in_the_order_the_blocks_run_and_two_stages_in_a_fixed_one():
    """What the stand-in does with version 4's atomics: check mode runs the blocks one at a time, in order, so column
    c's atomicAdds land chunk 0, 1, 2, ...: the result is that fold of the chunks' sums, bit for bit, on every run. The
    same chunk sums added in another order give other last bits, which is what varies from run to run where the
    blocks' order does (a GPU; the stand-in's pool of threads outside check mode: notebook 08 counts it). Version 5
    adds the same chunk sums in one fixed order: version 3 on the (chunks, C) matrix of them."""
    checked = helpers.load_kernel("colsum", target="cpu", check=True, quiet=True)
    x = torch.randn(2000, 33)
    chunks = [checked.colsum(x[r : r + 256], 3) for r in range(0, 2000, 256)]  # a block's rows: same order, same bits
    in_order = functools.reduce(torch.add, chunks, torch.zeros(33))
    assert torch.equal(checked.colsum(x, 4), in_order) and torch.equal(checked.colsum(x, 4), in_order)
    other_order = functools.reduce(torch.add, reversed(chunks), torch.zeros(33))
    assert not torch.equal(other_order, in_order)
    assert_column_sums(other_order, x)
    assert torch.equal(checked.colsum(x, 5), checked.colsum(torch.stack(chunks), 3))


def test_mul_adds_sum_to_is_version_5_bit_for_bit(colsum, target, target_device):
    """sum_to's kernel (kernels/mul_add.cu, with common/colsum.cuh's copy of column_sums) is the ladder's winner."""
    mul_add = helpers.load_kernel("mul_add", target=target, quiet=True)
    for rows, columns in [(3, 5), (257, 33), (1000, 7), (600, 1025), (5000, 3)]:
        g = on(target_device, torch.randn(rows, columns))
        assert torch.equal(mul_add.sum_to(g, [1, columns]), colsum.colsum(g, 5).view(1, columns))


def test_past_gridDim_ys_limit_sum_to_takes_more_rows_per_block():
    """sum_to's chunks run on gridDim.y (at most 65535): past that many chunks of 256 rows, chunk_rows
    (common/colsum.cuh) gives each block more. Shown on a copy of mul_add.cu that asks for at most 2 chunks: 773 rows
    in 2 blocks of 387 per 32 columns, then the second stage; the sums right, nothing found in check mode."""
    variant = helpers.kernel_variant("mul_add", "mul_add_two_chunks", "chunk_rows(R)", "chunk_rows(R, 256, 2)")
    checked = helpers.load_kernel(variant, check=True, quiet=True)
    g = torch.randn(773, 33, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        counted = profile(checked.sum_to, g, [1, 33])
    assert [la.blocks for la in counted.launches] == [2 * 2, 2]  # 2 blocks of columns x 2 chunks, then 2
    assert_column_sums(checked.sum_to(g, [1, 33]).view(33), g)


def test_versions_4_and_5_name_their_row_limit_before_touching_x(colsum):
    """16776961 rows of one column, as an expanded view (no memory): versions 4 and 5 refuse it by name, with the
    ops that take more; versions 1 to 3 have no such limit."""
    x = torch.zeros(1, 1).expand(256 * 65535 + 1, 1)
    for version in (4, 5):
        with pytest.raises(RuntimeError, match="versions 4 and 5 take at most 16776960 rows .* x has 16776961"):
            colsum.colsum(x, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_check_mode_finds_nothing_in_any_version(version):
    checked = helpers.load_kernel("colsum", target="cpu", check=True, quiet=True)
    for shape in [(3, 5), (600, 40)]:
        x = torch.randn(shape, dtype=torch.float64)
        assert_column_sums(checked.colsum(x, version), x)


def test_a_wrong_shuffle_mask_is_named_by_check_mode():
    variant = helpers.kernel_variant(
        "colsum",
        "colsum_wrong_mask",
        "__shfl_down_sync(0xffffffff, v, offset)",
        "__shfl_down_sync(0x0000ffff, v, offset)",
    )
    with pytest.raises(
        helpers.KernelCheckError,
        match=r"__shfl_down_sync\(0x0000ffff\) at .*: lane 16 of warp 0 \(thread \(16,0,0\)\) calls it, and its mask "
        "does not name it",
    ):
        helpers.load_kernel(variant, check=True, quiet=True).colsum(torch.randn(40, 40), 3)


@pytest.mark.parametrize(
    "args, message",
    [
        ((torch.randn(5),), r"colsum: x must be a matrix \(rows, columns\), got shape \[5\]"),
        ((torch.randn(3, 4), 0), "colsum: version must be 1 to 5, got 0"),
        ((torch.ones(3, 4, dtype=torch.int32),), "colsum: x must be float32 or float64, got Int"),
    ],
)
def test_bad_arguments_are_named(colsum, target_device, args, message):
    with pytest.raises(RuntimeError, match=message):
        colsum.colsum(on(target_device, args[0]), *args[1:])
