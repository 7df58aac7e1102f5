"""A profile shown as Nsight Compute's source view would show it: the kernel's `.cu` lines with the GPU model's
figures beside them (requests, sectors or wavefronts per request against the ideal, active lanes), the worst
lines highlighted, the advice in plain words on top, labelled as a model. HTML for Jupyter; takes the records of
kp.gpumodel.profile (duck-typed: `.lines`, `.advice()`, and `.branches` where there are any). Also the SASS nvcc made of
one line as a Table (sass_listing, for Profile.sass) and what the SASS says in words (instruction_advice, for
Profile.advice). Never counts or runs anything.

Laid out to fit Lab's output area (~850 px at 1280x800 with the file browser open): the figures first, as a
profiler's annotated listing puts them, then the source, its continuation lines indented one step from their
statement (not aligned under a parenthesis far to the right) and long lines wrapped at CODE_WIDTH characters.
"""

import html
import re
from collections import defaultdict

from kp.files import ROOT
from kp.table import Table

STYLE = (
    "<style>.kp-src td{font-family:monospace;padding:0 6px;white-space:pre;text-align:right}"
    ".kp-src td.code{text-align:left}.kp-src tr.bad{background:#fde2e1}.kp-src tr.warn{background:#fff4cc}"
    ".kp-src th{text-align:right;padding:0 6px;white-space:normal;vertical-align:bottom}</style>"
)
CONTEXT = 2  # source lines shown around the counted ones
# A row in characters of Lab's 13 px monospace (7.8 px each: 109 in 850 px): the figures take at most ~45 with their
# padding (a cell's 12 px is ~1.5 characters), which leaves the source this many, and a margin (kp.table.html_chars).
CODE_WIDTH = 50
HEADERS = ("line", "access", "requests", "per request (ideal)", "lanes", "source")
LEGEND = (
    "per request: 32-byte sectors (global memory) or wavefronts (shared memory) a warp's request moves, the least "
    "that would do in brackets; lanes: the active lanes of 32 per request; a branch's line gives its warp executions "
    "and how many of them diverged"
)
# A line continues the statement before it when that one left a bracket open or ended on an operator, or when it
# starts with one (`<<<` of a launch, `?`, `:` of a conditional, `&&`, ...).
_OPEN_END = re.compile(r"(,|\(|\[|=|\+|-|\*|/|%|&&|\|\||\?|<<)$")
_OPERATOR_START = re.compile(r"^(<<<|\?|:(?!:)|\+|-(?!-)|\*|/(?!/)|&&|\|\||\.|->)")


def _severity(line):
    if not hasattr(line, "space"):  # a Branch
        return "warn" if line.divergent else ""
    if (line.space == "shared" and line.worst >= 4) or (line.space == "global" and line.excess >= 4):
        return "bad"
    if line.excess >= 1.5 or (line.space == "shared" and line.worst >= 2) or line.active_lanes < 31.5:
        return "warn"
    return ""


def _figures(line):
    """(access, requests, per request (ideal), lanes): the columns after the line number."""
    if not hasattr(line, "space"):  # a Branch
        return ("branch", f"{line.executions:,}", f"{line.divergent:,} diverged", f"{line.active_lanes:.3g}")
    ideal = line.ideal / line.requests if line.requests else 0
    return (
        f"{line.space} {line.kind}",
        f"{line.requests:,}",
        f"{line.per_request:.3g} ({ideal:.3g})",
        f"{line.active_lanes:.3g}",
    )


def shown_source(source):
    """Each line of `source` as the view shows it: a continuation line indented one step (4 spaces) from the line
    that began its statement, whatever its own indentation; the other lines as they are."""
    shown, start, depth, continues = [], 0, 0, False
    for text in source:
        stripped = text.strip()
        code = re.sub(r"//.*", "", stripped).rstrip()
        if stripped and (continues or depth > 0 or _OPERATOR_START.match(code)) and not stripped.startswith("#"):
            shown.append(" " * (start + 4) + stripped)
        else:
            shown.append(text.rstrip())
            if stripped:
                start, depth = len(text) - len(text.lstrip()), 0
        if code:
            depth = max(0, depth + code.count("(") - code.count(")") + code.count("[") - code.count("]"))
            continues = bool(_OPEN_END.search(code)) and not code.startswith("#")
    return shown


def wrap_code(text, width=CODE_WIDTH):
    """`text` in lines of at most `width` characters, broken at a space where there is one; the later lines
    indented 4 more than the first."""
    indent = " " * (len(text) - len(text.lstrip()) + 4)
    lines = []
    while len(text) > width:
        cut = text.rfind(" ", len(indent), width + 1)
        cut = cut if cut > len(text) - len(text.lstrip()) else width
        lines.append(text[:cut].rstrip())
        text = indent + text[cut:].lstrip()
    return lines + [text]


def profile_html(profile):
    """The source view of a profile: per `.cu` file, its counted lines and a few around them."""
    by_file = defaultdict(lambda: defaultdict(list))
    for ln in [*profile.lines, *getattr(profile, "branches", ())]:
        by_file[ln.file][ln.line].append(ln)
    parts = [
        STYLE,
        "<p><b>GPU model</b> (counted on the CPU stand-in with Nsight Compute's rules; a model, not a measurement)</p>",
    ]
    advice = profile.advice()
    if advice:
        parts.append("<ul>" + "".join(f"<li>{html.escape(a)}</li>" for a in advice) + "</ul>")
    for file, counted in by_file.items():
        path = ROOT / file if not file.startswith("/") else file
        try:
            source = shown_source(path.read_text().splitlines())
        except OSError:
            source = []
        shown = sorted({n for c in counted for n in range(c - CONTEXT, c + CONTEXT + 1) if 1 <= n <= len(source)})
        rows = []
        previous = None
        for n in shown:
            if previous is not None and n != previous + 1:
                rows.append("<tr><td></td><td></td><td></td><td></td><td></td><td class='code'>...</td></tr>")
            previous = n
            code = html.escape("\n".join(wrap_code(source[n - 1])))
            records = counted.get(n) or [None]
            for k, ln in enumerate(records):
                figures = _figures(ln) if ln else ("", "", "", "")
                cls = _severity(ln) if ln else ""
                cells = "".join(f"<td>{html.escape(f)}</td>" for f in figures)
                rows.append(
                    f"<tr class='{cls}'><td>{n if k == 0 else ''}</td>{cells}"
                    f"<td class='code'>{code if k == 0 else ''}</td></tr>"
                )
        head = "<tr>" + "".join(f"<th>{h}</th>" for h in HEADERS) + "</tr>"
        parts.append(f"<p><code>{html.escape(file)}</code></p><table class='kp-src'>{head}{''.join(rows)}</table>")
    parts.append(f"<p><small>{html.escape(LEGEND)}</small></p>")
    return "".join(parts)


def sass_listing(rows, line, arch, said, runs):
    """What nvcc made of one `.cu` line, as a Table: its SASS instructions ((kernel, kp.gpumodel.sass.Instruction)
    pairs) in address order, with their class and, for a memory instruction, its space, kind and bytes per lane; the
    title says what they show (vectorised, unrolled, spilled) and how often a warp ran them where the trace says
    (`runs`: {(kernel, line): warp-level executions})."""
    table = [
        {
            "kernel": kernel,
            "address": f"{i.offset:04x}",
            "SASS": i.text,
            "class": i.cls,
            "access": f"{i.space} {i.kind}, {i.width} bytes per lane" if i.space else "",
        }
        for kernel, i in rows
    ]
    ran = "; ".join(f"{kernel}: {n:,.0f} warp executions" for (kernel, _), n in runs.items())
    words = "; ".join(said) if said else ("no SASS at this line" if not rows else "scalar accesses, not unrolled")
    return Table(table, f"SASS nvcc made of line {line} for {arch}: {words}" + (f" ({ran})" if ran else ""))


def instruction_advice(instructions, local, hotspot=True):
    """What the SASS says, in plain words, for Profile.advice: the lines whose SASS spills registers to local memory
    (`local`: their LDL/STL), and with `hotspot` the line that issues the most instructions (of
    kp.gpumodel.sass.Instructions; Profile.advice asks for it beside other advice only: where the GPU spends its
    instructions is no fault by itself)."""
    said = []
    if instructions and hotspot:
        top = max(instructions, key=lambda i: i.total)
        classes = ", ".join(f"{n:,.0f} {cls}" for cls, n in sorted(top.executed, key=lambda x: -x[1]))
        said.append(
            f"the GPU runs the most instructions at {top.file}:{top.line}: {top.total:,.0f} warp instructions "
            f"({classes}) of the {sum(i.total for i in instructions):,.0f} counted"
        )
    spills = defaultdict(list)
    for i in local:
        spills[(i.file, i.line)].append(i.opcode)
    for (file, line), ops in sorted(spills.items()):
        said.append(
            f"registers spilled at {file}:{line}: nvcc's SASS moves values to local memory there ({', '.join(ops)}), "
            "memory traffic the source does not show"
        )
    return said
