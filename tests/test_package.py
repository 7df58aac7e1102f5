"""kp.package: an op shipped as a wheel and as a CMake library, built in a temporary folder. The wheel installs into
a fresh virtual environment that has the project's torch and nothing of the playground, where `import add2`
registers torch.ops.add2.* with its fake and autograd formula (opcheck passes); torch.ops.load_library registers
the CMake library's ops. The stand-in's builds are called; nvcc's build and import (calls need a GPU)."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest
import torch
from conftest import CUDA_BUILD_MISSING, CUDA_RUN_MISSING, edit
from test_constructs import SCALE_HEADER, write_header_ops

import kp.package
from kp.build import build_flags, resolve_kernel

CMAKE = shutil.which("cmake")

# Run in the fresh environment: the op against torch on an irregular size, its gradient, opcheck, a bad call.
CALL_ADD2 = """
import importlib.util, torch, add2
assert importlib.util.find_spec("kp") is None and importlib.util.find_spec("helpers") is None  # no playground
print(add2.TARGET, add2.OPS, add2.add2.default._schema)
device = "cuda" if add2.TARGET == "cuda" else "cpu"
a, b = (torch.randn(1823, dtype=torch.float64, device=device, requires_grad=True) for _ in range(2))
c = add2.add2(a, b)
torch.testing.assert_close(c, a + b, rtol=0, atol=0)
(c * c).sum().backward()
torch.testing.assert_close(a.grad, 2 * (a + b).detach())
torch.testing.assert_close(torch.ops.add2.add2_v1(a, b), a + b, rtol=0, atol=0)
torch.library.opcheck(torch.ops.add2.add2.default, (a.detach().requires_grad_(), b.detach()[:]))
try:
    add2.add2(a, b[:5])
except RuntimeError as e:
    print(e)
"""
CALL_CMAKE_LIBRARY = """
import sys, torch
torch.ops.load_library(sys.argv[1])
a, b = (torch.randn(1823, device=sys.argv[2] if len(sys.argv) > 2 else "cpu") for _ in range(2))
torch.testing.assert_close(torch.ops.add2.add2(a, b), a + b, rtol=0, atol=0)
print(torch.ops.add2.add2.default._schema)
"""

# The header_launch op of tests/test_constructs.py: its .cu calls scale.cuh's launcher, which launches scale.cuh's
# kernel (a __shared__ tile of 64, each block's elements reversed, times FACTOR 2), on a size not a multiple of 64.
CALL_HEADER_LAUNCH = """
import torch, header_launch
x = torch.randn(1823, generator=torch.Generator().manual_seed(4))
blocks = torch.zeros(29 * 64)
blocks[:1823] = x
torch.testing.assert_close(header_launch.header_launch(x), 2 * blocks.view(-1, 64).flip(1).reshape(-1)[:1823])
print(header_launch.TARGET, header_launch.OPS)
"""


def run_in(python, code, *args, cwd):
    """`code` run by `python` in `cwd`, without PYTHONPATH (the project's root on it would import kp)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(python), "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def fresh_venv(folder, wheel):
    """A new virtual environment in `folder` that sees the project's torch (a .pth naming its site-packages, whose
    own .pth files, the playground's editable install among them, are not run) with `wheel` installed."""
    venv.EnvBuilder(with_pip=False).create(folder)
    python = folder / "bin" / "python"
    purelib = run_in(python, "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=folder).strip()
    (Path(purelib) / "project_torch.pth").write_text(str(Path(torch.__file__).parent.parent) + "\n")
    install = [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", wheel]
    subprocess.run([*map(str, install), "--disable-pip-version-check", "-q"], check=True)
    return python


@pytest.fixture(scope="module")
def cpu_package(tmp_path_factory):
    """add2 packaged for the CPU stand-in: its wheel and its CMake library, built once for this module."""
    made = kp.package.package("add2", tmp_path_factory.mktemp("package"), target="cpu", cmake=CMAKE is not None)
    print(made.describe())  # the build times, with -s
    return made


def test_the_tree_is_self_contained_with_kp_builds_flags(tmp_path):
    tree = kp.package.write_tree("add2", tmp_path, target="cpu")
    spec = json.loads((tree / "kp_package.json").read_text())
    cu, _ = resolve_kernel("add2")
    _, cflags, cuda_cflags, _ = build_flags("cpu", cu, runtime=False)
    assert spec["cflags"] == [f for f in cflags if f not in kp.package.OPTIONAL] and "-DKP_CPU_STANDIN" in cflags
    assert spec["ldflags"] == [] and spec["version"] == "0.1.0+cpu" and spec["torch_floor"] == "2.11"
    assert "csrc/add2.cu.cpp" in spec["sources"] and "csrc/common/cuda_cpu_runtime.cpp" in spec["sources"]
    for source in tree.glob("csrc/**/*.*"):  # every quoted include is in the tree
        for name in re.findall(r'^\s*#\s*include\s*"([^"]+)"', source.read_text(), re.M):
            assert any((d / name).is_file() for d in (source.parent, tree / "csrc", tree / "csrc/common")), name
    assert "from ._binding import require_floating" in (tree / "add2/_ops.py").read_text()
    assert (tree / "add2/_binding.py").read_text() == (kp.package.ROOT / "kp/binding.py").read_text()
    kp.package.write_tree("add2", tmp_path, target="cpu")  # again: the same tree, nothing stale
    (tree / "csrc/stale.h").write_text("")
    kp.package.write_tree("add2", tmp_path, target="cpu")
    assert not (tree / "csrc/stale.h").exists()


def test_an_ops_file_importing_more_of_the_playground_is_refused(kernel_copy, tmp_path):
    cu = kernel_copy("add2")
    ops = cu.with_name("add2_ops.py")
    ops.write_text("from kp.verify import check_against_reference\n" + ops.read_text())
    with pytest.raises(ValueError, match=r"add2_ops.py:1: a packaged op cannot import kp.verify"):
        kp.package.write_tree(cu, tmp_path / "out", target="cpu")


def test_the_wheel_installs_in_a_fresh_venv_and_its_op_passes_opcheck(cpu_package, tmp_path):
    names = set(zipfile.ZipFile(cpu_package.wheel).namelist())
    assert {"add2/__init__.py", "add2/_ops.py", "add2/_binding.py", "add2/kp_package.json", "add2/libadd2.so"} <= names
    assert cpu_package.wheel.name.startswith("add2-0.1.0+cpu-")
    python = fresh_venv(tmp_path / "venv", cpu_package.wheel)
    out = run_in(python, CALL_ADD2, cwd=tmp_path)
    assert out.startswith("cpu ['add2', 'add2_v1'] add2::add2(Tensor a, Tensor b) -> Tensor")
    assert "add2: b has shape [5] but a has [1823]" in out


def test_a_header_with_a_kernel_its_file_scope_shared_tile_and_its_launcher_is_translated_into_the_wheel(tmp_path):
    """The stand-in's tree translates the project headers the .cu includes as load_kernel does (kp.standin's
    translate_tree), each beside its original: before, scale.cuh went in as written and g++ stopped at its `<<<`."""
    cu = write_header_ops(tmp_path / "ops")["header_launch"]
    # The tile at file scope: a header's __shared__ variable, which each kernel registers as it starts (cuda_cpu.h).
    edit(cu.with_name("scale.cuh"), "\n__global__", "\n__shared__ float tile[64];\n__global__")
    edit(cu.with_name("scale.cuh"), "  __shared__ float tile[64];\n", "")
    made = kp.package.package(cu, tmp_path / "out", target="cpu")
    csrc = made.tree / "csrc"
    assert '#include "scale.cuh.cpp"' in (csrc / "header_launch.cu.cpp").read_text()
    header = (csrc / "scale.cuh.cpp").read_text()
    assert header.startswith('#line 1 "csrc/scale.cuh"\n') and "<<<" not in header and "::kp::launch(" in header
    assert '#include "common/kp.cuh.cpp"' in header and (csrc / "common/kp.cuh.cpp").is_file()
    assert (csrc / "scale.cuh").read_text() == cu.with_name("scale.cuh").read_text()  # the original, kept beside
    python = fresh_venv(tmp_path / "venv", made.wheel)
    assert run_in(python, CALL_HEADER_LAUNCH, cwd=tmp_path).strip() == "cpu ['header_launch']"


def test_a_construct_the_stand_in_lacks_in_a_packaged_ops_header_is_named_at_the_headers_line(tmp_path):
    cu = write_header_ops(tmp_path / "ops")["header_launch"]
    edit(cu.with_name("scale.cuh"), "  __syncthreads();\n", '  __syncthreads();\n  asm("bar.sync 0;");\n')
    with pytest.raises(kp.package.KernelBuildError) as err:
        kp.package.write_tree(cu, tmp_path / "out", target="cpu")
    line = 1 + SCALE_HEADER.splitlines().index("  __syncthreads();") + 2  # after `#define FACTOR`
    message = str(err.value)
    assert message.startswith(f"{cu.with_name('scale.cuh')}:{line}: inline asm/PTX is not supported"), message
    assert f'{line} |   asm("bar.sync 0;");' in message, message


@pytest.mark.skipif(CMAKE is None, reason="cmake is not installed (apt-get install -y cmake, or pip install cmake)")
def test_cmake_builds_a_library_that_load_library_registers(cpu_package, tmp_path):
    assert cpu_package.library.name == "libadd2.so"
    out = run_in(sys.executable, CALL_CMAKE_LIBRARY, cpu_package.library, cwd=tmp_path)
    assert out.strip() == "add2::add2(Tensor a, Tensor b) -> Tensor"


def test_python_m_kp_package_prints_what_it_built(cpu_package, monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(kp.package, "package", lambda *args, **kwargs: calls.append((args, kwargs)) or cpu_package)
    kp.package.main(["add2", "--target", "cpu", "--out", "somewhere"])
    assert calls == [(("add2", Path("somewhere"), "cpu"), {"cmake": CMAKE is not None})]
    out = capsys.readouterr().out
    assert "add2 (cpu stand-in): source tree" in out and cpu_package.wheel.name in out
    assert "python -m pip install --no-deps" in out


@pytest.mark.skipif(
    CUDA_BUILD_MISSING is not None, reason=f"the CUDA build needs nvcc and a CUDA torch: {CUDA_BUILD_MISSING}"
)
def test_the_cuda_wheel_builds_and_imports(tmp_path):
    """Without a GPU, its ops answer that they take CUDA tensors; with one, they run, and CMake's build too (nvcc
    compiles it in ~20 s more, for a library that only a GPU can call)."""
    made = kp.package.package("add2", tmp_path / "out", target="cuda", cmake=CUDA_RUN_MISSING is None and CMAKE)
    print(made.describe())
    assert made.wheel.name.startswith(f"add2-0.1.0+cu{torch.version.cuda.replace('.', '')}-")
    python = fresh_venv(tmp_path / "venv", made.wheel)
    if CUDA_RUN_MISSING is None:
        run_in(python, CALL_ADD2, cwd=tmp_path)
        if made.library:
            run_in(sys.executable, CALL_CMAKE_LIBRARY, made.library, "cuda", cwd=tmp_path)
        return
    calls_cpu = textwrap.dedent("""
        import torch, add2
        assert add2.TARGET == "cuda" and add2.OPS == ["add2", "add2_v1"]
        try:
            add2.add2(torch.ones(3), torch.ones(3))
        except RuntimeError as e:
            print(e)
    """)
    assert "add2: a is on cpu, but this build takes cuda tensors" in run_in(python, calls_cpu, cwd=tmp_path)
