"""Standalone CUDA programs: a `.cu` with a `main()`, as textbooks (PMPP), NVIDIA's blog posts, LeetGPU and Colab's
`%%cuda` cells teach. `run_program(path, args=[...])` builds it (the CPU stand-in through the same translator, flags
and precompiled header as a kernel file; nvcc where there is a GPU), runs it in a child process and returns a
ProgramRun: its stdout, stderr, exit status, and what the stand-in knows that the program may not have printed (a
failed launch, check mode's findings at their `.cu` lines). A program that faults, hangs or exits never takes the
notebook with it. `%%cuda` is the cell magic (install_cuda_magic registers it in IPython). Owns the program's build
folder (build/ext/programs/); never loads anything into this process.
"""

import contextlib
import hashlib
import html
import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from kp.build import build_flags
from kp.check import describe, parse_report
from kp.diagnostics import FAULT_ADDRESS, FAULT_LINE, KernelBuildError, code_line, source_excerpt
from kp.files import BUILD_ROOT, content_key, display_path, locked, write_if_changed
from kp.standin import (
    UnsupportedConstruct,
    cpu_runtime,
    project_headers,
    torch_cxx_flags,
    translate_tree,
    with_precompiled_header,
)
from kp.toolchain import DEFAULT_CUDA_ARCH, default_target, linker_flags, require_nvcc

TARGETS = ("cpu", "cuda")
CELLS = BUILD_ROOT / "programs" / "cells"  # where `%%cuda` writes a cell's program (a file per content)
REPORT_ENV = "KP_PROGRAM_REPORT"  # where the stand-in's build writes, at exit, what the program may not have printed

# Appended to a translated program: at exit (main returned, or exit() was called), check mode's findings and the
# stand-in's last launch failure go to the file named by KP_PROGRAM_REPORT, for run_program to show. A program
# killed by a signal writes nothing: its status says what happened.
EXIT_REPORT = r"""
// kp.program: what the stand-in knows at exit, for run_program (never part of the learner's program).
extern "C" const char* kp_check_take_report(void);
namespace {
struct KpProgramExitReport {
  ~KpProgramExitReport() {
    const char* path = getenv("KP_PROGRAM_REPORT");
    FILE* out = path ? fopen(path, "w") : nullptr;
    if (!out) return;
    fputs(kp_check_take_report(), out);
    const char* failure = ::kp::last_error_message();
    if (failure && *failure) fprintf(out, "launch\t%s\n", failure);
    fclose(out);
  }
};
// exit() destroys the main thread's thread_locals first, newest first: this one is made after the runtime's report
// (which the first call makes), so it is destroyed, and writes, while that report still exists.
const int kp_program_exit_report = [] {
  kp_check_take_report();
  static thread_local KpProgramExitReport report;
  (void)&report;
  return 0;
}();
}  // namespace
"""


@dataclass
class ProgramRun:
    """One run of a standalone program. `returncode`: its exit code, or -N when signal N ended it (as subprocess
    says); `timed_out`: it ran past its time and was killed; `launch_failure`: the stand-in's message for the last
    launch that failed (the program may not have checked); `findings`: check mode's (kp.check.Finding)."""

    path: Path
    target: str
    check: bool
    args: list
    stdout: str
    stderr: str
    returncode: int | None
    seconds: float
    timed_out: bool = False
    launch_failure: str = ""
    findings: list = field(default_factory=list)

    @property
    def ok(self):
        """Exit code 0, on time, no failed launch and no check-mode error."""
        errors = [f for f in self.findings if f.severity == "error"]
        return self.returncode == 0 and not self.timed_out and not self.launch_failure and not errors

    def status(self):
        """The exit status in words: 'exit code 0', 'killed by SIGSEGV (a fault in host code)', ..."""
        if self.timed_out:
            return f"stopped after {self.seconds:.0f} s (timeout): the program ran too long or hung"
        if self.returncode is not None and self.returncode < 0:
            sig = signal.Signals(-self.returncode)
            why = {
                signal.SIGSEGV: "a fault in host code: a kernel's faults fail its launch instead",
                signal.SIGABRT: "abort(), or an assert in host code failed",
                signal.SIGFPE: "an integer division by zero in host code",
            }.get(sig, "")
            return f"killed by {sig.name}" + (f" ({why})" if why else "")
        return f"exit code {self.returncode}"

    def __str__(self):
        head = f"{display_path(self.path)} on the {_where(self.target)}{' in check mode' if self.check else ''}"
        parts = [f"{head}: {self.status()}, {self.seconds:.2f} s"]
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append("stderr:\n" + self.stderr.rstrip("\n"))
        if self.launch_failure:
            parts.append(f"a kernel launch failed (the program may not have checked): {self.launch_failure}")
        if self.findings:
            parts.append(describe(self.findings))
        return "\n".join(parts)

    def _repr_html_(self):
        color = "#1a7f37" if self.ok else "#cf222e"
        head, *rest = str(self).split("\n", 1)
        body = f"<pre style='margin:0'>{html.escape(rest[0])}</pre>" if rest else ""
        return f"<div><b style='color:{color}'>{html.escape(head)}</b>{body}</div>"


def _located(failure):
    """A launch failure's text with the code address the stand-in names as its `.cu` line, and that line shown."""
    if address := FAULT_ADDRESS.search(failure):
        line = code_line(address["library"], address["offset"])
        failure = failure[: address.start()] + (f", at {line}" if line else "") + failure[address.end() :]
    if fault := FAULT_LINE.search(failure):
        excerpt = source_excerpt(fault["file"], int(fault["line"]))
        failure += f"\n{excerpt}" if excerpt else ""
    return failure


def _where(target):
    return "CPU stand-in" if target == "cpu" else "GPU (nvcc)"


def _program_dir(cu, target, check):
    name = cu.stem.replace(".", "_")
    return (
        BUILD_ROOT
        / "programs"
        / target
        / f"{name}-{hashlib.sha256(str(cu).encode()).hexdigest()[:8]}"
        / ("check" if check else "plain")
    )


def _run(cmd, cwd=None):
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    return done.returncode, done.stdout + done.stderr


def build_program(path, target=None, check=False):
    """The executable of the program at `path` for `target` (built once per content, flags and toolchain)."""
    cu = Path(path).resolve()
    if not cu.is_file():
        raise FileNotFoundError(f"no program at {path}: run_program takes the path of a .cu file with a main()")
    target = target or ("cpu" if check else default_target())
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    folder = _program_dir(cu, target, check)
    exe = folder / "program"
    if target == "cuda":
        nvcc = require_nvcc()
        listed = re.match(r"\s*(\d+)\.(\d+)", os.environ.get("TORCH_CUDA_ARCH_LIST", "") or DEFAULT_CUDA_ARCH)
        major, minor = torch.cuda.get_device_capability() if torch.cuda.is_available() else listed.groups()
        arch = f"{major}{minor}"
        cmd = [str(nvcc), "-O2", "-lineinfo", f"-arch=sm_{arch}", "-o", str(exe), str(cu)]
        inputs = [cu, *project_headers(cu, [cu.parent])]
        key = content_key((cmd,), inputs)
    else:
        includes, kernel_cflags, _, _ = build_flags("cpu", cu, check)
        cflags = [*(torch_cxx_flags() or ["-fPIC", "-std=c++17"]), *kernel_cflags, *(f"-I{d}" for d in includes)]
        runtime_dir = Path(cpu_runtime()._name).parent
        torch_lib = Path(torch.__file__).parent / "lib"
        # -fsanitize=... instruments check builds; its hooks are the stand-in's runtime, so the link names no
        # sanitizer library (as a kernel library's does not).
        link = [*linker_flags(), "-pthread", f"-L{runtime_dir}", "-lkp_cuda_cpu", f"-Wl,-rpath,{runtime_dir}"]
        link += [f"-L{torch_lib}", "-lc10", f"-Wl,-rpath,{torch_lib}"]
        common = Path(includes[0])
        inputs = [cu, *project_headers(cu, includes), common / "cuda_cpu.h", common / "cuda_cpu_translate.py"]
        inputs += sorted(project_headers(common / "cuda_cpu.h", [common]))
        key = content_key(("program", cflags, link, EXIT_REPORT), inputs)
    stamp = folder / "built.json"
    with locked(folder / ".kp-lock"):
        with contextlib.suppress(OSError, ValueError):
            if json.loads(stamp.read_text()).get("key") == key and exe.exists():
                return exe
        if target == "cuda":
            code, log = _run(cmd)
        else:
            try:
                text = translate_tree(cu, includes, folder, check, display_path)  # its headers into folder/h/
            except UnsupportedConstruct as e:
                raise KernelBuildError(f"{e}\n{source_excerpt(e.file, e.line)}") from None
            source = folder / f"{cu.name}.cpp"
            write_if_changed(source, with_precompiled_header(text, kernel_cflags) + EXIT_REPORT)
            cxx = os.environ.get("CXX", "c++")
            code, log = _run([cxx, *cflags, "-c", str(source), "-o", str(folder / "program.o")])
            if code == 0:
                code, log = _run([cxx, str(folder / "program.o"), *link, "-o", str(exe)])
        if code:
            raise KernelBuildError.from_log(log, [cu])
        stamp.write_text(json.dumps({"key": key}))
    return exe


def run_program(path, args=(), target=None, check=False, timeout=60, stdin=None):
    """Build the standalone program at `path` (a `.cu` with a `main()`) and run it with `args` in a child process;
    return a ProgramRun (a notebook shows it). `target`: "cpu" (the stand-in) or "cuda" (nvcc, a GPU); default the
    machine's. `check=True`: check mode on the stand-in (out-of-bounds accesses, races and divergent barriers at
    their `.cu` lines); on a GPU, compute-sanitizer's memcheck. `timeout` seconds, then the program is killed."""
    cu = Path(path).resolve()
    target = target or ("cpu" if check else default_target())
    exe = build_program(cu, target, check)
    cmd = [str(exe), *map(str, args)]
    if target == "cuda" and check:
        cmd = ["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "99", *cmd]
    report = exe.parent / f"report-{os.getpid()}.txt"
    with contextlib.suppress(OSError):
        report.unlink()
    env = {**os.environ, REPORT_ENV: str(report)}
    start, timed_out = time.perf_counter(), False
    # A process group of its own: a timeout kills the program and any child it made.
    child = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True
    )
    try:
        out, err = child.communicate(stdin.encode() if isinstance(stdin, str) else stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
    seconds = time.perf_counter() - start
    text = ""
    with contextlib.suppress(OSError):
        text = report.read_text(errors="replace")
        report.unlink()
    failure = "".join(line[7:] for line in text.splitlines(keepends=True) if line.startswith("launch\t")).strip()
    return ProgramRun(
        cu,
        target,
        check,
        list(map(str, args)),
        out.decode(errors="replace"),
        err.decode(errors="replace"),
        None if timed_out else child.returncode,
        seconds,
        timed_out,
        _located(failure) if failure else "",
        parse_report(text, cu),
    )


def run_cell(line, cell):
    """`%%cuda [--check] [--target cpu|cuda] [--timeout S] [args...]`: the cell is a program; build and run it."""
    words, options = line.split(), {"check": False, "target": None, "timeout": 60}
    args = []
    while words:
        word = words.pop(0)
        if word == "--check":
            options["check"] = True
        elif word in ("--target", "--timeout") and words:
            options[word[2:]] = words.pop(0) if word == "--target" else float(words.pop(0))
        else:
            args.append(word)
    digest = hashlib.sha256(cell.encode()).hexdigest()[:12]
    path = CELLS / f"cell_{digest}.cu"
    CELLS.mkdir(parents=True, exist_ok=True)
    write_if_changed(path, cell)
    return run_program(path, args, **options)


def install_cuda_magic():
    """Register `%%cuda` in the running IPython (a no-op elsewhere), as nvcc4jupyter's cell magic is used."""
    with contextlib.suppress(ImportError):
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            shell.register_magic_function(run_cell, magic_kind="cell", magic_name="cuda")
