"""Constructs of published CUDA that the CPU stand-in runs as nvcc does (issue 33 item 1, issue 31 item 6), each
through tests/cuda_cpu/constructs.cu in the normal build and in check mode, on sizes that are not a multiple of
the block: typed launch arguments (NULL, nullptr, 0, literals, enums); a launcher's own `dim3 gridDim, blockDim`;
cudaFuncSetAttribute and dynamic shared memory past 48 KiB; a project header that includes CUDA's headers; the
half and bfloat16 pair API and its atomics; the host runtime (memory, copies, properties, events, errors); inline
PTX in a preprocessor branch the stand-in does not compile. The same tests run the nvcc build where there is a
GPU."""

import re

import pytest
import torch
from conftest import DEVICE, TARGETS, edit

import helpers
import kp.files
import kp.gpumodel.gpus

CONSTRUCTS = kp.files.ROOT / "tests" / "cuda_cpu" / "constructs.cu"
N = 1000  # not a multiple of any block size used


@pytest.fixture(scope="module", params=TARGETS)
def built(request):
    return request.param


@pytest.fixture(scope="module", params=["normal", "check"])
def k(request, built):
    if request.param == "check" and built != "cpu":
        pytest.skip("check mode runs on the CPU stand-in only")
    ext = helpers.load_kernel(CONSTRUCTS, target=built, check=request.param == "check", quiet=True)
    return ext, DEVICE[built], built, request.param == "check"


def test_typed_launch_arguments_null_nullptr_zero_literals_and_enums(k):
    ext, device, *_ = k
    g = torch.Generator().manual_seed(0)
    x, bias = torch.randn(N, generator=g), torch.randn(N, generator=g)
    out = ext.typed_args(x.to(device), bias.to(device)).cpu()
    torch.testing.assert_close(out[0], x * 2.5, rtol=0, atol=0)  # NULL bias, 0 offset, literal 2.5 as float
    torch.testing.assert_close(out[1], x + bias, rtol=0, atol=0)  # nullptr offset, 1u stride, MODE_ADD
    torch.testing.assert_close(out[2], -(x + bias) * 0.5 + bias, rtol=0, atol=1e-6)  # Sign::Negate


@pytest.mark.parametrize("smem_kib", [48, 100, 227])
def test_dynamic_shared_memory_past_48_kib_with_the_attribute(k, smem_kib):
    """A launcher that names its own `dim3 gridDim, blockDim`, sets the carve-out and opts in to `smem_kib` KiB of
    dynamic shared memory, which every block fills: up to the H100's 227 KiB per block."""
    ext, device, *_ = k
    x = torch.arange(N, dtype=torch.float32)
    m = smem_kib * 1024 // 4
    y = ext.big_smem(x.to(device), smem_kib * 1024, True).cpu()
    torch.testing.assert_close(y, x + (m - 1 - torch.arange(N) % 128).float(), rtol=0, atol=0)


def test_more_than_48_kib_without_the_attribute_fails_the_launch_as_cuda_does(k):
    ext, device, built, _ = k
    with pytest.raises(RuntimeError, match="kernel launch failed") as err:
        ext.big_smem(torch.zeros(N, device=device), 49152 + 1024, False)
    if built == "cpu":
        assert "cudaFuncAttributeMaxDynamicSharedMemorySize" in str(err.value)
    y = ext.big_smem(torch.zeros(N, device=device), 49152, False).cpu()  # 48 KiB needs no attribute
    assert y[0] == 49152 // 4 - 1


def test_more_than_the_h100_allows_fails_at_the_attribute():
    ext = helpers.load_kernel(CONSTRUCTS, target="cpu", quiet=True)
    with pytest.raises(RuntimeError, match="at most 232448 bytes"):
        ext.big_smem(torch.zeros(N), 227 * 1024 + 4, True)


def test_half_and_bfloat16_pairs_and_their_atomics_from_a_header_that_includes_cudas_headers(k):
    ext, device, *_ = k
    pairs = 199
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(2 * pairs, generator=g), torch.randn(2 * pairs, generator=g)
    out, sums = (t.cpu() for t in ext.pairs(a.to(device), b.to(device)))
    p, q = a.bfloat16().view(pairs, 2), b.bfloat16().view(pairs, 2)
    r = p * q + p  # torch rounds each bfloat16 operation to nearest even, as the GPU does
    h = torch.stack([a[0::2], b[0::2]], 1).half() - torch.tensor(1.0).half()
    torch.testing.assert_close(out[:, 0:2], r.float(), rtol=0, atol=0)
    torch.testing.assert_close(out[:, 2:4], h.float(), rtol=0, atol=0)
    torch.testing.assert_close(out[:, 4], r.float().sum(1), rtol=0, atol=0)
    torch.testing.assert_close(out[:, 5], (r - q)[:, 1].float(), rtol=0, atol=0)
    # 199 threads add (1, 0.5) to a __half2, (1, 0.25) to a __nv_bfloat162, 1 to a __half and a __nv_bfloat16: exact.
    assert sums.tolist() == [199.0, 99.5, 199.0, 49.75, 199.0, 199.0]


def test_host_runtime_memory_copies_properties_events_and_errors(k):
    ext, device, built, _ = k
    x = torch.randn(N, generator=torch.Generator().manual_seed(2))
    y, info, ms = (t.cpu() for t in ext.host_runtime(x.to(device)))
    torch.testing.assert_close(y, 2 * x, rtol=0, atol=0)
    info = info.tolist()
    assert info[0:5] == [0, 0, 0, 0, 0]  # cudaMalloc twice, cudaEventElapsedTime, cudaDeviceSynchronize, properties
    assert info[12:16] == [0, 1, 21, 1]  # no error; host<->device copies; cudaErrorInvalidMemcpyDirection, then clear
    assert info[16:18] == [1, 1]  # cudaMallocPitch, cudaMemcpy2D both ways and cudaMemset2D
    assert ms.item() >= 0
    if built == "cpu":  # the stand-in answers as the GPU model's H100 SXM
        h100 = kp.gpumodel.gpus.GPUS["H100 SXM"]
        cc = h100.compute_capability
        assert info[5:12] == [
            h100.sms,
            h100.shared_per_block,
            cc[0] * 10 + cc[1],
            h100.l2_bytes,
            h100.max_threads_per_sm,
            h100.sms,
            h100.shared_per_block,
        ]


def test_inline_ptx_in_a_branch_the_stand_in_does_not_compile(k):
    ext, device, *_ = k
    x = torch.rand(N, generator=torch.Generator().manual_seed(3)) + 0.5
    torch.testing.assert_close(ext.arch_branch(x.to(device)).cpu(), 1 / x, rtol=1e-6, atol=0)


def test_every_name_of_the_toolkits_half_and_bfloat16_headers_is_provided_or_named_as_missing():
    """Each function and type cuda_fp16.h and cuda_bf16.h declare is either the stand-in's or listed in
    cuda_names.txt, so that a kernel using one the stand-in lacks reads "not supported on the CPU stand-in" rather
    than g++'s "did you mean"."""
    import re
    from pathlib import Path

    from cuda_cpu_translate import missing_cuda_names, stand_in_names

    import kp.toolchain

    root = kp.toolchain.find_cuda_root()
    if root is None:
        pytest.skip("no CUDA toolkit (nvcc) here to read the headers of")
    headers = [Path(root) / "include" / h for h in ("cuda_fp16.h", "cuda_bf16.h")]
    assert all(h.is_file() for h in headers), f"no cuda_fp16.h and cuda_bf16.h in {root}/include"
    declared = set()
    for h in headers:
        declared |= set(re.findall(r"\b(__[a-z][a-z0-9_]*|h2?[a-z0-9]+)\s*\(", h.read_text()))
    declared -= {"__align__", "__attribute__", "__declspec", "__x", "half"}  # the headers' own spelling, not API
    listed = {ln.strip() for ln in (kp.files.COMMON / "cuda_names.txt").read_text().splitlines()}
    missing, _ = missing_cuda_names()
    assert not sorted(n for n in declared if n not in stand_in_names() and n not in listed)
    assert {"__hcmadd", "__half2_raw"} <= missing  # what the stand-in still lacks is refused by name
    assert not {"__halves2bfloat162", "__low2float", "__high2float", "__floats2bfloat162_rn", "h2exp"} & missing


def directed(x, dtype, mode):
    """x (float64 values) rounded to `dtype` toward zero ("rz"), up ("ru") or down ("rd"): the nearest of all
    65536 values of the 16-bit type on that side, ±inf past the largest."""
    every = torch.arange(-32768, 32768, dtype=torch.int32).short().view(dtype).double()
    every = every[torch.isfinite(every)].unique()  # sorted, -0 and +0 as one
    up = torch.searchsorted(every, x, side="left")
    down = torch.searchsorted(every, x, side="right") - 1
    inf = torch.tensor(float("inf"), dtype=torch.float64)
    ru = torch.where(up < len(every), every[up.clamp(max=len(every) - 1)], inf)
    rd = torch.where(down >= 0, every[down.clamp(min=0)], -inf)
    return {"ru": ru, "rd": rd, "rz": torch.where(x >= 0, rd, ru)}[mode]


def test_more_of_the_half_and_bfloat16_api(k):
    ext, device, *_ = k
    g = torch.Generator().manual_seed(4)
    a = torch.cat([torch.randn(300, generator=g) * 3, torch.tensor([65519.0, 65520.0, 7e4, -7e4, 1e-8, -1e-8, 0.5])])
    b = torch.randn(len(a), generator=g)
    out, bits = (t.cpu() for t in ext.half_api(a.to(device), b.to(device)))
    bits = bits.view(torch.int32).long() & 0xFFFFFFFF
    x = a.double()
    for col, (dtype, mode) in enumerate([(t, m) for t in (torch.half, torch.bfloat16) for m in ("rz", "ru", "rd")]):
        torch.testing.assert_close(out[:, col].double(), directed(x, dtype, mode), rtol=0, atol=0)
    ha, hb, ba = a.half(), b.half(), a.bfloat16()
    torch.testing.assert_close(out[:, 6], ha.float().ceil().half().float(), rtol=0, atol=0)
    torch.testing.assert_close(out[:, 7], ba.float().floor().bfloat16().float(), rtol=0, atol=0)
    torch.testing.assert_close(out[:, 8], (ha.float() + hb.float()).half().float().clamp(0, 1), rtol=0, atol=0)
    fma = (ha.double() * hb.double() + hb.double()).half().float()  # one rounding, as a fused multiply-add
    torch.testing.assert_close(out[:, 9], fma.clamp(min=0), rtol=0, atol=0)
    torch.testing.assert_close(out[:, 10], hb.float(), rtol=0, atol=0)  # __lowhigh2highlow swaps the halves
    torch.testing.assert_close(out[:, 11], hb.float(), rtol=0, atol=0)  # __lows2half2's high: b's low
    hf, hbf = ha.double(), hb.double()
    assert bits[:, 0].tolist() == [int(v) & 0xFFFFFFFF for v in hf.clamp(-(2**31), 2**31 - 1).floor().tolist()]
    assert bits[:, 1].tolist() == [int(v) & 0xFFFFFFFF for v in hf.clamp(-(2**31), 2**31 - 1).ceil().tolist()]
    assert bits[:, 2].tolist() == [int(v) & 0xFFFFFFFF for v in ba.float().trunc().tolist()]
    saturated = [2**63 - 1 if v == float("inf") else -(2**63) if v == -float("inf") else int(v) for v in hf.round()]
    assert bits[:, 3].tolist() == [v & 0xFFFFFFFF for v in saturated]  # long long, its low 32 bits
    lt = (hf < hbf).long() * 0xFFFF | (hbf < hf).long() * 0xFFFF0000
    assert bits[:, 4].tolist() == lt.tolist()
    assert bits[:, 5].tolist() == (~(hf < hbf)).long().tolist()  # the high halves compare NaN: unordered, true
    assert bits[:, 6].tolist() == [1] * len(a)
    five = torch.tensor([int(v) for v in (a * 5000).tolist()], dtype=torch.float64)
    expected = directed(five, torch.half, "ru").half().view(torch.int16).long() & 0xFFFF
    assert bits[:, 7].tolist() == expected.tolist()


def test_the_host_runtimes_names_and_values_are_the_toolkits():
    """Every cuda* function, enumerator and cudaDeviceProp field of the stand-in's host runtime (cuda_cpu_host.h, and
    the error codes of cuda_cpu.h) exists in the toolkit's headers, with the same value."""
    import re
    from pathlib import Path

    import kp.toolchain

    root = kp.toolchain.find_cuda_root()
    if root is None:
        pytest.skip("no CUDA toolkit (nvcc) here to read the headers of")
    include = Path(root) / "include"
    toolkit = "".join((include / h).read_text() for h in ("cuda_runtime_api.h", "cuda_runtime.h", "driver_types.h"))
    ours = (kp.files.COMMON / "cuda_cpu_host.h").read_text() + (kp.files.COMMON / "cuda_cpu.h").read_text()
    functions = set(re.findall(r"\bcudaError_t (cuda\w+)\(", ours))
    assert {"cudaMalloc", "cudaMemcpy", "cudaEventElapsedTime", "cudaDeviceGetAttribute"} <= functions
    assert not sorted(f for f in functions if not re.search(rf"\b{f}\s*\(", toolkit))
    values = dict(re.findall(r"\b(cuda\w+) = (-?\d+)", ours))
    assert len(values) > 40
    for name, value in values.items():
        theirs = re.search(rf"\b{name}\s*=\s*(-?\d+)", toolkit)
        assert theirs and theirs[1] == value, (name, value, theirs and theirs[1])
    prop = re.search(r"struct cudaDeviceProp \{(.*?)\};", ours, re.S)[1]
    theirs = re.search(r"struct __device_builtin__ cudaDeviceProp\s*\{(.*?)\};", toolkit, re.S)[1]
    fields = re.findall(r"(\w+)(?:\[\d+\])?;", prop)
    assert not [f for f in fields if not re.search(rf"\b{f}\b(\[\d+\])?;", theirs)]


def test_check_mode_names_an_overrun_of_a_launchers_cudamalloc_buffer(k):
    """A buffer the launcher allocates with cudaMalloc is checked like a tensor the op was given: the off-by-one
    write is named at its line in check mode. The normal build, like a GPU without compute-sanitizer, lets the write
    land in the allocation's rounding (cudaMalloc rounds 4000 bytes up), and the result is right."""
    ext, device, _, check = k
    if check:
        with pytest.raises(helpers.KernelCheckError) as err:
            ext.malloc_overrun(torch.zeros(1, device=device), N)
        assert "out-of-bounds global access: write of 'cudaMalloc'd memory'[1000]" in str(err.value)
        assert "if (i <= n) y[i] = 1.0f;" in str(err.value)
    else:
        assert ext.malloc_overrun(torch.zeros(1, device=device), N).cpu().tolist() == [1.0] * N


# A kernel, its shared tile and a launcher in a header that two ops' .cu files include (issue 33 item 1: headers
# are translated like the .cu): one .cu launches the header's kernel itself, the other calls the header's launcher.
SCALE_HEADER = """#pragma once
#include "kp.cuh"

// out[i] = FACTOR * x[i], through a shared tile of the block's 64 elements
__global__ void scale_kernel(const float* x, float* out, int64_t n) {
  __shared__ float tile[64];
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  if (i < n) out[i] = FACTOR * tile[63 - threadIdx.x];
}

inline void scale(const float* x, float* out, int64_t n) {
  if (n == 0) return;
  scale_kernel<<<ceil_div<int64_t>(n, 64),
                 64>>>(x, out, n);
  KP_CHECK_LAUNCH();
}
"""
SCALE_OPS = {
    "own_launch": "scale_kernel<<<ceil_div<int64_t>(n, 64), 64>>>(x, out, n);\n  KP_CHECK_LAUNCH();",
    "header_launch": "scale(x, out, n);",
}


def write_header_ops(folder, factor=2):
    """scale.cuh with FACTOR `factor`, and one op per SCALE_OPS entry (.cu, binding, an _ops.py without formulas)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scale.cuh").write_text(f"#define FACTOR {factor}\n" + SCALE_HEADER)
    for op, launch in SCALE_OPS.items():
        (folder / f"{op}.cu").write_text(
            f'// {op}: scale.cuh\'s kernel, launched {op.replace("_", " ")}\n#include "scale.cuh"\n'
            f"void {op}_fwd(const float* x, float* out, int64_t n) {{\n  if (n == 0) return;\n  {launch}\n}}\n"
        )
        (folder / f"{op}_binding.cpp").write_text(
            f'#include "binding.h"\nvoid {op}_fwd(const float* x, float* out, int64_t n);\n'
            f'kp::Tensor {op}(kp::Tensor x) {{\n  kp::check_floating("{op}", "x", x);\n  x = kp::contiguous(x);\n'
            f'  kp::Tensor out = kp::empty_like(x);\n  {op}_fwd(kp::data<const float>(x, "x"), '
            f'kp::data<float>(out, "out"), x.numel());\n  return out;\n}}\n'
            f'KP_OPS(m) {{ m.def("{op}(Tensor x) -> Tensor", TORCH_BOX(&{op})); }}\n'
        )
        (folder / f"{op}_ops.py").write_text("def register(ops):\n    pass  # a test op: no fake, no formula\n")
    return {op: folder / f"{op}.cu" for op in SCALE_OPS}


def scaled(x, factor):
    """What scale_kernel computes: each block's 64 elements reversed (0 past the end), times `factor`."""
    blocks = torch.zeros((x.numel() + 63) // 64 * 64)
    blocks[: x.numel()] = x
    return factor * blocks.view(-1, 64).flip(1).reshape(-1)[: x.numel()]


@pytest.fixture(scope="module")
def header_ops(tmp_path_factory):
    return write_header_ops(tmp_path_factory.mktemp("header_ops"))


@pytest.mark.parametrize("check", [False, True], ids=["normal", "check"])
def test_one_kernel_in_a_header_serves_two_ops_one_launching_it_from_its_cu_one_through_the_headers_launcher(
    header_ops, check
):
    x = torch.randn(N, generator=torch.Generator().manual_seed(2))
    for op, cu in header_ops.items():
        ext = helpers.load_kernel(cu, target="cpu", check=check, quiet=True)
        torch.testing.assert_close(getattr(ext, op)(x), scaled(x, 2), rtol=0, atol=0)


def test_an_edit_of_a_header_with_a_kernel_and_its_launcher_reloads_both_ops_with_it(tmp_path):
    ops = write_header_ops(tmp_path / "ops", factor=2)
    x = torch.randn(N, generator=torch.Generator().manual_seed(3))
    for op, cu in ops.items():
        torch.testing.assert_close(getattr(helpers.load_kernel(cu, target="cpu", quiet=True), op)(x), scaled(x, 2))
    write_header_ops(tmp_path / "ops", factor=3)  # the header only: the .cu files are as they were
    for op, cu in ops.items():
        ext = helpers.load_kernel(cu, target="cpu", quiet=True)
        torch.testing.assert_close(getattr(ext, op)(x), scaled(x, 3), rtol=0, atol=0)


def test_a_compile_error_in_a_header_that_launches_is_named_at_its_line_in_the_header(tmp_path):
    """Before the header was translated, g++ stopped at its `<<<` (`expected primary-expression`) before it reached
    a mistake after the launch; now the mistake is named at its line of scale.cuh, and the line is shown."""
    ops = write_header_ops(tmp_path / "ops")
    edit(ops["header_launch"].with_name("scale.cuh"), "  KP_CHECK_LAUNCH();\n}", "  KP_CHECK_LAUNCH();\n  n += m;\n}")
    with pytest.raises(helpers.KernelBuildError) as err:
        helpers.load_kernel(ops["header_launch"], target="cpu", quiet=True)
    line = 1 + SCALE_HEADER.splitlines().index("  KP_CHECK_LAUNCH();") + 2  # after `#define FACTOR` and the launch
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'ops' / 'scale.cuh'}:{line}:"), message
    assert re.search("[‘']m[’'] was not declared", message), message
    assert f"{line} |   n += m;" in message, message


def test_a_construct_the_stand_in_lacks_in_a_header_is_named_at_the_headers_line(tmp_path):
    ops = write_header_ops(tmp_path / "ops")
    header = ops["own_launch"].with_name("scale.cuh")
    edit(header, "  __syncthreads();\n", '  __syncthreads();\n  asm("bar.sync 0;");\n')
    with pytest.raises(helpers.KernelBuildError) as err:
        helpers.load_kernel(ops["own_launch"], target="cpu", quiet=True)
    line = 1 + SCALE_HEADER.splitlines().index("  __syncthreads();") + 2
    message = str(err.value)
    assert message.startswith(f"{header}:{line}: inline asm/PTX is not supported"), message
    assert f'{line} |   asm("bar.sync 0;");' in message, message
