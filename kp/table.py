"""Table: rows of dicts with the same keys, shown as an HTML table in Jupyter, `.markdown()` in text; and the one
number format of the project: `quantity(value, unit)` (2.97 TB/s, not 2.97e+03 GB/s; 5.73 ms, not 5.73e+03 µs),
`Quantity` a float that keeps its unit for a table cell.

Formats numbers to 3 significant digits, never in e-notation; a value in backticks is code (in HTML, <code>,
escaped); `width()` is the characters the table needs at the least in Lab, where cells wrap at spaces (the width
tests' measure). Never computes what it shows.
"""

import html
import re

# Each unit's family and its factor to the family's base unit, smallest first: quantity() picks the largest unit in
# which the value is at least 1.
UNITS = {
    "time": {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0},
    "bandwidth": {"B/s": 1.0, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12},
    "rate": {"FLOP/s": 1.0, "kFLOP/s": 1e3, "MFLOP/s": 1e6, "GFLOP/s": 1e9, "TFLOP/s": 1e12, "PFLOP/s": 1e15},
    "bytes": {"B": 1.0, "KiB": 1024.0, "MiB": 1024.0**2, "GiB": 1024.0**3},
}
FAMILY = {unit: family for family, units in UNITS.items() for unit in units}
# In Lab a cell's padding (0.5em each side at 13 px) is about 2 characters; the output area at 1280x800 with the file
# browser open is ~850 px: 109 characters of Lab's 13 px monospace (7.8 px each), ~120 of its sans-serif. WIDTH, the
# most html_chars() allows, leaves room for bold headers and wide glyphs.
CELL_PADDING, WIDTH = 2, 108
# A no-break space: a cell's words joined by it stay on one line in Lab (kp.gpumodel.estimates' terms). Python's
# str.split() splits at it; BREAKS, where a browser may wrap a line, does not.
NO_BREAK, BREAKS = "\u00a0", re.compile(r"[ \t\n\r\f\v]+")
# In an HTML cell a number keeps its unit (a UNITS one, or a rate like "blocks/SM"): Lab split notebook 07's "130
# GB/s" into "130" over "GB/s". Outside code spans only: a no-break space copied out of code (`x = 2 s;`) would not
# compile. And a code span's template arguments keep together, a break allowed only before them: it wrapped
# `linear_v7<T, BM, BN, BK, TM, TN>` over 3 lines at its commas. Their spaces stay spaces, in a span that does not
# wrap (NOWRAP), so that what is copied is the code. TEMPLATE (on escaped text) takes a name's arguments of words,
# spaces, commas, `::` and `*`, nested two deep, and no `&` or `(`: `a<b && c>d` is a comparison, not a template.
_UNIT_NAMES = "|".join(re.escape(unit) for unit in sorted(FAMILY, key=len, reverse=True))
UNIT = re.compile(rf"(?<=\d) (?=(?:{_UNIT_NAMES}|[A-Za-zµ]+/[A-Za-z]+)(?![\w/]))")
_ARGUMENTS = r"&lt;(?:[\w ,:*]|&lt;[\w ,:*]*&gt;)*&gt;"
TEMPLATE = re.compile(rf"(?<=\w)&lt;(?:[\w ,:*]|{_ARGUMENTS})*&gt;")
NOWRAP = '<span style="white-space:nowrap">'


def number(value):
    """A float to 3 significant digits, never in e-notation: 2935, 1.5, 0.0123, 0.000012."""
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if abs(value) >= 100:
        return f"{value:.0f}"
    if value == 0 or abs(value) >= 1e-4:
        return f"{value:.3g}"
    return f"{value:.{2 - _floor_log10(abs(value))}f}".rstrip("0")


def _floor_log10(x):
    exponent = 0
    while x < 1:
        x, exponent = x * 10, exponent - 1
    return exponent


def quantity(value, unit):
    """`value` in `unit`, in the unit of the same family that reads best: quantity(2970, "GB/s") = "2.97 TB/s",
    quantity(5730, "µs") = "5.73 ms", quantity(0.5, "µs") = "500 ns". A unit of no known family stays as it is."""
    family = FAMILY.get(unit)
    if family is None or value == 0 or value != value or abs(value) == float("inf"):
        return f"{number(value)} {unit}"
    base = value * UNITS[family][unit]
    units = list(UNITS[family].items())
    name, factor = units[0]
    for candidate, f in units:
        if abs(base) >= f * 0.9995:  # 999.6 GB/s reads 1 TB/s, as 3 digits round it
            name, factor = candidate, f
    return f"{number(base / factor)} {name}"


class Quantity(float):
    """A float with its unit: arithmetic sees the number, a Table cell shows `quantity(value, unit)`."""

    def __new__(cls, value, unit):
        self = super().__new__(cls, value)
        self.unit = unit
        return self

    def __str__(self):
        return quantity(float(self), self.unit)

    def __format__(self, spec):
        return str(self) if not spec else format(float(self), spec)


class Table:
    """Rows of dicts with the same keys: shown as an HTML table in Jupyter, `.markdown()` elsewhere."""

    def __init__(self, rows, title=""):
        self.rows, self.title = list(rows), title

    def columns(self):
        return list(self.rows[0]) if self.rows else []

    def markdown(self):
        if not self.rows:
            return f"{self.title}\n\n(no rows)" if self.title else "(no rows)"
        columns = self.columns()
        lines = [f"| {' | '.join(columns)} |", "|" + "---|" * len(columns)]
        lines += [f"| {' | '.join(_cell(r[c]) for c in columns)} |" for r in self.rows]
        return (f"{self.title}\n\n" if self.title else "") + "\n".join(lines)

    def html(self, row_class=lambda row: "", heading=True):
        """The rows as an HTML <table>, its title a heading (or, `heading=False`, a bold line: what Jupyter shows, so
        that a table's title does not enter the notebook's table of contents); `row_class(row)` names a row's CSS
        class."""
        if not self.rows:
            return f"<p>{html.escape(self.title)}: (no rows)</p>"
        columns = self.columns()
        head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
        body = "".join(
            f"<tr class='{row_class(r)}'>" + "".join(f"<td>{_html_cell(r[c])}</td>" for c in columns) + "</tr>"
            for r in self.rows
        )
        title = html.escape(self.title)
        title = (f"<h3>{title}</h3>" if heading else f"<p><b>{title}</b></p>") if self.title else ""
        return f"{title}<table><tr>{head}</tr>{body}</table>"

    def _repr_html_(self):
        return self.html(heading=False)

    def width(self):
        """The characters the table needs at the least where its cells wrap at spaces (Lab's tables do): per column
        the longest word of its header and cells as html() shows them (a number with its unit one word), plus the
        cell's padding. The title wraps; it does not count."""
        return html_chars(self.html())

    def __str__(self):
        return self.markdown()

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def html_chars(page):
    """The widest table of an HTML output, in characters, as Lab lays it out at its narrowest: a cell wraps at spaces
    (Lab's tables do), so per column its longest word, but a cell of a table whose class names `kp-src` (the source
    view, `white-space: pre`) its longest line; plus CELL_PADDING per cell. 0 without a table. The width tests'
    measure, without a browser."""
    widest = 0
    for attrs, body in re.findall(r"<table([^>]*)>(.*?)</table>", page, re.S):
        columns = {}
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S):
            for i, (kind, cell) in enumerate(re.findall(r"<t([dh])[^>]*>(.*?)</t[dh]>", row, re.S)):
                cell = cell.replace("<wbr>", " ")
                cell = re.sub(f"{re.escape(NOWRAP)}(.*?)</span>", lambda m: m[1].replace(" ", NO_BREAK), cell)
                text = html.unescape(re.sub(r"<[^>]+>", "", cell))  # <wbr>: it may break there; NOWRAP: not inside
                pieces = text.split("\n") if kind == "d" and "kp-src" in attrs else BREAKS.split(text)
                columns[i] = max(columns.get(i, 0), max((len(p) for p in pieces), default=0))
        widest = max(widest, sum(CELL_PADDING + w for w in columns.values()))
    return widest


def _cell(value):
    if isinstance(value, float):
        return str(value) if isinstance(value, Quantity) else number(value)
    return str(value)


def _html_cell(value):
    """The cell escaped; its code spans (the odd pieces between backticks) as <code>, a number and its unit joined
    outside them."""
    pieces = re.split(r"`([^`]*)`", html.escape(_cell(value)))
    return "".join(
        f"<code>{TEMPLATE.sub(_template, piece)}</code>" if i % 2 else UNIT.sub(NO_BREAK, piece)
        for i, piece in enumerate(pieces)
    )


def _template(m):  # a break before the arguments where they hold a space (Lab would wrap there), none inside
    return f"<wbr>{NOWRAP}{m[0]}</span>" if " " in m[0] else m[0]
