"""helpers.load_kernel: hot reload, header tracking, readable errors, retries, locks, doctor."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from conftest import DEVICE, TARGETS, run_python

import helpers
import kp.build
import kp.files
import kp.toolchain


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize("target", TARGETS)
def test_edit_then_reload_runs_new_code_in_the_same_process(kernel_copy, capsys, target):
    cu = kernel_copy()
    device = DEVICE[target]
    a, b = torch.randn(1000, device=device), torch.randn(1000, device=device)
    first = helpers.load_kernel(cu, target=target)
    torch.testing.assert_close(first.add2(a, b), a + b)

    edit(cu, "c[i] = a[i] + b[i];", "c[i] = a[i] + 2 * b[i];")
    second = helpers.load_kernel(cu, target=target)
    torch.testing.assert_close(second.add2(a, b), a + 2 * b)
    assert second.namespace != first.namespace
    assert "built in" in capsys.readouterr().out
    assert second.build.rebuilt == 1, "only the kernel object is rebuilt after a kernel edit"
    torch.testing.assert_close(first.add2(a, b), a + b)  # the old version is still itself

    again = helpers.load_kernel(cu, target=target)
    assert again is second and again.build.status == "loaded"
    cached = kp.build.build_kernel(cu, target=target)
    assert cached.status == "cached" and (cached.seconds, cached.rebuilt) == (second.build.seconds, 1)
    last = f"its last build: {second.build.seconds:.1f} s, 1 of 2 objects"
    where = {"cpu": "cpu stand-in", "cuda": "nvcc"}[target]
    assert cached.describe() == f"add2: cached ({where}; {last})"


def test_header_edit_triggers_rebuild(kernel_copy):
    cu = kernel_copy()
    (cu.parent / "scale.cuh").write_text("#define SCALE 1\n")
    edit(cu, '#include "kp.cuh"', '#include "kp.cuh"\n#include "scale.cuh"')
    edit(cu, "c[i] = a[i] + b[i];", "c[i] = a[i] + SCALE * b[i];")
    a, b = torch.randn(300), torch.randn(300)
    torch.testing.assert_close(helpers.load_kernel(cu, target="cpu").add2(a, b), a + b)
    (cu.parent / "scale.cuh").write_text("#define SCALE 3\n")
    torch.testing.assert_close(helpers.load_kernel(cu, target="cpu").add2(a, b), a + 3 * b)


def test_compile_error_names_the_cu_line_and_shows_it(kernel_copy):
    cu = kernel_copy()
    edit(cu, "c[i] = a[i] + b[i];", "c[i] = a[i] + undefined_name;")
    line = next(i for i, ln in enumerate(cu.read_text().splitlines(), 1) if "undefined_name" in ln)
    col = cu.read_text().splitlines()[line - 1].index("undefined_name") + 1
    with pytest.raises(helpers.KernelBuildError) as err:
        helpers.load_kernel(cu, target="cpu")
    message = str(err.value)
    assert message.startswith(f"{cu}:{line}:{col}: error: ")
    assert "undefined_name" in message.splitlines()[0]
    assert f"{line:5d} |   c[i] = a[i] + undefined_name;" in message
    assert message.splitlines()[2] == "      | " + " " * (col - 1) + "^"
    assert "undefined_name" in err.value.log and len(err.value.log) > len(message.splitlines()[0])
    assert "<details>" in err.value._render_html()  # the full log, collapsed, in Jupyter


def test_unsupported_construct_is_a_build_error_with_the_line(kernel_copy):
    cu = kernel_copy()
    edit(cu, "  c[i] = a[i] + b[i];", '  asm volatile("");\n  c[i] = a[i] + b[i];')
    line = next(i for i, ln in enumerate(cu.read_text().splitlines(), 1) if "asm" in ln)
    with pytest.raises(helpers.KernelBuildError) as err:
        helpers.load_kernel(cu, target="cpu")
    assert str(err.value).startswith(f"{cu}:{line}: inline asm/PTX is not supported on the CPU stand-in\n")
    assert f'{line:5d} |   asm volatile("");' in str(err.value)


def test_failed_build_is_retried(kernel_copy):
    cu = kernel_copy()
    good = cu.read_text()
    edit(cu, "c[i] = a[i] + b[i];", "c[i] = a[i] + b[i]")  # missing semicolon
    for _ in range(2):  # the same broken text fails again: nothing remembers the failure
        with pytest.raises(helpers.KernelBuildError, match="error: expected .;. before"):
            helpers.load_kernel(cu, target="cpu")
    cu.write_text(good)
    a = torch.randn(10)
    torch.testing.assert_close(helpers.load_kernel(cu, target="cpu").add2(a, a), 2 * a)


def test_warm_load_in_a_new_process_builds_nothing(kernel_copy):
    cu = kernel_copy()
    helpers.load_kernel(cu, target="cpu")
    done = run_python(
        f"import helpers, torch; m = helpers.load_kernel({str(cu)!r}, target='cpu'); "
        f"print(m.add2(torch.ones(2), torch.ones(2)))"
    )
    assert done.returncode == 0, done.stderr
    assert "add2: cached" in done.stdout and "tensor([2., 2.])" in done.stdout


def test_a_build_killed_midway_does_not_block_the_next(kernel_copy):
    cu = kernel_copy()
    build_dir = kp.files.BUILD_ROOT / "cpu"
    proc = subprocess.Popen([sys.executable, "-c", f"import helpers; helpers.load_kernel({str(cu)!r}, target='cpu')"])
    deadline = time.time() + 60
    while not list(build_dir.glob("add2-*/build.ninja")) or not _newest_ninja_is_for(cu, build_dir):
        assert time.time() < deadline and proc.poll() is None, "the first build never started"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # mid-compile: ninja has just been started
    proc.wait()
    done = run_python(
        f"import helpers, torch; m = helpers.load_kernel({str(cu)!r}, target='cpu'); "
        f"print(m.add2(torch.ones(1), torch.ones(1)))",
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "tensor([2.])" in done.stdout


def _newest_ninja_is_for(cu, build_dir):
    return any(str(cu.parent) in p.read_text() for p in build_dir.glob("add2-*/build.ninja"))


def test_two_processes_building_the_same_kernel_both_succeed(kernel_copy):
    cu = kernel_copy()
    code = (
        f"import helpers, torch; m = helpers.load_kernel({str(cu)!r}, target='cpu'); "
        "print(m.add2(torch.ones(3), torch.ones(3)))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=180) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "tensor([2., 2., 2.])" in out
    # One built it; the other waited for the lock and loaded that build.
    assert sorted("add2: cpu stand-in, built in" in out for out, _ in outs) == [False, True]
    assert sorted("add2: cached" in out for out, _ in outs) == [False, True]


def test_doctor_reports_missing_ninja_with_the_fix(tmp_path):
    problems = kp.toolchain.doctor("cpu", environ={"PATH": str(tmp_path)})
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
    problems = kp.toolchain.doctor("cuda", environ={**os.environ, "CUDA_HOME": "/usr/local"})
    cuda_home = next(p for p in problems if p.check == "CUDA_HOME")
    assert "CUDA_HOME='/usr/local' is not a CUDA toolkit root" in cuda_home.message
    root = kp.toolchain.find_cuda_root()
    if root:
        assert f"export CUDA_HOME={root}" in cuda_home.fix


def test_find_cuda_root_sees_through_a_wrapper_script(tmp_path):
    real = kp.toolchain.find_cuda_root()
    if real is None:
        pytest.skip("no CUDA toolkit on this machine")
    wrapper = tmp_path / "nvcc"
    wrapper.write_text(f'#!/bin/sh\nexec {real}/bin/nvcc "$@"\n')
    wrapper.chmod(0o755)
    assert kp.toolchain.find_cuda_root({"PATH": str(tmp_path)}) == str(Path(real).resolve())


def test_unknown_kernel_lists_the_known_ones():
    with pytest.raises(FileNotFoundError, match="the kernels here: .*add2"):
        helpers.load_kernel("no_such_op")


def test_in_jupyter_a_build_error_shows_readably_and_the_kernel_lives_on(kernel_copy, tmp_path):
    """Edit -> error -> fix, in one Jupyter kernel: the error is the .cu line plus a collapsed log."""
    import nbformat

    from kp.notebooks import execute

    cu = kernel_copy()
    cells = [
        f"import torch, helpers\nfrom pathlib import Path\ncu = Path({str(cu)!r})\ngood = cu.read_text()",
        "cu.write_text(good.replace('c[i] = a[i] + b[i];', 'c[i] = a[i] + oops;'))\n"
        "helpers.load_kernel(cu, target='cpu')",
        "cu.write_text(good.replace('a[i] + b[i]', 'a[i] - b[i]'))\n"
        "print(helpers.load_kernel(cu, target='cpu').add2(torch.ones(2), torch.ones(2)))",
    ]
    path = tmp_path / "edit_loop.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    run = execute(path, allow_errors=True)
    outputs = run.notebook.cells[1].outputs
    html = next(o["data"]["text/html"] for o in outputs if o["output_type"] == "display_data")
    assert "KernelBuildError" in html and "oops" in html and "<details>" in html
    (error,) = [o for o in outputs if o["output_type"] == "error"]
    assert len(error["traceback"]) == 1  # one line, not a wall of traceback
    assert error["traceback"][0].startswith(f"KernelBuildError: {cu}:") and "oops" in error["traceback"][0]
    assert "tensor([0., 0.])" in run.notebook.cells[2].outputs[-1]["text"]  # same kernel, fixed code


def test_show_graph_without_graphviz_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` here
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(helpers.ToolchainError, match=r"apt-get install -y graphviz .*conda install graphviz"):
        helpers.show_graph((x * 2).sum())


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
