"""Table: rows of dicts with the same keys, shown as a markdown table (in Jupyter too).

Formats numbers to 3 significant digits; never computes what it shows.
"""


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
