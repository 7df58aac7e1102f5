"""kp.bench: bench's numbers from the timing and the formula, its table and ratio, and what it refuses.
(The scripts under bench/ and their report: test_bench_scripts.py.)"""

import json

import pytest
import torch

import helpers
from kp.table import number


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
    assert "| size | custom, measured | native, measured | reference, measured | custom ÷ native |" in table
    assert (
        f"| {number(ratio)}x |" in table.splitlines()[3]
        and "GB/s = 2 × 4n bytes: read x, write y ÷ median time; CPU, 1 thread" in table
    )
    assert json.loads((tmp_path / "r.json").read_text())["bench"] == [result.summary()]
    assert result.summary() == f"custom {ratio:.3g}x native at size 4000 (GB/s, CPU, 1 thread)"


# A quick bench of two n-float inputs: few runs, no plot.
QUICK = dict(
    make_inputs=lambda n: (torch.randn(n), torch.randn(n)),
    formula="3 × 4n bytes",
    bytes_moved=lambda n: 12 * n,
    min_reps=3,
    min_seconds=0,
    plot=False,
)


def test_on_the_cpu_the_gpu_models_time_stands_beside_the_emulation_and_the_h100s_measurement_under_it():
    def model(x, y):
        return x.numel() * 1e-12  # seconds: 1 ps an element

    model.gpu = "H100"
    result = helpers.bench(
        {"custom": torch.add, "native": torch.add},
        sizes=[1000],
        **QUICK,
        model=model,
        measured_on_h100="add2",
    )
    modelled = result.rows[-1]
    assert (modelled["provider"], modelled["ms"]) == ("custom on the H100, modelled", pytest.approx(1e-6))
    assert modelled["GB/s"] == pytest.approx(12 * 1000 / 1e-6 / 1e6)
    table = result.markdown()
    assert (
        "| size | custom (emulated) | native, measured | custom on the H100, modelled | custom (emulated) ÷ native |"
        in table
    )
    assert result.summary().startswith("custom (emulated) ") and result.label("native") == "native"
    assert "custom on the CPU stand-in: its time is the emulation's cost, not a GPU's." in table
    assert "Measured: add2 at size 67108864, 3.02 TB/s on one NVIDIA H100 80GB HBM3, `make bench`, 2026-11-23" in table


def test_bench_refuses_a_missing_formula_or_provider():
    args = {"sizes": [10], "make_inputs": lambda n: (torch.randn(n),), "plot": False}
    with pytest.raises(ValueError, match="exactly one of bytes_moved"):
        helpers.bench({"a": torch.neg, "b": torch.neg}, formula="n", **args)
    with pytest.raises(ValueError, match="at least one provider to compare it with"):
        helpers.bench({"a": torch.neg}, formula="n", flops=lambda n: n, **args)
    with pytest.raises(ValueError, match="baseline 'c' is not one of the providers"):
        helpers.bench({"a": torch.neg, "b": torch.neg}, formula="n", flops=lambda n: n, baseline="c", **args)


def test_gpu_trace_without_a_gpu_says_so_in_one_line(capsys):
    assert helpers.gpu_trace(torch.add, torch.ones(3), torch.ones(3), kernel="add") is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "need a GPU" in out and "the GPU model above" in out


@pytest.mark.skipif(not torch.cuda.is_available(), reason="cuda: no GPU here")
def test_gpu_trace_on_a_gpu_lists_the_ops_by_gpu_time_and_says_how_to_run_ncu(capsys):
    a = torch.ones(1024, device="cuda")
    table = helpers.gpu_trace(torch.add, a, a, kernel="add")
    assert "aten::add" in table and "ncu --set full -k regex:add -c 1" in capsys.readouterr().out


def test_more_providers_can_be_named_as_emulated_and_a_name_that_is_none_is_refused():
    args = dict(sizes=[100], **QUICK)
    providers = {"v2": torch.add, "v1 (plain)": torch.add, "torch": torch.add}
    result = helpers.bench(providers, emulated=("v2", "v1 (plain)"), baseline="torch", **args)
    head = "| size | v2 (emulated) | v1 (plain, emulated) | torch, measured | v2 (emulated) ÷ torch |"
    assert head in result.markdown()
    assert "v2, v1 (plain) on the CPU stand-in: their times are the emulation's cost, not a GPU's." in result.markdown()
    with pytest.raises(ValueError, match=r"emulated names \['v3'\]"):
        helpers.bench(providers, emulated=("v3",), **args)


def test_the_table_shows_each_throughput_in_the_unit_that_reads_best_and_renders_as_html():
    def model(x, y):
        return x.numel() * 1e-12  # seconds: 1 ps an element, 12 bytes each: 12 TB/s

    model.gpu = "H100"
    result = helpers.bench({"custom": torch.add, "native": torch.add}, sizes=[1000], **QUICK, model=model)
    row = result.pivot().rows[0]
    assert str(row["custom on the H100, modelled"]) == "12 TB/s" and "e+" not in result.markdown()
    page = result._repr_html_()
    assert page.startswith("<table>") and "<td>12\u00a0TB/s</td>" in page and "÷ median time" in page
