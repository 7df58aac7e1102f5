"""tools/gpu_session.sh without a GPU: a stand-in nvidia-smi and python show what the script does around a stage (the
SM clock logged while the stage runs, and its summary over the busy samples)."""

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# What `nvidia-smi --query-gpu=timestamp,utilization.gpu,clocks.sm,clocks.max.sm,power.draw,power.limit
# --format=csv,noheader,nounits -lms 200` prints: two busy samples and an idle one, then it keeps running until killed.
FAKE_SMI = """#!/bin/sh
case "$*" in
  *-lms*)
    echo $$ >"$OUT/../smi.pid"
    echo "2026/11/28 00:00:00.000, 100, 1755, 1980, 650.00, 700.00"
    echo "2026/11/28 00:00:00.200, 95, 1785, 1980, 640.00, 700.00"
    echo "2026/11/28 00:00:00.400, 10, 1980, 1980, 100.00, 700.00"
    exec sleep 60 ;;
  *) echo "NVIDIA H100 80GB HBM3, 580.00, 81559 MiB" ;;
esac
"""
# Every python call of the script succeeds; the stage's own waits until the clock log holds the logger's three lines
# (at most 20 s).
FAKE_PYTHON = """#!/bin/sh
case "$*" in
  *published_gemm*)
    for i in $(seq 100); do
      [ "$(cat "$OUT"/clocks-*.csv 2>/dev/null | wc -l)" -ge 3 ] && exit 0
      sleep 0.2
    done ;;
esac
exit 0
"""


@pytest.fixture
def fake_tools(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("nvidia-smi", FAKE_SMI), ("python", FAKE_PYTHON)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def published_stage(fake_tools, tmp_path):
    """Run `tools/gpu_session.sh published` with the stand-ins: (the run, its OUT folder)."""
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{fake_tools}:{os.environ['PATH']}", OUT=str(out), PYTHON=str(fake_tools / "python"),
               KP_GPU_DEPS=str(tmp_path / "deps"))  # fmt: skip
    run = subprocess.run(["bash", "tools/gpu_session.sh", "published"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    return run, out


NO_AWK = pytest.mark.skipif(shutil.which("awk") is None, reason="the summary is an awk program: awk is not installed")


@NO_AWK
def test_a_stage_logs_the_sm_clock_and_summarises_the_busy_samples(fake_tools, tmp_path):
    run, out = published_stage(fake_tools, tmp_path)
    assert len((out / "clocks-published.csv").read_text().splitlines()) == 3
    # the two samples at >= 90% busy: (1755 + 1785) / 2 MHz, (650 + 640) / 2 W; the idle one's 1980 MHz left out
    summary = "SM clock at >= 90% busy: 2 samples, mean 1770 MHz (1755-1785), max clock 1980 MHz, mean power 645 W"
    assert summary in run.stdout
    assert summary in (out / "published.txt").read_text()
    logger = int((tmp_path / "smi.pid").read_text())
    assert not pathlib.Path(f"/proc/{logger}").exists()  # the logger is stopped with its stage


@NO_AWK
def test_a_stage_without_a_busy_sample_says_so(fake_tools, tmp_path):
    idle = FAKE_SMI.replace(", 100, 1755", ", 5, 1755").replace(", 95, 1785", ", 5, 1785")
    (fake_tools / "nvidia-smi").write_text(idle)
    run, _ = published_stage(fake_tools, tmp_path)
    assert "SM clock: no sample with the GPU >= 90% busy" in run.stdout
