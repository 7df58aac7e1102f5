"""kp.table: rows of dicts as one markdown table and one HTML table, numbers to 3 significant digits, code in
backticks shown as code and escaped."""

from kp.table import Table

ROWS = [{"kernel": "`add2<float>`", "ms": 0.012345, "GB/s": 2934.6}, {"kernel": "`add2<double>`", "ms": 1.5, "GB/s": 7}]


def test_markdown_has_a_header_a_rule_and_a_row_per_dict():
    assert Table(ROWS, "title").markdown().splitlines() == [
        "title",
        "",
        "| kernel | ms | GB/s |",
        "|---|---|---|",
        "| `add2<float>` | 0.0123 | 2935 |",
        "| `add2<double>` | 1.5 | 7 |",
    ]
    assert Table([]).markdown() == "(no rows)" and Table([], "t").markdown() == "t\n\n(no rows)"


def test_html_escapes_every_cell_and_shows_backticks_as_code():
    page = Table(ROWS + [{"kernel": "<script>", "ms": 1.0, "GB/s": 1.0}], "a & b").html(
        row_class=lambda row: "bad" if row["ms"] > 1 else ""
    )
    assert page.startswith("<h3>a &amp; b</h3><table><tr><th>kernel</th><th>ms</th><th>GB/s</th></tr>")
    assert "<tr class=''><td><code>add2&lt;float&gt;</code></td><td>0.0123</td><td>2935</td></tr>" in page
    assert "<tr class='bad'><td><code>add2&lt;double&gt;</code></td>" in page
    assert "<td>&lt;script&gt;</td>" in page and "<script>" not in page
    assert Table([], "t").html() == "<p>t: (no rows)</p>"
