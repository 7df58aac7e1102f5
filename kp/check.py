"""Check mode: what the CPU stand-in's checked builds found, as Python errors and warnings at the `.cu` line.

`load_kernel(name, check=True)` (or KP_CHECK=1 in the environment) builds a kernel file in check mode
(kp.build): every memory access of its kernels goes through the runtime's checks
(kernels/common/cuda_cpu_check.h). After each op call of such a build, `raise_findings` takes the
runtime's report: errors (out-of-bounds accesses, shared-memory races, divergent barriers) raise a
KernelCheckError; uninitialised shared-memory reads are a KernelCheckWarning. A race between iterations of a loop
is named as such (kp.checksource reads the loop), one finding per pair of lines; threads that exited before a
barrier are a finding only when the barrier is under an `if` they skipped. `last_write` says which block, thread
and line last wrote an element of a tensor (check_against_reference uses it).
"""

import contextlib
import ctypes
import functools
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from kp.checksource import loop_carried, under_if
from kp.diagnostics import code_line, source_excerpt
from kp.files import COMMON, KERNELS, ROOT
from kp.standin import blank_comments_and_strings, project_headers

ENV = "KP_CHECK"  # KP_CHECK=1: every load_kernel of the process builds in check mode unless told otherwise

KINDS = {
    "global-bounds": "out-of-bounds global access",
    "shared-bounds": "out-of-bounds shared access",
    "local-bounds": "out-of-bounds local-array access",
    "race": "shared-memory race",
    "global-race": "global-memory race",
    "barrier": "divergent barrier",
    "uninitialized": "uninitialised shared read",
}


def check_from_env():
    """True when KP_CHECK asks for check mode (1, true, yes, on)."""
    return os.environ.get(ENV, "").strip().lower() in {"1", "true", "yes", "on"}


class KernelCheckError(RuntimeError):
    """Check mode found bugs in a kernel: `findings` (a list of Finding), the first ones of one op call."""

    def __init__(self, message, findings):
        super().__init__(message)
        self.findings = findings


class KernelCheckWarning(UserWarning):
    """Check mode found something suspicious that is not always a bug (a read of uninitialised shared memory)."""


@dataclass
class Finding:
    """One thing check mode found. `file`/`line`: where (the `.cu` line); `other_line`: the other access of a race."""

    severity: str  # "error" or "warning"
    kind: str  # a key of KINDS
    kernel: str
    block: tuple
    thread: tuple
    file: str | None
    line: int | None
    other_thread: tuple | None
    other_file: str | None
    other_line: int | None
    message: str

    def __str__(self):
        return self.message


def _triple(text):
    return tuple(int(v) for v in re.findall(r"\d+", text)) if text else None


@functools.lru_cache(maxsize=64)
def _kernel_file(source, kernel):
    """The file that defines `kernel` (`k<T, 4>`): `source`, or a header it includes (translated like it, so a kernel
    may live there); `source` where none does."""
    defines = re.compile(rf"__global__[^;{{}}]*?\b{re.escape(kernel.split('<', 1)[0].strip())}\s*\(")
    for path in [Path(source), *sorted(project_headers(source, [Path(source).parent, COMMON, KERNELS]))]:
        with contextlib.suppress(OSError):
            if defines.search(blank_comments_and_strings(path.read_text())):
                return str(path)
    return str(source)


def _location(field, source, kernel=""):
    """(file, line) of a report's location field: `library+0xOFFSET` (addr2line), `file.cu:LINE` or `@LINE` (a
    barrier's: the line alone) of the file that defines `kernel`: `source` or a header it includes."""
    if not field:
        return None, None
    if m := re.fullmatch(r"@(\d+)", field):
        if not source:
            return None, int(m[1])
        return (_kernel_file(str(source), kernel) if kernel else str(source)), int(m[1])
    if m := re.fullmatch(r"(\S+\.cuh?):(\d+)", field):  # named by the compiler's own check (object-size)
        return m[1], int(m[2])
    if m := re.fullmatch(r"(/\S+?)\+0x([0-9a-f]+)", field):  # a kernel library, or a program (kp.program)
        found = code_line(m[1], m[2])
        if found:
            file, line = found.rsplit(":", 1)
            return file, int(line)
    return None, None


def _shown(file):
    """`kernels/x.cu` for a file of the project, else the path as it is."""
    return file.replace(f"{ROOT}{os.sep}", "") if file else file


def _name_loop_carried(finding):
    """A race whose lines a barrier separates within a loop's body: said to be between iterations (kp.check)."""
    lines = (finding.line, finding.other_line)
    if finding.kind != "race" or None in lines or finding.file != finding.other_file:
        return
    low, high = sorted(lines)
    found = loop_carried(finding.file, low, high)
    if not found:
        return
    loop, barriers = found
    at = rf"at {re.escape(finding.file)}:{low}(?!\d)"
    text = re.sub(at, lambda m: f"{m[0]} in the next iteration of the loop at line {loop}", finding.message, count=1)
    ones = (
        f"the one at line {barriers[0]} separates"
        if len(barriers) == 1
        else f"those at lines {', '.join(map(str, barriers))} separate"
    )
    text = re.sub(
        r", with no __syncthreads\(\).*$",
        f", with no __syncthreads() between the two: {ones} them only within an iteration; one at the end of the loop "
        f"body (after line {high}) would separate them",
        text,
    )
    finding.message = text.replace("shared-memory race: shared-memory race", "shared-memory race: loop-carried race", 1)


def _judge_exited(finding):
    """A barrier that threads exited without reaching (a note of the runtime): an error when it is under an `if`
    that they skipped, else nothing (since Volta, a barrier waits for the threads that have not exited)."""
    branch = under_if(finding.file, finding.line)
    if branch is None:
        return None
    finding.severity, finding.kind = "error", "barrier"
    finding.message = finding.message.replace("barrier-exited: ", f"{KINDS['barrier']}: ", 1) + (
        f"; it is under the `if` at line {branch}, which they skipped: keep a __syncthreads() outside any `if` whose "
        "condition differs between the threads of a block (threads that exit before a barrier do not count since "
        "Volta; threads that skip it do)"
    )
    return finding


def parse_report(report, source=None):
    """The runtime's report (tab-separated lines, cuda_cpu_check.h) as Findings, with `.cu` lines; one per race
    between the same two lines (whichever came first), a race between iterations of a loop named as such."""
    findings, pairs = [], set()
    for row in report.splitlines():
        fields = row.split("\t")
        if len(fields) != 9:
            continue
        severity, kind, kernel, block, thread, here, there, other, text = fields
        file, line = _location(here, source, kernel)
        other_file, other_line = _location(there, source, kernel)
        text = text.replace("{here}", f"at {_shown(file)}:{line}" if line else "")
        text = text.replace("{there}", f"at {_shown(other_file)}:{other_line}" if other_line else "")
        text = re.sub(r" +([,;:])", r"\1", text)
        findings.append(
            Finding(
                severity,
                kind,
                kernel,
                _triple(block),
                _triple(thread),
                _shown(file),
                line,
                _triple(other),
                _shown(other_file),
                other_line,
                f"{KINDS.get(kind, kind)}: {text}",
            )
        )
        f = findings[-1]
        if kind == "barrier-exited" and not _judge_exited(f):
            findings.pop()
            continue
        pair = frozenset([(f.file, f.line), (f.other_file, f.other_line)]) if kind == "race" and line else None
        if pair and pair in pairs:
            findings.pop()
            continue
        pairs.add(pair)
        _name_loop_carried(f)
    return findings


def _excerpt(file, line, symbol):
    """The source line, with a caret under the first `symbol[` (or `symbol(`) on it, if any."""
    path = Path(ROOT, file) if not os.path.isabs(file) else Path(file)
    col = None
    with contextlib.suppress(OSError, IndexError):
        text = path.read_text().splitlines()[line - 1]
        if symbol and (m := re.search(rf"\b{re.escape(symbol)}\s*[\[(]", text)):
            col = m.start() + 1
    return source_excerpt(path, line, col)


def describe(findings):
    """The findings as people read them: each with its `.cu` line(s) shown, a caret under what it is about."""
    parts = []
    for f in findings:
        text = f.message
        named = re.search(r"'(\w+)", f.message) if f.kind != "barrier" else re.search(r"\b(__\w+)\(", f.message)
        for file, line in dict.fromkeys([(f.file, f.line), (f.other_file, f.other_line)]):
            if file and line:
                excerpt = _excerpt(file, line, named[1] if named else None)
                if excerpt:
                    text += f"\n  {file}:{line}:\n" + "\n".join(f"  {ln}" for ln in excerpt.splitlines())
        parts.append(text)
    return "\n".join(parts)


def _runtime():
    from kp.build import cpu_runtime  # the stand-in's runtime: loaded by any check build's load

    lib = cpu_runtime()
    lib.kp_check_take_report.restype = ctypes.c_char_p
    return lib


def take_findings(source=None):
    """The findings of this thread's check launches since the last call (and forget them)."""
    return parse_report((_runtime().kp_check_take_report() or b"").decode(errors="replace"), source)


def raise_findings(op, source, failure=None):
    """After a call of op `op` of a check build of `source`: raise KernelCheckError for its errors, warn for its
    warnings. `failure`: the RuntimeError the call raised, if it did (kept as the cause)."""
    findings = take_findings(source)
    errors = [f for f in findings if f.severity == "error"]
    for w in (f for f in findings if f.severity == "warning"):
        warnings.warn(KernelCheckWarning(describe([w])), stacklevel=3)
    if errors:
        count = f"{len(errors)} problem{'s' if len(errors) > 1 else ''}"
        kernels = ", ".join(dict.fromkeys(f"'{f.kernel}'" for f in errors))
        error = KernelCheckError(f"{op}: check mode found {count} in kernel {kernels}:\n{describe(errors)}", errors)
        error.kp_op = op
        raise error from failure


def last_write(tensor, index):
    """Who last wrote `tensor`'s element at `index` (a tuple, or a flat index of a contiguous tensor) in a launch
    of a check build: "kernel 'k' block (x,y,z) thread (x,y,z), at kernels/x.cu:LINE", or None if no check
    launch wrote it (or the runtime is not loaded, or the tensor is not on the CPU)."""
    from kp import standin

    if standin._runtime is None or not torch.is_tensor(tensor) or tensor.device.type != "cpu":
        return None
    if isinstance(index, int):
        index = tuple(int(i) for i in torch.unravel_index(torch.tensor(index), tensor.shape))
    address = (
        tensor.data_ptr() + sum(i * s for i, s in zip(index, tensor.stride(), strict=True)) * tensor.element_size()
    )
    out = ctypes.create_string_buffer(1024)
    if not standin._runtime.kp_check_last_write(ctypes.c_void_p(address), out, len(out)):
        return None
    text = out.value.decode(errors="replace")
    if m := re.search(r" (/[^\s+]+)\+0x([0-9a-f]+)$", text):
        found = code_line(m[1], m[2])
        text = text[: m.start()] + (f", at {_shown(found)}" if found else "")
    return text
