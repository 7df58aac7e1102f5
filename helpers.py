"""Kernel Playground helpers: one loader, one checker, one graph renderer, one benchmark.

    from helpers import load_kernel
    add2 = load_kernel("add2")          # builds kernels/add2.cu + kernels/add2_binding.cpp
    c = add2.add2(a, b)                 # the op, registered with torch

Edit `kernels/add2.cu`, call `load_kernel("add2")` again, and the new code answers, in the same
process: each build gets a fresh op namespace and its own copy of the library, while ninja keeps
its incremental state, so only the edited object is rebuilt. The ops' Python side of
torch.library (fake implementations for tracing, autograd formulas) lives in
`kernels/<op>_ops.py` and is registered again with every version.

Targets: "cuda" (nvcc) when a GPU is present, else "cpu": the CPU stand-in for CUDA's execution
model (kernels/common/cuda_cpu.h), which runs the same `.cu` file. `python helpers.py doctor`
checks the toolchain.
"""

import contextlib
import ctypes
import hashlib
import importlib.util
import json
import logging
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from kp.binding import C10_DTYPE_NAMES, check_floating, check_like, check_same_kind, dtype_name  # noqa: F401
from kp.diagnostics import (  # noqa: F401 (re-exported)
    GCC_DIAGNOSTIC,
    LINKER_LINE,
    NVCC_DIAGNOSTIC,
    KernelBuildError,
    source_excerpt,
)
from kp.files import (  # noqa: F401 (ROOT: re-exported)
    BUILD_ROOT,
    COMMON,
    KERNELS,
    ROOT,
    copy_atomically,
    display_path,
    locked,
    write_if_changed,
)
from kp.report import record
from kp.table import Table
from kp.toolchain import (  # noqa: F401 (re-exported)
    DEFAULT_CUDA_ARCH,
    OPTIONAL_FLAGS,
    TARGETS,
    Problem,
    ToolchainError,
    default_target,
    doctor,
    find_cuda_root,
    is_cuda_root,
    linker_flags,
    main,
    probe_linker,
)

if not torch.cuda.is_available():  # its "No CUDA runtime is found" warning is expected here
    logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)
import torch.utils.cpp_extension as cpp_extension  # noqa: E402

sys.path.insert(0, str(COMMON))
from cuda_cpu_translate import UnsupportedConstruct, translate  # noqa: E402

sys.path.remove(str(COMMON))


# ---------------------------------------------------------------------------------------------
# A build error in a notebook: its message and a collapsed log (the error itself: kp.diagnostics).


def _show_build_errors_in_notebook():
    """In IPython, show a KernelBuildError as its message and a collapsed log, not a traceback."""
    if "IPython" not in sys.modules:  # not in a notebook: nothing to do, and no import to pay for
        return
    with contextlib.suppress(ImportError, AttributeError):
        from IPython import get_ipython
        from IPython.display import HTML, display

        shell = get_ipython()
        if shell is None:
            return

        def handler(shell, etype, value, tb, tb_offset=None):
            display(HTML(value._render_html()))
            stb = [f"KernelBuildError: {str(value).splitlines()[0]}"]
            shell._showtraceback(etype, value, stb)  # the cell's error output: one line, not a traceback
            return stb

        shell.set_custom_exc((KernelBuildError,), handler)


_show_build_errors_in_notebook()


# ---------------------------------------------------------------------------------------------
# The loader.

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


_runtime = None


def cpu_runtime():
    """The CPU stand-in's runtime library (thread pool, fibers), built once and loaded once per process."""
    global _runtime
    if _runtime is None:
        source = COMMON / "cuda_cpu_runtime.cpp"
        headers = sorted(project_headers(source, [COMMON]))
        digest = hashlib.sha256(b"".join(p.read_bytes() for p in [source, *headers])).hexdigest()[:12]
        out_dir = BUILD_ROOT / "cpu" / f"runtime-{digest}"
        lib = out_dir / "libkp_cuda_cpu.so"
        with locked(out_dir / ".kp-lock"):
            if not lib.exists():
                tmp = out_dir / f"libkp_cuda_cpu.so.tmp{os.getpid()}"
                cmd = [
                    os.environ.get("CXX", "c++"),
                    "-std=c++17",
                    "-O2",
                    "-fPIC",
                    "-shared",
                    "-pthread",
                    f"-I{COMMON}",
                    "-Wl,-soname,libkp_cuda_cpu.so",
                    str(source),
                    "-o",
                    str(tmp),
                ]
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode:
                    raise KernelBuildError.from_log(done.stdout + done.stderr, [source])
                os.replace(tmp, lib)
        _runtime = ctypes.CDLL(str(lib))
        _runtime.kp_set_num_threads(torch.get_num_threads())
    return _runtime


def resolve_kernel(name_or_path):
    """`"add2"` -> kernels/add2.cu; a path to a `.cu` file anywhere is taken as it is."""
    path = Path(name_or_path)
    if path.suffix != ".cu":
        path = KERNELS / f"{name_or_path}.cu"
    path = path.resolve()
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in KERNELS.glob("*.cu")))
        raise FileNotFoundError(f"no kernel file {path} (the kernels here: {known})")
    binding = path.with_name(f"{path.stem}_binding.cpp")
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
    seconds: float = 0.0  # of this build; for "cached" and "loaded", of the last build in its folder
    rebuilt: int = 0  # objects compiled (by that build)
    objects: int = 0  # objects in the library

    def describe(self):
        where = {"cpu": "cpu stand-in", "cuda": "nvcc"}[self.target]
        if self.status == "built":
            return f"{self.name}: {where}, built in {self.seconds:.1f} s ({self.rebuilt} of {self.objects} objects)"
        last = f"its last build: {self.seconds:.1f} s, {self.rebuilt} of {self.objects} objects"
        return f"{self.name}: {self.status} ({where}; {last})"


def _build_flags(target, cu):
    includes = [str(COMMON), str(KERNELS), str(cu.parent)]
    cflags = ["-O2", "-fvisibility=hidden"]
    ldflags = linker_flags()
    if target == "cpu":
        # The default TLS model: initial-exec breaks after a few dlopens, and gnu2 descriptors lost
        # a write to file-scope __shared__ made before a block's first barrier (tests/test_cuda_cpu.py).
        # -fno-plt: barriers call the runtime through the GOT, not a PLT stub (~1.5 ns per arrival).
        cflags += ["-DKP_CPU_STANDIN", *(f for f in probe_linker().cflags if f == "-fno-plt")]
        runtime_dir = Path(cpu_runtime()._name).parent
        ldflags += [f"-L{runtime_dir}", "-lkp_cuda_cpu", f"-Wl,-rpath,{runtime_dir}"]
    return includes, cflags, ["-O2", "-Xcompiler", "-fvisibility=hidden"], ldflags


def build_kernel(name_or_path, target=None, verbose=False):
    """Build a kernel file and its binding for `target` ("cpu" or "cuda"); return a Build.

    The CUDA build needs nvcc and a CUDA build of torch, not a GPU: on a machine without one it
    compiles and links (for TORCH_CUDA_ARCH_LIST, default 9.0), which is how the tests check it.
    """
    target = target or default_target()
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    cu, binding = resolve_kernel(name_or_path)
    name = re.sub(r"\W", "_", cu.stem)
    if target == "cuda":
        problems = doctor("cuda")
        os.environ.setdefault("TORCH_CUDA_ARCH_LIST", DEFAULT_CUDA_ARCH)
        problems = [p for p in problems if p.check != "TORCH_CUDA_ARCH_LIST"]
        if problems:
            raise ToolchainError.of(problems)
        cpp_extension.CUDA_HOME = os.environ["CUDA_HOME"]  # in case it was imported before CUDA_HOME was set

    includes, cflags, cuda_cflags, ldflags = _build_flags(target, cu)
    inputs = sorted({cu, binding, *project_headers(cu, includes), *project_headers(binding, includes)})
    if python_side_of(cu).is_file():  # part of the version: an edit of it loads like an edit of the kernel
        inputs.append(python_side_of(cu))
    if target == "cpu":
        standin = COMMON / "cuda_cpu.h"
        inputs += [standin, *sorted(project_headers(standin, [COMMON])), COMMON / "cuda_cpu_translate.py"]
    h = hashlib.sha256(repr((target, torch.__version__, cflags, cuda_cflags, ldflags, includes)).encode())
    for p in inputs:
        h.update(str(p).encode() + b"\0" + p.read_bytes())
    key = h.hexdigest()[:16]

    build_dir = BUILD_ROOT / target / f"{name}-{hashlib.sha256(str(cu).encode()).hexdigest()[:8]}"
    library = build_dir / f"{name}.so"
    stamp = build_dir / "built.json"
    with locked(build_dir / ".kp-lock"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            built = json.loads(stamp.read_text())
            if built["key"] == key and library.exists():
                objects = len(list(build_dir.glob("*.o")))
                seconds, rebuilt = built.get("seconds", 0.0), built.get("rebuilt", 0)
                return Build(name, target, cu, library, key, "cached", seconds, rebuilt, objects)
        start = time.perf_counter()
        if target == "cpu":
            try:
                text = translate(cu.read_text(), str(cu), display_path(cu))
            except UnsupportedConstruct as e:
                raise KernelBuildError(f"{e}\n{source_excerpt(cu, e.line)}") from None
            (build_dir / "src").mkdir(parents=True, exist_ok=True)
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
            log = str(e)
            log_path = build_dir / "last_error.log"
            log_path.write_text(log)
            err = KernelBuildError.from_log(log, [cu, binding], log_path)
            if not (GCC_DIAGNOSTIC.search(log) or NVCC_DIAGNOSTIC.search(log)):
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
        return Build(name, target, cu, library, key, "built", seconds, rebuilt, len(after))


def op_caller(packet):
    """What `mod.<op>` is: a call of the custom op `packet` (torch.ops.<namespace>.<op>) that skips the
    autograd layer when nothing needs a gradient.

    torch.library.register_autograd puts a Python kernel at the op's Autograd key, and the dispatcher
    enters it on every call, gradients or not: on a tiny tensor that hop from C++ back into Python
    costs as much as the rest of the call (bench/op_overhead.py). When grad mode is off or no input
    requires grad, that kernel does nothing but call the op below autograd; this does the same from
    here, without the hop. Under torch.compile or torch.export, and whenever a gradient is needed, the
    op is called as it is. `call.op` is the op itself, `call.default` its overload (what opcheck takes).
    """
    overload = packet.default
    any_requires_grad, below_autograd = torch._C._any_requires_grad, torch._C._AutoDispatchBelowAutograd

    def call(*args, **kwargs):
        if torch.compiler.is_compiling() or (torch.is_grad_enabled() and any_requires_grad(*args, **kwargs)):
            return overload(*args, **kwargs)
        with below_autograd():
            return overload(*args, **kwargs)

    call.__name__ = call.__qualname__ = packet.__name__
    call.__doc__ = str(overload._schema)  # e.g. kp_add2_<version>::add2(Tensor a, Tensor b) -> Tensor
    call.op, call.default = packet, overload
    return call


class KernelModule:
    """The ops of one loaded kernel version: `mod.add2(a, b)` calls the custom op
    `torch.ops.<namespace>.add2` (through `op_caller`; `mod.add2.op` is the op itself).

    `register_fake` and `register_autograd` add the Python side of torch.library to this version's
    ops (kernels/<op>_ops.py calls them); `fakes` and `autograd` name the ops that have one.
    """

    def __init__(self, build, namespace, library_path):
        self.build, self.namespace, self.library_path = build, namespace, library_path
        self.__name__ = build.name
        self.fakes, self.autograd = set(), set()
        self._library = None  # torch.library.Library(namespace, "FRAGMENT"), made on first use
        self._op_names = self.ops
        packets = getattr(torch.ops, namespace)
        for op in self._op_names:  # plain attributes: what torch.compile traces through without guards on code
            if op in vars(type(self)) or op in vars(self):
                raise KernelBuildError(f"{build.name}: an op may not be named {op!r} (a KernelModule attribute)")
            setattr(self, op, op_caller(getattr(packets, op)))

    @property
    def ops(self):
        names = torch._C._dispatch_get_registrations_for_dispatch_key("CompositeExplicitAutograd")
        return sorted(n.split("::", 1)[1] for n in names if n.startswith(self.namespace + "::"))

    def _qualname(self, op):
        if op not in self._op_names:
            raise ValueError(f"{self.build.name} has no op {op!r}; its ops: {', '.join(self._op_names)}")
        if self._library is None:
            self._library = torch.library.Library(self.namespace, "FRAGMENT")
        return f"{self.namespace}::{op}"

    def register_fake(self, op, fn=None):
        """torch.library.register_fake for `op` of this version; use as `@ops.register_fake("add2")`."""

        def register(fn):
            torch.library.register_fake(self._qualname(op), fn, lib=self._library)
            self.fakes.add(op)
            return fn

        return register if fn is None else register(fn)

    def register_autograd(self, op, backward, setup_context=None):
        """torch.library.register_autograd for `op` of this version: `op(...)` becomes differentiable."""
        torch.library.register_autograd(self._qualname(op), backward, setup_context=setup_context, lib=self._library)
        self.autograd.add(op)

    def __getattr__(self, op):
        if op.startswith("_"):
            raise AttributeError(op)
        raise AttributeError(f"{self.build.name} has no op {op!r}; its ops: {', '.join(self._op_names)}")

    def __dir__(self):
        return [*super().__dir__(), *self._op_names]

    def __repr__(self):
        return f"<kernel {self.build.name} [{self.build.target}] ops={self._op_names} namespace={self.namespace}>"


def register_python_side(module, cu):
    """Run `register(ops)` of kernels/<op>_ops.py, if there is one, for one loaded version."""
    path = python_side_of(cu)
    if not path.is_file():
        return
    spec = importlib.util.spec_from_file_location(f"{module.namespace}_ops", path)
    code = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(code)
    if not callable(getattr(code, "register", None)):
        raise TypeError(f"{display_path(path)} must define register(ops), which load_kernel calls")
    code.register(module)  # if it raises, the module is dropped; a retry registers on a new one


_native = {}  # build key -> (namespace, library copy): C++ registrations made in this process, never undone
_loaded = {}  # build key -> KernelModule: one load per kernel version per process


def load_kernel(name_or_path, target=None, verbose=False, quiet=False):
    """Build (if needed) and load a kernel; return its ops as a KernelModule.

    `name_or_path`: an op name ("add2" -> kernels/add2.cu + kernels/add2_binding.cpp, and
    kernels/add2_ops.py if present) or a path to a `.cu` file with its `<stem>_binding.cpp` beside
    it. Prints one line saying what happened, unless `quiet`. Raises KernelBuildError (compile
    errors, pointing at the `.cu` line) or ToolchainError (a missing or misconfigured tool, with
    the fix); an error in `<op>_ops.py` is raised as it is.
    """
    build = build_kernel(name_or_path, target, verbose)
    module = _loaded.get(build.key)
    if module is not None:
        build.status = "loaded"
        module.build = build
    else:
        if build.key not in _native:
            copies = build.library.parent / "loaded"
            copies.mkdir(exist_ok=True)
            # dlopen returns the already-loaded library for a path it has seen: every version gets its own file.
            copy = copies / f"{build.name}-{build.key}.so"
            if not copy.exists():
                copy_atomically(build.library, copy)
            namespace = f"kp_{build.name}_{build.key}"
            lib = ctypes.CDLL(str(copy))
            lib.kp_register.restype = ctypes.c_char_p
            error = lib.kp_register(namespace.encode())
            _native[build.key] = (namespace, copy)
            if error:  # kept, and raised again: registering the same namespace twice would abort the process
                text = f"{display_path(build.library)}: registering the ops failed: {error.decode()}"
                _native[build.key] = KernelBuildError(text + "\n(edit the binding and load again)")
        if isinstance(_native[build.key], KernelBuildError):
            raise _native[build.key]
        module = KernelModule(build, *_native[build.key])
        register_python_side(module, build.source)
        _loaded[build.key] = module
    if not quiet:
        print(build.describe())
    record("build", build.describe())
    return module


# ---------------------------------------------------------------------------------------------
# Notebook helpers.


def environment_line():
    """One line: versions and the device the notebook runs on."""
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU: kernels run on the CPU stand-in"
    return f"torch {torch.__version__} | python {sys.version.split()[0]} | {device} | {torch.get_num_threads()} threads"


def setup(seed=0):
    """Seed everything and print the environment line; returns the device to use."""
    torch.manual_seed(seed)
    print(environment_line())
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def show_kernel(name_or_path):
    """Display a kernel file with syntax highlighting (plain text outside IPython)."""
    cu, _ = resolve_kernel(name_or_path)
    text = cu.read_text()
    try:
        from IPython.display import Code, display

        display(Code(text, language="cuda"))
    except ImportError:
        print(text)


def check_against_reference(name, got, expected, atol=None, rtol=None):
    """Print the max abs error of `got` vs `expected`, then assert they are close."""
    err = (got.detach() - expected.detach()).abs().max().item() if got.numel() else 0.0
    print(f"{name:<12} max abs error {err:.3e}  ({got.dtype}, shape {tuple(got.shape)})")
    torch.testing.assert_close(got, expected, atol=atol, rtol=rtol)
    return err


def show_graph(tensor, params=None):
    """Render the autograd graph of `tensor` with torchviz; returns the SVG (displayed in Jupyter)."""
    from torchviz import make_dot

    if shutil.which("dot") is None:
        raise ToolchainError(
            "graphviz's `dot` is not installed, so torchviz cannot render\n"
            "  fix: apt-get install -y graphviz (as root; `make setup` does it), or conda install graphviz"
        )
    svg = make_dot(tensor, params=params or {}, show_attrs=False).pipe(format="svg").decode()
    try:
        from IPython.display import SVG, display

        display(SVG(svg))
    except ImportError:
        pass
    return svg


def gradcheck(fn, inputs, name=None, **kwargs):
    """torch.autograd.gradcheck on `fn(*inputs)`: prints what passed, raises GradcheckError if not.

    Use float64 inputs: finite differences in float32 are too coarse to mean anything.
    """
    owner = getattr(fn, "__self__", None)  # P2.apply -> "P2"
    name = name or (owner.__name__ if isinstance(owner, type) else getattr(fn, "__qualname__", repr(fn)))
    leaves = [t for t in inputs if torch.is_tensor(t) and t.requires_grad]
    shapes = ", ".join(f"{tuple(t.shape)} {str(t.dtype).removeprefix('torch.')}" for t in leaves)
    try:
        torch.autograd.gradcheck(fn, tuple(inputs), **kwargs)
    except Exception as e:
        record("gradcheck", f"FAILED: {name}: {str(e).splitlines()[0]}")
        raise
    print(f"gradcheck passed: {name}, gradients for {shapes}")
    record("gradcheck", f"passed: {name}")


def check_compiled(model, *inputs, **compile_kwargs):
    """Run `model(*inputs)` eagerly and under torch.compile(fullgraph=True); check that outputs agree,
    and gradients too, for every input and parameter that requires grad. Returns the compiled model.

    fullgraph=True makes any graph break an error: the custom ops and their autograd Function
    must trace whole, which takes a fake (shape-only) implementation of every op.
    """
    compiled = torch.compile(model, fullgraph=True, **compile_kwargs)
    named = [(f"input {i}", t) for i, t in enumerate(inputs) if torch.is_tensor(t) and t.requires_grad]
    if isinstance(model, torch.nn.Module):
        named += [(n, p) for n, p in model.named_parameters() if p.requires_grad]

    def run(fn):
        out = fn(*inputs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if not named:
            return outs, []
        generator = torch.Generator(device=outs[0].device).manual_seed(0)
        seeds = [torch.randn(o.shape, dtype=o.dtype, device=o.device, generator=generator) for o in outs]
        grads = torch.autograd.grad(outs, [t for _, t in named], seeds, allow_unused=True)
        return outs, grads

    expected = run(model)
    start = time.perf_counter()
    got = run(compiled)
    print(f"torch.compile(fullgraph=True): compiled and ran in {time.perf_counter() - start:.1f} s")
    for i, (g, e) in enumerate(zip(got[0], expected[0], strict=True)):
        check_against_reference(f"output {i}", g, e)
    for (n, _), g, e in zip(named, got[1], expected[1], strict=True):
        if (g is None) != (e is None):
            raise AssertionError(f"grad of {n}: compiled gave {g is not None}, eager gave {e is not None}")
        if g is not None:
            check_against_reference(f"grad {n}", g, e)
    return compiled


# ---------------------------------------------------------------------------------------------
# Benchmarks.


def median_ms(fn, args=(), warmup=3, min_reps=25, min_seconds=0.0, max_reps=None):
    """(median milliseconds, runs) of fn(*args): at least `min_reps` runs and `min_seconds`, at most `max_reps`
    (default `min_reps`), after `warmup` runs.

    On a GPU each run is timed with CUDA events, and the runs are queued back to back, as a training
    loop queues them: while the GPU is the bottleneck, a run's time is its kernels' alone, not the CPU
    side of the call (which a synchronisation after every run would add as an idle gap); where the CPU
    side of a call takes longer than its kernels, the GPU waits and the time says so.
    """
    cuda = any(torch.is_tensor(a) and a.is_cuda for a in args)
    for _ in range(warmup):
        fn(*args)
    if cuda:
        torch.cuda.synchronize()
    times, events, deadline = [], [], time.perf_counter() + min_seconds
    max_reps = max_reps or min_reps
    while len(times) + len(events) < min_reps or (
        time.perf_counter() < deadline and len(times) + len(events) < max_reps
    ):
        if cuda:
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            fn(*args)
            end.record()
            events.append((begin, end))
        else:
            begin = time.perf_counter()
            fn(*args)
            times.append((time.perf_counter() - begin) * 1e3)
    if cuda:
        torch.cuda.synchronize()
        times = [begin.elapsed_time(end) for begin, end in events]
    return statistics.median(times), len(times)


class BenchResult(Table):
    """bench()'s answer: rows per size and provider (ms, throughput), and the custom-vs-baseline ratio."""

    def __init__(self, rows, unit, formula, custom, baseline, title, where):
        super().__init__(rows, title)
        self.unit, self.formula, self.custom, self.baseline, self.where = unit, formula, custom, baseline, where

    def throughput(self, provider, size):
        return next(r[self.unit] for r in self.rows if r["provider"] == provider and r["size"] == size)

    def ratio(self, size=None):
        """Custom throughput / baseline throughput at `size` (default: the largest size measured)."""
        size = self.rows[-1]["size"] if size is None else size
        return self.throughput(self.custom, size) / self.throughput(self.baseline, size)

    def summary(self):
        size = self.rows[-1]["size"]
        return f"{self.custom} {self.ratio():.3g}x {self.baseline} at size {size} ({self.unit}, {self.where})"

    def markdown(self):
        providers = list(dict.fromkeys(r["provider"] for r in self.rows))
        sizes = list(dict.fromkeys(r["size"] for r in self.rows))
        head = ["size", *(f"{p}, {self.unit}" for p in providers), f"{self.custom} ÷ {self.baseline}"]
        lines = [f"| {' | '.join(head)} |", "|" + "---|" * len(head)]
        for size in sizes:
            cells = [f"{self.throughput(p, size):.3g}" for p in providers]
            lines.append(f"| {size} | {' | '.join(cells)} | {self.ratio(size):.3g}x |")
        note = f"{self.unit} = {self.formula} ÷ median time; {self.where}"
        return (f"{self.title}\n\n" if self.title else "") + "\n".join(lines) + f"\n\n{note}"

    _repr_markdown_ = markdown


def bench(
    providers,
    sizes,
    make_inputs,
    *,
    formula,
    bytes_moved=None,
    flops=None,
    baseline=None,
    threads=None,
    warmup=3,
    min_reps=25,
    min_seconds=0.2,
    max_reps=1000,
    title="",
    plot=True,
    logy=False,
):
    """Time each provider on each size; report throughput as a table and one plot (a line per provider).

    `providers`: {"name": fn}, the custom op first, then the native torch op (or the pure-torch
    reference where torch has none). `make_inputs(size)` returns the arguments of fn; `size` may
    be an int or a tuple (e.g. (B, M, N)). Give `bytes_moved(size)` for GB/s or `flops(size)` for
    GFLOP/s, and state it in words in `formula` (e.g. "3 × 4n bytes: read a and b, write c").
    Each time is the median of at least `min_reps` runs and `min_seconds`, after `warmup` runs; on
    a GPU, timed with CUDA events. `baseline` (default: the second provider) is what the custom op's
    ratio is taken against. `threads`: torch's CPU threads while timing (the stand-in's pool follows
    them), restored after; on a small shared machine, 1 gives the steadiest numbers. Returns a
    BenchResult (shown as a table in Jupyter).
    """
    if (bytes_moved is None) == (flops is None):
        raise ValueError("give exactly one of bytes_moved= (GB/s) or flops= (GFLOP/s)")
    if len(providers) < 2:
        raise ValueError("give the custom op and at least one provider to compare it with")
    names = list(providers)
    baseline = baseline or names[1]
    if baseline not in providers:
        raise ValueError(f"baseline {baseline!r} is not one of the providers {names}")
    unit, amount = ("GB/s", bytes_moved) if bytes_moved else ("GFLOP/s", flops)
    rows, where, before = [], "CPU", torch.get_num_threads()
    try:
        if threads:
            torch.set_num_threads(threads)
        for size in sizes:
            args = make_inputs(size)
            if any(torch.is_tensor(a) and a.is_cuda for a in args):
                where = torch.cuda.get_device_name()
            for name, fn in providers.items():
                ms, reps = median_ms(fn, args, warmup, min_reps, min_seconds, max_reps)
                rows.append({"provider": name, "size": size, "ms": ms, unit: amount(size) / ms / 1e6, "runs": reps})
        if where == "CPU":
            where = f"CPU, {torch.get_num_threads()} thread{'s' if torch.get_num_threads() > 1 else ''}"
    finally:
        torch.set_num_threads(before)
    result = BenchResult(rows, unit, formula, names[0], baseline, title, where)
    record("bench", result.summary())
    if plot:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        labels = [str(s) for s in sizes]
        for name in names:
            ax.plot(labels, [r[unit] for r in rows if r["provider"] == name], marker="o", label=name)
        ax.set(
            xlabel="size",
            ylabel=unit,
            title=title or f"{unit} (median, {where})",
            yscale="log" if logy else "linear",
        )
        ax.legend()
        plt.show()
    return result


# ---------------------------------------------------------------------------------------------
# What nvcc made of a kernel, without a GPU: ptxas's resource usage.

PTXAS_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>sm_\w+)'")
PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
PTXAS_USED = re.compile(r"Used (\d+) registers(?P<rest>.*)")


def parse_ptxas(log):
    """ptxas -v output -> one dict per kernel: registers, shared memory, stack and spill bytes."""
    rows, current = [], None
    for line in log.splitlines():
        if m := PTXAS_ENTRY.search(line):
            current = {"kernel": m["name"], "arch": m["arch"], "registers": 0, "shared memory (bytes)": 0}
            current.update({"stack (bytes)": 0, "spill stores (bytes)": 0, "spill loads (bytes)": 0})
            rows.append(current)
        elif current and (m := PTXAS_FRAME.search(line)):
            current["stack (bytes)"], current["spill stores (bytes)"], current["spill loads (bytes)"] = map(
                int, m.groups()
            )
        elif current and (m := PTXAS_USED.search(line)):
            current["registers"] = int(m[1])
            smem = re.search(r"(\d+) bytes smem", m["rest"])
            current["shared memory (bytes)"] = int(smem[1]) if smem else 0
    return rows


def demangle(names):
    """C++ symbol names -> `kernel<float>`, the template arguments kept and the parameters dropped."""
    filt = shutil.which("c++filt")
    if not filt or not names:
        return list(names)
    out = subprocess.run([filt], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    if len(out) != len(names):
        return list(names)
    short = []
    for full in out:
        full = re.sub(r"^void ", "", full)
        depth, cut = 0, len(full)
        for i, ch in enumerate(full):  # the parameter list is the first "(" outside template brackets
            depth += {"<": 1, ">": -1}.get(ch, 0)
            if ch == "(" and depth == 0:
                cut = i
                break
        short.append(full[:cut])
    return short


def cuda_arch():
    """nvcc's sm_XX for ptxas's report: this machine's GPU where there is one (the code that runs there),
    else the first architecture of TORCH_CUDA_ARCH_LIST (default 9.0)."""
    if torch.cuda.is_available():
        return "sm_{}{}".format(*torch.cuda.get_device_capability())
    first = re.split(r"[ ;]+", os.environ.get("TORCH_CUDA_ARCH_LIST", DEFAULT_CUDA_ARCH).strip())[0]
    return "sm_" + first.replace("+PTX", "").replace(".", "")


def show_kernel_resources(name_or_path, arch=None):
    """kernel_resources as a table in a notebook; without nvcc, the one line that says how to get it."""
    try:
        table = kernel_resources(name_or_path, arch)
    except ToolchainError as e:
        print(str(e))
        return None
    try:
        from IPython.display import Markdown, display

        display(Markdown(table.markdown()))
    except ImportError:
        print(table.markdown())
    return table


def kernel_resources(name_or_path, arch=None):
    """Registers, shared memory, stack and spills of each kernel in a `.cu` file, as ptxas reports them.

    Compiles the kernel file alone with nvcc (no binding, no torch headers: about a second) for
    `arch` (default: cuda_arch(), the GPU's own, else sm_90). Needs nvcc, not a GPU. Cached
    per file content. Returns a Table, one row per kernel (per template instantiation).
    """
    cu, _ = resolve_kernel(name_or_path)
    arch = arch or cuda_arch()
    home = os.environ.get("CUDA_HOME") or find_cuda_root()
    if not home or not is_cuda_root(home):
        raise ToolchainError(
            "nvcc was not found, so there is no CUDA build to report on\n"
            "  fix: install the CUDA toolkit and export CUDA_HOME=<its root> (`python helpers.py doctor cuda`)"
        )
    includes = [COMMON, KERNELS, cu.parent]
    inputs = sorted({cu, *project_headers(cu, includes)})
    h = hashlib.sha256(repr((arch, home)).encode())
    for p in inputs:
        h.update(str(p).encode() + b"\0" + p.read_bytes())
    cache = BUILD_ROOT / "cuda" / "ptxas" / f"{cu.stem}-{h.hexdigest()[:16]}.json"
    with contextlib.suppress(OSError, ValueError):
        return Table(json.loads(cache.read_text()), f"ptxas, {arch}: {display_path(cu)}")
    cache.parent.mkdir(parents=True, exist_ok=True)
    obj = cache.with_suffix(f".o.tmp{os.getpid()}")
    cmd = [str(Path(home) / "bin" / "nvcc"), "-c", "-O2", "--resource-usage", f"-arch={arch}"]
    cmd += [f"-I{d}" for d in includes] + [str(cu), "-o", str(obj)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    obj.unlink(missing_ok=True)
    log = done.stdout + done.stderr
    if done.returncode:
        raise KernelBuildError.from_log(log, [cu])
    rows = parse_ptxas(log)
    for row, short in zip(rows, demangle([r["kernel"] for r in rows]), strict=True):
        row["kernel"] = short
    write_if_changed(cache, json.dumps(rows))
    return Table(rows, f"ptxas, {arch}: {display_path(cu)}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
