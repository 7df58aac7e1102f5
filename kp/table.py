"""Table: rows of dicts with the same keys, shown as a markdown table (in Jupyter too) or an HTML one.

Formats numbers to 3 significant digits; a value in backticks is code (in HTML, <code>, escaped); never
computes what it shows.
"""

import html
import re


class Table:
    """Rows of dicts with the same keys: shown as a markdown table in Jupyter, `.markdown()` elsewhere."""

    def __init__(self, rows, title=""):
        self.rows, self.title = list(rows), title

    def markdown(self):
        if not self.rows:
            return f"{self.title}\n\n(no rows)" if self.title else "(no rows)"
        columns = list(self.rows[0])
        lines = [f"| {' | '.join(columns)} |", "|" + "---|" * len(columns)]
        lines += [f"| {' | '.join(_cell(r[c]) for c in columns)} |" for r in self.rows]
        return (f"{self.title}\n\n" if self.title else "") + "\n".join(lines)

    _repr_markdown_ = markdown

    def html(self, row_class=lambda row: ""):
        """The rows as an HTML <table>, its title a heading; `row_class(row)` names a CSS class for a row."""
        if not self.rows:
            return f"<p>{html.escape(self.title)}: (no rows)</p>"
        columns = list(self.rows[0])
        head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
        body = "".join(
            f"<tr class='{row_class(r)}'>" + "".join(f"<td>{_html_cell(r[c])}</td>" for c in columns) + "</tr>"
            for r in self.rows
        )
        title = f"<h3>{html.escape(self.title)}</h3>" if self.title else ""
        return f"{title}<table><tr>{head}</tr>{body}</table>"

    def __str__(self):
        return self.markdown()

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def _cell(value):
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def _html_cell(value):
    text = html.escape(_cell(value))
    return re.sub(r"`([^`]*)`", r"<code>\1</code>", text)
