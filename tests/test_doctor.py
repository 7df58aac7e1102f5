"""kp.doctor: each missing or misconfigured tool is one Problem with its fix, a build without one raises one
ToolchainError, and `python helpers.py doctor` checks every target and says so."""

import os
import shutil
import subprocess
import sys

import pytest

import helpers
import kp.doctor
import kp.files
import kp.toolchain


def test_doctor_reports_missing_ninja_with_the_fix(tmp_path):
    problems = kp.doctor.doctor("cpu", environ={"PATH": str(tmp_path)})
    ninja = next(p for p in problems if p.check == "ninja")
    assert "not on the PATH" in ninja.message and "pip install ninja" in ninja.fix


def test_build_without_ninja_raises_one_toolchain_error(kernel_copy, tmp_path, monkeypatch):
    cu = kernel_copy()
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("c++", "g++", "gcc", "ld", "ld.gold", "as"):
        found = subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip()
        if found:
            (tools / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(tools))
    with pytest.raises(helpers.ToolchainError) as err:
        helpers.load_kernel(cu, target="cpu")
    assert str(err.value).startswith("ninja: ninja is not on the PATH") and "fix: run `make setup`" in str(err.value)


def test_doctor_reports_a_wrong_cuda_home():
    problems = kp.doctor.doctor("cuda", environ={**os.environ, "CUDA_HOME": "/usr/local"})
    cuda_home = next(p for p in problems if p.check == "CUDA_HOME")
    assert "CUDA_HOME='/usr/local' is not a CUDA toolkit root" in cuda_home.message
    root = kp.toolchain.find_cuda_root()
    if root:
        assert f"export CUDA_HOME={root}" in cuda_home.fix


def test_doctor_command_checks_every_target():
    done = subprocess.run(
        [sys.executable, str(kp.files.ROOT / "helpers.py"), "doctor", "cpu"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    dot = shutil.which("dot") is not None  # the doctor reports a missing `dot` too, and fails for it
    assert "[cpu] ok" in done.stdout and done.returncode == (0 if dot else 1), done.stdout + done.stderr
    done = subprocess.run(
        [sys.executable, str(kp.files.ROOT / "helpers.py"), "doctor", "cpu"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**{k: v for k, v in os.environ.items() if k != "CXX"}, "PATH": "/nonexistent"},
    )
    # helpers finds the environment's own ninja by itself, but no compiler: one message with the fix.
    assert done.returncode == 1 and "c++ compiler: `c++` was not found\n    fix: apt-get install -y g++" in done.stdout
