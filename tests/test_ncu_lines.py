"""tools/ncu_lines.py without a GPU: its readers of ncu's CSV pages, the join of ncu's lines with the model's, the ncu
commands it would run, and its one line where there is no GPU. What ncu itself counts runs only on a lent GPU
(tools/gpu_session.sh ncu)."""

import re
from types import SimpleNamespace

import pytest

from tools import ncu_lines, ncu_pages

# The source page as `ncu --import R --page source --csv --print-source cuda` prints it. The FORMAT is taken from the
# Nsight Compute CLI manual (--page source, --print-source) and the source view's columns in its Profiling Guide
# ("Source Counters"), as public scripts that parse this page show it (a "Kernel Name" row, a "File Path" row per
# file, a header row in which "Instructions Executed" comes twice and each "... Excessive" column before its metric,
# "-" where a line has no such access, "," as thousands separator); it is NOT the output of a run here (no GPU), and
# the numbers are made up.
HEADER = (
    '"#","Source","Warp Stall Sampling (All Cycles)","Instructions Executed","# Samples","Instructions Executed",'
    '"Address Space","L1 Tag Requests Global","L1 Wavefronts Shared Excessive","L1 Wavefronts Shared",'
    '"L1 Wavefronts Shared Ideal","L2 Theoretical Sectors Global Excessive","L2 Theoretical Sectors Global",'
    '"L2 Theoretical Sectors Global Ideal"'
)
SOURCE_CSV = f"""\
"Kernel Name","void add2_fwd_kernel_v2<float>(const float *, const float *, float *, long, long)"
"File Path","/home/u/project/kernels/add2.cu"
{HEADER}
"1","// c = a + b","0","","","","-","","","","","","",""
"24","  int64_t i = blockIdx.x * blockDim.x + threadIdx.x;","12","4,096","12","4,096","-","0","0","0","0","0","0","0"
"25","  if (i < n) c[i] = a[i] + b[i];","310","12,288","310","12,288","Global","6,144","-","-","-","0","24,576","24,576"
"25","  if (i < n) c[i] = a[i] + b[i];","0","100","0","100","-","0","0","0","0","0","0","0"
"File Path","/home/u/project/kernels/common/kp.cuh"
{HEADER}
"7","  return ceil_div(n, b);","0","2,048","0","2,048","Shared","0","256","512","256","0","0","0"
"""

# The raw page as `ncu --import R --page raw --csv --print-units base` prints it: a header row of metric names, a row of
# their units, a row per profiled kernel. Format from the same manual (--page raw, --print-units); numbers made up.
RAW_CSV = """\
"ID","Process ID","Process Name","Host Name","Kernel Name","Block Size","Grid Size","gpu__time_duration.sum",\
"smsp__inst_executed.sum"
"","","","","","","","{unit}","inst"
"0","4242","python3","gpu","void add2_fwd_kernel_v2<float>(const float *, const float *, float *, long, long)",\
"(256, 1, 1)","(65536, 1, 1)","{value}","18,432"
"""


def test_the_source_page_gives_each_line_its_counters_per_file_and_sums_a_line_listed_twice():
    lines = {(x.file.rsplit("/", 1)[-1], x.line): x for x in ncu_lines.parse_source(SOURCE_CSV)}
    assert set(lines) == {("add2.cu", 1), ("add2.cu", 24), ("add2.cu", 25), ("kp.cuh", 7)}
    assert lines[("add2.cu", 25)].counters == {
        "sectors": 24576.0,
        "requests": 6144.0,
        "wavefronts": 0.0,  # "-": no shared access
        "instructions": 12388.0,  # 12,288 + 100: the line listed under two functions
    }
    assert lines[("kp.cuh", 7)].counters["wavefronts"] == 512.0
    assert lines[("add2.cu", 24)].source.startswith("int64_t i")


def test_the_source_page_may_name_its_columns_by_metric():
    text = SOURCE_CSV.replace("L2 Theoretical Sectors Global Ideal", "memory_l2_theoretical_sectors_global_ideal")
    text = text.replace("L2 Theoretical Sectors Global", "memory_l2_theoretical_sectors_global")
    text = text.replace("Instructions Executed", "inst_executed")
    line = next(x for x in ncu_lines.parse_source(text) if x.line == 25 and x.file.endswith("add2.cu"))
    assert line.counters["sectors"] == 24576.0 and line.counters["instructions"] == 12388.0


@pytest.mark.parametrize("unit, value", [("nsecond", "267,520"), ("usecond", "267.52"), ("msecond", "0.26752")])
def test_the_raw_page_gives_the_duration_in_seconds_whatever_its_unit(unit, value):
    (kernel,) = ncu_lines.parse_raw(RAW_CSV.format(unit=unit, value=value))
    assert kernel["duration"] == pytest.approx(267.52e-6)
    assert kernel["smsp__inst_executed.sum"] == 18432.0
    assert ncu_lines.base_name(kernel["Kernel Name"]) == "add2_fwd_kernel_v2"


def test_kernel_names_strip_return_type_namespace_templates_and_parameters():
    assert ncu_lines.base_name("void kp::colsum_v1<float>(const float *, float *, long, long)") == "colsum_v1"
    assert ncu_lines.base_name("linear_v7<float, 128, 128, 16, 8, 8>") == "linear_v7"
    assert ncu_lines.base_name("add2_fwd_kernel") == "add2_fwd_kernel"


def line(kernel, file, n, space, units, requests):
    return SimpleNamespace(kernel=kernel, file=file, line=n, space=space, kind="load", units=units, requests=requests)


def test_the_join_puts_ncu_beside_the_model_line_by_line_for_the_profiled_kernel_only():
    p = SimpleNamespace(
        lines=[
            line("add2_fwd_kernel_v2<float>", "kernels/add2.cu", 25, "global", 16384, 4096),  # loads
            line("add2_fwd_kernel_v2<float>", "kernels/add2.cu", 25, "global", 8192, 2048),  # the store
            line("add2_fwd_kernel_v2<float>", "kernels/common/kp.cuh", 7, "shared", 640, 64),
            line("add2_fwd_kernel", "kernels/add2.cu", 20, "global", 999, 99),  # another kernel: left out
        ],
        instructions=[
            SimpleNamespace(kernel="add2_fwd_kernel_v2<float>", file="kernels/add2.cu", line=25, total=12000.0),
            SimpleNamespace(kernel="add2_fwd_kernel_v2<float>", file="kernels/add2.cu", line=30, total=50.0),
        ],
    )
    modelled = ncu_lines.model_lines(p, "add2_fwd_kernel_v2")
    assert modelled[("add2.cu", 25)] == {"sectors": 24576, "requests": 6144, "wavefronts": 0, "instructions": 12000}
    rows = {r["line"]: r for r in ncu_lines.join(ncu_lines.parse_source(SOURCE_CSV), modelled, "add2.cu")}
    assert list(rows) == ["add2.cu:24", "add2.cu:25", "add2.cu:30", "kp.cuh:7"]  # the kernel's file first; line 1: none
    assert rows["add2.cu:25"]["sectors (ncu)"] == 24576 and rows["add2.cu:25"]["sectors (model)"] == 24576
    assert rows["add2.cu:25"]["instructions (ncu)"] == 12388 and rows["add2.cu:25"]["instructions (model)"] == 12000
    assert rows["kp.cuh:7"]["wavefronts (ncu)"] == 512 and rows["kp.cuh:7"]["wavefronts (model)"] == 640
    assert rows["add2.cu:30"]["instructions (ncu)"] == 0.0  # the model counted a line ncu did not
    assert rows["add2.cu:24"]["requests (model)"] == 0.0


def test_a_case_is_reported_from_its_csvs_beside_the_model_time(tmp_path, monkeypatch):
    (tmp_path / "add2.source.csv").write_text(SOURCE_CSV)
    (tmp_path / "add2.raw.csv").write_text(RAW_CSV.format(unit="nsecond", value="267520"))
    asked = []

    def model_case(case, kernel):
        asked.append(kernel)
        return {("add2.cu", 25): dict(sectors=24576, requests=6144, wavefronts=0, instructions=12000)}, 240e-6, 1

    monkeypatch.setattr(ncu_pages, "model_case", model_case)
    case = next(c for c in ncu_lines.cases() if c.name == "add2")
    rows, summary = ncu_lines.report(case, tmp_path)
    assert asked == ["add2_fwd_kernel_v2"]  # the model's launches of the kernel ncu profiled
    assert summary["ncu (µs)"] == pytest.approx(267.52) and summary["model (µs)"] == pytest.approx(240)
    assert summary["model ÷ ncu"] == "0.897x" and tuple(summary) == ncu_lines.SUMMARY
    assert [r["line"] for r in rows] == ["add2.cu:24", "add2.cu:25", "kp.cuh:7"]


def test_a_case_without_csvs_is_named_in_the_summary_and_the_others_still_join(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(ncu_pages, "model_case", lambda case, kernel: ({}, 1e-6, 1))
    (tmp_path / "add2.source.csv").write_text(SOURCE_CSV)
    (tmp_path / "add2.raw.csv").write_text(RAW_CSV.format(unit="nsecond", value="1000"))
    todo = [c for c in ncu_lines.cases() if c.name in ("add2", "add2_v1")]
    ncu_lines.join_all(todo, tmp_path)
    out = capsys.readouterr().out
    assert "### add2\n" in out and "not joined: FileNotFoundError" in out
    assert (tmp_path / "lines.md").read_text().strip() == out.strip()


def dry_run(capsys, *words):
    assert ncu_lines.main(["--dry-run", "--out", "/tmp/ncu-out", "--only", *words]) == 0
    return [c for c in capsys.readouterr().out.split("\n\n") if c.strip()]


def test_the_dry_run_profiles_one_launch_of_the_cases_file_with_the_source_counters_only(capsys):
    (commands,) = dry_run(capsys, "colsum v5")
    profile, source, raw = commands.splitlines()
    for option in ("--profile-from-start off", "-c 1", "--section SourceCounters", "--import-source yes"):
        assert f" {option} " in profile
    assert "--set" not in profile and "gpu__time_duration.sum" in profile
    assert profile.endswith("--case 'colsum v5'") and "-o /tmp/ncu-out/colsum_v5 " in profile
    assert source.endswith("--import /tmp/ncu-out/colsum_v5.ncu-rep --page source --csv --print-source cuda")
    assert " --page raw --csv" in raw
    regex = re.search(r"-k 'regex:(.*?)' ", profile)[1]
    for name in ("colsum_v1", "void colsum_v5_partial<float>(const float *, float *, long, long)", "colsum_v4<float>"):
        assert re.search(regex, name), name
    for name in ("colsum_v10", "colsum_v5", "my_colsum_v1x"):
        assert not re.search(regex, name), name


def test_the_dry_run_covers_the_ops_both_ladders_and_a_kernel_behind_nested_launch_bounds(capsys):
    names = [c.name for c in ncu_lines.cases()]
    assert {"add2", "mul, broadcast", "involution_grad_weight", "linear ladder v1", "colsum v1"} <= set(names)
    assert sum(n.startswith("linear ladder v7") for n in names) == 5 and len(names) == len(set(names))
    (commands,) = dry_run(capsys, "linear ladder v7 tiles 4")
    assert "|linear_v7)" in commands and "__launch_bounds__" not in commands


def test_the_cuda_builds_get_line_information_in_a_folder_of_their_own(tmp_path):
    env = ncu_lines.build_env()
    assert "-lineinfo" in env["NVCC_APPEND_FLAGS"].split()
    assert env["KP_BUILD_DIR"].endswith("ncu-ext")
    nvcc = ncu_lines.shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc here: that nvcc takes -lineinfo from NVCC_APPEND_FLAGS is checked where it is")
    (tmp_path / "k.cu").write_text("__global__ void k(float* x) { x[threadIdx.x] += 1; }\n")
    for name, environ in (("with", env), ("without", {**env, "NVCC_APPEND_FLAGS": ""})):
        cmd = [nvcc, "-cubin", "-arch=sm_90", str(tmp_path / "k.cu"), "-o", str(tmp_path / f"{name}.cubin")]
        ncu_lines.subprocess.run(cmd, env=environ, check=True, timeout=120)
    assert b".debug_line" in (tmp_path / "with.cubin").read_bytes()  # what ncu's source page reads lines from
    assert b".debug_line" not in (tmp_path / "without.cubin").read_bytes()


@pytest.mark.parametrize("ncu", [None, "/usr/local/cuda/bin/ncu"])
def test_without_a_gpu_it_says_so_in_one_line_and_exits_0(ncu, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(ncu_lines, "find_ncu", lambda: ncu)
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    assert ncu_lines.main(["--out", str(tmp_path / "ncu")]) == 0
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 1 and "nothing to profile" in out
    assert not (tmp_path / "ncu").exists()


FAKE_NCU = """\
import sys, time
from pathlib import Path
args = sys.argv[1:]
if "--import" in args:  # an export: the page asked for
    print(open(sys.argv[0] + ("." + args[args.index("--page") + 1])).read(), end="")
    sys.exit(0)
case = args[-1]
if "add2_v1" == case:
    print("==ERROR== the application returned an error"); sys.exit(1)
if case == "mul":
    time.sleep(30)
Path(args[args.index("-o") + 1] + ".ncu-rep").write_text("a report")
"""


def test_each_case_runs_under_its_own_timeout_and_leaves_its_csvs_before_anything_is_parsed(tmp_path, monkeypatch):
    ncu = tmp_path / "ncu"
    ncu.write_text(f"#!{ncu_lines.sys.executable}\n" + FAKE_NCU)
    ncu.chmod(0o755)
    (tmp_path / "ncu.source").write_text(SOURCE_CSV)
    (tmp_path / "ncu.raw").write_text(RAW_CSV.format(unit="nsecond", value="1000"))
    monkeypatch.setattr(ncu_lines, "build_all", lambda kernels, out, env: {k: 0 for k in kernels})
    todo = [c for c in ncu_lines.cases() if c.name in ("add2", "add2_v1", "mul", "exp")]
    out = tmp_path / "out"
    out.mkdir()
    (out / "add2_v1.ncu-rep").write_text("an earlier run's report")  # not this run's: removed, never exported
    status = ncu_lines.profile_all(todo, out, str(ncu), timeout=3, budget=600)
    assert [status[c].split(" (")[0] for c in ("add2", "add2_v1", "mul", "exp")] == [
        "0, source 0, raw 0",
        "1",  # failed: no report, no CSV, and the next case still runs
        "timeout",
        "0, source 0, raw 0",
    ]
    assert (out / "add2.source.csv").read_text() == SOURCE_CSV and (out / "exp.raw.csv").exists()
    assert not (out / "add2_v1.ncu-rep").exists() and not (out / "add2_v1.source.csv").exists()
    assert "==ERROR==" in (out / "add2_v1.log").read_text()
    assert ncu_lines.json.loads((out / "status.json").read_text()) == status


def fake_ncu(tmp_path, extra=""):
    ncu = tmp_path / "ncu"
    ncu.write_text(
        f"#!{ncu_lines.sys.executable}\n" + FAKE_NCU.replace("case = args[-1]\n", "case = args[-1]\n" + extra)
    )
    ncu.chmod(0o755)
    (tmp_path / "ncu.source").write_text(SOURCE_CSV)
    (tmp_path / "ncu.raw").write_text(RAW_CSV.format(unit="nsecond", value="1000"))
    return str(ncu)


# What ncu prints where only admins may read the counters (the line as NVIDIA's ERR_NVGPUCTRPERM page quotes it)
DENIED = (
    'if case == "{}":\n    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU '
    'Performance Counters on the target device 0."); sys.exit(1)\n'
)


def test_no_permission_for_the_counters_stops_after_the_first_case_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(ncu_lines, "build_all", lambda kernels, out, env: {k: 0 for k in kernels})
    ncu = fake_ncu(tmp_path, DENIED.format("mul"))  # denied before the fake's 30 s sleep for mul
    todo = [c for c in ncu_lines.cases() if c.name in ("add2", "exp", "mul")]
    assert [c.name for c in todo] == ["add2", "mul", "exp"]  # the order they run in
    status = ncu_lines.profile_all(todo, tmp_path, ncu, timeout=20, budget=600)
    assert status["add2"].startswith("0, source 0") and status["mul"].startswith("1 (")
    assert status["exp"] == "skipped: ERR_NVGPUCTRPERM in mul.log"
    assert "mul: ncu may not read this GPU's counters (ERR_NVGPUCTRPERM): the other cases are skipped" in (
        capsys.readouterr().out
    )
    assert ncu_lines.json.loads((tmp_path / "status.json").read_text()) == status


@pytest.mark.parametrize("denied, rc", [("add2", 1), ("nothing", 0)])
def test_main_fails_when_no_case_left_a_report(denied, rc, tmp_path, monkeypatch, capsys):
    """Every case failing (the first denied, the rest skipped) exits 1, so that gpu_session.sh's `|| return 1` fires;
    one report written exits 0."""
    monkeypatch.setattr(ncu_lines, "build_all", lambda kernels, out, env: {k: 0 for k in kernels})
    monkeypatch.setattr(ncu_lines, "find_ncu", lambda: fake_ncu(tmp_path, DENIED.format(denied)))
    monkeypatch.setattr("torch.cuda.is_available", lambda: True)
    out = tmp_path / "out"
    assert ncu_lines.main(["--ncu-only", "--out", str(out), "--only", "add2", "--timeout", "20"]) == rc
    assert ("no case left a report" in capsys.readouterr().out) == (rc == 1)


def test_no_case_starts_past_the_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(ncu_lines, "build_all", lambda kernels, out, env: {k: 0 for k in kernels})
    todo = [c for c in ncu_lines.cases() if c.name in ("add2", "exp")]
    status = ncu_lines.profile_all(todo, tmp_path, "/nonexistent/ncu", timeout=3, budget=-1)
    assert status == {"add2": "skipped: over --budget", "exp": "skipped: over --budget"}


def test_the_models_lines_of_a_real_profile_are_keyed_as_ncus_are():
    """add2 at 2^16 float32 on the stand-in: its loads of a and b are 2 x 2^16 x 4 bytes = 16384 sectors of 32 bytes,
    its store 8192, at add2.cu's lines; the kernel named as ncu names it (no template arguments)."""
    import warnings

    import torch

    import helpers
    from kp.gpumodel.profile import profile

    m = helpers.load_kernel("add2", target="cpu", check=True, quiet=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = profile(m.add2, torch.randn(2**16), torch.randn(2**16), max_blocks=8)
    kernel = ncu_lines.base_name(p.launches[0].kernel)
    assert kernel == "add2_fwd_kernel_v2"
    modelled = ncu_lines.model_lines(p, kernel)
    sectors = sorted(v["sectors"] for v in modelled.values() if v["sectors"])
    assert sectors == [8192, 16384] and all(file == "add2.cu" for file, _ in modelled)
    assert sum(v["instructions"] for v in modelled.values()) > 0
