"""Build errors that read like compiler errors about the `.cu` file: KernelBuildError from a build log, from
a library that does not load (load_failure) or from ops that do not register (registration_failure); and a
failed launch's message with the `.cu` lines it is about (explain_launch_failure).

Finds the first error about one of the sources (gcc's `file:line:col:`, nvcc's `file(line):`), else the
linker's own lines, and shows the source line with a caret. Never runs a compiler or displays anything.
"""

import contextlib
import ctypes
import html
import re
import shutil
import subprocess
import time
from pathlib import Path

from kp.files import display_path


def source_excerpt(path, line, col=None):
    """The offending source line with a caret under the column, compiler style."""
    with contextlib.suppress(OSError, IndexError):
        text = Path(path).read_text().splitlines()[line - 1]
        excerpt = f"{line:5d} | {text}"
        if col:
            excerpt += "\n      | " + "".join(c if c == "\t" else " " for c in text[: col - 1]) + "^"
        return excerpt
    return ""


GCC_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: (?P<msg>.*)$", re.M
)
NVCC_DIAGNOSTIC = re.compile(r"^(?P<file>[^\s(][^(\n]*)\((?P<line>\d+)\): (?:catastrophic )?error: (?P<msg>.*)$", re.M)


# What the linker says (ld, ld.gold, lld, mold, or gcc's collect2 for them), e.g.
# `/usr/bin/ld.gold: error: add2_binding.o: multiple definition of 'f()'`.
LINKER_LINE = re.compile(r"^(?:\S*/)?(?:ld(?:\.\w+)?|collect2|lld|ld64\.lld|mold): .*$", re.M)
LINK_LINES = 6  # of the linker's lines, in the message
LINK_NOISE = re.compile(r"$|collect2: error: ld returned|ninja: |\[\d+/\d+\] ")  # lines left out of it
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")  # colour and cursor codes (gcc's, ninja's)


def plain(text):
    """`text` without terminal colour codes: a compiler run from Jupyter may colour its output."""
    return ANSI.sub("", text)


# The stand-in's source step renames a host variable called as a CUDA built-in (kernels/common/cuda_cpu_translate.py:
# `dim3 gridDim` becomes kp_host_gridDim): the compiler's words about it name it as the user wrote it.
RENAMED_HOST_VARIABLE = re.compile(r"\bkp_host_(gridDim|blockDim|threadIdx|blockIdx)\b")


def as_written(message):
    """A compiler's message about a translated kernel file, with the names the user wrote."""
    return RENAMED_HOST_VARIABLE.sub(r"\1", message)


class KernelBuildError(RuntimeError):
    """A kernel did not build. `str(err)` starts with `file:line:col: error: ...`; `err.log` has it all.
    `err.located`: a compiler's diagnostic named the line (else a link, a tool or the loader failed)."""

    def __init__(self, message, log="", log_path=None, located=False):
        self.log, self.log_path, self.located = plain(log), log_path, located
        if log_path:
            message += f"\n(full build log: the .log attribute of this error, or {display_path(log_path)})"
        super().__init__(message)

    @classmethod
    def from_log(cls, log, sources, log_path=None):
        """The first error about one of `sources` (else the first error), shown with its source line."""
        log = plain(log)
        found = [m for regex in (GCC_DIAGNOSTIC, NVCC_DIAGNOSTIC) for m in regex.finditer(log)]
        found.sort(key=lambda m: m.start())
        ours = [m for m in found if Path(m["file"]).resolve() in {Path(s).resolve() for s in sources}]
        if ours or found:
            m = (ours or found)[0]
            line, col = int(m["line"]), int(m["col"]) if m.groupdict().get("col") else None
            where = f"{display_path(m['file'])}:{line}:" + (f"{col}:" if col else "")
            excerpt = source_excerpt(m["file"], line, col)
            message = f"{where} error: {as_written(m['msg'])}" + (f"\n{excerpt}" if excerpt else "")
        elif first := LINKER_LINE.search(log):  # its lines from there (bfd's second line has no "ld:" prefix)
            links = [ln.strip() for ln in log[first.start() :].splitlines() if not LINK_NOISE.match(ln.strip())]
            message = f"the link failed: {links[0]}" + "".join(f"\n  {ln}" for ln in links[1:LINK_LINES])
        else:
            errors = [ln.strip() for ln in log.splitlines() if "error" in ln.lower()]
            message = errors[0] if errors else "the build failed (see the log)"
        return cls(message, log, log_path, located=bool(found))

    def _render_html(self):
        """The full build log, collapsed: what a notebook shows under the error (whose text is str(self)); ""
        for an error that has no log (a library that does not load, ops that do not register)."""
        if not self.log.strip():
            return ""
        return (
            f"<details><summary>full build log ({len(self.log.splitlines())} lines)</summary>"
            f"<pre>{html.escape(self.log)}</pre></details>"
        )


LAST_ERROR = "last_error.log"  # in a kernel's build folder: the log of its last failed build, which errors name


def log_success(build):
    """`build` (a kp.build.Build), after its folder's last_error.log, where a build failed before, says that this one
    found no error and what it did: the log open in Lab's editor tells the truth when reloaded."""
    log = build.library.parent / LAST_ERROR
    if log.exists():
        at = time.strftime("%Y-%m-%d %H:%M:%S")
        log.write_text(f"No error at {at}: {build.describe()}\n(A build that fails writes its log here.)\n")
    return build


def build_failure(log, library, cu, binding):
    """The KernelBuildError of a build of `cu` and `binding` into `library` that failed with `log` (torch's text),
    which goes to last_error.log beside the library; a library built but refused by the dynamic loader: load_failure."""
    if "Could not load this library" in log and Path(library).exists():
        try:
            ctypes.CDLL(str(library))  # for the loader's own words (a failed dlopen keeps nothing)
        except OSError as refused:
            return log_failure(Path(library).parent, load_failure(str(refused), library, cu, binding))
    log_path = Path(library).parent / LAST_ERROR
    log_path.write_text(log)
    return KernelBuildError.from_log(log, [cu, binding], log_path)


def log_failure(folder, error):
    """`error` (a KernelBuildError raised after the build: the library does not load, its ops do not register),
    with its log, written to the build folder's last_error.log; returns it."""
    (Path(folder) / LAST_ERROR).write_text(f"{error}\n\n{error.log}".rstrip() + "\n")
    return error


UNDEFINED_SYMBOL = re.compile(r"undefined symbol: (\S+)")


def load_failure(error, library, cu, binding):
    """A KernelBuildError for a built library that the dynamic loader refused (`error`, its OSError's text).
    The usual cause: the binding calls a launcher the `.cu` file does not define (its explicit instantiation,
    `template void add2_fwd<double>(...);`, missing or spelt differently), which links, as a shared library may
    have undefined symbols, and fails only here; said with the launcher's C++ name."""
    if m := UNDEFINED_SYMBOL.search(error):
        return KernelBuildError(
            f"{display_path(cu)} does not define {demangle(m[1])}, which {display_path(binding)} calls: is its "
            "explicit instantiation (`template void ...;`) missing, or spelt differently?",
            log=error,
        )
    return KernelBuildError(f"{display_path(library)} was built but does not load: {error}", log=error)


# torch's words for a schema it cannot parse: the message, the schema, a marker under the offending part.
SCHEMA_ERROR = re.compile(r"^(?P<msg>[^\n]*)\n(?P<schema>[^\n]*)\n(?P<marker> *~+) <--- HERE")
SHIM_SUFFIX = re.compile(r"\s*\(originally from \w+\(.*?\) API call failed at .*?\)\s*$", re.S)


def registration_failure(error, binding):
    """A KernelBuildError for ops the binding's `KP_OPS` failed to register (`error`, torch's text): a schema torch
    cannot parse is said at the binding's line, with a caret under the part torch marks; else torch's message."""
    error = SHIM_SUFFIX.sub("", error).strip("\n")
    with contextlib.suppress(OSError, StopIteration, TypeError):
        m = SCHEMA_ERROR.match(error)
        lines = Path(binding).read_text().splitlines()
        line, text = next((n, text) for n, text in enumerate(lines, 1) if m["schema"] in text)
        col = text.index(m["schema"]) + len(m["marker"]) - len(m["marker"].lstrip()) + 1
        return KernelBuildError(
            f"{display_path(binding)}:{line}:{col}: error: torch refused this schema: {m['msg'].rstrip(' :')}\n"
            f"{source_excerpt(binding, line, col)}\n(fix the schema in the binding and load again)"
        )
    return KernelBuildError(f"{display_path(binding)}: registering its ops failed: {error}\n(edit it and load again)")


def demangle(symbol):
    """The C++ name of a mangled symbol (binutils' c++filt), or the symbol itself."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["c++filt", symbol], capture_output=True, text=True, timeout=10).stdout.strip()
        if out:
            return out
    return symbol


# KP_CHECK_LAUNCH's message (kernels/common/kp.cuh), and where the stand-in saw a kernel fault: a code
# address in a kernel library, or a .cu line (device assert, __trap).
LAUNCH_FAILED = re.compile(r"^(?P<file>[^:\n]+\.cu):(?P<line>\d+): kernel launch failed")
FAULT_ADDRESS = re.compile(r", at (?P<library>/[^\s+]+)\+0x(?P<offset>[0-9a-f]+)")  # a kernel library or a program
FAULT_LINE = re.compile(r", at (?P<file>[^\s,]+\.cu):(?P<line>\d+)")


def explain_launch_failure(message):
    """A failed launch's message with what the `.cu` file says about it: where the CPU stand-in saw a fault,
    its code address as the `.cu` line (the stand-in builds with line tables) and that line shown; otherwise
    the `kernel<<<...>>>` launch above the check, configuration included (CUDA's own message on a GPU names
    neither the kernel nor the configuration). Any other message comes back as it is."""
    failed = LAUNCH_FAILED.match(message)
    if not failed:
        return message
    if address := FAULT_ADDRESS.search(message):  # a library's offset means nothing to the reader: the line or none
        line = code_line(address["library"], address["offset"])
        message = message[: address.start()] + (f", at {line}" if line else "") + message[address.end() :]
    if fault := FAULT_LINE.search(message):
        excerpt = source_excerpt(fault["file"], int(fault["line"]))
    else:
        excerpt = launch_statement(failed["file"], int(failed["line"]))
    return message + (f"\n{excerpt}" if excerpt else "")


def code_line(library, offset):
    """`file.cu:LINE` of the code at `offset` (hex) in `library`, innermost inlined function first, by
    binutils' addr2line; None without it, or without line tables."""
    return code_lines(library, [offset]).get(offset)


def _original(path):
    """The `.cu` file (or header) a stand-in build's translation (<build>/src/x.cu.cpp, src/h/*/x.cuh.cpp) was made
    from, named by its `#line 1`: g++'s line tables give some of its code the translation's name with its lines."""
    if not re.search(r"\.cuh?\.cpp$", path):
        return path
    with contextlib.suppress(OSError, StopIteration):
        with open(path) as f:
            header = next((line for line in f if line.startswith("#line 1 ")), "")
        if m := re.match(r'#line 1 "(.+)"', header):
            return m[1]
    return path


def code_lines(library, offsets):
    """{offset: `file.cu:LINE`} for the code at each offset (hex) in `library`, by one run of addr2line (the
    innermost inlined function's line in a `.cu` file, else in a `.cuh` header it includes); offsets it cannot place
    are left out."""
    found = {}
    if shutil.which("addr2line") is None or not offsets:
        return found
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(
            ["addr2line", "-a", "-i", "-e", library, *(f"0x{o}" for o in offsets)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        at, headers = None, {}
        for text in out.stdout.splitlines():
            if re.fullmatch(r"0x[0-9a-f]+", text):
                at = text  # the address addr2line answers for, then its lines, innermost first
                continue
            if at and at not in found and (m := re.match(r"(\S+\.cuh?)(\.cpp)?:(\d+)", text)):
                place = f"{_original(m[1] + (m[2] or ''))}:{m[3]}"
                if m[1].endswith(".cu"):
                    found[at] = place  # the kernel file's line (of the call, for code inlined from a header)
                else:
                    headers.setdefault(at, place)  # a header's line, where no kernel file's line comes
        found = {**headers, **found}
        by_value = {int(o, 16): o for o in offsets}
        return {by_value[int(k, 16)]: v for k, v in found.items() if int(k, 16) in by_value}
    return found


def launch_statement(path, check_line, reach=4):
    """The `kernel<<<...>>>(...)` statement that ends just above KP_CHECK_LAUNCH() at `check_line` of `path`,
    as numbered source lines from the kernel's name ('' if there is none within `reach` lines)."""
    with contextlib.suppress(OSError):
        lines = Path(path).read_text().splitlines()
        for start in range(check_line - 1, max(check_line - 1 - reach, 0), -1):
            if "<<<" in lines[start - 1]:
                while start > 1 and lines[start - 1].lstrip().startswith("<<<"):  # the kernel's name is above
                    start -= 1
                return "\n".join(f"{n:5d} | {lines[n - 1]}" for n in range(start, check_line))
    return ""
