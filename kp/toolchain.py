"""The toolchain's facts: where CUDA is, whether nvcc and dot are here, which optional flags this compiler takes.

Owns CUDA_HOME and PATH for the process (configure_environment, which kp/__init__ runs before anything
imports torch.utils.cpp_extension), Problem and ToolchainError, and the probe of optional compiler and
linker flags. Never builds or loads a kernel, and never prints (kp.doctor reports).
"""

import contextlib
import functools
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from kp.files import BUILD_ROOT, write_if_changed

DEFAULT_CUDA_ARCH = "9.0"  # used for compile-only CUDA builds on a machine without a GPU
TARGETS = ("cpu", "cuda")


def is_cuda_root(path):
    """A CUDA toolkit root: nvcc, the runtime headers and the runtime library under one folder."""
    p = Path(path)
    return (
        (p / "bin" / "nvcc").is_file()
        and (p / "include" / "cuda_runtime.h").is_file()
        and any((p / lib / "libcudart.so").exists() for lib in ("lib64", "lib"))
    )


def find_cuda_root(environ=os.environ):
    """The toolkit root that nvcc on PATH belongs to (it may be a wrapper script), or None."""
    nvcc = shutil.which("nvcc", path=environ.get("PATH"))
    candidates = []
    if nvcc:
        real = Path(nvcc).resolve()
        candidates.append(real.parent.parent)
        with contextlib.suppress(OSError, UnicodeDecodeError):
            head = real.read_bytes()[:4096]
            if head.startswith(b"#!"):  # a wrapper: `exec /usr/local/cuda-13.0/bin/nvcc "$@"`
                for target in re.findall(rb"(/\S+/bin/nvcc)\b", head):
                    candidates.append(Path(target.decode()).resolve().parent.parent)
    candidates.append(Path("/usr/local/cuda"))
    return next((str(c) for c in candidates if is_cuda_root(c)), None)


def configure_environment(environ=os.environ):
    """Make the build tools reachable from this process (a Jupyter kernel may lack the venv's PATH)."""
    venv_bin = str(Path(sys.executable).parent)
    if shutil.which("ninja", path=environ.get("PATH")) is None and (Path(venv_bin) / "ninja").exists():
        environ["PATH"] = venv_bin + os.pathsep + environ.get("PATH", "")
    if "CUDA_HOME" not in environ and "CUDA_PATH" not in environ:
        root = find_cuda_root(environ)
        if root:
            environ["CUDA_HOME"] = root


@dataclass
class Problem:
    check: str
    message: str
    fix: str

    def __str__(self):
        return f"{self.check}: {self.message}\n  fix: {self.fix}"


def cuda_home_problem(environ=os.environ):
    """The Problem when CUDA_HOME (or CUDA_PATH) names no CUDA toolkit root, with the fix; else None."""
    home = environ.get("CUDA_HOME") or environ.get("CUDA_PATH")
    if home and is_cuda_root(home):
        return None
    found = find_cuda_root(environ)
    fix = f"export CUDA_HOME={found}" if found else "install the CUDA toolkit and export CUDA_HOME=<its root>"
    what = f"CUDA_HOME={home!r} is not a CUDA toolkit root" if home else "CUDA_HOME is not set"
    return Problem(
        "CUDA_HOME",
        f"{what} (a root holds bin/nvcc, include/cuda_runtime.h and lib64/libcudart.so)",
        fix + " before importing helpers or torch.utils.cpp_extension",
    )


def require_nvcc(environ=os.environ):
    """The CUDA toolkit root, for a compile-only nvcc run (no GPU needed); ToolchainError with the fix if none."""
    if problem := cuda_home_problem(environ):
        raise ToolchainError(f"nvcc was not found: {problem}", [problem])
    return environ.get("CUDA_HOME") or environ.get("CUDA_PATH")


@functools.cache
def nvcc_version(home):
    """`nvcc --version` of the toolkit at `home`, once per process: every cuda load runs the doctor."""
    return subprocess.run([str(Path(home) / "bin" / "nvcc"), "--version"], capture_output=True, text=True).stdout


class ToolchainError(RuntimeError):
    """A build failed because a tool is missing or misconfigured; the message says how to fix it."""

    def __init__(self, message, problems=()):
        super().__init__(message)
        self.problems = list(problems)  # the doctor's Problems behind it, where there are some

    @classmethod
    def of(cls, problems):
        return cls("\n".join(map(str, problems)), problems)


# Optional flags make builds faster, never possible: each is probed once per toolchain (a tiny shared
# library built with it) and dropped where it fails. (flag, "link" or "compile", why we want it)
OPTIONAL_FLAGS = [
    ("-fuse-ld=gold", "link", "gold links against the 450 MB libtorch_cpu in 0.2 s where bfd takes 0.6 s"),
    ("-fno-plt", "compile", "stand-in barriers call the runtime through the GOT, not a PLT stub (~1.5 ns each)"),
]
PROBE_SOURCE = '#include <string>\nextern "C" int kp_probe() { return static_cast<int>(std::string("ok").size()); }\n'
PROBE_LOG_LINES = 8  # of a failed probe's output, in its message


@dataclass
class LinkerChoice:
    """What probing this toolchain found: the optional flags that work, and a line on each."""

    cxx: str  # the compiler driver torch.utils.cpp_extension compiles and links with
    ldflags: list  # optional link flags that worked
    cflags: list  # optional compile flags that worked
    notes: list  # one line per optional flag: used, or why not

    @property
    def linker(self):
        return "gold" if "-fuse-ld=gold" in self.ldflags else "the compiler's default"


def _probe_build(cxx, flags, folder):
    """Build PROBE_SOURCE into a shared library with `flags`: (ok, the command, the end of its output)."""
    source = folder / "probe.cpp"
    source.write_text(PROBE_SOURCE)
    cmd = [cxx, "-shared", "-fPIC", *flags, str(source), "-o", str(folder / "probe.so")]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, cmd, str(e)
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-PROBE_LOG_LINES:])
    return done.returncode == 0, cmd, tail


@functools.cache
def toolchain_identity(cxx):
    """What the probe's answer (and a precompiled header, kp.standin) depends on: the compiler driver (it may be
    a wrapper) and the linkers, as a hash; once per process and compiler."""
    parts = [cxx]
    for tool in (cxx, "ld", "ld.gold"):
        found = shutil.which(tool)
        if found:
            st = Path(found).resolve().stat()
            parts.append(f"{Path(found).resolve()}:{st.st_size}:{st.st_mtime_ns}")
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        parts.append(subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout)
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


_linker_choices = {}  # $CXX -> LinkerChoice, once per process


def probe_linker(environ=os.environ):
    """Which optional flags this toolchain takes: probed once per toolchain and cached on disk.

    Raises ToolchainError, with the failing command's output and the fix, when the toolchain cannot
    build a shared library at all (then no kernel can be built).
    """
    cxx = environ.get("CXX", "c++")
    if cxx in _linker_choices:  # once per process and compiler: no subprocess on the edit-reload path
        return _linker_choices[cxx]
    identity = toolchain_identity(cxx)
    cache = BUILD_ROOT / "toolchain" / f"linker-{identity}.json"
    with contextlib.suppress(OSError, ValueError, TypeError):
        choice = LinkerChoice(**json.loads(cache.read_text()))
        _linker_choices[cxx] = choice
        return choice
    folder = cache.with_suffix(f".probe{os.getpid()}")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        ok, cmd, tail = _probe_build(cxx, [], folder)
        if not ok:
            problem = Problem(
                "c++ toolchain",
                "it cannot build a shared library, so no kernel can be built\n"
                f"  command: {shlex.join(cmd)}\n  " + (tail or "(it printed nothing)").replace("\n", "\n  "),
                "install a working C++ compiler and linker (apt-get install -y g++; conda install cxx-compiler), "
                "or point CXX at one; `python helpers.py doctor` checks again",
            )
            raise ToolchainError.of([problem])
        choice = LinkerChoice(cxx, [], [], [])
        for flag, kind, why in OPTIONAL_FLAGS:
            ok, _, tail = _probe_build(cxx, [flag], folder)
            if ok:
                (choice.ldflags if kind == "link" else choice.cflags).append(flag)
                choice.notes.append(f"{flag}: used ({why})")
            else:
                last = tail.strip().splitlines()[-1] if tail.strip() else "no output"
                first_error = next((ln for ln in tail.splitlines() if "error" in ln), last)
                choice.notes.append(f"{flag}: not used, a test library failed to build with it: {first_error.strip()}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    write_if_changed(cache, json.dumps(vars(choice)))
    _linker_choices[cxx] = choice
    return choice


def linker_flags():
    """The optional link flags this toolchain takes (gold where it works: every edit pays the link)."""
    return list(probe_linker().ldflags)


def default_target():
    """ "cuda" (nvcc) where torch sees a GPU, else "cpu" (the stand-in)."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def dot_problem():
    """The Problem when graphviz's `dot`, through which torchviz renders autograd graphs, is missing; else None."""
    if shutil.which("dot") is None:
        return Problem(
            "dot",
            "graphviz's `dot` is not installed, so torchviz cannot render autograd graphs",
            "apt-get install -y graphviz (as root; `make setup` does it), or conda install graphviz",
        )
    return None
