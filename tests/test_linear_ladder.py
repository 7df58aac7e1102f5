"""linear_ladder (kernels/linear_ladder.cu), notebook 07's steps from a naive kernel to register tiling: every version
and every tile configuration of version 7 against F.linear on ragged shapes (no dimension a multiple of any tile) in
float32 and float64, on every target, within the bound of a K-term dot product's rounding; check mode finds nothing in
any of them; the GPU model counts no bank conflict in version 7 and models each configuration faster than version 6;
autotune picks the fastest; the tile table, the header and the code agree; the argument errors name what is wrong;
nvcc keeps every register-tiled kernel out of local memory and stores each Pack of Y with one STG.E.128."""

import importlib.util
import re
import warnings

import pytest
import torch
import torch.nn.functional as F
from conftest import on

import helpers
from kp.gpumodel.gpus import gpu
from kp.gpumodel.profile import profile
from kp.gpumodel.ptxas import kernel_resources
from kp.gpumodel.sass import nvdisasm, sass
from kp.toolchain import find_cuda_root

# (M, K, N): no dimension a multiple of a tile; K = 36 and 128 take the 16-byte loads of v6 and v7, the others their
# fallback; N = 70 and 17 are ragged for v7's Pack stores (70 has whole Packs of doubles, not of floats)
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
VERSIONS = [1, 2, 3, 4, 5, 6, 7]


def ops_module():
    """kernels/linear_ladder_ops.py (load_kernel runs it for each loaded version; here for its table)."""
    spec = importlib.util.spec_from_file_location("linear_ladder_ops", helpers.KERNELS / "linear_ladder_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TILES = range(len(ops_module().TILES))
H100_SMS = gpu("H100").sms


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


@pytest.mark.parametrize("tiles", TILES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_every_tile_configuration_of_v7_is_f_linear(ladder, target_device, tiles, dtype):
    torch.backends.cuda.matmul.allow_tf32 = False
    for M, K, N in [*SHAPES, (130, 36, 260)]:  # and one over several blocks of every configuration
        x, w, b = inputs(M, K, N, dtype, target_device)
        assert_linear(ladder.linear_ladder(x, w, b, 7, tiles), x, w, b)


@pytest.mark.parametrize("version", VERSIONS)
def test_check_mode_finds_nothing_in_any_version(version):
    checked = helpers.load_kernel("linear_ladder", target="cpu", check=True, quiet=True)
    for M, K, N in [(3, 5, 7), (65, 33, 70), (17, 36, 9)]:
        x, w, b = inputs(M, K, N, torch.float64)
        assert_linear(checked.linear_ladder(x, w, b, version), x, w, b)


@pytest.mark.parametrize("tiles", TILES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_check_mode_finds_nothing_in_any_tile_configuration(tiles, dtype):
    """Packs and the element-by-element fallback (K = 33, N = 70 for floats), edges inside a block and past it."""
    checked = helpers.load_kernel("linear_ladder", target="cpu", check=True, quiet=True)
    for M, K, N in [(3, 5, 7), (65, 33, 70), (17, 36, 9), (130, 36, 132)]:
        x, w, b = inputs(M, K, N, dtype)
        assert_linear(checked.linear_ladder(x, w, b, 7, tiles), x, w, b)


def modelled(checked, *args):
    """The GPU model's profile of linear_ladder(x, w, b, *args) with x (1024, 256), w (1024, 256), float32: enough
    blocks for every configuration to fill some of an H100, 2 blocks of each launch counted; and its H100 time."""
    x, w, b = inputs(1024, 256, 1024, torch.float32)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        counted = profile(checked.linear_ladder, x, w, b, *args, max_blocks=2)
    return counted, counted.estimate("H100", flops=2 * 1024 * 256 * 1024)


def test_the_gpu_model_counts_no_bank_conflict_in_v7_and_models_it_faster_than_v6():
    """v6's transposed stores and its reads of W's tile are 2-way bank conflicts; v7's padded tiles and Pack reads
    have none, in any configuration. Every configuration that keeps more than half of the H100's SMs busy models faster
    than v6's 256 blocks: the 64 x 64 tiles' 256 blocks, and the 128 blocks of 128 x 64 or 64 x 128 tiles, one to an SM
    (until session 22 these modelled slower: their tile loads' blocks had been solved at ~7 runs per K step, on a split
    that needed runs below zero, which kp.gpumodel.flow now refuses). The 128 x 128 tiles make 64 blocks, leaving 68 of
    the 132 SMs idle: slower, bound by the sub-cores' simulation (kp.gpumodel.subcores, the schedule term)."""
    checked = helpers.load_kernel("linear_ladder", target="cpu", check=True, quiet=True)
    v6, v6_seconds = modelled(checked, 6)
    assert max(ln.worst for ln in v6.lines if ln.space == "shared") == 2
    for tiles in TILES:
        v7, seconds = modelled(checked, 7, tiles)
        shared = [ln for ln in v7.lines if ln.space == "shared"]
        assert {ln.kind for ln in shared} == {"load", "store"}
        assert all(ln.worst == 1 and ln.units == ln.ideal for ln in shared), (tiles, v7.table().markdown())
        [launch] = v7.estimate_detail("H100", flops=2 * 1024 * 256 * 1024).launches
        if v7.launches[0].blocks > H100_SMS // 2:
            assert seconds < v6_seconds, (tiles, seconds, v6_seconds)
        else:
            assert v7.launches[0].blocks == 64 and launch.bound == "schedule", (tiles, launch.bound)
            assert seconds > v6_seconds, (tiles, seconds, v6_seconds)


def test_autotune_picks_the_fastest_configuration(target, target_device):
    """Measured with CUDA events on a GPU; modelled (GPU model, H100) on the CPU, from a check-mode build."""
    ladder = helpers.load_kernel("linear_ladder", target=target, check=target == "cpu", quiet=True)
    x, w, b = inputs(65, 36, 70, torch.float32, target_device)
    best, seconds = ladder.autotune(x, w, b)
    assert sorted(seconds) == list(TILES) and all(s > 0 for s in seconds.values())
    assert seconds[best] == min(seconds.values())
    assert ladder.tiles == ops_module().TILES


def test_the_tile_table_the_header_and_the_code_agree():
    """linear_v7_launch's cases are TILES in order (grid and threads from the same numbers); the binding's count and
    default, V7_TILES and the fake's are the table's; the header lists every version and every configuration."""
    ops = ops_module()
    cu = (helpers.KERNELS / "linear_ladder.cu").read_text()
    launches = re.findall(
        r"case (\d+):\s*linear_v7<T, (\d+), (\d+), (\d+), (\d+), (\d+)><<<v7_grid\(M, N, (\d+), (\d+)\), (\d+),", cu
    )
    launches = [tuple(map(int, launch)) for launch in launches]
    assert [launch[0] for launch in launches] == list(TILES)
    for (_, bm, bn, bk, tm, tn, grid_bm, grid_bn, threads), tiles in zip(launches, ops.TILES, strict=True):
        assert ops.Tiles(bm, bn, bk, tm, tn) == tiles and (grid_bm, grid_bn, threads) == (bm, bn, tiles.threads)
    assert f"constexpr int V7_TILES = {len(ops.TILES)};" in cu
    binding = (helpers.KERNELS / "linear_ladder_binding.cpp").read_text()
    assert f"constexpr int64_t kTiles = {len(ops.TILES)};" in binding
    assert f"constexpr int64_t kVersions = {ops.VERSIONS};" in binding
    assert f"int version={ops.VERSIONS}, int tiles={ops.DEFAULT_TILES})" in binding
    header = cu.split("#include", 1)[0]
    versions = [str(v) for v in VERSIONS]
    assert (
        re.findall(r"v(\d) linear_v\d", header)
        == versions
        == re.findall(r"__global__ void.*?\blinear_v(\d)\(", cu, re.S)
    )
    listed, threads = re.search(r"\(linear_v7_launch: (.*?); (\d+)\s*//\s*threads each\)", header, re.S).groups()
    assert {t.threads for t in ops.TILES} == {int(threads)}
    assert re.sub(r"\s*//\s*", " ", listed).split(", ") == [
        f"{t.bm}x{t.bn} {t.tm}x{t.tn}" + (f" with BK = {t.bk}" if t.bk != ops.TILES[0].bk else "") for t in ops.TILES
    ]
    assert f"(version {ops.VERSIONS} by default, at tiles {ops.DEFAULT_TILES})" in header


@pytest.mark.parametrize(
    "shapes, version, message",
    [
        (((3, 4), (5, 3), (5,)), 1, r"linear_ladder: w \[5, 3\] and b \[5\] do not fit x \[3, 4\]"),
        (((3, 4), (5, 4), (5,)), 9, "linear_ladder: version must be 1 to 7, got 9"),
        (((3,), (5, 4), (5,)), 1, r"linear_ladder: x must be \(rows, in_features\)"),
    ],
)
def test_bad_arguments_are_named(ladder, target_device, shapes, version, message):
    x, w, b = (on(target_device, torch.randn(s)) for s in shapes)
    with pytest.raises(RuntimeError, match=message):
        ladder.linear_ladder(x, w, b, version)


@pytest.mark.parametrize("device", ["target", "meta"])
@pytest.mark.parametrize("tiles", [-1, len(TILES)])
def test_a_tile_configuration_out_of_the_table_is_named(ladder, target_device, device, tiles):
    """By the binding on the target's tensors, by the fake implementation on meta tensors, in the same words."""
    x, w, b = (torch.randn(s, device=target_device if device == "target" else "meta") for s in ((3, 4), (5, 4), (5,)))
    message = f"linear_ladder: tiles must be 0 to {len(TILES) - 1} \\(version 7's tile configurations\\), got {tiles}"
    with pytest.raises(RuntimeError, match=message):
        ladder.linear_ladder(x, w, b, 7, tiles)


def shifted(t):
    """A contiguous copy of t that starts one element into its storage: not 16-byte aligned."""
    out = on(t.device, torch.empty(1 + t.numel(), dtype=t.dtype))[1:].view(t.shape).copy_(t)
    assert out.is_contiguous() and out.data_ptr() % 16 != 0
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_v6_on_a_tensor_that_is_not_16_byte_aligned_loads_element_by_element(ladder, target_device, dtype):
    """K = 36 takes 16-byte Packs where x and w are aligned; x starting one element into its storage is contiguous
    but not aligned, so the same call takes the element-by-element path, with the same result."""
    x, w, b = inputs(65, 36, 70, dtype, target_device)
    assert torch.equal(ladder.linear_ladder(shifted(x), w, b, 6), ladder.linear_ladder(x, w, b, 6))
    assert_linear(ladder.linear_ladder(x, w, b, 6), x, w, b)


@pytest.mark.parametrize("tiles", TILES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_v7_on_tensors_that_are_not_16_byte_aligned_loads_and_stores_element_by_element(
    ladder, target_device, tiles, dtype
):
    """An unaligned x (or w) takes the element-by-element loads, an unaligned b the element-by-element stores; each
    gives the aligned call's bits."""
    x, w, b = inputs(130, 36, 136, dtype, target_device)
    y = ladder.linear_ladder(x, w, b, 7, tiles)
    assert_linear(y, x, w, b)
    assert torch.equal(ladder.linear_ladder(shifted(x), w, b, 7, tiles), y)
    assert torch.equal(ladder.linear_ladder(x, shifted(w), b, 7, tiles), y)
    assert torch.equal(ladder.linear_ladder(x, w, shifted(b), 7, tiles), y)


def test_the_autograd_formula_passes_gradcheck(ladder, target_device):
    x, w, b = (t.requires_grad_() for t in inputs(5, 7, 3, torch.float64, target_device))
    assert torch.autograd.gradcheck(lambda x, w, b: ladder.linear_ladder(x, w, b, 4), (x, w, b))


@pytest.mark.skipif(find_cuda_root() is None, reason="ptxas: no CUDA toolkit (nvcc) found")
def test_ptxas_keeps_every_register_tiled_kernel_out_of_local_memory():
    """Version 7 in every configuration and linear.cu's linear_tiled_kernel, float and double (an 8 x 8 fragment of
    doubles is 128 registers of accumulators): no stack, no spills."""
    rows = [
        row
        for name in ("linear_ladder", "linear")
        for row in kernel_resources(name)
        if row["kernel"].startswith(("linear_v7<", "linear_tiled_kernel<"))
    ]
    assert len(rows) == 2 * len(TILES) + 2 * 3
    for row in rows:
        assert (row["stack (bytes)"], row["spill stores (bytes)"], row["spill loads (bytes)"]) == (0, 0, 0), row


@pytest.mark.skipif(find_cuda_root() is None or nvdisasm() is None, reason="SASS: no nvcc or no nvdisasm here")
def test_every_register_tiled_kernel_stores_each_pack_of_its_fragment_with_one_16_byte_stg():
    """Version 7 in every configuration and linear.cu's linear_tiled_kernel, float and double, as nvcc compiles them
    for the H100: each of the TM x TN / P Packs of a thread's fragment of Y is one 16-byte global store (STG.E.128),
    as notebook 07 teaches. store_fragment (common/linear_tiles.cuh) indexes Y's row as Packs for it: addressed as
    C + row * cols + col, nvcc 13.0 stored the Packs at g = 0 as P scalar STG.E (all of tiles 0's and 1's)."""
    fast = re.search(r"FAST_TM = (\d+), FAST_TN = (\d+);", (helpers.KERNELS / "linear.cu").read_text())
    fragments = {}  # kernel -> (Packs per fragment, 16-byte global stores in its SASS)
    for name in ("linear_ladder", "linear"):
        for i in sass(name):
            if v7 := re.match(r"_Z9linear_v7I([fd])Li\d+ELi\d+ELi\d+ELi(\d+)ELi(\d+)E", i.function):
                dtype, tm, tn = v7[1], int(v7[2]), int(v7[3])
            elif tiled := re.match(r"_Z19linear_tiled_kernelI([fd])", i.function):
                dtype, tm, tn = tiled[1], int(fast[1]), int(fast[2])
            else:
                continue
            packs, stores = fragments.get(i.function, (tm * tn // (4 if dtype == "f" else 2), 0))
            wide = (i.space, i.kind, i.width) == ("global", "store", 16)
            fragments[i.function] = (packs, stores + wide)
    assert len(fragments) == 2 * len(TILES) + 2 * 3
    assert {kernel: counts for kernel, counts in fragments.items() if counts[0] != counts[1]} == {}
