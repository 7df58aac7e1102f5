"""Conformance of the CPU stand-in for CUDA's execution model (kernels/common/cuda_cpu.h).

Each op of tests/cuda_cpu/conformance.cu runs one part of the model; results are checked
against plain torch. Sizes are deliberately irregular (not multiples of the block or tile).
"""

import re

import pytest
import torch

import helpers
import kp.build
import kp.files

CONFORMANCE = kp.files.ROOT / "tests" / "cuda_cpu" / "conformance.cu"
DTYPES = [torch.float32, torch.float64]


@pytest.fixture(scope="module")
def k():
    return helpers.load_kernel(CONFORMANCE, target="cpu", quiet=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M, K, N", [(37, 53, 29), (1, 1, 1), (16, 16, 16), (64, 3, 100)])
def test_tiled_matmul_with_static_shared_memory(k, M, K, N, dtype):
    A, B = torch.randn(M, K, dtype=dtype), torch.randn(K, N, dtype=dtype)
    torch.testing.assert_close(k.tiled_matmul(A, B), A @ B)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "extern"])
@pytest.mark.parametrize("n", [1, 255, 256, 1000, 70001])
def test_block_reduction(k, n, dynamic, dtype):
    x = torch.randn(n, dtype=dtype)
    expected = torch.nn.functional.pad(x, (0, (-n) % 256)).view(-1, 256).sum(1)
    torch.testing.assert_close(k.block_sum(x, dynamic), expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 31, 32, 1000, 4099])
def test_warp_shuffle_down_reduction(k, n, dtype):
    x = torch.randn(n, dtype=dtype)
    padded = torch.nn.functional.pad(x, (0, (-n) % 128)).view(-1, 32).sum(1)
    torch.testing.assert_close(k.warp_sum(x), padded)


@pytest.mark.parametrize("dtype", DTYPES)
def test_shuffle_inside_first_warp_of_256_thread_block(k, dtype):
    x = torch.randn(7 * 32, dtype=dtype)
    expected = x.view(7, 32).sum(1, keepdim=True).expand(7, 32).reshape(-1)
    torch.testing.assert_close(k.first_warp_sum(x), expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_warp_inclusive_scan_with_shuffle_up(k, dtype):
    n = 1000
    x = torch.randn(n, dtype=dtype)
    expected = torch.nn.functional.pad(x, (0, (-n) % 32)).view(-1, 32).cumsum(1).reshape(-1)[:n]
    torch.testing.assert_close(k.warp_scan(x), expected)


def test_votes_with_full_and_partial_masks(k):
    x = torch.randn(64 * 5)
    x[:32] = 1.0  # warp 0: all positive
    x[32:64] = -1.0  # warp 1: none
    out = k.votes(x)
    bits = (x.view(-1, 32) > 0).long()
    weights = 2 ** torch.arange(32)
    torch.testing.assert_close(out[:, 0], (bits * weights).sum(1))
    torch.testing.assert_close(out[:, 1], bits.all(1).long())
    torch.testing.assert_close(out[:, 2], bits.any(1).long())
    torch.testing.assert_close(out[:, 3], (bits[:, :16] * weights[:16]).sum(1))  # lanes 16-31 not in the mask
    torch.testing.assert_close(out[:, 4], bits[:, :16].all(1).long())
    assert out[0, 1] == 1 and out[1, 2] == 0


def test_atomic_histogram_across_many_blocks(k):
    values = torch.randint(-1000, 1000, (100_003,), dtype=torch.int32)
    counts = k.histogram(values, 37)
    torch.testing.assert_close(counts, torch.bincount((values % 37).long(), minlength=37).int())
    assert counts.sum() == values.numel()


@pytest.mark.parametrize("dtype", DTYPES)
def test_atomic_add_float_and_double(k, dtype):
    x = torch.rand(50_001, dtype=dtype)
    total = k.atomic_sum(x)
    # Summation order differs from torch's (documented difference): a tolerance for that alone.
    torch.testing.assert_close(total, x.sum().reshape(1), rtol=1e-4 if dtype == torch.float32 else 1e-10, atol=0)


def test_atomic_max_min_exch_cas(k):
    x = torch.randint(-10_000, 10_000, (9_999,), dtype=torch.int32)
    out = k.atomic_minmax(x)
    assert out[0] == x.max() and out[1] == x.min() and out[2] == 1
    assert 1 <= out[3] <= x.numel() and out[4] == 1  # exactly one atomicCAS won


@pytest.mark.parametrize("grid, block", [((2, 3, 4), (4, 2, 3)), ((5, 1, 1), (7, 1, 1)), ((1, 1, 3), (1, 9, 2))])
def test_3d_grid_and_block_indexing(k, grid, block):
    out = k.index3d(torch.empty(0), *grid, *block)
    Z, Y, X = out.shape
    z, y, x = torch.meshgrid(torch.arange(Z), torch.arange(Y), torch.arange(X), indexing="ij")
    torch.testing.assert_close(out, z * 1_000_000 + y * 1000 + x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("blocks", [1, 3, 64])
def test_grid_stride_loop(k, blocks, dtype):
    x = torch.randn(10_007, dtype=dtype)
    torch.testing.assert_close(k.grid_stride(x, 2.5, blocks), 2.5 * x)


def test_file_scope_shared_memory_and_syncwarp(k):
    x = torch.randn(3 * 256)
    out = k.rotate(x)
    neighbour = x.view(-1, 32).roll(-1, dims=1).reshape(-1)
    torch.testing.assert_close(out[:, 0], neighbour, rtol=0, atol=0)
    torch.testing.assert_close(out[:, 1], 2 * neighbour, rtol=0, atol=0)


def test_math_functions_and_intrinsics(k):
    x = torch.linspace(-5, 5, 1001)
    out = k.math(x)
    expected = torch.stack(
        [x.exp(), x.exp(), x.clamp(min=0.5), (x.abs() + 1).rsqrt(), x.tanh(), x / 3, x * x, x.abs().sqrt()], dim=1
    )
    # Float results: a few ulp apart from torch's vectorised implementations at most.
    torch.testing.assert_close(out, expected, rtol=2e-6, atol=1e-6)


def test_peek_keeps_the_last_error_and_get_clears_it(k):
    assert k.last_error_codes(torch.empty(0)).tolist() == [9, 9, 9, 0]  # cudaErrorInvalidConfiguration


@pytest.mark.parametrize(
    "config, reason",
    [
        ((1, 1, 1, 1025, 1, 1, 0), "invalid configuration argument"),
        ((1, 1, 1, 32, 32, 2, 0), "invalid configuration argument"),
        ((0, 1, 1, 32, 1, 1, 0), "invalid configuration argument"),
        ((1, 1, 1, 0, 1, 1, 0), "invalid configuration argument"),
        ((1, 1, 1, 1, 1, 65, 0), "invalid configuration argument"),
        ((1, 65536, 1, 1, 1, 1, 0), "invalid configuration argument"),
        ((1, 1, 1, 32, 1, 1, 49153), "invalid argument"),
    ],
)
def test_configuration_errors_reach_python_as_runtime_errors(k, config, reason):
    with pytest.raises(RuntimeError) as err:
        k.launch_empty(*config)
    message = str(err.value)
    assert reason in message and "empty_kernel" in message
    grid, block = config[:3], config[3:6]
    assert f"({','.join(map(str, grid))})" in message.replace(" ", "")
    assert f"({','.join(map(str, block))})" in message.replace(" ", "")
    k.launch_empty(1, 1, 1, 1024, 1, 1, 49152)  # the limits themselves are fine, and nothing was lost


def test_deadlock_stops_the_launch_with_the_kernel_and_block(k):
    with pytest.raises(RuntimeError) as err:
        k.deadlock(torch.zeros(256, dtype=torch.int32))
    message = str(err.value)
    assert "deadlock" in message and "deadlock_kernel" in message
    assert re.search(r"block \(\d+,\s*0,\s*0\)", message)
    assert "__syncwarp" in message and "__syncthreads" in message
    a = torch.randn(300)
    torch.testing.assert_close(k.grid_stride(a, 1.0, 2), a)  # the runtime still works afterwards


def test_reloading_kernels_adds_no_threads(kernel_copy):
    runtime = kp.build.cpu_runtime()
    a = torch.randn(4096)
    helpers.load_kernel(kernel_copy("add2", "v0"), target="cpu", quiet=True).add2(a, a)
    threads = runtime.kp_pool_os_threads()
    for version in range(1, 4):
        cu = kernel_copy("add2", f"v{version}")
        cu.write_text(cu.read_text().replace("a[i] + b[i]", f"a[i] + b[i] + {version}"))
        torch.testing.assert_close(helpers.load_kernel(cu, target="cpu", quiet=True).add2(a, a), 2 * a + version)
    assert runtime.kp_pool_os_threads() == threads


def test_pool_follows_torch_num_threads(k):
    runtime = kp.build.cpu_runtime()
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        k.grid_stride(torch.ones(10), 1.0, 4)
        assert runtime.kp_get_num_threads() == 1
        torch.set_num_threads(2)
        k.grid_stride(torch.ones(10), 1.0, 4)
        assert runtime.kp_get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
