"""Building a kernel: the build key, the flags per target, ninja through torch.utils.cpp_extension, and build
errors turned into KernelBuildError / ToolchainError (the CPU stand-in's shared pieces: kp.standin).

Returns a Build (where the library is, what it took); never loads a library or registers an op.
"""

import contextlib
import hashlib
import json
import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from kp.diagnostics import KernelBuildError, build_failure, log_failure, log_success, source_excerpt
from kp.doctor import doctor
from kp.files import BUILD_ROOT, COMMON, KERNELS, ROOT, content_key, display_path, locked, write_if_changed
from kp.standin import (
    UnsupportedConstruct,
    cpu_runtime,  # noqa: F401  (kp.display, kp.gpumodel.profile, kp.check and tests import it from here)
    prepare,
    project_headers,
    torch_link_stubs,
    translate_tree,
    with_precompiled_header,
)
from kp.toolchain import DEFAULT_CUDA_ARCH, TARGETS, ToolchainError, default_target, linker_flags, probe_linker

if not torch.cuda.is_available():  # its "No CUDA runtime is found" warning is expected here
    logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)
import torch.utils.cpp_extension as cpp_extension  # noqa: E402  (after kp/__init__ set CUDA_HOME)


def resolve_kernel(name_or_path):
    """`"add2"` -> kernels/add2.cu; a path to a `.cu` file is taken as it is, a relative one from the current
    directory where it exists there, else from the project's root (a notebook runs in notebooks/, and
    `"puzzles/..."` or `"kernels/add2.cu"` name the project's files)."""
    path = Path(name_or_path)
    if path.suffix != ".cu":
        path = KERNELS / f"{name_or_path}.cu"
    elif not path.is_absolute() and not path.exists() and (ROOT / path).exists():
        path = ROOT / path
    path = path.resolve()
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in KERNELS.glob("*.cu")))
        raise FileNotFoundError(f"no kernel file {path} (the kernels here: {known})")
    binding = path.with_name(f"{path.stem}_binding.cpp")
    if not binding.is_file() and path.parent in (ROOT / "puzzles", ROOT / "puzzles" / "solutions"):
        name = path.stem.split("_", 1)[-1]
        raise FileNotFoundError(
            f"{display_path(path)} is a puzzle: puzzle() makes its launcher and binding. To profile it, "
            f'puzzle("{name}", profile=True) shows the GPU model\'s counts per line (and returns them as .profile)'
        )
    if not binding.is_file():
        raise FileNotFoundError(f"{display_path(path)} needs its binding next to it: {display_path(binding)}")
    return path, binding


def python_side_of(cu):
    """`kernels/add2.cu` -> `kernels/add2_ops.py`: fakes and autograd formulas of its ops (optional)."""
    return Path(cu).with_name(f"{Path(cu).stem}_ops.py")


@dataclass
class Build:
    """What one call of build_kernel did."""

    name: str
    target: str
    source: Path  # the .cu file
    library: Path  # the built shared library
    key: str  # hash of every input of the build
    status: str  # "built", "cached" (built earlier, nothing changed) or "loaded" (already in this process)
    seconds: float = 0.0  # how long the build of this version took (for "cached" and "loaded": when it was made)
    rebuilt: int = 0  # objects compiled (by that build)
    objects: int = 0  # objects in the library
    built_at: float = 0.0  # when this version was built (time.time())
    check: bool = False  # a check-mode build (kp.check): every memory access of its kernels is checked

    def describe(self):
        """One line on what this load did, about this version only: built now, or reused (and since when)."""
        where = {"cpu": "cpu stand-in", "cuda": "nvcc"}[self.target] + (", check mode" if self.check else "")
        if self.status == "built" and not self.rebuilt:  # a new version, the same library: e.g. only _ops.py changed
            python = "python side reloaded, " if python_side_of(self.source).is_file() else ""
            return f"{self.name}: {python}nothing compiled ({where}; the library is unchanged)"
        if self.status == "built":
            return f"{self.name}: {where}, built in {self.seconds:.1f} s ({self.rebuilt} of {self.objects} objects)"
        when = time.localtime(self.built_at)
        at = time.strftime("%H:%M:%S" if when[:3] == time.localtime()[:3] else "%Y-%m-%d %H:%M", when)
        if self.status == "cached":
            return f"{self.name}: cached ({where}; nothing changed since its build at {at}, {self.seconds:.1f} s)"
        return f"{self.name}: loaded ({where}; already in this process, built at {at})"


# Check mode: g++ instruments every load, store and atomic with a call (its ThreadSanitizer ABI, whose entry
# points the stand-in's runtime defines: kernels/common/cuda_cpu_check.h); -O1 compiles faster, and what it
# does not optimise away is checked either way.
# -fsanitize=object-size adds a call where an access runs past an object the compiler knows (a thread's local array).
# -fno-omit-frame-pointer: rbp is every function's frame, so that the access hooks answer an access to the caller's own
# frame (a register tile's) from rsp and rbp alone (KP_TSAN_OWN_FRAME in kernels/common/cuda_cpu_check.h).
CHECK_CFLAGS = [
    "-O1",
    "-DKP_CHECK",
    "-fsanitize=thread",
    "--param=tsan-instrument-func-entry-exit=0",
    "-fsanitize=object-size",
    "-fno-omit-frame-pointer",
]


def build_flags(target, cu, check=False, runtime=True):
    """(includes, cflags, cuda_cflags, ldflags) of a build; `runtime=False`: no link to the runtime (kp.package)."""
    includes = [str(COMMON), str(KERNELS), str(cu.parent)]
    cflags = ["-O2", "-fvisibility=hidden"]
    if check:
        cflags = [*CHECK_CFLAGS[:1], "-fvisibility=hidden", *CHECK_CFLAGS[1:]]
    ldflags = linker_flags()
    if target == "cpu":
        # CUDA's header names (<cuda_runtime.h>, <cuda_fp16.h>, ...) for project and user headers, which the source
        # step does not translate: each forwards to the stand-in's header (kernels/common/cuda_cpu_include/).
        includes.append(str(COMMON / "cuda_cpu_include"))
        # The default TLS model: initial-exec breaks after a few dlopens, and gnu2 descriptors lost
        # a write to file-scope __shared__ made before a block's first barrier (tests/test_cuda_cpu.py).
        # -fno-plt: barriers call the runtime through the GOT, not a PLT stub (~1.5 ns per arrival).
        # -g1: line tables only (no cost measured on add2), so that a fault in a kernel names its .cu line.
        # -fstack-clash-protection: a frame larger than a page touches it page by page, so that a thread
        # that overflows its stack faults in the guard page below it, not in a neighbour's stack.
        # -falign-functions=64: a kernel's speed no longer moves with an edit elsewhere in its file (add2's
        # kernel, not inlined into the block loop, ran 12% slower 96 bytes further on: bench/ops.py).
        cflags += ["-DKP_CPU_STANDIN", "-g1", "-fstack-clash-protection", "-falign-functions=64"]
        cflags += [f for f in probe_linker().cflags if f == "-fno-plt"]
        if runtime:  # a packaged op's library has the runtime's sources compiled in (kp.package)
            runtime_dir = Path(prepare(cflags)._name).parent
            ldflags += [f"-L{runtime_dir}", "-lkp_cuda_cpu", f"-Wl,-rpath,{runtime_dir}", *torch_link_stubs()]
    # torch builds CUDA extensions without CUDA's half and bfloat16 operators and conversions: they clash with
    # ATen's types. Our kernel files have no ATen: they get __half and __nv_bfloat16 as CUDA defines them, as the
    # stand-in does (kernels/common/cuda_cpu_fp16.h), so one kernel file compiles for both targets.
    cuda_cflags = ["-O2", "-Xcompiler", "-fvisibility=hidden"]
    cuda_cflags += [f"-U__CUDA_NO_{what}__" for what in ("HALF_OPERATORS", "HALF_CONVERSIONS", "HALF2_OPERATORS")]
    cuda_cflags += ["-U__CUDA_NO_BFLOAT16_CONVERSIONS__"]
    return includes, cflags, cuda_cflags, ldflags


def build_kernel(name_or_path, target=None, verbose=False, check=False):
    """Build a kernel file and its binding for `target` ("cpu" or "cuda"); return a Build.

    The CUDA build needs nvcc and a CUDA build of torch, not a GPU: on a machine without one it
    compiles and links (for TORCH_CUDA_ARCH_LIST, default 9.0), which is how the tests check it.
    `check`: the check-mode build (CPU stand-in only), in a folder of its own.
    """
    target = target or ("cpu" if check else default_target())
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    if check and target != "cpu":
        raise ValueError(
            "check mode runs on the CPU stand-in: load_kernel(..., target='cpu', check=True); on a GPU, run the "
            "notebook or script under compute-sanitizer (--tool memcheck, racecheck or synccheck) instead"
        )
    cu, binding = resolve_kernel(name_or_path)
    name = re.sub(r"\W", "_", cu.stem)
    if target == "cuda":
        problems = doctor("cuda")
        os.environ.setdefault("TORCH_CUDA_ARCH_LIST", DEFAULT_CUDA_ARCH)
        problems = [p for p in problems if p.check != "TORCH_CUDA_ARCH_LIST"]
        if problems:
            raise ToolchainError.of(problems)
        cpp_extension.CUDA_HOME = os.environ["CUDA_HOME"]  # in case it was imported before CUDA_HOME was set

    includes, cflags, cuda_cflags, ldflags = build_flags(target, cu, check)
    inputs = sorted({cu, binding, *project_headers(cu, includes), *project_headers(binding, includes)})
    if python_side_of(cu).is_file():  # part of the version: an edit of it loads like an edit of the kernel
        inputs.append(python_side_of(cu))
    if target == "cpu":
        standin = COMMON / "cuda_cpu.h"
        inputs += [standin, *sorted(project_headers(standin, [COMMON])), COMMON / "cuda_cpu_translate.py"]
        inputs += [COMMON / "cuda_cpu_fp16.h", COMMON / "cuda_names.txt"]  # half types; what the translator refuses
    key = content_key((target, torch.__version__, cflags, cuda_cflags, ldflags, includes), inputs)

    suffix = "-check" if check else ""
    build_dir = BUILD_ROOT / target / f"{name}-{hashlib.sha256(str(cu).encode()).hexdigest()[:8]}{suffix}"
    library = build_dir / f"{name}.so"
    stamp = build_dir / "built.json"
    with locked(build_dir / ".kp-lock"):
        built = {}
        with contextlib.suppress(OSError, ValueError):
            built = json.loads(stamp.read_text())
        if built.get("key") == key and library.exists():
            objects = len(list(build_dir.glob("*.o")))
            seconds, rebuilt = built.get("seconds", 0.0), built.get("rebuilt", 0)
            at = stamp.stat().st_mtime  # written as that build ended
            return log_success(Build(name, target, cu, library, key, "cached", seconds, rebuilt, objects, at, check))
        start = time.perf_counter()
        if target == "cpu":
            (build_dir / "src").mkdir(parents=True, exist_ok=True)
            try:  # and the headers it includes, into src/h/
                text = translate_tree(cu, includes, build_dir / "src", check, display_path)
            except UnsupportedConstruct as e:
                raise log_failure(build_dir, KernelBuildError(f"{e}\n{source_excerpt(e.file, e.line)}")) from None
            text = with_precompiled_header(text, cflags)  # its first line: the stand-in's headers, precompiled
            sources = [build_dir / "src" / f"{cu.name}.cpp", binding]
            write_if_changed(sources[0], text)
        else:
            sources = [cu, binding]
        before = {p: p.stat().st_mtime_ns for p in build_dir.glob("*.o")}
        # load() renames the module after any change it saw in this process (name_v1, ...), which
        # changes the flags and rebuilds everything; with the same name ninja rebuilds what changed.
        cpp_extension.JIT_EXTENSION_VERSIONER.entries.pop(name, None)
        # Before 2.14, load() takes the folder with a lock *file* (FileBaton) and waits while it exists: one
        # left by a killed build would block every later load forever. Under our lock no load() runs here.
        with contextlib.suppress(FileNotFoundError):
            (build_dir / "lock").unlink()
        try:
            cpp_extension.load(
                name=name,
                sources=[str(s) for s in sources],
                extra_cflags=cflags,
                extra_cuda_cflags=cuda_cflags,
                extra_ldflags=ldflags,
                extra_include_paths=includes,
                build_directory=str(build_dir),
                with_cuda=target == "cuda",
                is_python_module=False,
                verbose=verbose,
            )
        except (RuntimeError, OSError) as e:
            err = build_failure(str(e), library, cu, binding)  # a compile or link error, or a library that won't load
            if err.log_path and not err.located:  # not the compiler's words about a line: a tool may be missing
                problems = doctor(target)
                if problems:
                    raise ToolchainError.of(problems) from err
            raise err from None
        after = {p: p.stat().st_mtime_ns for p in build_dir.glob("*.o")}
        seconds = time.perf_counter() - start
        rebuilt = sum(1 for p, t in after.items() if before.get(p) != t)
        stamp.write_text(
            json.dumps({"key": key, "seconds": seconds, "rebuilt": rebuilt, "inputs": [str(p) for p in inputs]})
        )
        return log_success(
            Build(name, target, cu, library, key, "built", seconds, rebuilt, len(after), time.time(), check)
        )
