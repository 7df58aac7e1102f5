"""Builds survive real toolchains: optional flags (gold, -fno-plt) are probed once per toolchain and dropped
where they fail; a toolchain that can link nothing gets one ToolchainError; a link error leads with the linker."""

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TARGETS_BUILT, run_python

import helpers
import kp.doctor
import kp.files
import kp.toolchain

GOLD_FAILS = "/usr/bin/ld.gold: error: cannot open /opt/gcc/lib/gcc/x86_64-linux-gnu/13/libstdc++.so: No such file"


def fake_compiler(tmp_path, body):
    """A `c++` wrapper script (as the GPU machine's gcc is one) that logs its arguments, then runs `body`."""
    calls = tmp_path / "calls.log"
    script = tmp_path / "bin" / "c++"
    script.parent.mkdir(exist_ok=True)
    script.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n{body}\n')
    script.chmod(0o755)
    return script, calls


def gold_cannot_link(tmp_path):
    """The GPU machine's toolchain: the default linker works, -fuse-ld=gold cannot open libstdc++.so."""
    real = subprocess.run(["which", "c++"], capture_output=True, text=True).stdout.strip()
    body = (
        f'for a in "$@"; do [ "$a" = -fuse-ld=gold ] && {{ echo "{GOLD_FAILS}" >&2; exit 1; }}; done\nexec {real} "$@"'
    )
    return fake_compiler(tmp_path, body)


def test_this_toolchain_takes_gold_and_the_doctor_says_so():
    choice = kp.toolchain.probe_linker()
    assert choice.notes and all(n.split(":")[0] in {f for f, _, _ in kp.toolchain.OPTIONAL_FLAGS} for n in choice.notes)
    done = subprocess.run(
        [sys.executable, str(kp.files.ROOT / "helpers.py"), "doctor", "cpu"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert f"[linker] {choice.linker}, probed for {choice.cxx}:" in done.stdout, done.stdout
    for note in choice.notes:
        assert note in done.stdout


def test_gold_that_cannot_link_is_dropped_and_the_kernel_builds(kernel_copy, tmp_path, monkeypatch):
    cxx, calls = gold_cannot_link(tmp_path)
    monkeypatch.setenv("CXX", str(cxx))
    choice = kp.toolchain.probe_linker()
    assert choice.ldflags == [] and choice.linker == "the compiler's default"
    gold_note = next(n for n in choice.notes if n.startswith("-fuse-ld=gold"))
    assert gold_note == f"-fuse-ld=gold: not used, a test library failed to build with it: {GOLD_FAILS}"
    assert "-fno-plt: used" in choice.notes[1]

    cu = kernel_copy()
    module = helpers.load_kernel(cu, target="cpu", quiet=True)
    import torch

    a = torch.randn(100)
    torch.testing.assert_close(module.add2(a, a), 2 * a)
    link = [line for line in calls.read_text().splitlines() if line.endswith("-o add2.so")]
    assert link and "-fuse-ld=gold" not in link[-1], link

    # Probed once per toolchain: a new process reads the answer from the cache and probes nothing.
    probes = calls.read_text().count("probe.cpp")
    done = run_python(
        "import kp.toolchain; print(kp.toolchain.probe_linker().linker)", env={**__import__("os").environ}
    )
    assert done.returncode == 0 and done.stdout.strip() == "the compiler's default", done.stderr
    assert calls.read_text().count("probe.cpp") == probes


def test_a_toolchain_that_links_nothing_gets_one_toolchain_error_with_the_fix(kernel_copy, tmp_path, monkeypatch):
    cxx, _ = fake_compiler(
        tmp_path,
        'echo "/usr/bin/ld: cannot find crti.o: No such file or directory" >&2\necho "collect2: error" >&2\nexit 1',
    )
    monkeypatch.setenv("CXX", str(cxx))
    with pytest.raises(helpers.ToolchainError) as err:
        helpers.load_kernel(kernel_copy(), target="cpu", quiet=True)
    message = str(err.value)
    assert message.startswith("c++ toolchain: it cannot build a shared library, so no kernel can be built\n")
    assert f"command: {cxx} -shared -fPIC " in message
    assert "\n  /usr/bin/ld: cannot find crti.o: No such file or directory\n  collect2: error\n" in message
    assert "\n  fix: install a working C++ compiler and linker (apt-get install -y g++" in message
    (problem,) = [p for p in kp.doctor.doctor("cpu") if p.check == "c++ toolchain"]
    assert "cannot find crti.o" in problem.message and "point CXX at one" in problem.fix


BFD_LINK_LOG = """\
Error building extension 'add2': [1/3] c++ -MMD -MF add2.o.d -c add2.cu -o add2.o
[2/3] c++ -MMD -MF add2_binding.o.d -c add2_binding.cpp -o add2_binding.o
[3/3] c++ add2.o add2_binding.o -shared -o add2.so
FAILED: add2.so
c++ add2.o add2_binding.o -shared -o add2.so
/usr/bin/ld: add2_binding.o: in function `kp_defined_twice()':
add2_binding.cpp:(.text+0x0): multiple definition of `kp_defined_twice()'; add2.o:(.text+0x0): first defined here
collect2: error: ld returned 1 exit status
ninja: build stopped: subcommand failed.
"""


def test_a_link_error_from_bfd_keeps_the_line_after_the_linkers_name():
    # GNU ld (bfd) names the function on one line and says what is wrong on the next, without its prefix.
    message = str(helpers.KernelBuildError.from_log(BFD_LINK_LOG, []))
    assert message == (
        "the link failed: /usr/bin/ld: add2_binding.o: in function `kp_defined_twice()':\n"
        "  add2_binding.cpp:(.text+0x0): multiple definition of `kp_defined_twice()'; add2.o:(.text+0x0): first "
        "defined here"
    )


@pytest.mark.parametrize("target", TARGETS_BUILT)
def test_a_link_error_leads_with_the_linkers_message(kernel_copy, target):
    cu = kernel_copy()
    binding = cu.with_name("add2_binding.cpp")
    cu.write_text(cu.read_text() + "int kp_defined_twice() { return 1; }\n")
    binding.write_text(binding.read_text() + "int kp_defined_twice() { return 2; }\n")
    with pytest.raises(helpers.KernelBuildError) as err:
        helpers.load_kernel(cu, target=target, quiet=True)
    head, *rest = str(err.value).splitlines()
    # gold says it in one line; bfd names the function first, then "multiple definition of" on the next
    assert head.startswith("the link failed: ") and "kp_defined_twice" in head
    assert "multiple definition of" in str(err.value).split("(full build log")[0]
    assert "[1/3]" not in str(err.value) and "full build log" in rest[-1]


def test_find_cuda_root_sees_through_a_wrapper_script(tmp_path):
    real = kp.toolchain.find_cuda_root()
    if real is None:
        pytest.skip("no CUDA toolkit on this machine")
    wrapper = tmp_path / "nvcc"
    wrapper.write_text(f'#!/bin/sh\nexec {real}/bin/nvcc "$@"\n')
    wrapper.chmod(0o755)
    assert kp.toolchain.find_cuda_root({"PATH": str(tmp_path)}) == str(Path(real).resolve())
