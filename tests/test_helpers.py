"""The notebook helpers: bench's numbers and table, gradcheck and check_compiled failing when they
should, and ptxas's resource report parsed from nvcc's output."""

import json

import pytest
import torch
from torch.autograd.gradcheck import GradcheckError

import helpers
import kp.ptxas
import kp.toolchain

PTXAS_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z22linear_bwd_bias_kernelIdEvPKT_PS0_ll' for 'sm_90'
ptxas info    : Function properties for _Z22linear_bwd_bias_kernelIdEvPKT_PS0_ll
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 2048 bytes smem
ptxas info    : Compile time = 41.703 ms
ptxas info    : Compiling entry function '_Z15add2_fwd_kernelIfEvPKT_S2_PS0_l' for 'sm_90'
ptxas info    : Function properties for _Z15add2_fwd_kernelIfEvPKT_S2_PS0_l
    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 380 bytes cmem[0]
"""


def test_parse_ptxas_reads_registers_shared_memory_and_spills():
    rows = kp.ptxas.parse_ptxas(PTXAS_LOG)
    assert [r["registers"] for r in rows] == [32, 255]
    assert [r["shared memory (bytes)"] for r in rows] == [2048, 0]
    assert (rows[1]["stack (bytes)"], rows[1]["spill stores (bytes)"], rows[1]["spill loads (bytes)"]) == (24, 8, 12)
    assert kp.ptxas.demangle([r["kernel"] for r in rows]) == [
        "linear_bwd_bias_kernel<double>",
        "add2_fwd_kernel<float>",
    ]


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None, reason="no CUDA toolkit here")
def test_kernel_resources_compiles_with_nvcc_and_caches(kernel_copy):
    cu = kernel_copy("add2")
    table = kp.ptxas.kernel_resources(cu)
    assert {r["kernel"] for r in table} == {
        f"add2_fwd_kernel{v}<{t}>" for v in ("", "_v2") for t in ("float", "double")
    }
    arch = kp.ptxas.cuda_arch()  # sm_90 without a GPU; the GPU's own with one
    assert all(r["arch"] == arch for r in table), table.markdown()
    assert all(0 < r["registers"] <= 255 for r in table), table.markdown()
    assert f"| add2_fwd_kernel<float> | {arch} |" in table.markdown()
    cu.write_text(cu.read_text().replace("c[i] = a[i] + b[i];", "c[i] = a[i] + b[i];;"))
    again = kp.ptxas.kernel_resources(cu)  # an edit compiles again; the result is the same kernel
    assert [r["kernel"] for r in again] == [r["kernel"] for r in table]


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None, reason="no CUDA toolkit here")
def test_kernel_resources_reports_a_compile_error_at_its_line(kernel_copy):
    cu = kernel_copy("add2")
    cu.write_text(cu.read_text().replace("c[i] = a[i] + b[i];", "c[i] = a[i] + bb[i];"))
    with pytest.raises(helpers.KernelBuildError, match=r"add2.cu:\d+: error: identifier \"bb\" is undefined"):
        kp.ptxas.kernel_resources(cu)


def test_kernel_resources_without_nvcc_says_how_to_fix_it(monkeypatch):
    monkeypatch.setenv("CUDA_HOME", "/nonexistent")
    with pytest.raises(helpers.ToolchainError, match="install the CUDA toolkit and export CUDA_HOME"):
        kp.ptxas.kernel_resources("add2")


def test_bench_reports_throughput_from_the_formula_and_the_ratio(tmp_path, monkeypatch):
    monkeypatch.setenv("KP_REPORT", str(tmp_path / "r.json"))
    threads_before = torch.get_num_threads()
    torch.set_num_threads(2)
    result = helpers.bench(
        {"custom": lambda x, y: x + y, "native": torch.add, "reference": lambda x, y: x.clone().add_(y)},
        sizes=[1000, 4000],
        make_inputs=lambda n: (torch.randn(n), 1),
        formula="2 × 4n bytes: read x, write y",
        bytes_moved=lambda n: 8 * n,
        min_reps=5,
        min_seconds=0,
        threads=1,
        plot=False,
    )
    assert torch.get_num_threads() == 2 and result.where == "CPU, 1 thread"  # 1 while timing, 2 again after
    torch.set_num_threads(threads_before)
    assert [(r["provider"], r["size"]) for r in result] == [
        (p, n) for n in (1000, 4000) for p in ("custom", "native", "reference")
    ]
    for r in result:
        assert r["runs"] >= 5 and r["ms"] > 0
        assert r["GB/s"] == pytest.approx(8 * r["size"] / r["ms"] / 1e6)
    ratio = result.throughput("custom", 4000) / result.throughput("native", 4000)
    assert result.ratio() == pytest.approx(ratio)
    table = result.markdown()
    assert "| size | custom, GB/s | native, GB/s | reference, GB/s | custom ÷ native |" in table
    assert (
        f"| {ratio:.3g}x |" in table.splitlines()[3]
        and "GB/s = 2 × 4n bytes: read x, write y ÷ median time; CPU, 1 thread" in table
    )
    assert json.loads((tmp_path / "r.json").read_text())["bench"] == [result.summary()]
    assert result.summary() == f"custom {ratio:.3g}x native at size 4000 (GB/s, CPU, 1 thread)"


def test_bench_refuses_a_missing_formula_or_provider():
    args = {"sizes": [10], "make_inputs": lambda n: (torch.randn(n),), "plot": False}
    with pytest.raises(ValueError, match="exactly one of bytes_moved"):
        helpers.bench({"a": torch.neg, "b": torch.neg}, formula="n", **args)
    with pytest.raises(ValueError, match="at least one provider to compare it with"):
        helpers.bench({"a": torch.neg}, formula="n", flops=lambda n: n, **args)
    with pytest.raises(ValueError, match="baseline 'c' is not one of the providers"):
        helpers.bench({"a": torch.neg, "b": torch.neg}, formula="n", flops=lambda n: n, baseline="c", **args)


class WrongBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return grad  # should be 2x * grad


def test_gradcheck_raises_and_records_a_wrong_backward(tmp_path, monkeypatch):
    monkeypatch.setenv("KP_REPORT", str(tmp_path / "r.json"))
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    with pytest.raises(GradcheckError):
        helpers.gradcheck(WrongBackward.apply, (x,))
    assert json.loads((tmp_path / "r.json").read_text())["gradcheck"][0].startswith("FAILED: WrongBackward: ")


def test_check_compiled_catches_a_model_that_compiles_differently():
    def model(x):
        return x + 1 if torch.compiler.is_compiling() else x

    x = torch.randn(4, requires_grad=True)
    with pytest.raises(AssertionError):
        helpers.check_compiled(model, x)
    compiled = helpers.check_compiled(lambda x: x.sin() * 2, x)
    torch.testing.assert_close(compiled(x), x.sin() * 2)


def test_show_kernel_resources_without_nvcc_prints_the_fix_and_goes_on(monkeypatch, capsys):
    monkeypatch.setenv("CUDA_HOME", "/nonexistent")
    assert helpers.show_kernel_resources("add2") is None
    out = capsys.readouterr().out
    assert out.startswith("nvcc was not found") and "export CUDA_HOME=" in out
