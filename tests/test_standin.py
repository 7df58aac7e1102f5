"""kp.standin: the stand-in's precompiled header is the one g++ takes for a kernel file (same flags as ninja's
compile, normal and check mode), made again when its headers or flags change and never in the way of a build;
kernel libraries link against empty stand-ins of torch's libraries and load torch's own; the runtime builds
from nothing."""

import os
import re
import shlex
import subprocess

import pytest
import torch
from conftest import edit, run_python

import helpers
import kp.build
import kp.files
import kp.standin


def ninja_compile(build_dir):
    """The command ninja compiles the translated kernel file with, from the build.ninja load() wrote."""
    text = (build_dir / "build.ninja").read_text()
    cxx = re.search(r"^cxx = (.*)$", text, re.M).group(1)
    cflags = re.search(r"^cflags = (.*)$", text, re.M).group(1)
    source = next((build_dir / "src").glob("*.cu.cpp"))
    return [cxx, *shlex.split(cflags)], source


@pytest.mark.parametrize("check", [False, True], ids=["normal", "check-mode"])
def test_gcc_takes_the_precompiled_header_with_ninjas_flags(kernel_copy, tmp_path, check):
    cu = kernel_copy()
    build = kp.build.build_kernel(cu, target="cpu", check=check)
    cmd, source = ninja_compile(build.library.parent)
    first = source.read_text().splitlines()[0]
    assert re.fullmatch(r'#include ".*/cpu/pch-\w+-\w+/kp_standin\.h"', first), first
    # -H marks a precompiled header it used with "!" (and one it found but refused with "x"); -Winvalid-pch
    # says why it refused one: torch's flags before ours (-std=...) no longer what kp.standin read.
    done = subprocess.run(
        [*cmd, "-H", "-Winvalid-pch", "-c", str(source), "-o", str(tmp_path / "k.o")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^! .*kp_standin\.h\.gch$", done.stderr, re.M), done.stderr[:2000]
    assert "not used because" not in done.stderr


def test_a_compile_error_still_names_the_cu_line(kernel_copy):
    cu = kernel_copy()
    edit(cu, "c[i] = a[i] + b[i];", "c[i] = a[i] + b[i] + undefined_name;")
    line = next(n for n, text in enumerate(cu.read_text().splitlines(), 1) if "undefined_name" in text)
    with pytest.raises(helpers.KernelBuildError) as err:
        helpers.load_kernel(cu, target="cpu", quiet=True)
    assert f"add2.cu:{line}:" in str(err.value) and "undefined_name" in str(err.value)
    assert "kp_standin.h" not in str(err.value).split("(full build log")[0]


def test_one_header_per_flag_set_and_the_older_headers_are_removed(monkeypatch, tmp_path):
    monkeypatch.setattr(kp.standin, "BUILD_ROOT", tmp_path)
    cflags = kp.build.build_flags("cpu", kp.files.KERNELS / "add2.cu", runtime=False)[1]
    header = kp.standin.precompiled_header(cflags)
    assert header.with_name("kp_standin.h.gch").stat().st_size > 1_000_000
    assert kp.standin.precompiled_header(cflags) == header  # made once
    other = kp.standin.precompiled_header([*cflags, "-DKP_SOMETHING_ELSE"])
    assert other.parent != header.parent and header.exists()  # another flag set: a header of its own
    group = header.parent.name.rsplit("-", 1)[0]
    stale = tmp_path / "cpu" / f"{group}-00000000"  # the same flags, an older cuda_cpu.h
    stale.mkdir()
    monkeypatch.setattr(kp.standin, "PCH_TEXT", kp.standin.PCH_TEXT + "// changed\n")
    newer = kp.standin.precompiled_header(cflags)
    assert newer.parent != header.parent and newer.exists()
    assert not stale.exists() and not header.parent.exists() and other.exists()


def compiler_refusing(tmp_path, argument):
    """A `c++` wrapper that fails when given `argument`, and runs the real compiler otherwise."""
    real = subprocess.run(["which", "c++"], capture_output=True, text=True).stdout.strip()
    script = tmp_path / "bin" / "c++"
    script.parent.mkdir()
    script.write_text(
        f'#!/bin/sh\nfor a in "$@"; do [ "$a" = {argument} ] && {{ echo "no {argument} here" >&2; exit 1; }}; done\n'
        f'exec {real} "$@"\n'
    )
    script.chmod(0o755)
    return script


def test_a_compiler_that_cannot_precompile_headers_still_builds(kernel_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", str(compiler_refusing(tmp_path, "c++-header")))
    monkeypatch.setattr(kp.standin, "BUILD_ROOT", tmp_path / "build")  # no PCH made earlier for this compiler
    module = helpers.load_kernel(kernel_copy(), target="cpu", quiet=True)
    a = torch.randn(33)
    torch.testing.assert_close(module.add2(a, a), 2 * a)
    source = module.build.library.parent / "src" / "add2.cu.cpp"
    assert source.read_text().startswith('#include "cuda_cpu.h"\n')  # as the translator wrote it
    assert not list((tmp_path / "build" / "cpu").glob("pch-*/*.gch"))


def test_torchs_flags_are_found_in_its_source():
    assert kp.standin.torch_cxx_flags()[0] == "-fPIC"
    assert re.fullmatch(r"-std=c\+\+\d\w", kp.standin.torch_cxx_flags()[1])


def test_a_kernel_links_against_stubs_and_loads_torchs_own_libraries(kernel_copy):
    flags = kp.standin.torch_link_stubs()
    assert flags and flags[0].startswith("-L") and "-ltorch_cpu" in flags
    stubs = flags[0][2:]
    module = helpers.load_kernel(kernel_copy(), target="cpu", quiet=True)
    a = torch.randn(5)
    torch.testing.assert_close(module.add2(a, a), 2 * a)
    needed = subprocess.run(["readelf", "-d", str(module.library_path)], capture_output=True, text=True).stdout
    for name in kp.standin.TORCH_LIBRARIES:
        assert f"[lib{name}.so]" in needed
    maps = open("/proc/self/maps").read()
    assert stubs not in maps and "torch/lib/libtorch_cpu.so" in maps


def test_a_linker_without_push_state_links_torchs_own_libraries(kernel_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", str(compiler_refusing(tmp_path, "-Wl,--push-state,--no-as-needed")))
    monkeypatch.setattr(kp.standin, "BUILD_ROOT", tmp_path / "build")
    assert kp.standin.torch_link_stubs() == []
    module = helpers.load_kernel(kernel_copy(), target="cpu", quiet=True)
    a = torch.randn(7)
    torch.testing.assert_close(module.add2(a, a), 2 * a)


def test_the_runtime_builds_in_a_fresh_folder(tmp_path):
    env = {**os.environ, "KP_BUILD_DIR": str(tmp_path / "build")}
    done = run_python("import kp.standin, torch; kp.standin.cpu_runtime(); print(torch.ones(2) + 1)", env=env)
    assert done.returncode == 0 and "tensor([2., 2.])" in done.stdout, done.stderr
    (runtime,) = (tmp_path / "build" / "cpu").glob("runtime-*")
    assert [p.name for p in runtime.iterdir() if not p.name.startswith(".")] == ["libkp_cuda_cpu.so"]  # no objects


def test_the_runtimes_folder_changes_with_its_flags_and_its_compiler(monkeypatch):
    """The runtime's build key hashes all that goes into it: a change of its flags or of the compiler builds a new
    library (a key of the sources alone loaded the old build, silently)."""
    folder, _, flags, _ = kp.standin.runtime_build()
    assert kp.standin.runtime_build()[0] == folder and flags[:4] == kp.standin.RUNTIME_FLAGS  # the same, the same
    monkeypatch.setattr(kp.standin, "RUNTIME_FLAGS", [*kp.standin.RUNTIME_FLAGS, "-DKP_SOMETHING_ELSE"])
    flagged, _, flags, _ = kp.standin.runtime_build()
    assert "-DKP_SOMETHING_ELSE" in flags and flagged != folder  # the flags it is compiled with, and a new folder
    monkeypatch.undo()
    monkeypatch.setattr(kp.standin, "toolchain_identity", lambda cxx: "another compiler")
    assert kp.standin.runtime_build()[0] not in (folder, flagged)
