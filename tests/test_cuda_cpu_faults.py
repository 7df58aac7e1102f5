"""A kernel that faults on the CPU stand-in fails its launch with a RuntimeError in CUDA's words, naming the kernel,
thread, block and `.cu` line, and the process goes on: the notebook's kernel and its variables survive, and the next
launch works (tests/cuda_cpu/faults.cu). Per-thread stacks are CUDA's 512 KiB of local memory.

A write just outside a tensor (the off-by-one) lands in the tensor's redzone, which the stand-in checks after every
launch (kernels/common/cuda_cpu_redzones.cpp): the launch fails naming the op, the kernel, the tensor and the side,
and nothing outside the tensors is touched; before the redzones, glibc aborted the process later. Farther accesses
fault in the unmapped guard regions around every tensor and are named the same way (tests/test_overrun.py).

CPU only: on a GPU, a fault leaves the CUDA context unusable for the rest of the process."""

import re

import pytest
import torch
from conftest import edit

import helpers
import kp.files
from kp.notebooks import execute

FAULTS = kp.files.ROOT / "tests" / "cuda_cpu" / "faults.cu"
LINES = FAULTS.read_text().splitlines()


def line_of(text):
    """The 1-based line of faults.cu that contains `text`, and the message's way of naming it."""
    n = next(i for i, line in enumerate(LINES, 1) if text in line)
    return n, f"tests/cuda_cpu/faults.cu:{n}"


@pytest.fixture(scope="module")
def k():
    return helpers.load_kernel(FAULTS, target="cpu", quiet=True)


def fails(call):
    with pytest.raises(RuntimeError) as failed:
        call()
    return str(failed.value)


def still_works(k):
    """The stand-in launches again after a fault, and computes right."""
    a, b = torch.tensor([7, -9, 100], dtype=torch.int32), torch.tensor([2, 3, 7], dtype=torch.int32)
    torch.testing.assert_close(k.divide(a, b), torch.tensor([3, -3, 14], dtype=torch.int32))


def test_a_wild_pointer_is_an_illegal_memory_access_at_its_line(k):
    """4 TiB below the tensor: unmapped, and in no tensor's guard. 128 TiB above it: beyond user space, where the
    CPU raises a general protection fault, with no address."""
    x = torch.zeros(64)
    message = fails(lambda: k.wild_write(x, -(1 << 40)))
    n, at = line_of("x[offset] = 1.0f;")
    assert message.startswith("tests/cuda_cpu/faults.cu:"), message
    assert "kernel launch failed: an illegal memory access was encountered: a write of address 0x" in message
    assert f"in kernel 'wild_write_kernel' thread (5,0,0) block (1,0,0), at {at}\n{n:5d} | {LINES[n - 1]}" in message
    message = fails(lambda: k.wild_write(x, 1 << 45))
    assert (
        "an illegal memory access was encountered: a general protection fault (an address beyond the 128 TiB of user "
        f"space, or a misaligned vector access) in kernel 'wild_write_kernel' thread (5,0,0) block (1,0,0), at {at}"
    ) in message, message
    assert (x == 0).all()
    still_works(k)


def test_large_local_arrays_fit_in_cudas_512_kib_and_overflowing_them_is_named(k):
    like = torch.zeros(1, dtype=torch.int32)
    # 256 KiB per thread, across a barrier: every thread but the first runs on its own fiber stack.
    expected = sum(range(256 * 1024 // 4096))
    assert (k.stack(like, 256, 2, 64) == expected).all()
    message = fails(lambda: k.stack(like, 600, 2, 64))
    assert re.search(
        r"unspecified launch failure: stack overflow in kernel 'stack_kernel<600>' thread \(\d+,0,0\) "
        r"block \(\d,0,0\): the CPU stand-in gives each thread 512 KiB",
        message,
    ), message
    assert (k.stack(like, 256, 3, 33) == expected).all()


def test_device_side_assert_names_the_condition_thread_and_line(k):
    n, at = line_of("if (i < n) assert(x[i] >= 0);")
    message = fails(lambda: k.assert_nonnegative(torch.tensor([1.0] * 70 + [-1.0])))
    assert (
        "kernel launch failed: device-side assert triggered: assert(x[i] >= 0) failed in kernel 'assert_kernel' "
        f"thread (6,0,0) block (1,0,0), at {at}\n{n:5d} | {LINES[n - 1]}"
    ) in message, message
    k.assert_nonnegative(torch.ones(100))  # holds: no error
    still_works(k)


def test_trap_fails_the_launch_at_its_line(k):
    n, at = line_of("__trap();")
    message = fails(lambda: k.trap(torch.zeros(1), 70, 128))
    assert (
        f"unspecified launch failure: __trap() in kernel 'trap_kernel' thread (6,0,0) block (1,0,0), at {at}" in message
    )
    k.trap(torch.zeros(1), 1000, 128)  # no thread with that index: no trap
    still_works(k)


def test_integer_division_by_zero_is_named_where_a_gpu_would_go_on_silently(k):
    n, at = line_of("a[i] / b[i]")
    a, b = torch.ones(100, dtype=torch.int32), torch.ones(100, dtype=torch.int32)
    b[77] = 0
    message = fails(lambda: k.divide(a, b))
    assert f"integer division by zero in kernel 'divide_kernel' thread (13,0,0) block (1,0,0), at {at}" in message
    assert "a GPU does not trap here" in message
    still_works(k)


@pytest.mark.parametrize(
    "bug, said",
    [
        ("c[i - (1ll << 40)]", "a write of address 0x"),  # a wild write, far out of c and of its guards
        ("c[i + 1]", "op 'add2_v1': kernel 'add2_fwd_kernel<T>' wrote past the end of 'c' (3 elements of 4 bytes)"),
    ],
    ids=["wild", "off-by-one"],
)
def test_in_a_notebook_a_fault_is_an_error_output_and_the_kernel_and_its_variables_live_on(
    tmp_path, kernel_copy, bug, said
):
    """The notebook's kernel process survives a wild write and an off-by-one; its variables are intact; a corrected
    kernel loads and runs in the same process."""
    import nbformat

    cu = kernel_copy()
    edit(cu, "c[i] = a[i] + b[i];", f"{bug} = a[i] + b[i];")
    cells = [
        f"import os, torch\nfrom helpers import load_kernel\npid = os.getpid()\n"
        f"ext = load_kernel({str(cu)!r}, target='cpu', quiet=True)\nkept = torch.arange(5.0)",
        "ext.add2_v1(torch.ones(3), torch.ones(3))",
        f"from pathlib import Path\ncu = Path({str(cu)!r})\n"
        f"cu.write_text(cu.read_text().replace({bug!r}, 'c[i]'))\n"
        "ext = load_kernel(cu, target='cpu', quiet=True)\n"
        "print(pid == os.getpid(), kept.tolist(), ext.add2_v1(torch.ones(3), torch.ones(3)).tolist())",
    ]
    path = tmp_path / "fault.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    run = execute(path, allow_errors=True)
    error = run.notebook.cells[1].outputs[0]
    assert error["output_type"] == "error" and "an illegal memory access was encountered" in error["evalue"]
    assert said in error["evalue"], error["evalue"]
    if bug == "c[i + 1]":
        assert "Load the kernel with check=True to find the line" in error["evalue"]
    else:
        assert "in kernel 'add2_fwd_kernel<T>' thread (0,0,0) block (0,0,0)" in error["evalue"], error["evalue"]
    assert run.notebook.cells[2].outputs[-1]["text"] == "True [0.0, 1.0, 2.0, 3.0, 4.0] [2.0, 2.0, 2.0]\n"


@pytest.mark.parametrize(
    "offset, side, element",
    [
        (64, "past the end of", 64),
        (191, "past the end of", 191),
        (-1, "before the start of", -1),
        (-128, "before the start of", -128),
    ],
)
def test_a_write_just_outside_a_tensor_fails_the_launch_and_touches_nothing(k, offset, side, element):
    """Up to the redzone's 512 bytes on either side (191 floats past the end of 64 is byte 508 past it)."""
    x = torch.zeros(64)
    neighbours = [torch.full((n,), float(n)) for n in range(1, 40)]  # allocated around x
    message = fails(lambda: k.wild_write(x, offset))
    assert (
        "kernel launch failed: an illegal memory access was encountered: op 'wild_write': kernel 'wild_write_kernel' "
        f"wrote {side} 'x' (64 elements of 4 bytes): element [{element}]. Nothing else was touched"
    ) in message, message
    assert "Load the kernel with check=True to find the line: load_kernel(..., check=True)" in message
    assert (x == 0).all()
    assert all((t == n).all() for n, t in enumerate(neighbours, 1))
    k.wild_write(x, 63)  # inside the tensor: fine, and the redzone was made whole again, so no error comes back
    assert x[63] == 1 and (x[:63] == 0).all()
    still_works(k)


def test_the_off_by_one_that_aborted_the_process_fails_every_call_and_the_process_ends_well(tmp_path, kernel_copy):
    """`c[i + 1] = ...` over many sizes: before the redzones glibc aborted the process ('free(): invalid next
    size', exit -6) within the first few thousand calls; now each call fails with the redzone's message."""
    import subprocess
    import sys

    cu = kernel_copy()
    edit(cu, "c[i] = a[i] + b[i];", "c[i + 1] = a[i] + b[i];")
    code = (
        "import gc, torch, helpers\n"
        f"ext = helpers.load_kernel({str(cu)!r}, target='cpu', quiet=True)\n"
        "failed = 0\n"
        "for n in range(1, 3001):\n"
        "    try:\n"
        "        ext.add2_v1(torch.randn(n), torch.randn(n))\n"
        "    except RuntimeError as e:\n"
        "        failed += f\"wrote past the end of 'c' ({n} elements of 4 bytes): element [{n}]\" in str(e)\n"
        "gc.collect()\n"
        "print(failed)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout == "3000\n", (run.returncode, run.stdout, run.stderr[-2000:])


@pytest.mark.parametrize("faulthandler", [False, True], ids=["plain", "faulthandler"])
def test_a_fault_outside_a_kernel_still_ends_the_process_as_before(tmp_path, faulthandler):
    """The stand-in's handler takes only faults of kernels; any other goes on to the handler before it (Python's
    faulthandler, which prints the Python stack) or to the default action: the process dies of SIGSEGV."""
    import subprocess
    import sys

    code = (
        "import ctypes, torch, helpers\n"
        "ext = helpers.load_kernel('add2', target='cpu', quiet=True)\n"
        "ext.add2(torch.ones(3), torch.ones(3))\n"  # the runtime is loaded and its handler installed
        "print('launched', flush=True)\n"
        "ctypes.string_at(0)\n"
    )
    flags = ["-X", "faulthandler"] if faulthandler else []
    run = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == -11 and run.stdout == "launched\n", (run.returncode, run.stdout, run.stderr[-2000:])
    assert ("Fatal Python error: Segmentation fault" in run.stderr) == faulthandler, run.stderr[-2000:]


def test_in_a_notebook_a_write_before_a_tensor_of_the_tests_own_kernel_is_an_error_and_the_kernel_lives(tmp_path):
    """tests/cuda_cpu/faults.cu's wild_write one float before its tensor, through nbclient: an error output naming
    the op, the tensor and the side; the tensor and the other variables are as they were; the next cell runs."""
    import nbformat

    cells = [
        "import os, torch\nfrom helpers import load_kernel\npid = os.getpid()\n"
        f"k = load_kernel({str(FAULTS)!r}, target='cpu', quiet=True)\nx = torch.zeros(64)\nkept = torch.arange(3.0)",
        "k.wild_write(x, -1)",
        "print(pid == os.getpid(), x.abs().sum().item(), kept.tolist(), k.divide(torch.tensor([6], "
        "dtype=torch.int32), torch.tensor([3], dtype=torch.int32)).tolist())",
    ]
    path = tmp_path / "before.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    run = execute(path, allow_errors=True)
    error = run.notebook.cells[1].outputs[0]
    assert error["output_type"] == "error", error
    assert (
        "op 'wild_write': kernel 'wild_write_kernel' wrote before the start of 'x' (64 elements of 4 bytes): "
        "element [-1]" in error["evalue"]
    ), error["evalue"]
    assert run.notebook.cells[2].outputs[-1]["text"] == "True 0.0 [0.0, 1.0, 2.0] [2]\n"
