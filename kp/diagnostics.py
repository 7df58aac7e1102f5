"""Build errors that read like compiler errors about the `.cu` file: KernelBuildError from a build log.

Finds the first error about one of the sources (gcc's `file:line:col:`, nvcc's `file(line):`), else the
linker's own lines, and shows the source line with a caret. Never runs a compiler or displays anything.
"""

import contextlib
import html
import re
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


class KernelBuildError(RuntimeError):
    """A kernel did not build. `str(err)` starts with `file:line:col: error: ...`; `err.log` has it all."""

    def __init__(self, message, log="", log_path=None):
        self.log, self.log_path = plain(log), log_path
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
            message = f"{where} error: {m['msg']}" + (f"\n{excerpt}" if excerpt else "")
        elif first := LINKER_LINE.search(log):  # its lines from there (bfd's second line has no "ld:" prefix)
            links = [ln.strip() for ln in log[first.start() :].splitlines() if not LINK_NOISE.match(ln.strip())]
            message = f"the link failed: {links[0]}" + "".join(f"\n  {ln}" for ln in links[1:LINK_LINES])
        else:
            errors = [ln.strip() for ln in log.splitlines() if "error" in ln.lower()]
            message = errors[0] if errors else "the build failed (see the log)"
        return cls(message, log, log_path)

    def _render_html(self):
        """The full build log, collapsed: what a notebook shows under the error (whose text is str(self))."""
        return (
            f"<details><summary>full build log ({len(self.log.splitlines())} lines)</summary>"
            f"<pre>{html.escape(self.log)}</pre></details>"
        )
