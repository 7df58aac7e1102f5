"""kp.build: check builds keep frame pointers (the access hooks need them); a build follows the kernel's headers, is
retried after a failure (and its log then says no error), is found warm by a new process, and survives a build
killed midway and two processes building at once."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest
import torch
from conftest import edit, run_python

import helpers
import kp.build
import kp.files


def _newest_ninja_is_for(cu, build_dir):
    return any(str(cu.parent) in p.read_text() for p in build_dir.glob("add2-*/build.ninja"))


def test_check_builds_keep_frame_pointers_which_the_access_hooks_rely_on():
    """kernels/common/cuda_cpu_check.h's __tsan_read/write stubs take [rsp, rbp) for the calling kernel's own frame:
    sound only where every instrumented function keeps rbp as its frame pointer. The plain build needs none."""
    cu = kp.files.ROOT / "kernels" / "add2.cu"
    assert "-fno-omit-frame-pointer" in kp.build.build_flags("cpu", cu, check=True, runtime=False)[1]
    assert "-fno-omit-frame-pointer" not in kp.build.build_flags("cpu", cu, runtime=False)[1]


def test_header_edit_triggers_rebuild(kernel_copy):
    cu = kernel_copy()
    (cu.parent / "scale.cuh").write_text("#define SCALE 1\n")
    edit(cu, '#include "kp.cuh"', '#include "kp.cuh"\n#include "scale.cuh"')
    edit(cu, "c[i] = a[i] + b[i];", "c[i] = a[i] + SCALE * b[i];")
    a, b = torch.randn(300), torch.randn(300)
    torch.testing.assert_close(helpers.load_kernel(cu, target="cpu").add2(a, b), a + b)
    (cu.parent / "scale.cuh").write_text("#define SCALE 3\n")
    torch.testing.assert_close(helpers.load_kernel(cu, target="cpu").add2(a, b), a + 3 * b)


def test_failed_build_is_retried_and_its_log_then_says_no_error(kernel_copy):
    cu = kernel_copy()
    good = cu.read_text()
    edit(cu, "c[i] = a[i] + b[i];", "c[i] = a[i] + b[i]")  # missing semicolon
    for _ in range(2):  # the same broken text fails again: nothing remembers the failure
        with pytest.raises(helpers.KernelBuildError, match="error: expected .;. before") as failed:
            helpers.load_kernel(cu, target="cpu")
    log = failed.value.log_path  # named by the error; open in Lab's editor, say
    assert re.search("error: expected .;. before", log.read_text())
    cu.write_text(good)
    a = torch.randn(10)
    ext = helpers.load_kernel(cu, target="cpu")
    torch.testing.assert_close(ext.add2(a, a), 2 * a)
    assert re.fullmatch(
        rf"No error at \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d: {re.escape(ext.build.describe())}\n"
        r"\(A build that fails writes its log here.\)\n",
        log.read_text(),
    ), log.read_text()
    edit(cu, "c[i] = a[i] + b[i];", "c[i] = a[i] + b[i]")
    with pytest.raises(helpers.KernelBuildError):
        helpers.load_kernel(cu, target="cpu")
    cu.write_text(good)  # back to a version built before: cached, and the log says so
    assert helpers.load_kernel(cu, target="cpu", quiet=True) is ext
    assert log.read_text().startswith("No error at ") and "add2: cached (cpu stand-in;" in log.read_text()


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
