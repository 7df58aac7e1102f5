"""`make bench` (bench/report.py): every section of bench.md is there and holds numbers, a failing script
is reported as such, and the pure-torch baselines of bench/ops.py compute what the ops compute."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest
import torch

import helpers
import kp.files
import kp.gpumodel.ptxas
import kp.toolchain

BENCH = kp.files.ROOT / "bench"


def bench_module(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


report = bench_module("report")
ladder_profile = bench_module("ladder_linear").profile  # kp.gpumodel.profile.profile, as the script imports it
ops = bench_module("ops")


# ---------------------------------------------------------------------------------------------
# Reading bench.md back.


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown_tables(text):
    """Every markdown table in `text`: a list of rows, each a dict column -> cell text."""
    lines, tables, i = text.splitlines(), [], 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|(:?-+:?\|)+", lines[i + 1].strip()):
            head, rows, i = cells(lines[i]), [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(head, cells(lines[i]), strict=True)))
                i += 1
            tables.append(rows)
        else:
            i += 1
    return tables


def sections(text, level):
    """{heading: body} for the headings of one level (`level` #s) in `text`; a higher heading ends a body."""
    found, current = {}, None
    for line in text.splitlines():
        m = re.match(r"(#+) (.+)", line)
        if m and len(m[1]) <= level:
            current = m[2].strip() if len(m[1]) == level else None
            if current is not None:
                found[current] = []
        elif current is not None:
            found[current].append(line)
    return {k: "\n".join(v).strip() for k, v in found.items()}


def number(cell):
    """The first number in a cell: `4.57 GB/s` -> 4.57, `0.59x` -> 0.59, `1.2e-05` -> 1.2e-05."""
    m = re.search(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?", cell)
    if m is None:
        raise ValueError(f"no number in {cell!r}")
    return float(m[0])


def test_markdown_tables_reads_every_table_with_its_columns():
    text = "intro\n\n| a | b |\n|---|---|\n| 1 | x y |\n| 2 |  |\n\nbetween\n| c |\n|:-:|\n| 3 |\n"
    assert markdown_tables(text) == [[{"a": "1", "b": "x y"}, {"a": "2", "b": ""}], [{"c": "3"}]]
    assert markdown_tables("| not | a table |\nno separator line") == []


def test_sections_splits_at_headings_of_one_level_only():
    text = "# top\n## one\nbody 1\n### sub\nsub body\n\n## two\nbody 2\n### last\nend"
    assert sections(text, 2) == {"one": "body 1\n### sub\nsub body", "two": "body 2\n### last\nend"}
    assert sections(text, 3) == {"sub": "sub body", "last": "end"}


def test_number_reads_the_first_number_of_a_cell():
    assert number("4.57 GB/s") == 4.57
    assert number("0.59x") == 0.59
    assert number("1.2e-05") == 1.2e-05
    assert number("torch.add: 12 GB/s") == 12
    with pytest.raises(ValueError):
        number("skipped")


# ---------------------------------------------------------------------------------------------
# report.py's pieces.


def test_cpu_model_is_the_first_model_name_of_cpuinfo():
    cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R)  Xeon(R) CPU @ 2.20GHz\n\n"
    assert report.cpu_model(cpuinfo + cpuinfo.replace("Xeon", "Other")) == "Intel(R) Xeon(R) CPU @ 2.20GHz"
    assert report.cpu_model("processor\t: 0\nvendor_id\t: ARM\n") is None


def test_resolve_script_takes_a_name_or_a_path(tmp_path):
    assert report.resolve_script("ops") == (BENCH / "ops.py", report.SCRIPTS["ops"])
    script = tmp_path / "mine.py"
    script.write_text("")
    assert report.resolve_script(str(script)) == (script.resolve(), "mine.py")
    with pytest.raises(ValueError, match="no bench script 'nope'"):
        report.resolve_script("nope")


def test_every_script_under_bench_is_in_the_report():
    drivers = {"report", "ladder"}  # not scripts: the report itself, and the ladders' shared driver
    assert sorted(p.stem for p in BENCH.glob("*.py") if p.stem not in drivers) == sorted(report.SCRIPTS)


def test_a_failed_section_shows_its_status_output_and_stderr():
    run = report.Run("Mine", [sys.executable, str(BENCH / "ops.py"), "--quick"], 3, 1.5, "partial\n", "a\nboom\n")
    text = report.section(run)
    assert text.startswith("## Mine\n\n`bench/ops.py --quick`: FAILED in 2 s")
    assert "**FAILED**: it exited with status 3" in text
    assert "partial" in text and "```text\na\nboom\n```" in text
    timed_out = report.section(report.Run("Mine", [sys.executable, "x.py"], None, 9.0, "", ""))
    assert "it ran past the timeout (9 s)" in timed_out and "(nothing on stderr)" in timed_out


# ---------------------------------------------------------------------------------------------
# The whole quick report, for real.


def run_report(*args, timeout=600, env=None):
    return subprocess.run(
        [sys.executable, str(BENCH / "report.py"), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "bench.md"
    done = run_report("--quick", "--out", out)
    assert done.returncode == 0, done.stderr[-4000:] + "\n" + (out.read_text() if out.exists() else "")
    return out.read_text()


def test_the_quick_report_has_a_header_and_every_section_ok(quick_report):
    head = quick_report.split("\n## ")[0]
    assert re.search(r"^- date: \d{4}-\d\d-\d\d \d\d:\d\d", head, re.M)
    assert f"- machine: {os.cpu_count()} cores, " in head
    assert f"- torch {torch.__version__} | python " in head
    assert re.search(r"^- command: `.*bench/report\.py --quick --out .*bench\.md`$", head, re.M)
    status = markdown_tables(head)[0]
    assert [r["section"] for r in status] == list(report.SCRIPTS.values())
    assert [r["status"] for r in status] == ["ok"] * len(report.SCRIPTS)
    assert list(sections(quick_report, 2)) == list(report.SCRIPTS.values())


def test_the_reductions_ladder_section_models_each_version(quick_report):
    body = sections(quick_report, 2)[report.SCRIPTS["ladder_colsum"]]
    (table,) = markdown_tables(body)
    assert [r["version"] for r in table][:5] == ["1", "2", "3", "4", "5"]
    modelled = [number(r["1024 x 256: model µs (H100)"]) for r in table[:5]]
    assert all(us > 0 for us in modelled) and modelled[2] < modelled[0]  # warp shuffles beat one thread per column
    assert torch.cuda.is_available() or "the measurement is pending" in body


def test_the_linear_ladder_section_models_each_version(quick_report):
    body = sections(quick_report, 2)[report.SCRIPTS["ladder_linear"]]
    (table,) = markdown_tables(body)
    tiles = helpers.load_kernel("linear_ladder", target="cpu", check=True, quiet=True).tiles
    versions = [r["version"] for r in table if r["version"] != "F.linear"]  # F.linear's row: measured on a GPU
    assert versions == ["1", "2", "3", "4", "5", "6"] + ["7"] * len(tiles)  # version 7 at every tile configuration
    modelled = [number(r["256³: model µs (H100)"]) for r in table[: len(versions)]]
    assert all(us > 0 for us in modelled) and modelled[2] < modelled[0]  # shared tiles beat the naive kernel
    assert min(modelled[6:]) < modelled[5]  # the autotuned version 7 beats version 6
    assert re.search(r"^Version 7 autotuned by the model at 256³: tiles \d", body, re.M)
    assert torch.cuda.is_available() or "the measurement is pending" in body


def test_the_linear_ladder_times_the_model_on_the_gpu_named(capsys, monkeypatch):
    """`--gpu A100`: the counts timed on an A100 (108 SMs at 1.41 GHz, 64 FP32 lanes per SM, against the H100's 132
    at 1.98 GHz and 128), so the autotuned version 7 is slower there than the same counts timed on an H100; an
    unknown name: an error, before any trace. One run of the ladder, the model only: a GPU is hidden, so that the
    outcome does not depend on one (the quick report measures on a GPU)."""
    ladder, counted = bench_module("ladder_linear"), []

    def profile(*args, **kwargs):  # the script's, keeping what it counted
        counted.append(ladder_profile(*args, **kwargs))
        return counted[-1]

    monkeypatch.setattr(ladder.torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(ladder, "profile", profile)
    ladder.main(["--quick", "--gpu", "A100"])
    out = capsys.readouterr().out
    (table,) = markdown_tables(out)
    assert "the GPU model (A100, counted on the CPU stand-in" in out and "the measurement is pending" in out
    v7 = [(p, r) for p, r in zip(counted, table, strict=True) if r["version"] == "7"]  # a count per row, in order
    flops = 2 * 256**3
    assert [r["256³: model µs (A100)"] for _, r in v7] == [
        ladder.number(p.estimate("A100", flops) * 1e6) for p, _ in v7
    ]
    assert min(number(r["256³: model µs (A100)"]) for _, r in v7) > min(p.estimate("H100", flops) * 1e6 for p, _ in v7)
    with pytest.raises(ValueError, match="unknown GPU 'Z9'"):
        ladder.main(["--quick", "--gpu", "Z9"])
    assert len(counted) == len(table)  # no trace


def test_the_linear_ladder_measures_at_the_quick_size_with_quick(capsys, monkeypatch):
    """On a GPU, `--quick` times the steps at 256³, not at 4096³ (a quick run stays quick). A GPU is played: its
    build, the timing (a stub that notes the size it is asked for) and the model (1 ms a step) are stubs, so that no
    GPU is needed and nothing is traced."""
    ladder, sizes = bench_module("ladder_linear"), []

    def measured_ms(gpu, todo, n):
        sizes.append(n)
        return {op_args: 1.0 for _, op_args, _ in todo}, 2.0  # 1 ms a step (2·256³ FLOPs: 0.0336 TFLOP/s), F.linear 2

    load_kernel = ladder.helpers.load_kernel
    monkeypatch.setattr(ladder.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(ladder.torch.cuda, "get_device_name", lambda: "a GPU played by the test")
    monkeypatch.setattr(
        ladder.helpers,
        "load_kernel",
        lambda n, target, **kw: target if target == "cuda" else load_kernel(n, target, **kw),
    )
    monkeypatch.setattr(ladder, "modelled_seconds", lambda checked, n, args, gpu: 1e-3)
    monkeypatch.setattr(ladder, "measured_ms", measured_ms)
    ladder.main(["--quick"])
    out = capsys.readouterr().out
    (table,) = markdown_tables(out)
    assert sizes == [256] and "Version 7 autotuned by measurement at 256³" in out
    assert table[0]["256³: measured TFLOP/s"] == "0.0336" and table[0]["256³: ÷ F.linear, measured"] == "2.00x"


def test_the_softmax_ladder_section_models_each_version(quick_report):
    body = sections(quick_report, 2)[report.SCRIPTS["ladder_softmax"]]
    (table,) = markdown_tables(body)
    assert [r["version"] for r in table][:5] == ["1", "2", "3", "4", "5"]
    modelled = [number(r["1024 x 256: model µs (H100)"]) for r in table[:5]]
    assert all(us > 0 for us in modelled) and modelled[4] < modelled[0]  # a warp per row, Packs, beat a thread per row
    assert torch.cuda.is_available() or "the measurement is pending" in body


def test_the_attention_section_models_naive_and_fused_as_the_sequence_grows(quick_report):
    body = sections(quick_report, 2)[report.SCRIPTS["ladder_attention"]]
    (table,) = markdown_tables(body)
    assert [r["N"] for r in table] == ["64", "128"]
    for r in table:
        assert number(r["naive: model µs (H100)"]) > 0 and number(r["fused: model µs (H100)"]) > 0
        assert number(r["fused: model DRAM MiB"]) < number(r["naive: model DRAM MiB"])  # no N x N matrix written
    assert number(table[1]["scores MiB"]) == 4 * number(table[0]["scores MiB"])  # N doubled: N² quadrupled
    assert torch.cuda.is_available() or "the measurement is pending" in body


def test_the_build_latency_section_times_each_step(quick_report):
    body = sections(quick_report, 2)[report.SCRIPTS["build_latency"]]
    (table,) = markdown_tables(body)
    ours = {r["step"]: r["ours, CPU stand-in"] for r in table}
    for step in ("cold build", "warm load, new process", "edit -> reload, same process"):
        assert re.fullmatch(r"\d+\.\d\d s", ours[step]) and number(ours[step]) > 0, (step, ours[step])
    assert "the seed's way (about 90 s of builds) was skipped" in body  # --quick


def test_the_standin_section_measures_elementwise_barriers_and_compiles(quick_report):
    body = sections(quick_report, 2)[report.SCRIPTS["cpu_standin"]]
    (table,) = markdown_tables(body)
    measures = {r["measure"]: number(r["stand-in"]) for r in table}
    assert "add2 on 2^22 floats, 1 thread(s)" in measures
    assert "one __syncthreads arrival, 1 thread(s)" in measures
    assert "compile add2.cu with the header, -O2" in measures
    assert all(v > 0 for v in measures.values()), measures


def test_the_check_mode_section_times_every_op_in_both_builds(quick_report):
    body = sections(quick_report, 2)[report.SCRIPTS["check_mode"]]
    (table,) = markdown_tables(body)
    assert [r["op"].strip("`") for r in table] == [spec.op for spec in ops.all_ops()]
    for row in table:
        normal, checked = number(row["normal (ms)"]), number(row["check mode (ms)"])
        # the ratio of the unrounded times: the cells' 3 digits put it within 1%, and it is shown to 0.1
        assert normal > 0 and checked > 0, row
        assert abs(number(row["check / normal"]) - checked / normal) <= 0.01 * checked / normal + 0.05, row


SCALES = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def rate(cell):
    """A throughput cell ("651 MB/s", "2.58 GB/s", "1.2 TFLOP/s") in units per second: kp.table.quantity picks the
    prefix that reads best, so two cells of one row may differ in it."""
    prefix = re.search(r"\d\s*([kMGTP]?)(?:B|FLOP)/s", cell)
    return number(cell) * (SCALES.get(prefix[1], 1.0) if prefix else 1.0)


def test_the_ops_section_has_a_table_per_op_and_a_summary(quick_report):
    body = sections(quick_report, 2)[report.SCRIPTS["ops"]]
    where = f"on {torch.cuda.get_device_name()} (CUDA tensors" if torch.cuda.is_available() else "(CPU stand-in)"
    assert f"Custom ops {where}" in body
    per_op = sections(body, 3)
    specs = ops.all_ops()
    assert list(per_op) == [s.op for s in specs] + ["Summary"]
    for spec in specs:
        text = per_op[spec.op]
        assert "**FAILED**" not in text, text
        assert re.search(r"max abs error \d\.\d\de[-+]\d\d", text), text
        (table,) = markdown_tables(text)
        assert [r["size"] for r in table] == [str(s) for s in spec.quick_sizes]
        for row in table:
            size, custom, baseline, ratio = row.values()
            assert number(custom) > 0 and number(baseline) > 0, (spec.op, row)
            assert re.fullmatch(r"[\d.e+-]+x", ratio), (spec.op, row)
            # each of the three is rounded to 3 significant digits
            assert number(ratio) == pytest.approx(rate(custom) / rate(baseline), rel=0.02), (spec.op, row)
        unit = "GB/s" if spec.bytes_moved else "GFLOP/s"
        assert f"{unit} = {spec.formula} ÷ median time" in text
    (summary,) = markdown_tables(per_op["Summary"])
    assert [r["op"] for r in summary] == [s.op for s in specs]
    for row, spec in zip(summary, specs):
        assert row["size"] == str(spec.quick_sizes[-1])
        assert row["baseline"].startswith(spec.baseline_name + ": ")
        baseline = row["baseline"].removeprefix(spec.baseline_name + ": ")  # its name may hold digits: sum(G, 0)
        assert number(row["custom"]) > 0 and number(baseline) > 0 and number(row["ratio"]) > 0, row


def test_the_ptxas_section_lists_every_kernel_with_its_registers(quick_report):
    body = sections(quick_report, 2)[report.SCRIPTS["kernel_resources"]]
    if kp.toolchain.find_cuda_root() is None and not os.environ.get("CUDA_HOME"):
        assert "nvcc was not found" in body and not markdown_tables(body)
        return
    assert f"ptxas resource usage for {kp.gpumodel.ptxas.cuda_arch()}" in body
    (table,) = markdown_tables(body)
    files = {r["kernel file"] for r in table}
    assert files == {f"kernels/{p.name}" for p in helpers.KERNELS.glob("*.cu")}
    rows = {r["kernel"]: r for r in table}
    add2 = rows["`add2_fwd_kernel<float>`"]
    assert add2["kernel file"] == "kernels/add2.cu"
    assert re.fullmatch(r"\d+", add2["registers"]) and int(add2["registers"]) > 0
    for row in table:
        assert re.fullmatch(r"\d+", row["registers"]) and re.fullmatch(r"\d+", row["shared memory (bytes)"]), row
        assert re.fullmatch(r"\d+ / \d+", row["spills (bytes, stores / loads)"]), row
    assert int(rows["`linear_fwd_kernel<float>`"]["shared memory (bytes)"]) > 0  # its tiles live in __shared__


# ---------------------------------------------------------------------------------------------
# bench/notebook_times.py: issue 31's notebook-time goal.

notebook_times = bench_module("notebook_times")


def test_the_notebook_times_section_times_notebook_00_on_both_trees(quick_report):
    """--quick: notebook 00 once per tree after a warm-up each, this tree against fb07f24, and the base's temporary
    worktree gone afterwards."""
    body = sections(quick_report, 2)[report.SCRIPTS["notebook_times"]]
    assert re.search(r"^### Notebook run times: \w+ \(\d{4}-\d\d-\d\d\).* against fb07f24 \(2026-11-26\)$", body, re.M)
    assert re.search(r"^- date: \d{4}-\d\d-\d\d \d\d:\d\d UTC$", body, re.M)
    assert f"- machine: {os.cpu_count()} cores, " in body
    (table,) = markdown_tables(body)
    (row,) = table
    assert row["notebook"] == "00_puzzles"
    base, current = number(row["base median (s)"]), number(row["current median (s)"])
    assert base > 0 and current > 0
    assert (row["base runs (s)"], row["current runs (s)"]) == (row["base median (s)"], row["current median (s)"])
    assert number(row["current / base"]) == pytest.approx(current / base, rel=0.01)  # of the unrounded medians
    assert row["≤ 1.20 (goal)"] == ("yes" if number(row["current / base"]) <= 1.2 else "**no**")
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=kp.files.ROOT, capture_output=True, text=True).stdout
    assert "kp-notebook-times-base" not in worktrees


def test_the_notebook_times_table_takes_the_ratio_of_the_medians_and_judges_it():
    T = notebook_times.Timing
    timings = [
        T("00_puzzles", base=[2.0, 5.0, 3.0], current=[3.6, 9.0, 3.5]),  # medians 3 and 3.6 (means 3.33, 5.37): 1.2
        T("01_add2", base=[10.0, 11.0], current=[12.0, 13.4]),  # medians 10.5 and 12.7: 1.21, past the goal
        T("02_mul_add", base=[8.0], current=[6.0]),
        T("03_poly2", base=[4.0], failed=True, note="current run 1/1: ZeroDivisionError: division by zero"),
        T("07_linear", base=[80.0], current=[100.0], note="1 of 3 timed runs: the budget"),
        T("09_softmax", note="not on the base"),
    ]
    got = [tuple(r.values())[:5] for r in notebook_times.rows(timings)]
    assert got == [
        ("00_puzzles", "3", "3.6", "1.200", "yes"),
        ("01_add2", "10.5", "12.7", "1.210", "**no**"),
        ("02_mul_add", "8", "6", "0.750", "yes"),
        ("03_poly2", "4", "-", "-", "**FAILED**: current run 1/1: ZeroDivisionError: division by zero"),
        ("07_linear", "80", "100", "1.250", "**no** (1 of 3 timed runs: the budget)"),
        ("09_softmax", "-", "-", "-", "not on the base"),
    ]
    assert notebook_times.rows(timings)[0]["base runs (s)"] == "2, 5, 3"  # in the order run
    assert notebook_times.verdict_line(timings, "fb07f24 (2026-11-26)") == (
        "Goal (at most 20% slower than on fb07f24 (2026-11-26)): met by 2 of 4 notebooks compared; missed by 01_add2, "
        "07_linear"
    )


class PlayedRunner(notebook_times.Runner):
    """Runs nothing: each run takes the next of `seconds`, on a clock of its own."""

    def __init__(self, seconds, budget=0):
        super().__init__(budget, cold=False, records=None)
        self.seconds, self.clock, self.calls = iter(seconds), 0.0, []

    def elapsed(self):
        return self.clock

    def run(self, tree, notebook, what):
        self.calls.append((what, tree.name, notebook.stem))
        seconds = next(self.seconds)
        self.clock += seconds
        return seconds, None


def played_trees(tmp_path):
    trees = []
    for name, stems in [("base", ["00_a", "01_b"]), ("current", ["00_a", "01_b", "02_new"])]:
        (tmp_path / name / "notebooks").mkdir(parents=True)
        for stem in stems:
            (tmp_path / name / "notebooks" / f"{stem}.ipynb").write_text("{}")
        trees.append(notebook_times.Tree(name, tmp_path / name, name))
    return trees


def test_notebook_times_warms_each_tree_then_alternates_the_timed_runs(tmp_path):
    runner = PlayedRunner([50.0, 40.0, 1.0, 2.0, 3.0, 4.0])
    timings = notebook_times.measure(runner, played_trees(tmp_path), ["00", "02"], repeats=2)
    assert runner.calls == [
        ("warm-up", "base", "00_a"),
        ("warm-up", "current", "00_a"),
        ("run 1/2", "base", "00_a"),
        ("run 1/2", "current", "00_a"),
        ("run 2/2", "base", "00_a"),
        ("run 2/2", "current", "00_a"),
    ]
    assert [(t.notebook, t.base, t.current, t.note) for t in timings] == [
        ("00_a", [1.0, 3.0], [2.0, 4.0], ""),  # the warm-ups are not timed
        ("02_new", [], [], "not on the base"),
    ]


def test_notebook_times_starts_no_pair_that_the_last_says_would_pass_the_budget(tmp_path):
    """Budget 90 s: notebook 00's warm-ups (20 s) and a pair (60 s) leave 10 s, less than a pair; notebook 01's first
    warm-up starts within it (at 80 s), its second not (at 95 s)."""
    runner = PlayedRunner([10.0, 10.0, 30.0, 30.0, 15.0], budget=90)
    timings = notebook_times.measure(runner, played_trees(tmp_path), ["00", "01"], repeats=3)
    assert [what for what, *_ in runner.calls] == ["warm-up"] * 2 + ["run 1/3"] * 2 + ["warm-up"]
    assert [(t.base, t.current, t.note) for t in timings] == [
        ([30.0], [30.0], "1 of 3 timed runs: the budget"),
        ([], [], "not timed: past the budget"),
    ]


def test_a_notebook_run_is_refused_where_kp_is_not_its_trees(tmp_path, monkeypatch):
    """Each tree's run imports kp from that tree alone and builds in its build/report/ext, whatever this environment
    says; a tree that kp does not come from (here a folder without kp: the venv's editable install answers) is refused
    before any notebook runs."""
    monkeypatch.setenv("KP_BUILD_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("PYTHONPATH", str(kp.files.ROOT))
    tree = notebook_times.Tree("base", tmp_path, "a folder")
    env = tree.env(tmp_path / "records.json")
    assert (env["PYTHONPATH"], env["KP_BUILD_DIR"]) == (str(tmp_path), str(tmp_path / "build" / "report" / "ext"))
    done = subprocess.run(
        [sys.executable, "-c", notebook_times.CHILD, str(tmp_path), "none.ipynb"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1 and f"not the tree {tmp_path}" in done.stderr, done.stderr


def test_a_base_worktree_left_by_a_killed_run_is_removed_by_the_next(tmp_path):
    """A run killed with SIGKILL (bench/report.py's timeout) leaves its base worktree; the next run removes those
    whose process is gone, and not those of a run still going (here this test's own process)."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    folders = [tmp_path / f"{notebook_times.BASE_PREFIX}{pid}-x" for pid in (gone.pid, os.getpid())]
    for folder in folders:
        notebook_times.git("worktree", "add", "--detach", str(folder), "HEAD")
    try:
        notebook_times.remove_stale_bases()
        listed = notebook_times.git("worktree", "list", "--porcelain")
        assert (f"worktree {folders[0]}" in listed, f"worktree {folders[1]}" in listed) == (False, True)
        assert not folders[0].exists() and folders[1].exists()
    finally:
        for folder in folders:
            notebook_times.remove_worktree(folder)


# ---------------------------------------------------------------------------------------------
# Failures.


def test_a_failing_script_is_reported_and_the_rest_still_runs(tmp_path):
    failing = tmp_path / "failing.py"
    failing.write_text("print('partial output', flush=True)\nraise RuntimeError('boom')\n")
    fine = tmp_path / "fine.py"
    fine.write_text("import sys\nprint('| args |\\n|---|\\n| ' + ' '.join(sys.argv[1:]) + ' |')\n")
    out = tmp_path / "bench.md"
    done = run_report(failing, fine, "--quick", "--out", out, timeout=120)
    assert done.returncode == 1
    assert "FAILED: failing.py" in done.stderr
    text = out.read_text()
    status = markdown_tables(text.split("\n## ")[0])[0]
    assert [(r["section"], r["status"]) for r in status] == [("failing.py", "**FAILED**"), ("fine.py", "ok")]
    found = sections(text, 2)
    assert "**FAILED**: it exited with status 1" in found["failing.py"]
    assert "partial output" in found["failing.py"] and "RuntimeError: boom" in found["failing.py"]
    assert markdown_tables(found["fine.py"]) == [[{"args": "--quick"}]]  # --quick is passed on


def test_a_script_past_the_timeout_is_reported(tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    out = tmp_path / "bench.md"
    done = run_report(slow, "--timeout", 2, "--out", out, timeout=60)
    assert done.returncode == 1
    body = sections(out.read_text(), 2)["slow.py"]
    assert "**FAILED**: it ran past the timeout" in body and "started" in body


def test_an_unknown_script_name_is_a_usage_error(tmp_path):
    done = run_report("nope", "--out", tmp_path / "bench.md", timeout=60)
    assert done.returncode == 2
    assert "no bench script 'nope'" in done.stderr
    assert not (tmp_path / "bench.md").exists()


def test_kernel_resources_without_nvcc_says_so_in_one_line():
    env = {**os.environ, "CUDA_HOME": str(kp.files.ROOT / "no-such-cuda")}
    done = subprocess.run(
        [sys.executable, str(BENCH / "kernel_resources.py")], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("nvcc was not found, so there is no CUDA build to report on")
    assert len(done.stdout.strip().splitlines()) == 1 and "Traceback" not in done.stderr


# ---------------------------------------------------------------------------------------------
# The baselines of bench/ops.py that torch has no single op for.


def test_the_involution_gradient_baselines_are_the_gradients_of_the_reference():
    torch.manual_seed(0)
    N, C, H, W, G, K, stride, padding, dilation = 2, 8, 9, 7, 2, 3, 2, 2, 2
    H_out = (H + 2 * padding - dilation * (K - 1) - 1) // stride + 1
    W_out = (W + 2 * padding - dilation * (K - 1) - 1) // stride + 1
    x = torch.randn(N, C, H, W, dtype=torch.float64, requires_grad=True)
    w = torch.randn(N, G, K, K, H_out, W_out, dtype=torch.float64, requires_grad=True)
    out = ops.involution_reference(x, w, stride, padding, dilation)
    grad_out = torch.randn_like(out)
    grad_x, grad_w = torch.autograd.grad(out, (x, w), grad_out)
    got_x = ops.involution_grad_input_reference(grad_out, w.detach(), H, W, stride, padding, dilation)
    got_w = ops.involution_grad_weight_reference(grad_out, x.detach(), G, K, K, stride, padding, dilation)
    torch.testing.assert_close(got_x, grad_x)
    torch.testing.assert_close(got_w, grad_w)


@pytest.fixture
def restore_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_ops_only_runs_the_ops_asked_for(capsys, restore_threads):
    assert ops.main(["--quick", "--only", "add2", "exp"]) == 0
    per_op = sections(capsys.readouterr().out, 3)
    assert list(per_op) == ["add2", "add2_v1", "exp", "exp_backward", "Summary"]  # a kernel's name: all its ops
    assert [r["op"] for r in markdown_tables(per_op["Summary"])[0]] == ["add2", "add2_v1", "exp", "exp_backward"]


def test_ops_reports_an_op_that_disagrees_with_its_baseline(capsys, monkeypatch, restore_threads):
    specs = [s for s in ops.all_ops() if s.op in ("poly2", "exp")]
    specs[0].baseline = lambda x: x * x  # not what poly2 computes
    monkeypatch.setattr(ops, "all_ops", lambda: specs)
    assert ops.main(["--quick"]) == 1
    captured = capsys.readouterr()
    per_op = sections(captured.out, 3)
    assert per_op["poly2"].splitlines()[-1].startswith("**FAILED**: AssertionError: Tensor-likes are not close!")
    assert not markdown_tables(per_op["poly2"])
    assert markdown_tables(per_op["exp"])  # the next op still runs
    assert [r["op"] for r in markdown_tables(per_op["Summary"])[0]] == ["exp"]
    assert "**FAILED**: poly2" in per_op["Summary"] and "Traceback" in captured.err


def test_the_gpu_model_section_sets_the_model_against_the_h100s_measurement(quick_report):
    body = sections(quick_report, 2)[report.SCRIPTS["gpu_model"]]
    (table,) = markdown_tables(body)
    (row,) = table
    assert row["op"] == "add2" and row["bound (model)"] == "memory" and row["blocks counted"] == "64 of 1024"
    # add2 at 2^20 floats: 12 MiB read and written; the model charges them at the H100's 2.97 TB/s (4.24 µs)
    assert number(row["model (µs)"]) == pytest.approx(3 * 4 * 2**20 / 2.97e12 * 1e6, rel=0.01)


def test_the_gpu_model_models_linear_as_the_h100_measured_it_with_the_16_x_16_tiles():
    """bench/gpu_model.py sets linear's model against an H100 measurement of the 16 x 16 kernel: its copy of
    linear.cu with the register-tiled path switched off must build and launch that kernel at 512³, where
    kernels/linear.cu takes the register-tiled one."""
    from kp.gpumodel.profile import profile

    gpu_model = bench_module("gpu_model")
    variant = helpers.kernel_variant("linear", "linear_as_measured", *gpu_model.AS_MEASURED["linear"])
    x, w, b = torch.randn(512, 512), torch.randn(512, 512), torch.randn(512)
    kernels = {}
    for name, kernel in [("as measured", variant), ("today", "linear")]:
        ext = helpers.load_kernel(kernel, target="cpu", check=True, quiet=True)
        p = profile(ext.linear, x, w, b, max_blocks=1)  # a sample asked for: said by p.sampled, no warning
        assert p.sampled.startswith("sampled: ")
        kernels[name] = p.launches[0].kernel
    assert kernels == {"as measured": "linear_fwd_kernel<T>", "today": "linear_tiled_kernel<T, true, true>"}


def test_the_sampling_bench_covers_every_kernel_file(monkeypatch):
    """bench/gpu_model.py --sampling profiles a kernel of every .cu file of kernels/ (issue 31: "on every kernel of
    kernels/"): the files its cases load, with the loader standing in (nothing is built or run here)."""
    from unittest import mock

    gpu_model = bench_module("gpu_model")
    loaded = []

    def load_kernel(name, **kw):
        loaded.append(name)
        return mock.MagicMock(tiles=["a tile"] * 5)

    monkeypatch.setattr(gpu_model.helpers, "load_kernel", load_kernel)
    names = [name for name, *_ in gpu_model.sampling_cases()]
    assert set(loaded) == {p.stem for p in (kp.files.ROOT / "kernels").glob("*.cu")}
    assert {"attention v2, causal", "softmax v5", "reduce_sum v6", "layernorm"} <= set(names)


def test_the_sampling_bench_traces_every_block_where_the_grids_work_is_within_its_bound(monkeypatch, capsys):
    """--sampling --quick (add2 at 2^18 floats: 256 blocks of 256 threads, 4 floats each; about 0.08M threads' worth
    of work): the all-blocks column is a profile at max_blocks=0, set against the four sampled figures (add2's are
    alike, so 0.0%); with the bound below the work, "-" and a note that says why."""
    gpu_model = bench_module("gpu_model")
    asked, real = [], gpu_model.profile

    def profile(*args, max_blocks, **kwargs):
        asked.append(max_blocks)
        return real(*args, max_blocks=max_blocks, **kwargs)

    monkeypatch.setattr(gpu_model, "profile", profile)
    gpu_model.main(["--sampling", "--quick"])
    ((row,),) = markdown_tables(capsys.readouterr().out)
    assert asked == [2, 4, 8, 16, 0] and row["blocks"] == "256"
    assert row["all blocks (µs)"] == row["max_blocks=16 (µs)"] and row["farthest from all blocks"] == "0.0%"
    asked.clear()
    gpu_model.main(["--sampling", "--quick", "--all-blocks-bound", "1e4"])
    out = capsys.readouterr().out
    ((row,),) = markdown_tables(out)
    assert asked == [2, 4, 8, 16] and row["all blocks (µs)"] == row["farthest from all blocks"] == "-"
    work = re.search(r"^- add2: ([\d.]+)M threads' worth, past the bound \(0\.01M\)$", out, re.M)
    assert work and 0.0655 < float(work[1]) < 0.1, out  # 65536 threads, and their loads, stores and instructions
