"""kp.load: an edit then a reload runs the new code in the same process; a library that does not load is said in
C++ whichever way it is loaded; a kernel without its _ops.py is told once what its ops lack; an unknown kernel is
named with the ones there are. (Builds: test_build.py; build errors: test_diagnostics.py; the ops' registration
across reloads: test_torch_library.py.)"""

import time
import warnings

import pytest
import torch
from conftest import DEVICE, TARGETS, edit, run_python

import helpers
import kp.build
import kp.files
import kp.toolchain
from kp.load import NoPythonSideWarning


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
    # What the messages say is this version's: the time its build ended (to the second), and how long it took.
    assert abs(cached.built_at - second.build.built_at) < 1 and abs(again.build.built_at - second.build.built_at) < 1
    at = time.strftime("%H:%M:%S", time.localtime(cached.built_at))
    where = {"cpu": "cpu stand-in", "cuda": "nvcc"}[target]
    took = f"{second.build.seconds:.1f} s"
    assert cached.describe() == f"add2: cached ({where}; nothing changed since its build at {at}, {took})"
    assert again.build.describe() == f"add2: loaded ({where}; already in this process, built at {at})"


@pytest.mark.parametrize("target", TARGETS)
def test_a_failed_launch_names_the_cu_line_and_shows_the_launch_with_its_configuration(kernel_copy, target):
    cu = kernel_copy()
    cu.write_text(cu.read_text().replace("const int threads = 256;", "const int threads = 2048;", 1))
    ext = helpers.load_kernel(cu, target=target, quiet=True)
    a = torch.ones(3, device=DEVICE[target])
    lines = cu.read_text().splitlines()
    check = next(i for i, text in enumerate(lines, 1) if "<<<" in text) + 1  # KP_CHECK_LAUNCH(), below the launch
    with pytest.raises(RuntimeError) as failed:
        ext.add2_v1(a, a)
    message = str(failed.value)
    assert message.startswith(f"{cu}:{check}: kernel launch failed: "), message
    assert message.endswith(f"\n{check - 1:5d} | {lines[check - 2]}") and "threads), threads, 0, stream>>>" in message
    if target == "cpu":  # the stand-in says what was wrong with it; CUDA says "invalid configuration argument"
        assert "launched with grid (1,1,1) and block (2048,1,1): at most 1024 threads per block" in message
    torch.testing.assert_close(ext.add2(a, a), a + a)  # the Pack kernel launches 256 threads: still works


@pytest.mark.parametrize("target", TARGETS)
def test_a_launcher_the_binding_calls_but_the_cu_lacks_is_named_in_cpp(kernel_copy, target):
    """A missing explicit instantiation links (a shared library may have undefined symbols) and fails only when
    the library loads: said with the launcher's C++ name, not dlopen's mangled one; the fixed file then loads."""
    cu = kernel_copy()
    good = cu.read_text()
    line = next(text for text in good.splitlines() if text.startswith("template void add2_fwd_v1<double>"))
    cu.write_text(good.replace(line + "\n", ""))
    with pytest.raises(helpers.KernelBuildError) as failed:
        helpers.load_kernel(cu, target=target, quiet=True)
    assert str(failed.value) == (
        f"{cu} does not define void add2_fwd_v1<double>(double const*, double const*, double*, long, CUstream_st*), "
        f"which {cu.with_name('add2_binding.cpp')} calls: is its explicit instantiation (`template void ...;`) "
        "missing, or spelt differently?"
    )
    cu.write_text(good)
    a = torch.ones(3, dtype=torch.float64, device=DEVICE[target])
    torch.testing.assert_close(helpers.load_kernel(cu, target=target, quiet=True).add2_v1(a, a), 2 * a)


@pytest.mark.parametrize("target", TARGETS)
def test_a_launcher_lost_after_a_load_is_named_in_cpp_on_reload_and_in_a_new_process(kernel_copy, target):
    """The same mistake in a notebook, after a load: torch's load in the build finds the library it loaded before
    under the same path, so it is the loader's own dlopen of the new version that fails; and a new process loads the
    build from the cache. Both say what the build does, not ctypes' OSError with the mangled name."""
    cu = kernel_copy()
    a = torch.ones(3, dtype=torch.float64, device=DEVICE[target])
    torch.testing.assert_close(helpers.load_kernel(cu, target=target, quiet=True).add2_v1(a, a), 2 * a)
    good = cu.read_text()
    line = next(text for text in good.splitlines() if text.startswith("template void add2_fwd_v1<double>"))
    cu.write_text(good.replace(line + "\n", ""))
    expected = (
        f"{cu} does not define void add2_fwd_v1<double>(double const*, double const*, double*, long, CUstream_st*), "
        f"which {cu.with_name('add2_binding.cpp')} calls: is its explicit instantiation (`template void ...;`) "
        "missing, or spelt differently?"
    )
    for _ in range(2):  # and again: the build is cached now, the library still does not load
        with pytest.raises(helpers.KernelBuildError) as failed:
            helpers.load_kernel(cu, target=target, quiet=True)
        assert str(failed.value) == expected
        assert "_Z11add2_fwd_v1IdEvPKT_S2_PS0_lP11CUstream_st" in failed.value.log  # the loader's words, one click away
    done = run_python(f"import helpers\nhelpers.load_kernel({str(cu)!r}, target={target!r}, quiet=True)")
    assert f"KernelBuildError: {expected}" in done.stderr and "OSError" not in done.stderr, done.stderr[-3000:]
    cu.write_text(good)
    torch.testing.assert_close(helpers.load_kernel(cu, target=target, quiet=True).add2_v1(a, a), 2 * a)


def test_a_kernel_without_its_ops_file_says_once_what_its_ops_lack(kernel_copy):
    cu = kernel_copy()
    cu.with_name("add2_ops.py").unlink()
    with pytest.warns(NoPythonSideWarning) as warned:
        ext = helpers.load_kernel(cu, target="cpu", quiet=True)
    assert len(warned) == 1 and warned[0].filename == __file__  # at the load_kernel call
    message = str(warned[0].message)
    assert message.startswith(
        f"{cu.with_name('add2_binding.cpp')} registers add2, add2_v1, but there is no {cu.with_name('add2_ops.py')}, "
        "so these ops have no fake (torch.compile, torch.export and torch.library.opcheck fail on them) and no "
        "autograd formula (a backward through them fails: "
    )
    assert "appears to not have been used in the graph" in message and "as kernels/add2_ops.py does" in message
    a = torch.ones(3, requires_grad=True)
    with pytest.warns(UserWarning, match="autograd kernel was not registered"):  # what the message says happens
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            torch.autograd.grad(ext.add2(a, a).sum(), a)

    edit(cu, "c[i] = a[i] + b[i];", "c[i] = b[i] + a[i];")  # a new version of the same file: said once is enough
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        helpers.load_kernel(cu, target="cpu", quiet=True)


def test_an_ops_file_that_registers_nothing_says_the_ops_need_neither(kernel_copy):
    """What the stand-in's test kernels do (tests/cuda_cpu/*_ops.py): their ops are never traced or differentiated."""
    cu = kernel_copy()
    cu.with_name("add2_ops.py").write_text("def register(ops):\n    pass\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert helpers.load_kernel(cu, target="cpu", quiet=True).fakes == set()


def test_unknown_kernel_lists_the_known_ones():
    with pytest.raises(FileNotFoundError, match="the kernels here: .*add2"):
        helpers.load_kernel("no_such_op")
