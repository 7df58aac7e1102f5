"""kp.table: rows of dicts as one markdown table and one HTML table, numbers to 3 significant digits, code in
backticks shown as code and escaped, a number kept with its unit and a template's arguments kept together in HTML."""

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


def test_numbers_read_without_e_notation_and_quantities_in_the_unit_that_reads_best():
    from kp.table import number, quantity

    assert [number(v) for v in (2934.6, 1.5, 0.012345, 0.000012, 0.0)] == ["2935", "1.5", "0.0123", "0.000012", "0"]
    assert quantity(2970, "GB/s") == "2.97 TB/s" and quantity(12.3, "GB/s") == "12.3 GB/s"
    assert quantity(5730, "µs") == "5.73 ms" and quantity(0.5, "µs") == "500 ns"
    assert quantity(42.1, "µs") == "42.1 µs" and quantity(0.0, "ms") == "0 ms"
    assert quantity(51_200, "GFLOP/s") == "51.2 TFLOP/s" and quantity(3, "waves") == "3 waves"
    assert quantity(999.7, "GB/s") == "1 TB/s"  # not "1e+03 GB/s" nor "1000 GB/s"


def test_a_quantity_is_a_number_that_shows_its_unit_in_a_table():
    from kp.table import Quantity

    ms = Quantity(5730, "µs")
    assert ms * 2 == 11460 and f"{ms:.0f}" == "5730" and str(ms) == "5.73 ms"
    table = Table([{"kernel": "v1", "time": ms}])
    # in HTML its number and unit are joined by a no-break space (Lab keeps them on one line); markdown keeps a space
    assert "| v1 | 5.73 ms |" in table.markdown() and "<td>5.73\u00a0ms</td>" in table.html()


def test_jupyter_shows_the_html_table_with_its_title_in_bold_not_as_a_heading():
    shown = Table(ROWS, "a title")._repr_html_()
    assert shown.startswith("<p><b>a title</b></p><table>") and "<h3>" not in shown
    assert not hasattr(Table, "_repr_markdown_")  # else Lab would choose between two renderings


def test_width_counts_the_longest_word_of_each_column_and_its_padding():
    table = Table([{"kernel name": "`add2_fwd_kernel<T>`", "ms": 0.5}, {"kernel name": "a b", "ms": 12345.0}])
    assert table.width() == (2 + len("add2_fwd_kernel<T>")) + (2 + len("12345"))
    assert Table([]).width() == 0


def test_words_joined_by_no_break_spaces_count_as_one_word_as_lab_keeps_them_on_one_line():
    from kp.table import NO_BREAK, html_chars

    term = NO_BREAK.join(["FMA", "pipe", "2.28", "ms"])  # kp.gpumodel.estimates' terms
    table = Table([{"terms": f"issue 3.06 ms, {term}"}])
    assert table.width() == 2 + len("FMA pipe 2.28 ms") == html_chars(table._repr_html_())
    assert html_chars("<table><tr><td>FMA&nbsp;pipe 2.28</td></tr></table>") == 2 + len("FMA pipe")


def test_html_chars_measures_the_widest_table_as_lab_wraps_it():
    from kp.table import html_chars

    assert html_chars(Table(ROWS, "title")._repr_html_()) == Table(ROWS).width() == 2 + 12 + 2 + 6 + 2 + 4
    pre = "<table class='kp-src'><tr><th>a long header</th></tr><tr><td>x = a + b;\nreturn x;</td></tr></table>"
    assert html_chars(pre) == 2 + len("x = a + b;")  # the source view's cells do not wrap: their longest line
    assert html_chars("<p>no table</p>") == 0
    assert html_chars("<table><tr><td>" + "x" * 200 + "</td></tr></table>" + pre) == 202  # the widest of them


def test_html_keeps_a_number_with_its_unit_and_a_kernels_template_arguments_on_one_line():
    """Lab wrapped notebook 07's estimate tables between a number and its unit ("130" over "GB/s") and a kernel's
    template arguments at their commas (3 lines): in HTML those spaces are no-break ones, and a kernel name may break
    only before its arguments (<wbr>, the arguments in a span that does not wrap). A space between two numbers, or in
    a code span's source, still breaks."""
    from kp.table import NO_BREAK, NOWRAP, Quantity, html_chars

    row = {
        "kernel": "`linear_v7<T, BM, BN, BK, TM, TN>`",
        "DRAM": Quantity(0.13, "TB/s"),
        "occupancy": "50%, 2 blocks/SM (registers)",
        "blocks x threads": "4096 x 256",
        "line": "`if (i < n) out[i] = x[i];`",
        "plain": "`add2<float>`",
    }
    page = Table([row]).html()
    assert f"<td><code>linear_v7<wbr>{NOWRAP}&lt;T, BM, BN, BK, TM, TN&gt;</span></code></td>" in page
    assert f"<td>130{NO_BREAK}GB/s</td>" in page and f"<td>50%, 2{NO_BREAK}blocks/SM (registers)</td>" in page
    assert "<td>4096 x 256</td>" in page and "<td><code>if (i &lt; n) out[i] = x[i];</code></td>" in page
    assert "<td><code>add2&lt;float&gt;</code></td>" in page  # no space inside: nothing to join, no break added
    assert "| `linear_v7<T, BM, BN, BK, TM, TN>` | 130 GB/s |" in Table([row]).markdown()  # markdown as it was
    # the width as Lab lays it out: the arguments one word, the name another; "2 blocks/SM" one word
    widths = [
        len("<T, BM, BN, BK, TM, TN>"),
        len("130 GB/s"),
        len("2 blocks/SM"),
        len("threads"),
        len("out[i]"),
        len("add2<float>"),
    ]
    assert Table([row]).width() == html_chars(page) == sum(2 + w for w in widths)


def test_code_keeps_its_spaces_and_a_comparison_is_no_template():
    """A code span is copied as code: a number and a unit in it (`x = 2 s;`) keep their space (a no-break one would
    not compile), as do a template's arguments (a span that does not wrap holds them together); `a<b && c>d` and
    `a<b) || (c>d` are comparisons, left as they are. Outside the backticks the number keeps its unit."""
    from kp.table import NO_BREAK, NOWRAP, html_chars

    cells = {
        "unit": "took 2 s: `x = 2 s;`",
        "and": "`if (a<b && c>d) f();`",
        "or": "`(a<b) || (c>d)`",
        "nested": "`tile<float, vec<4, int> , 8>`",
    }
    page = Table([cells]).html()
    assert f"<td>took 2{NO_BREAK}s: <code>x = 2 s;</code></td>" in page
    assert "<td><code>if (a&lt;b &amp;&amp; c&gt;d) f();</code></td>" in page
    assert "<td><code>(a&lt;b) || (c&gt;d)</code></td>" in page
    assert f"<td><code>tile<wbr>{NOWRAP}&lt;float, vec&lt;4, int&gt; , 8&gt;</span></code></td>" in page
    assert page.count("<code>") == 4 and NO_BREAK not in "".join(page.split("<code>")[1:])  # none inside code
    # the arguments one word as Lab lays them out; the comparisons' words each their own
    assert html_chars(page) == sum(2 + len(w) for w in ("took", "(a<b", "(c>d)", "<float, vec<4, int> , 8>"))
