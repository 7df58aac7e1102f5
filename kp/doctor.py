"""The doctor: every check a build for a target needs, as Problems with their fixes, and its command line
(`python helpers.py doctor [cpu|cuda]`, `make doctor`), which prints them. Never builds a kernel.
"""

import contextlib
import os
import re
import shutil
import sys

from kp.toolchain import (
    DEFAULT_CUDA_ARCH,
    Problem,
    ToolchainError,
    cuda_home_problem,
    dot_problem,
    nvcc_version,
    probe_linker,
)


def doctor(target="cpu", environ=os.environ):
    """Check what a build for `target` needs; return the problems found (empty when all is well)."""
    import torch  # here, not at import: configure_environment must be able to run before torch is imported

    problems = []
    path = environ.get("PATH")
    if shutil.which("ninja", path=path) is None:
        problems.append(
            Problem(
                "ninja",
                "ninja is not on the PATH of this process; torch.utils.cpp_extension needs it to build",
                f"run `make setup` (or `{sys.executable} -m pip install ninja`), then restart the kernel",
            )
        )
    cxx = environ.get("CXX", "c++")
    if shutil.which(cxx, path=path) is None:
        problems.append(
            Problem(
                "c++ compiler", f"`{cxx}` was not found", "apt-get install -y g++ (conda: conda install cxx-compiler)"
            )
        )
    else:
        try:
            probe_linker(environ)
        except ToolchainError as e:
            problems += e.problems
    if target == "cuda":
        home = environ.get("CUDA_HOME") or environ.get("CUDA_PATH")
        if torch.version.cuda is None:
            problems.append(
                Problem(
                    "torch",
                    f"torch {torch.__version__} is a CPU-only build and cannot build CUDA kernels",
                    "install a CUDA build of torch (pip install torch==2.14.1), or use target='cpu'",
                )
            )
        if problem := cuda_home_problem(environ):
            problems.append(problem)
        else:
            m = re.search(r"release (\d+)\.(\d+)", nvcc_version(home))
            if m and torch.version.cuda and m.group(1) != torch.version.cuda.split(".")[0]:
                problems.append(
                    Problem(
                        "nvcc",
                        f"nvcc is CUDA {m.group(1)}.{m.group(2)} but torch was built with CUDA {torch.version.cuda}",
                        f"install the toolkit matching CUDA {torch.version.cuda} or a torch built for {m.group(1)}.x",
                    )
                )
        if not environ.get("TORCH_CUDA_ARCH_LIST") and not torch.cuda.is_available():
            problems.append(
                Problem(
                    "TORCH_CUDA_ARCH_LIST",
                    "no GPU here, so torch cannot guess which architecture to compile for",
                    f"export TORCH_CUDA_ARCH_LIST={DEFAULT_CUDA_ARCH} (load_kernel sets it for you)",
                )
            )
    return problems


def main(argv):
    if argv[:1] != ["doctor"]:
        print("usage: python helpers.py doctor [cpu|cuda ...]")
        return 2
    failed = 0
    for target in argv[1:] or ["cpu", "cuda"]:
        problems = doctor(target)
        print(f"[{target}] " + ("ok" if not problems else f"{len(problems)} problem(s)"))
        for p in problems:
            print("  " + str(p).replace("\n", "\n  "))
        failed |= bool(problems)
    with contextlib.suppress(ToolchainError):  # reported above, as a problem of every target
        choice = probe_linker()
        print(f"[linker] {choice.linker}, probed for {choice.cxx}:")
        for note in choice.notes:
            print(f"  {note}")
    if problem := dot_problem():
        print(f"[graphviz] {problem}".replace("\n", "\n  "))
        failed = 1
    return int(failed)
