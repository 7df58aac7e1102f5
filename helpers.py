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
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from kp.binding import C10_DTYPE_NAMES, check_floating, check_like, check_same_kind, dtype_name  # noqa: F401
from kp.build import Build, build_kernel, cpu_runtime, project_headers, resolve_kernel  # noqa: F401
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
from kp.load import LoadedKernel, load_kernel, op_caller  # noqa: F401
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
