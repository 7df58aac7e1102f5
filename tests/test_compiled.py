"""kp.gpumodel.compiled: a Profile's counts as nvcc compiled its kernels for the GPU asked about (each GPU's arch, its
SASS and its ptxas row), a kernel outside the project, and the fallback to the source's counts, said, without SASS. The
kernels and their hand-counted answers are tests/test_sass.py's (tests/cuda_cpu/compiled.cu). Compiles with nvcc; needs
no GPU."""

import pytest
import torch
from test_sass import COMPILED, line_of, needs_sass, run

import helpers
import kp.gpumodel.compiled
import kp.gpumodel.profile
import kp.gpumodel.sass
from kp.gpumodel.profile import profile


@pytest.fixture(scope="module")
def k():
    return helpers.load_kernel(COMPILED, target="cpu", check=True, quiet=True)


@needs_sass
def test_another_gpu_is_counted_with_its_own_sass(k):
    p = run(k, "shared4")
    lines, _, basis = p.compiled("A100")
    assert basis == "SASS sm_80" and p.basis == "SASS sm_90"
    assert [ln.sass for ln in lines if ln.space == "shared" and ln.kind == "load"] == [("LDS.128",)]


@needs_sass
def test_the_model_of_a_gpu_takes_its_archs_sass_and_ptxas_row(k, monkeypatch):
    p = run(k, "shared4")
    asked = []
    monkeypatch.setattr(
        kp.gpumodel.profile, "launch_resources", lambda file, kernel, ctype, arch: asked.append(arch) or (32, 0)
    )
    p.estimate_detail("T4")
    p.estimate_detail("H100")
    assert asked == ["sm_75", "sm_90"]
    assert p.compiled("T4")[2] == "SASS sm_75"


@needs_sass
def test_a_kernel_outside_the_project_is_counted_with_its_sass(kernel_copy):
    ext = helpers.load_kernel(kernel_copy("add2"), target="cpu", check=True, quiet=True)
    p = profile(ext.add2, torch.randn(100), torch.randn(100))
    assert p.basis == "SASS sm_90" and all(ln.file.startswith("/") and ln.sass for ln in p.lines)


def test_without_sass_the_source_is_counted_and_the_profile_says_so(k, monkeypatch):
    def unavailable(*args, **kwargs):
        raise kp.gpumodel.sass.SassUnavailable("no SASS: nvdisasm was not found")

    monkeypatch.setattr(kp.gpumodel.compiled, "sass_of", unavailable)
    p = run(k, "shared4")
    assert p.lines == p.source_lines and p.instructions == []
    assert p.basis == "source (shared4: no SASS: nvdisasm was not found)"
    assert "counted as the source wrote it" in repr(p)
    assert "nvdisasm was not found" in p.sass(line_of("float a = s[4 * t];")).title
