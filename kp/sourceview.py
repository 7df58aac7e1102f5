"""A profile shown as Nsight Compute's source view would show it: the kernel's `.cu` lines with the GPU model's
figures beside them (requests, sectors or wavefronts per request against the ideal, active lanes), the worst
lines highlighted, the advice in plain words on top, labelled as a model. HTML for Jupyter; takes the records of
kp.gpumodel.profile (duck-typed: `.lines`, `.advice()`, and `.branches` where there are any). Also the SASS nvcc made of
one line as a Table (sass_listing, for Profile.sass), the counted lines as one (line_table, for Profile.table) and
what the lines and the SASS say in words (line_advice, instruction_advice, for Profile.advice). Never counts or runs
anything.

Laid out to fit Lab's output area (~850 px at 1280x800 with the file browser open): the figures first, as a
profiler's annotated listing puts them, then the source, its continuation lines indented one step from their
statement (not aligned under a parenthesis far to the right) and long lines wrapped at CODE_WIDTH characters.
"""

import html
import re
from collections import defaultdict

from kp.files import ROOT
from kp.table import Table

WARP = 32  # lanes a warp: kp.gpumodel.counts.WARP, which this floor does not import (tests/test_layout.py)

STYLE = (
    "<style>.kp-src td{font-family:monospace;padding:0 6px;white-space:pre;text-align:right}"
    ".kp-src td.code{text-align:left}.kp-src tr.bad{background:#fde2e1}.kp-src tr.warn{background:#fff4cc}"
    ".kp-src th{text-align:right;padding:0 6px;white-space:normal;vertical-align:bottom}</style>"
)
CONTEXT = 2  # source lines shown around the counted ones
DIVERGENT_SHARE = 0.05  # advice names a branch when at least this share of its warp executions diverge
# A row in characters of Lab's 13 px monospace (7.8 px each: 109 in 850 px): the figures take at most ~45 with their
# padding (a cell's 12 px is ~1.5 characters), which leaves the source this many, and a margin (kp.table.html_chars).
CODE_WIDTH = 50
HEADERS = ("line", "access", "requests", "per request (ideal)", "lanes", "source")
LEGEND = (
    "per request: 32-byte sectors (global memory) or wavefronts (shared memory) a warp's request moves, the least "
    "that would do in brackets; lanes: the active lanes of 32 per request; a branch's line gives its warp executions "
    "and how many of them diverged"
)
# What a line's `rereads` (kp.gpumodel.counts.Line) are, for the views that include them: this one, Profile.table
REREAD = (
    "re-read: requests (and their wavefronts) of narrower SASS instructions with which nvcc reads again what a line's "
    "widest ones read (siboehm's kernel 5 at sm_86: 8 scalar LDS beside 16 LDS.128, for the first FFMAs); the "
    "trace's accesses do not show them, the estimate charges them (kp.gpumodel.charges.reloaded)"
)
MARK = "†"  # after a line's requests where they include re-reads
# A line continues the statement before it when that one left a bracket open or ended on an operator, or when it
# starts with one (`<<<` of a launch, `?`, `:` of a conditional, `&&`, ...).
_OPEN_END = re.compile(r"(,|\(|\[|=|\+|-|\*|/|%|&&|\|\||\?|<<)$")
_OPERATOR_START = re.compile(r"^(<<<|\?|:(?!:)|\+|-(?!-)|\*|/(?!/)|&&|\|\||\.|->)")


def _severity(line):
    if not hasattr(line, "space"):  # a Branch
        return "warn" if line.divergent else ""
    if (line.space == "shared" and line.worst >= 4) or (line.space == "global" and line.excess >= 4):
        return "bad"
    if line.excess >= 1.5 or (line.space == "shared" and line.worst >= 2) or line.active_lanes < WARP - 0.5:
        return "warn"
    return ""


def _figures(line):
    """(access, requests, per request (ideal), lanes): the columns after the line number."""
    if not hasattr(line, "space"):  # a Branch
        return ("branch", f"{line.executions:,}", f"{line.divergent:,} diverged", f"{line.active_lanes:.3g}")
    ideal = line.ideal / line.requests if line.requests else 0
    return (
        f"{line.space} {line.kind}",
        f"{line.requests:,}{MARK if getattr(line, 'rereads', 0) else ''}",
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


def reread_note(line):
    """What the source view says under its file's listing of a line whose requests include re-reads: how many, and
    nvcc's instructions at the line (kp.gpumodel.counts.Line.sass)."""
    ops = getattr(line, "sass", ()) or ()
    made = ", ".join(f"{ops.count(op)} x {op}" for op in dict.fromkeys(ops))
    return (
        f"{MARK} line {line.line}: {line.rereads:,} of its {line.requests:,} {line.space} {line.kind} requests are "
        f"re-reads{f' (its SASS: {made})' if made else ''}"
    )


def profile_html(profile):
    """The source view of a profile: per `.cu` file, its counted lines and a few around them; under a file's listing,
    the lines whose requests include nvcc's re-reads (reread_note) and what those are (REREAD)."""
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
        rereads = [reread_note(ln) for n in sorted(counted) for ln in counted[n] if getattr(ln, "rereads", 0)]
        if rereads:
            parts.append(f"<p><small>{html.escape('; '.join(rereads))}. {html.escape(REREAD)}</small></p>")
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


def line_table(lines, branches, counted_as):
    """Profile.table: one row per counted line, the figures a learner reads first (where, what, how many requests and
    how much each moved against the ideal, active lanes), the kernel last, then one per line of branches; short
    enough to fit Lab's output area. The lines' figures are those the estimate charges: a line's requests that include
    nvcc's re-reads (Line.rereads) say how many ("3072 incl. 1024 re-read") and the title what they are (REREAD), the
    reason its count is above the trace's. `counted_as`: what the counts rest on, in words, for the title."""
    rows = [
        {
            "line": f"{ln.file.rsplit('/', 1)[-1]}:{ln.line}",
            "access": f"{ln.space} {ln.kind}",
            "requests": f"{ln.requests} incl. {ln.rereads} re-read" if ln.rereads else ln.requests,
            "per request (ideal)": f"{ln.per_request:.3g} ({ln.ideal / ln.requests:.3g})" if ln.requests else "",
            "unit": "sectors" if ln.space == "global" else "wavefronts",
            "lanes": f"{ln.active_lanes:.3g}",
            "kernel": ln.kernel,
        }
        for ln in lines
    ] + [
        {
            "line": f"{b.file.rsplit('/', 1)[-1]}:{b.line}",
            "access": "branch",
            "requests": b.executions,
            "per request (ideal)": f"{b.divergent} (0)",
            "unit": "diverged",
            "lanes": f"{b.active_lanes:.3g}",
            "kernel": b.kernel,
        }
        for b in branches
    ]
    title = "the GPU model's counters per line (a model, counted on the CPU stand-in; Nsight Compute's rules; "
    title += f"{counted_as})" + (f"; {REREAD}" if any(ln.rereads for ln in lines) else "")
    return Table(rows, title)


def line_advice(lines, branches):
    """What the counted lines and branches say, in plain words, for Profile.advice, worst first: bank conflicts and
    uncoalesced accesses (a line's units over its ideal, times its requests), divergent branches (not a bounds
    guard's ragged warp, which diverges at one lane: Branch.split), lanes left out mid-warp. A line's figures are
    those the estimate charges: where they include nvcc's re-reads (Line.rereads), the sentence says how many."""
    said = []
    for ln in sorted(lines, key=lambda ln: -ln.excess * ln.requests):
        where, verb = f"{ln.file}:{ln.line}", {"load": "read", "store": "write", "atomic": "update"}[ln.kind]
        reread = f", {ln.rereads} of its {ln.requests} requests nvcc's narrower re-reads" if ln.rereads else ""
        if ln.space == "shared" and ln.worst >= 2:
            said.append(
                f"a {ln.worst}-way bank conflict: {ln.worst_lanes} lanes {verb} bank {ln.worst_bank} at {where} "
                f"({ln.per_request:.3g} wavefronts per request where {ln.ideal / ln.requests:.3g} would do{reread})"
            )
        elif ln.space == "global" and ln.excess >= 1.5:
            said.append(
                f"uncoalesced {ln.kind}s at {where}: {ln.per_request:.3g} sectors per request where "
                f"{ln.ideal / ln.requests:.3g} would do: the lanes of a warp {verb} bytes that are not next to "
                "each other"
            )
    for b in sorted(branches, key=lambda b: -b.divergent):
        if b.divergent > b.split and b.divergent - b.split >= DIVERGENT_SHARE * b.executions:  # not a guard's
            said.append(
                f"a divergent branch at {b.file}:{b.line}: in {b.divergent} of its {b.executions} warp executions "
                "some lanes took it and some did not, and the warp ran both paths one after the other"
            )
    for ln in lines:  # lanes left out mid-warp; a warp's lanes 0..k-1 (the ragged end of `i < n`) are not
        if ln.active_lanes < WARP - 0.5 and ln.scattered >= DIVERGENT_SHARE * ln.requests:
            said.append(
                f"divergence at {ln.file}:{ln.line}: {ln.active_lanes:.3g} of 32 lanes active per {ln.space} "
                f"{ln.kind} on average"
            )
    return said


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
