"""siboehm's SGEMM kernels (bench/kernels/sgemm) compute C = alpha·A·B + beta·C on the stand-in, their op rejects what
they cannot compute, and bench/published_gemm.py reads every published table (bench/kernels/sgemm/published.py), sets
the model on each published GPU against it, and runs (--quick)."""

import ast
import hashlib
import importlib.util
import json

import pytest
import torch

import helpers
import kp.files
import kp.gpumodel.sass
import kp.toolchain

BENCH = kp.files.ROOT / "bench"
KERNEL = BENCH / "kernels" / "sgemm" / "sgemm.cu"


def bench_module():
    spec = importlib.util.spec_from_file_location("bench_published_gemm", BENCH / "published_gemm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


published_gemm = bench_module()


@pytest.fixture(scope="module")
def sgemm():
    return helpers.load_kernel(KERNEL, target="cpu", quiet=True).sgemm


def reference(a, b, c, alpha, beta):
    return alpha * (a.double() @ b.double()) + beta * c.double()


# M, K, N: whole 128 tiles for every kernel, two blocks along M and three along N for the 128 x 128 ones; and, for
# kernels 1 and 2 (which guard every edge), sizes that are no multiple of their 32 x 32 blocks, one smaller than one
@pytest.mark.parametrize("kernel", range(1, 11))
def test_each_kernel_computes_alpha_a_b_plus_beta_c(sgemm, kernel):
    torch.manual_seed(kernel)
    shapes = [(256, 128, 384)] + ([(77, 45, 33), (5, 3, 7)] if kernel <= 2 else [])
    for m, k, n in shapes:
        a, b, c = torch.randn(m, k), torch.randn(k, n), torch.randn(m, n)
        out = sgemm(a, b, c, 0.5, 3.0, kernel)
        want = reference(a, b, c, 0.5, 3.0)
        err = (out.double() - want).abs().max().item()
        print(f"kernel {kernel} at {m}x{k}x{n}: max abs error {err:.3g}")
        torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-4)
        assert not torch.equal(out, c)  # c is left as it was: the op writes a new tensor


def test_the_op_rejects_what_the_kernels_cannot_compute(sgemm):
    a, b, c = torch.randn(100, 128), torch.randn(128, 128), torch.randn(100, 128)
    with pytest.raises(RuntimeError, match="kernel 3 computes whole tiles only.*multiples of 128"):
        sgemm(a, b, c, 1.0, 0.0, 3)
    with pytest.raises(RuntimeError, match="kernel must be 1 to 10, got 11"):
        sgemm(a, b, c, 1.0, 0.0, 11)
    with pytest.raises(RuntimeError, match=r"sgemm: a must be \(M, K\), b \(K, N\) and c \(M, N\)"):
        sgemm(a, b, torch.randn(128, 128), 1.0, 0.0, 1)
    with pytest.raises(RuntimeError, match="sgemm: b must be a contiguous Float"):
        sgemm(a, b.double(), c, 1.0, 0.0, 1)


# sha256 of each src/kernels/<file>.cuh of siboehm/SGEMM_CUDA at 60cba6f, less its #pragma once and #include lines
# (and the blank lines they leave at its top): taken from the fetched repository when the kernels were vendored
UPSTREAM_SHA256 = {
    "1_naive": "c79638a5e9ad0b20c491c488e0573698077ff667adfa9786f5f0ae29c2bfa4da",
    "2_kernel_global_mem_coalesce": "13cadc4d191d1c727969033805cd914ffe38ddd29c327afed84b049dd13fd2f5",
    "3_kernel_shared_mem_blocking": "577e17d2373a9e62bfd6e9291b21ba37c0cbdf72ddf6d3eea9c8774858ae9e86",
    "4_kernel_1D_blocktiling": "fe90e2d4cfe4381923d74193f01c9d447bdbffbcc88ba40c0a09764532b330ba",
    "5_kernel_2D_blocktiling": "02fd00d1b1681e1b30c31892042a7e2e4ea9944ea3bed6092560b30df4918a15",
    "6_kernel_vectorize": "7784da6c3f9d01b8a46efa61ce022e260eb6e566c648bc3e1a5ec5b9a28c7cf1",
    "7_kernel_resolve_bank_conflicts": "bb4cdc4f24a2dc2d32ca99fe704e983c5585d1aba5e1fc172a114f54fb73ac15",
    "8_kernel_bank_extra_col": "5e9c2a521918495cc46dd5dbca5bc4c61f37a3dedac44240bb90778932ef5fd2",
    "9_kernel_autotuned": "7d3702961c469048fbcaa7be553e63b9457a32f40b2ec3ce96acba29662041d5",
    "10_kernel_warptiling": "3dd2b433b635017aaa9590e4e50503a29e9e8ba9675b7c64dfb0758b500b2fe3",
}


def test_the_vendored_bodies_are_siboehms_verbatim():
    """Each kernel file's text sits unchanged in sgemm.cu, under its own banner: an edit to a body fails here."""
    text = KERNEL.read_text()
    for name, digest in UPSTREAM_SHA256.items():
        banner = f"// ---- src/kernels/{name}.cuh (verbatim but its #pragma once and #include lines) ----\n"
        start = text.index(banner) + len(banner)
        body = text[start : text.index("\n// ---- ", start)]
        assert hashlib.sha256(body.encode()).hexdigest() == digest, f"{name}: the vendored body differs from 60cba6f's"


def test_the_vendored_file_names_its_source_and_keeps_the_licence():
    text = KERNEL.read_text()
    assert "commit 60cba6f9b20a198116c76f18de8047f44df8c8b8" in text
    licence = (KERNEL.parent / "LICENSE").read_text()
    assert "MIT License" in licence and "Copyright (c) 2023 Simon Boehm" in licence


published = published_gemm.published  # bench/kernels/sgemm/published.py, as the script loads it


def test_each_published_table_reads_to_the_time_it_quotes():
    """One figure per source, to ms by hand (2·4096³ FLOP / GFLOP/s): the A6000's naive kernel at 309.0 GFLOP/s is
    444.8 ms; the A100's kernel 8 row (15086.2, listed before 7) is 9.110 ms; the RTX 4090's kernel 10 at 47180.7 is
    2.913 ms, the elapsed time its own output prints. Each source's kernels, and none it leaves out, are read."""
    a6000, a100, rtx4090 = published.A6000, published.A100, published.RTX4090_ISSUE21
    assert published.SOURCES == (a6000, a100, rtx4090)
    assert a6000.gflops()[1] == 309.0 and a6000.gflops()[6] == 18237.3 and list(a6000.gflops()) == list(range(1, 11))
    assert a6000.seconds()[1] * 1e3 == pytest.approx(444.79, abs=0.01)
    assert list(a100.gflops()) == [1, 2, 3, 4, 5, 7, 8] and a100.gflops()[8] == 15086.2
    assert a100.seconds()[8] * 1e3 == pytest.approx(9.110, abs=0.001)
    assert rtx4090.gflops() == {10: 47180.7}  # the 4096 line only, not the 2048 one (44766.6)
    assert rtx4090.seconds()[10] * 1e3 == pytest.approx(2.913, abs=0.0005)
    assert [s.gpu for s in published.SOURCES] == ["RTX A6000", "A100", "RTX 4090"]  # rows of kp.gpumodel.gpus
    for s in published.SOURCES:
        assert published_gemm.named_gpu(s.gpu).name == s.gpu
        assert "at commit " in s.where or s.where.startswith("https://github.com/siboehm/SGEMM_CUDA/issues/21 ")


def test_a_source_missing_a_kernel_it_claims_is_an_error_naming_it():
    broken = published.Source(label="mine", gpu="A100", device="A100", where="here", text="| 1: Naive | 2.0 |\n",
                              kernels=(1, 2))  # fmt: skip
    with pytest.raises(RuntimeError, match=r"published source 'mine': no figure for kernel\(s\) \[2\]"):
        broken.gflops()


def test_kendall_tau_by_hand():
    tau = published.kendall_tau
    assert tau([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert tau([1, 2, 3, 4], [40, 30, 20, 10]) == -1.0
    assert tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)  # pairs: (1,2) +, (1,3) +, (2,3) -
    assert tau([5], [7]) is None  # no pair to order


def test_the_agreement_arithmetic_by_hand():
    """Four kernels, published 1, 2, 4, 8 s, modelled 1.13, 1.5, 5, 6 s: ratios 1.13, 0.75, 1.25, 0.75; errors 13%,
    25%, 25%, 25%: mean 22% (goal missed), the worst the first of the 25% (kernel 2, 0.75x; met); the rankings
    agree on all 6 pairs, τ 1 (met). Then kernel 4 modelled 4.5 s: the pair 3 vs 4 is discordant (3 published
    faster, modelled slower), τ (5 - 1) / 6; kernel 4's error 43.75% is now the worst."""
    agree = published.agreement({1: 1.13, 2: 1.5, 3: 5.0, 4: 6.0}, {1: 1.0, 2: 2.0, 3: 4.0, 4: 8.0})
    assert agree.ratio == pytest.approx({1: 1.13, 2: 0.75, 3: 1.25, 4: 0.75})
    assert agree.mean == pytest.approx(0.22) and agree.worst == 2 and agree.worst_error == pytest.approx(0.25)
    assert agree.tau == 1.0 and agree.swapped == []
    assert (agree.met("mean"), agree.met("worst"), agree.met("tau")) == (False, True, True)
    assert agree.summary_row() == {"kernels": 4, "mean error": "22.0%", "worst": "25.0% (kernel 2, 0.75x)",
                                   "Kendall τ": "1.00", "goals met": "2 of 3"}  # fmt: skip
    agree = published.agreement({1: 1.13, 2: 1.5, 3: 5.0, 4: 4.5}, {1: 1.0, 2: 2.0, 3: 4.0, 4: 8.0})
    assert agree.tau == pytest.approx(4 / 6) and agree.swapped == [(3, 4)]
    assert agree.worst == 4 and agree.worst_error == pytest.approx(0.4375)
    assert agree.verdict("tau") == "missed (goal ≥ 0.9)" and agree.verdict("worst") == "missed (goal ≤ 0.35)"
    one = published.agreement({10: 3.0}, {10: 2.0})  # one kernel: a worst error, τ not judged
    assert one.tau is None and one.met("tau") is None and one.verdict("tau") == "not judged (goal ≥ 0.9)"
    assert one.summary_row()["goals met"] == "0 of 2" and one.summary_row()["Kendall τ"] == "n/a"


def test_the_script_runs_quick_on_every_published_gpu(capsys, monkeypatch):
    """--quick models the kernels at 256³ on each GPU a source publishes for, profiling each kernel once, and says
    that it compares nothing and that no GPU measured it."""
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the quick run would time the kernels too; this checks the CPU path")
    profiled, calls = published_gemm.profiled, []
    monkeypatch.setattr(published_gemm, "profiled", lambda *a: calls.append(a[2]) or profiled(*a))
    published_gemm.main(["--quick", "--kernels", "2"])
    out = capsys.readouterr().out
    assert calls == [2]  # one trace, read by three GPUs
    assert "the GPU model on RTX A6000, A100, RTX 4090 (" in out and "No GPU here" in out
    assert "--quick: 256³, where nothing was published: nothing compared." in out
    for gpu in ("RTX A6000", "A100", "RTX 4090"):
        section = out.split(f"\n### {gpu}\n")[1].split("\n### ")[0]
        assert "| kernel | model ms (256³) | bound (model) |" in section and "\n| 2 | " in section
    assert "published ms" not in out and "### Summary" not in out
    assert "Published and left out" in out and "issues/6" in out


def estimated(checked, kernel, gpu, n=256):
    """(the Estimate of `kernel` at n³ on `gpu`, its Profile), as main() makes them: profiled, then the profile's
    estimate_detail with the op's 2·n³ FLOPs."""
    p, _ = published_gemm.profiled(checked, n, kernel, 2)
    return p.estimate_detail(gpu, flops=2 * n**3), p


def test_every_function_of_the_script_is_used_by_it():
    """No function that only a test calls (the script's `modelled` was one): each function the script defines is named
    in it beyond its definition."""
    tree = ast.parse((BENCH / "published_gemm.py").read_text())
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert defined - named == set()


def test_the_summary_gives_the_goals_figures_and_the_worst_kernels_terms(capsys):
    """Against times set by hand from the model's own (kernel 2 taken 10% slower than modelled, kernel 10 half as
    long): the errors, the worst and τ follow by hand."""
    checked = helpers.load_kernel(KERNEL, target="cpu", check=True, quiet=True)
    results = {k: estimated(checked, k, "RTX A6000") for k in (2, 10)}
    times = {2: results[2][0].seconds * 1.1, 10: results[10][0].seconds * 0.5}
    published_gemm.summarise("published (A6000)", results, times, 256)
    out = capsys.readouterr().out
    # errors |1/1.1 - 1| = 9.1% and |2 - 1| = 100%: mean 54.5%
    assert "mean |model ÷ published - 1|: 54.5%, missed (goal ≤ 0.15)" in out
    assert "worst: kernel 10, 100.0% (2.00x), missed (goal ≤ 0.35)" in out
    order = 1.0 if (results[2][0].seconds > results[10][0].seconds) == (times[2] > times[10]) else -1.0
    assert f"Kendall τ of the two rankings: {order:.2f}" in out
    assert "| figure | kernel 10 | kernel 2 |" in out and "| bound |" in out
    # kernel 10 taken faster than kernel 2, where the model has kernel 2 the faster (at 256³): the one pair swapped
    assert results[2][0].seconds < results[10][0].seconds
    published_gemm.summarise("published (A6000)", results, {2: 1.0, 10: 0.5}, 256)
    out = capsys.readouterr().out
    assert "τ of the two rankings: -1.00, missed (goal ≥ 0.9); 1 of 1 pairs modelled in the wrong order (the " in out
    assert "(the faster one first): 10 vs 2\n" in out


def test_a_gpu_section_compares_each_source_on_its_own_kernels(capsys):
    """A source that publishes kernel 2 only, set beside kernels 2 and 10 modelled on the A100: its columns hold "—"
    for kernel 10, and its agreement covers kernel 2 alone (model ÷ published by hand from its one figure)."""
    checked = helpers.load_kernel(KERNEL, target="cpu", check=True, quiet=True)
    results = {k: estimated(checked, k, "A100") for k in (2, 10)}
    mine = published.Source(label="mine", gpu="A100", device="A100", where="here", text="| 2: Coalescing | 1000.0 |",
                            kernels=(2,))  # fmt: skip
    ((what, agree),) = published_gemm.gpu_section("A100", results, [mine], {}, None, 256)
    out = capsys.readouterr().out
    assert what == "published (mine)" and list(agree.ratio) == [2]
    assert agree.ratio[2] == pytest.approx(results[2][0].seconds / (2 * 4096**3 / 1e12))
    assert "| kernel | model ms (256³) | bound (model) | published ms (mine) | model ÷ published (mine) |" in out
    assert "\n| 10 | " in out and out.split("\n| 10 | ")[1].split("\n")[0].endswith("| — | — |")
    assert (
        "Published (mine, A100): here:" in out and "Kernels compared: 2." in out and "Against published (mine):" in out
    )


def test_on_a_gpu_the_script_sets_the_model_against_its_own_measurement(capsys, monkeypatch):
    """A GPU is played (its timing a stub that notes the size and kernels it is asked for, each kernel at twice the
    time modelled on it): the measured column and the summary against it come out, on that GPU only; the quick size
    is the one timed."""
    asked, profiles = [], {}

    def measured_ms(n, kernels):
        asked.append((n, list(kernels)))
        return {k: 2 * profiles[k].estimate_detail("H100 SXM", flops=2 * n**3).seconds * 1e3 for k in kernels}

    real_profiled = published_gemm.profiled

    def profiled_and_noted(checked, n, kernel, max_blocks):
        result = real_profiled(checked, n, kernel, max_blocks)
        profiles[kernel] = result[0]
        return result

    monkeypatch.setattr(published_gemm.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(published_gemm.torch.cuda, "get_device_name", lambda: H100)
    monkeypatch.setattr(published_gemm, "measured_ms", measured_ms)
    monkeypatch.setattr(published_gemm, "profiled", profiled_and_noted)
    published_gemm.main(["--quick", "--kernels", "2,10"])  # no --gpu: the model's GPU is the one measured
    out = capsys.readouterr().out
    assert asked == [(256, [2, 10])]
    assert "the GPU model on H100 SXM (" in out and "WARNING" not in out and "### A100" not in out
    assert f"| measured ms ({H100}) | model ÷ measured |" in out
    assert f"Against measured ({H100}):" in out
    assert (
        "mean |model ÷ measured - 1|: 50.0%, missed" in out
        and "Kendall τ of the two rankings: 1.00, met (goal ≥ 0.9); 0 of 1 pairs" in out
    )
    assert f"| H100 SXM | measured ({H100}) | 2 | 50.0% | " in out  # the summary table's row


# as torch.cuda.get_device_name() names them
H100, H200, H100_NVL = "NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA H100 NVL"


def test_device_model_finds_the_models_row_for_a_device_name():
    device_model = published_gemm.device_model
    assert device_model(H100) == "H100 SXM"
    assert device_model("NVIDIA H100 PCIe") == "H100 PCIe"  # a qualifier the table has is kept
    assert device_model("NVIDIA A100-SXM4-80GB") == "A100"
    assert device_model("NVIDIA GeForce RTX 4090") == "RTX 4090"
    assert device_model("NVIDIA RTX A6000") == "RTX A6000"
    assert (
        device_model("Tesla T4") == "T4" and device_model("NVIDIA L4") == "L4" and device_model("NVIDIA A10") == "A10"
    )


@pytest.mark.parametrize("device", [H200, H100_NVL, "NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB"])
def test_device_model_warns_and_gives_no_row_for_a_gpu_the_table_does_not_have(device):
    """No word is dropped to find a row: an H100 NVL is not the H100 SXM, an A100 40GB (1.56 TB/s) not the row's
    SXM4 80GB (2.04 TB/s)."""
    with pytest.warns(UserWarning, match=f"{device!r} is no GPU of kp.gpumodel.gpus: its measured column is printed"):
        assert published_gemm.device_model(device) is None


def play_a_gpu(monkeypatch, name, ms=1.5):
    monkeypatch.setattr(published_gemm.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(published_gemm.torch.cuda, "get_device_name", lambda: name)
    monkeypatch.setattr(published_gemm, "measured_ms", lambda n, kernels: {k: ms * k for k in kernels})


@pytest.mark.parametrize("device", [H200, H100_NVL])
def test_a_gpu_the_model_has_no_row_for_gets_its_measured_column_alone(capsys, monkeypatch, device):
    """An H200 or an H100 NVL (no row in kp.gpumodel.gpus): a loud warning, the measured times, and no model ÷
    measured anywhere; the model runs on the published GPUs."""
    play_a_gpu(monkeypatch, device)
    with pytest.warns(UserWarning, match="is no GPU of kp.gpumodel.gpus"):
        published_gemm.main(["--quick", "--kernels", "2"])
    out = capsys.readouterr().out
    assert (
        f"WARNING: measured on {device}, which kp.gpumodel.gpus has no row for, not a modelled GPU (RTX A6000, A100, "
        "RTX 4090): the measured column is printed alone" in out
    )
    assert f"| kernel | measured ms ({device}) |\n|---|---|\n| 2 | 3 |" in out  # kernel 2: 2 x 1.5 ms
    assert "model ÷ measured" not in out and "Against measured" not in out and "### H100 SXM" not in out


def test_a_gpu_measured_but_another_modelled_gets_its_measured_column_alone(capsys, monkeypatch):
    play_a_gpu(monkeypatch, H100)
    published_gemm.main(["--quick", "--kernels", "2", "--gpu", "A6000"])
    out = capsys.readouterr().out
    assert f"WARNING: measured on {H100}, which is the model's H100 SXM, not a modelled GPU (RTX A6000)" in out
    assert "model ÷ measured" not in out and "### RTX A6000" in out


def test_measure_only_writes_the_times_and_measured_joins_them_off_the_gpu(capsys, monkeypatch, tmp_path):
    """--measure-only on a (played) H100 profiles nothing and writes its times; --measured joins them on a machine
    without a GPU, the model on the H100 the file names."""
    play_a_gpu(monkeypatch, H100)
    monkeypatch.setattr(published_gemm, "profiled", lambda *a: pytest.fail("--measure-only profiled a kernel"))
    path = tmp_path / "out" / "published.json"
    published_gemm.main(["--quick", "--kernels", "2,10", "--measure-only", "--out", str(path)])
    record = json.loads(path.read_text())
    assert record["device"] == H100 and record["size"] == 256 and record["ms"] == {"2": 3.0, "10": 15.0}
    assert f"--measured {path}" in capsys.readouterr().out
    monkeypatch.undo()
    monkeypatch.setattr(published_gemm.torch.cuda, "is_available", lambda: False)
    published_gemm.main(["--quick", "--kernels", "2,10", "--measured", str(path)])
    out = capsys.readouterr().out
    assert "the GPU model on H100 SXM (" in out and f"| measured ms ({H100}) | model ÷ measured |" in out
    assert f"Against measured ({H100}):" in out and "No GPU here" not in out
    with pytest.raises(RuntimeError, match=r"--measured: .* was timed at 256³, the model runs at 4096³"):
        published_gemm.main(["--kernels", "2", "--measured", str(path)])
    with pytest.raises(RuntimeError, match=r"--measured: .* has no time for kernel\(s\) \[3\]"):
        published_gemm.main(["--quick", "--kernels", "2,3", "--measured", str(path)])


def test_measure_only_needs_a_gpu(monkeypatch, tmp_path):
    monkeypatch.setattr(published_gemm.torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="--measure-only: no GPU here"):
        published_gemm.main(["--quick", "--measure-only", "--out", str(tmp_path / "m.json")])


def test_the_script_rejects_an_unknown_kernel():
    with pytest.raises(RuntimeError, match="--kernels: each must be 1 to 10"):
        published_gemm.main(["--quick", "--kernels", "11"])


def test_the_detail_gives_the_trace_s_global_load_sectors_over_the_sass_s():
    """Kernel 6 reads A and B as float4 member by member: four 4-byte requests of the trace per LDG.E.128 of nvcc's,
    so the trace requests several times the SASS's sectors (what kp.gpumodel.charges takes off); kernel 2's scalar
    loads are the same in both (1.00). Without SASS the row says so rather than print a ratio of 1 by construction."""
    checked = helpers.load_kernel(KERNEL, target="cpu", check=True, quiet=True)
    row = "global load sectors, trace ÷ SASS"
    figures = {}
    for k in (2, 6):
        est, p = estimated(checked, k, "RTX A6000")
        if not p.compiled("RTX A6000")[2].startswith("SASS"):
            pytest.skip(f"no SASS here ({p.compiled('RTX A6000')[2]}): the ratio needs nvcc")
        figures[k] = published_gemm.counters(p, est.gpu, 256)[row]
    print(figures)
    assert figures[2] == "1.00"
    assert 2.0 <= float(figures[6]) <= 4.0
    lines, instructions, _ = p.compiled("RTX A6000")
    p.compiled = lambda gpu: (lines, instructions, "source (nvcc not found)")
    assert published_gemm.counters(p, est.gpu, 256)[row] == "no SASS"


def _line_of(text):
    return next(n for n, ln in enumerate(KERNEL.read_text().splitlines(), 1) if text in ln)


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None or kp.gpumodel.sass.nvdisasm() is None,
                    reason="no nvcc or no nvdisasm here: the shared wavefronts would be the source's")  # fmt: skip
def test_kernel_5s_shared_wavefronts_and_loop_runs_follow_by_hand_from_its_sass():
    """siboehm's kernel 5 at 128³ (one block, 8 warps, 16 tiles of BK = 8) on the RTX A6000 (sm_86): per warp and tile
    nvcc 13.0 stores 4 + 4 floats (STS, 1 wavefront each: 32 consecutive floats), loads As's 8 rows as 16 LDS.128 (lanes
    0-15 one row, 16-31 the next: lanes n and n^1 on one address, two phases of 16 lanes, 2; 4 before the stand-in
    packed such loads, one wavefront per quarter-warp) and re-reads each row's first float with 8 scalar LDS (the two
    rows 256 bytes apart, one bank: a 2-way conflict, 2), and Bs as 16 LDS.128 (quarter-warp lanes 32 bytes apart:
    banks 8c..8c+3 mod 32, threadCol c and c + 4 on the same banks, 2 per quarter-warp, 8): 8 + 16 + 32 + 128 = 184
    wavefronts, 23552 for the block. Counted at the widest width alone it was 168 (the 8 LDS missing), and the loop's
    runs (the As line's 24 instructions taken to run its 16 requests between them) 6437 of 8192 at 512³."""
    from kp.gpumodel.profile import profile

    checked = helpers.load_kernel(KERNEL, target="cpu", check=True, quiet=True)
    torch.manual_seed(0)
    a, b, c = torch.randn(128, 128), torch.randn(128, 128), torch.randn(128, 128)
    p = profile(checked.sgemm, a, b, c, 0.5, 3.0, 5)
    (kernel,) = {la.kernel for la in p.launches}
    as_line, bs_line = _line_of("regM[i] = As["), _line_of("regN[i] = Bs[")
    found = [i for i in p.kernel_sass(kernel, "RTX A6000") if i.space == "shared" and i.kind == "load"]
    shape = sorted(i.opcode for i in found if i.line == as_line), sorted(i.opcode for i in found if i.line == bs_line)
    if shape != (["LDS"] * 8 + ["LDS.128"] * 16, ["LDS.128"] * 16):
        pytest.skip(f"this nvcc compiles kernel 5's tile loads otherwise than the hand count assumes: {shape}")
    (w,) = p.work(2 * 128**3, "RTX A6000")
    assert w.shared_wavefronts == 184 * 16 * 8
    runs = dict((i.offset, n) for i, n in p._instruction_runs("RTX A6000")[kernel])
    assert {round(runs[i.offset], 3) for i in found if i.line in (as_line, bs_line)} == {16 * 8}
