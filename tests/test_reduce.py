"""reduce (kernels/reduce.cu), the full-array reduction ladder of notebook 08 (Harris's "Optimizing Parallel
Reduction in CUDA"): every version against torch.sum on ragged sizes in float32 and float64, on every target; check
mode finds nothing in any version, and names the race of the classic `volatile` last-warp unroll; the GPU model
counts what each step removes: v1's divergent branches, v2's bank conflicts, v4's half of the blocks."""

import warnings

import pytest
import torch
from conftest import on

import helpers
from kp.gpumodel.profile import profile

SIZES = [0, 1, 31, 256, 257, 513, 1000, 65537, 140001]  # empty, under a warp, a block +-1, three launches
VERSIONS = [1, 2, 3, 4, 5, 6]
V5_WARP = """    T v = sdata[tid];
#pragma unroll
    for (unsigned s = 32; s > 0; s >>= 1) {
      v += sdata[tid + s];  // lanes >= s add words no one needs: cheaper than a branch
      __syncwarp();
      sdata[tid] = v;
      __syncwarp();
    }
    if (tid == 0) out[blockIdx.x] = v;"""
# Harris (2007), slide 22: warp-synchronous, correct only while a warp's lanes ran in lockstep (before Volta)
VOLATILE = """    volatile T* vs = sdata;
    vs[tid] += vs[tid + 32];
    vs[tid] += vs[tid + 16];
    vs[tid] += vs[tid + 8];
    vs[tid] += vs[tid + 4];
    vs[tid] += vs[tid + 2];
    vs[tid] += vs[tid + 1];
    if (tid == 0) out[blockIdx.x] = vs[0];"""


def assert_sum(got, x):
    """`got` is x's sum to within summation's rounding: any order of n additions is off by at most (n - 1) eps sum|x|
    (Higham, Accuracy and Stability of Numerical Algorithms, 4.2), twice that from torch's float64 sum at most."""
    exact = x.double().sum()
    bound = 2 * max(x.numel() - 1, 0) * torch.finfo(x.dtype).eps * x.double().abs().sum()
    assert got.shape == () and got.dtype == x.dtype
    assert (got.double().cpu() - exact.cpu()).abs() <= bound.cpu(), f"{x.numel()}: {got.item()} vs {exact.item()}"


@pytest.fixture(scope="module")
def reduce(target):
    return helpers.load_kernel("reduce", target=target, quiet=True)


@pytest.fixture(scope="module")
def checked():
    return helpers.load_kernel("reduce", target="cpu", check=True, quiet=True)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_every_version_sums_every_element(reduce, target_device, version, dtype):
    for n in SIZES:
        x = on(target_device, torch.randn(n, dtype=dtype))
        assert_sum(reduce.reduce_sum(x, version), x)
    x = on(target_device, torch.randn(33, 17, 5, dtype=dtype).transpose(0, 2))  # not contiguous: made so
    assert_sum(reduce.reduce_sum(x, version), x)


@pytest.mark.parametrize("version", VERSIONS)
def test_check_mode_finds_nothing_in_any_version(checked, version):
    for n in [1, 257, 1000, 140001]:  # 140001: three launches below v4, two from v4 on
        x = torch.randn(n, dtype=torch.float64)
        assert_sum(checked.reduce_sum(x, version), x)


def test_the_same_bits_every_run(reduce, target_device):
    x = on(target_device, torch.randn(300001))
    first = reduce.reduce_sum(x, 6)
    assert all(torch.equal(reduce.reduce_sum(x, 6), first) for _ in range(3))


def test_the_gradient_is_the_output_gradient_everywhere():
    ext = helpers.load_kernel("reduce", target="cpu", quiet=True)
    x = torch.randn(7, 300, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: ext.reduce_sum(x, 6), (x,))


def test_a_bad_version_is_named(reduce, target_device):
    with pytest.raises(RuntimeError, match="reduce_sum: version must be 1 to 6, got 7"):
        reduce.reduce_sum(on(target_device, torch.randn(3)), 7)


def test_the_classic_volatile_unroll_is_a_race_check_mode_names():
    """Harris's 2007 last-warp unroll reads and writes `sdata` from the lanes of one warp with no barrier: on Volta and
    later a warp's lanes need not run in lockstep, so a lane may read a word its neighbour has not written yet. Check
    mode names the race at the unrolled lines; v5's __syncwarp() between each step's read and write is the fix."""
    variant = helpers.kernel_variant("reduce", "reduce_volatile", V5_WARP, VOLATILE)
    ext = helpers.load_kernel(variant, check=True, quiet=True)
    with pytest.raises(helpers.KernelCheckError, match="race"):
        ext.reduce_sum(torch.randn(1000), 5)


def counted(checked, version, n=1 << 16):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        return profile(checked.reduce_sum, torch.randn(n), version, max_blocks=16)


def tree_branch(p, kernel):
    """The branch of the kernel's shared-memory tree: the `if` inside its loop, the line that adds (`+=`)."""
    source = helpers.KERNELS.joinpath("reduce.cu").read_text().splitlines()
    found = [
        b
        for b in p.branches
        if b.kernel.startswith(kernel) and "if (" in source[b.line - 1] and "+=" in source[b.line - 1]
    ]
    assert len(found) == 1, [(b.kernel, b.line) for b in p.branches]
    return found[0]


def test_the_model_counts_what_each_step_removes(checked):
    """v1's tree branch diverges in most of its warp executions (lanes 0, 2, 4, ... of every warp add); v2's and v3's
    only once fewer than 32 lanes add (the last 5 of 8 steps, in warp 0 alone); v2's shared accesses conflict and
    v3's do not; v4 launches half v3's blocks."""
    p = {v: counted(checked, v) for v in (1, 2, 3, 4)}
    v1, v2, v3 = (tree_branch(p[v], f"reduce_v{v}") for v in (1, 2, 3))
    assert v1.divergent >= 0.5 * v1.executions
    assert v2.divergent < v1.divergent / 4 and v3.divergent < v1.divergent / 4
    shared = {v: [ln for ln in p[v].lines if ln.space == "shared" and ln.kind == "load"] for v in (2, 3)}
    assert max(ln.worst for ln in shared[2]) >= 2 and max(ln.worst for ln in shared[3]) <= 1
    assert p[4].launches[0].blocks * 2 == p[3].launches[0].blocks


def test_the_picture_of_lanes_shows_v1_diverging_in_every_warp_and_v3_in_warp_0_alone(checked):
    """kp.pictures.branch_map: one block's lanes at the tree's `if`, 8 evaluations each (s = 1 ... 128 or 128 ... 1).
    v1: lane l takes it while l % 2s == 0, so every warp's lanes take it 0 to 8 times; v3: warp w > 0 takes it at the
    steps where s > 32w, all its lanes alike, and warp 0 splits once s < 32."""
    from kp.pictures import branch_map

    v1, v3 = counted(checked, 1, 1 << 12), counted(checked, 3, 1 << 12)
    taken, evaluated = branch_map(v1, tree_branch(v1, "reduce_v1").line)
    assert taken.shape == (8, 32) and (evaluated == 8).all()
    assert list(taken[1, :8]) == [5, 0, 1, 0, 2, 0, 1, 0]  # tid 32: s = 1, 2, 4, 8, 16, 32; tid 34: s = 1 alone
    assert all(len(set(row)) > 1 for row in taken)
    taken, evaluated = branch_map(v3, tree_branch(v3, "reduce_v3").line)
    assert list(taken[0, :4]) == [8, 7, 6, 6] and [set(row) for row in taken[1:]] == [{2}, {1}, {1}, {0}, {0}, {0}, {0}]
    fig = v3.branch_picture(tree_branch(v3, "reduce_v3").line)  # Profile's method: branch_lanes drawn
    assert "1 warps mixed" in fig.axes[0].get_title()
    with pytest.raises(ValueError, match="no branch condition was counted at 3 "):
        branch_map(v3, 3)
