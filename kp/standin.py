"""The CPU stand-in's build pieces: its source step (the translator), its runtime library, the precompiled
header of its headers that every translated kernel file starts with, and the stubs its kernels link against.

Owns what is built once per machine and shared by every stand-in kernel (under build/ext/cpu/: runtime-*,
pch-*, torch-stubs-*); never builds or loads a kernel itself (kp.build does).
"""

import contextlib
import ctypes
import functools
import hashlib
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import torch

from kp.diagnostics import KernelBuildError
from kp.files import BUILD_ROOT, COMMON, locked, module_from_file, write_if_changed
from kp.toolchain import linker_flags, toolchain_identity

# kernels/common/cuda_cpu_translate.py, the stand-in's source step: it lives beside the stand-in it feeds.
_cuda_cpu_translate = module_from_file("cuda_cpu_translate", COMMON / "cuda_cpu_translate.py")
UnsupportedConstruct, translate = _cuda_cpu_translate.UnsupportedConstruct, _cuda_cpu_translate.translate
blank_comments_and_strings, function_bodies = (
    _cuda_cpu_translate.blank_comments_and_strings,
    _cuda_cpu_translate.function_bodies,
)


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def project_headers(path, include_dirs):
    """Every header that `path` includes with quotes, transitively, that exists on disk."""
    seen, todo = set(), [Path(path)]
    while todo:
        current = todo.pop()
        with contextlib.suppress(OSError):
            for name in INCLUDE.findall(current.read_text()):
                for base in (current.parent, *include_dirs):
                    candidate = (Path(base) / name).resolve()
                    if candidate.is_file():
                        if candidate not in seen:
                            seen.add(candidate)
                            todo.append(candidate)
                        break
    return seen


def translate_tree(cu, include_dirs, folder, check=False, shown=None, place=None, files=None):
    """The translation of `cu`, whose project and user headers (every `#include "..."` that g++ compiles and that
    resolves beside the including file or in `include_dirs`, transitively) are translated the same way into
    `folder`/h/<hash of their path>/<name>.cpp (each names its own file and lines: `#line`) and included from
    there; the stand-in's own headers (kernels/common/cuda_cpu*) are included as they are. An UnsupportedConstruct
    (in `cu` or in a header) has `.file`, the file whose line it names. `shown(path)`: how errors name a file.
    A tree that keeps the files' own layout (kp.package) passes `place(path)`: for `cu` and each header, (where its
    translation goes, how an #include names that, how its #line names the file), and `files`, a dict that takes
    the headers' translations by where they go, written by the caller; the stand-in's headers stay as written."""
    shown = shown or str

    def in_folder(path):
        copy = Path(folder) / "h" / hashlib.sha256(str(path).encode()).hexdigest()[:8] / f"{path.name}.cpp"
        return copy, str(copy), str(path)

    where = place or in_folder
    copies = {}  # a header's path -> where(path), taken before its translation: an include cycle ends there

    def convert(path, header, tag):
        try:
            include_from = lambda n: include(n, path)  # noqa: E731
            return translate(path.read_text(), where(path)[2], shown(path), check, include_from, header, tag)
        except UnsupportedConstruct as e:
            e.file = getattr(e, "file", path)  # the innermost file's, as the exception passes its includers
            raise

    def include(name, includer):
        found = next((p for b in (includer.parent, *include_dirs) if (p := (Path(b) / name).resolve()).is_file()), None)
        if found is None or (found.is_relative_to(COMMON) and found.name.startswith("cuda_cpu")):
            return None if found is None or place else str(found)
        if found not in copies:
            copies[found] = where(found)
            text = convert(found, True, f"h{len(copies)}_")
            if files is not None:
                files[copies[found][0]] = text
            else:
                copies[found][0].parent.mkdir(parents=True, exist_ok=True)
                write_if_changed(copies[found][0], text)
        return copies[found][1]

    return convert(Path(cu), False, "")


_runtime = None
RUNTIME_FLAGS = ["-std=c++17", "-O2", "-fPIC", "-pthread"]  # the runtime's compile flags, before the ABI and -I


def runtime_build():
    """(folder, sources, compile flags, link flags) of the stand-in's runtime library. The folder's name hashes
    all that goes in: the sources and the headers they include, torch's version (it links torch's c10), the flags
    and the compiler's identity, so that a change to any of them builds a new library, never reuses an old one."""
    import torch.utils.cpp_extension as cpp_extension  # kp.build imported it, after kp/__init__ set CUDA_HOME

    sources = [COMMON / "cuda_cpu_runtime.cpp", COMMON / "cuda_cpu_redzones.cpp"]
    headers = sorted(set().union(*(project_headers(s, [COMMON]) for s in sources)))  # cuda_cpu_check.h among them
    cxx, libs = os.environ.get("CXX", "c++"), Path(torch.__file__).parent / "lib"  # torch's
    flags = [*RUNTIME_FLAGS, f"-D_GLIBCXX_USE_CXX11_ABI={int(torch.compiled_with_cxx11_abi())}", f"-I{COMMON}"]
    flags += [f"-I{d}" for d in cpp_extension.include_paths()]
    link = ["-shared", "-pthread", "-Wl,-soname,libkp_cuda_cpu.so", f"-L{libs}", "-lc10", f"-Wl,-rpath,{libs}"]
    what = repr((torch.__version__, toolchain_identity(cxx), flags, link)).encode()
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in [*sources, *headers]) + what).hexdigest()[:12]
    return BUILD_ROOT / "cpu" / f"runtime-{digest}", sources, flags, link


def cpu_runtime():
    """The CPU stand-in's runtime library (thread pool, fibers, the redzones around CPU tensors), built once and
    loaded once per process. Loading it installs the redzones' allocator as torch's CPU allocator: tensors made
    from then on have redzones (kernels/common/cuda_cpu_redzones.cpp)."""
    global _runtime
    if _runtime is None:
        out_dir, sources, flags, link = runtime_build()
        lib = out_dir / "libkp_cuda_cpu.so"
        with locked(out_dir / ".kp-lock"):
            if not lib.exists():
                cxx, tmp = os.environ.get("CXX", "c++"), out_dir / f"libkp_cuda_cpu.so.tmp{os.getpid()}"
                objects = [out_dir / f"{s.stem}.o.tmp{os.getpid()}" for s in sources]
                # the two sources at once (4.7 s and 1.8 s here): a first build waits for the longer one only
                compiles = [
                    subprocess.Popen(
                        [cxx, *flags, "-c", str(s), "-o", str(o)],
                        stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT,
                        text=True,
                    )
                    for s, o in zip(sources, objects)
                ]
                log = "".join(p.communicate()[0] for p in compiles)
                failed = any(p.returncode for p in compiles)
                if not failed:
                    done = subprocess.run([cxx, *objects, *link, "-o", tmp], capture_output=True, text=True)
                    failed, log = done.returncode != 0, done.stdout + done.stderr
                for o in objects:
                    with contextlib.suppress(OSError):
                        o.unlink()
                if failed:
                    raise KernelBuildError.from_log(log, sources)
                os.replace(tmp, lib)
        runtime = ctypes.CDLL(str(lib))
        runtime.kp_set_num_threads(torch.get_num_threads())
        runtime.kp_redzones_install()
        _runtime = runtime
    return _runtime


# ---------------------------------------------------------------------------------------------
# The precompiled header. Parsing the standard library's <cmath> and <string> under cuda_cpu.h and kp.cuh was
# two thirds of g++'s time on a small kernel file; g++ reads them from a precompiled header (a .gch beside the
# header) in a fraction of that. g++ uses a .gch only when it was made with the same options (it checks, and
# silently parses the header itself otherwise), so one is made per flag set, compiler and header content.

# What a translated kernel file includes first: the stand-in, and the standard headers kp.cuh includes. Only
# standard headers beyond cuda_cpu.h, so that a kernel file sees no declaration it did not include.
PCH_TEXT = """// The stand-in's headers, precompiled (kp.standin).
#include "cuda_cpu.h"
#include <stdexcept>
#include <string>
"""
PCH_NAME = "kp_standin.h"
TRANSLATED_FIRST_LINE = '#include "cuda_cpu.h"\n'  # the translator's (kernels/common/cuda_cpu_translate.py)


@functools.cache
def torch_cxx_flags():
    """The flags torch.utils.cpp_extension puts before ours on every C++ compile of `load()` (`-fPIC -std=...`),
    read from its source, where they are a literal; None where that line is not found (then no PCH is made)."""
    import torch.utils.cpp_extension as cpp_extension

    with contextlib.suppress(OSError):
        found = re.search(
            r"cflags = common_cflags \+ \['-fPIC', '(-std=c\+\+\w+)'\] \+ extra_cflags",
            Path(cpp_extension.__file__).read_text(),
        )
        return ["-fPIC", found.group(1)] if found else None
    return None


_failed = {}  # folder -> the compiler's output: a PCH or stubs that failed are not tried again in this process


def precompiled_header(cflags):
    """The header that a translated kernel file compiled with `cflags` includes first, with its `.gch` beside it,
    made once per flag set, compiler and content of the stand-in's headers (build/ext/cpu/pch-*); None where no
    PCH can be made for them: the kernel file then includes cuda_cpu.h as it is, only slower to compile."""
    torch_flags = torch_cxx_flags()
    if torch_flags is None:
        return None
    cxx = os.environ.get("CXX", "c++")
    flags = [*torch_flags, *cflags, f"-I{COMMON}"]  # a kernel file's compile, less -D and -I flags g++ does not compare
    group = hashlib.sha256(repr((toolchain_identity(cxx), flags)).encode()).hexdigest()[:8]
    inputs = [COMMON / "cuda_cpu.h", *sorted(project_headers(COMMON / "cuda_cpu.h", [COMMON]))]
    content = hashlib.sha256(PCH_TEXT.encode() + b"".join(p.read_bytes() for p in inputs)).hexdigest()[:8]
    folder = BUILD_ROOT / "cpu" / f"pch-{group}-{content}"
    header, gch = folder / PCH_NAME, folder / f"{PCH_NAME}.gch"
    if folder in _failed:
        return None
    with locked(folder / ".kp-lock"):
        if not gch.exists():
            write_if_changed(header, PCH_TEXT)
            tmp = folder / f"{PCH_NAME}.gch.tmp{os.getpid()}"
            cmd = [cxx, *flags, "-x", "c++-header", str(header), "-o", str(tmp)]
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            except (OSError, subprocess.TimeoutExpired) as e:
                done = subprocess.CompletedProcess(cmd, 1, "", str(e))
            if done.returncode:
                _failed[folder] = done.stdout + done.stderr
                with contextlib.suppress(OSError):
                    tmp.unlink()
                return None
            os.replace(tmp, gch)
            for older in folder.parent.glob(f"pch-{group}-*"):  # the same flags, older headers: never used again
                if older != folder:
                    shutil.rmtree(older, ignore_errors=True)
    return header


def prepare(cflags):
    """cpu_runtime(), with the precompiled header for `cflags` and the link stubs made meanwhile: a first build on
    a machine makes all three, and the header's 1.4 s then hides behind the runtime's 4.7 s. Returns the runtime;
    errors of the others surface when kp.build asks for them again."""
    if _runtime is not None:
        return _runtime

    def make_the_others():
        with contextlib.suppress(Exception):
            precompiled_header(cflags)
            torch_link_stubs()

    others = threading.Thread(target=make_the_others, daemon=True)
    others.start()
    try:
        return cpu_runtime()
    finally:
        others.join()


def with_precompiled_header(text, cflags):
    """A translated kernel file (`text`) that includes the precompiled header first, where there is one."""
    header = precompiled_header(cflags)
    if header is None or not text.startswith(TRANSLATED_FIRST_LINE):
        return text
    return f'#include "{header}"\n' + text[len(TRANSLATED_FIRST_LINE) :]


# ---------------------------------------------------------------------------------------------
# The link. torch.utils.cpp_extension links every kernel library against libc10, libtorch_cpu, libtorch and
# libtorch_python; the linker then reads their 100,000 exported symbols (libtorch_cpu's alone take 7 MB), most
# of the link's time, to resolve nothing: a shared library may leave symbols undefined, and the loader binds
# them when it is loaded. Empty libraries of the same names (SONAMEs), found first on the library path and
# recorded as dependencies (--no-as-needed: they define nothing), are met at load time by torch's own libraries,
# which `import torch` loaded.
TORCH_LIBRARIES = ("c10", "torch_cpu", "torch", "torch_python")  # what load() links a C++ (not CUDA) build with


def torch_link_stubs():
    """Link flags that take empty libraries named as torch's (made once per torch and toolchain) instead of
    torch's own, for a stand-in kernel's link; [] where they cannot be made or linked (then it links torch's)."""
    cxx = os.environ.get("CXX", "c++")
    torch_lib = Path(torch.__file__).parent / "lib"
    if not all((torch_lib / f"lib{name}.so").exists() for name in TORCH_LIBRARIES):
        return []
    digest = hashlib.sha256(repr((toolchain_identity(cxx), str(torch_lib), TORCH_LIBRARIES)).encode()).hexdigest()
    folder = BUILD_ROOT / "cpu" / f"torch-stubs-{digest[:12]}"
    flags = [
        f"-L{folder}",
        "-Wl,--push-state,--no-as-needed",
        *(f"-l{name}" for name in TORCH_LIBRARIES),
        "-Wl,--pop-state",
    ]
    if folder in _failed:
        return []
    with locked(folder / ".kp-lock"):
        if not (folder / "ok").exists():
            source = folder / "stub.cpp"
            write_if_changed(source, "// An empty library named as one of torch's (kp.standin.torch_link_stubs).\n")
            shared = [cxx, "-shared", "-fPIC", str(source)]
            steps = [[*shared, f"-Wl,-soname,lib{n}.so", "-o", str(folder / f"lib{n}.so")] for n in TORCH_LIBRARIES]
            # then a library linked as a kernel's is, against the four (--push-state: GNU ld and gold since 2.25)
            steps.append([*shared, *linker_flags(), *flags, "-o", str(folder / "probe.so")])
            for cmd in steps:
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode:
                    _failed[folder] = done.stdout + done.stderr
                    return []
            (folder / "ok").write_text("")
    return flags
