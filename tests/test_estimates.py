"""kp.gpumodel.estimates: a modelled launch as printed: describe() in a sentence, table() a row per launch with its
terms in one column, largest first, each number on one line with its unit in Lab. The times are kp.gpumodel.gputime's
(tests/test_gputime.py works them out)."""

import re

import pytest

from kp.gpumodel.gputime import LaunchWork, estimate
from kp.table import NOWRAP

N = 2**26


def add2(blocks):
    """c = a + b on N floats: 2 reads + 1 write of 4 bytes each (as tests/test_gputime.py's add2)."""
    return LaunchWork("add2", blocks, 256, 32, dram_read_sectors=2 * N * 4 // 32, dram_write_sectors=N * 4 // 32)


def test_describe_and_table_show_the_time_and_its_bound():
    e = estimate("H100", [add2(65536), LaunchWork("tiny", 1, 32)])
    assert e.describe() == "274 µs on the H100 SXM, modelled (add2: 272 µs, memory-bound; tiny: 2.5 µs, launch-bound)"
    rows = e.table().rows
    assert [(r["kernel"], r["bound"], r["waves"], r["occupancy"]) for r in rows] == [
        ("`add2`", "memory", 63, "100% (threads)"),
        ("`tiny`", "launch", 1, "50% (blocks)"),  # 32 one-warp blocks: 32 of 64 warps
    ]
    assert rows[0]["modelled"] == pytest.approx(271.58, rel=1e-4) and str(rows[0]["modelled"]) == "272 µs"
    # The terms in one column, largest first (the bound's first), zeros left out; the tiny launch has none.
    terms = rows[0]["terms"].split(", ")
    assert terms[0].startswith("DRAM\u00a0") and "FLOP" not in rows[0]["terms"], terms
    # A term's words are joined by no-break spaces: Lab wraps the column between terms, never inside one.
    assert all(" " not in t and len(t.split("\u00a0")) >= 3 for t in terms), terms
    seconds = [float(t.split()[-2]) * {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3}[t.split()[-1]] for t in terms]
    assert seconds == sorted(seconds, reverse=True)
    assert rows[1]["terms"] == "none"


def test_the_tables_html_keeps_every_number_with_its_unit_and_a_template_kernels_arguments_together():
    """Notebook 07's estimate tables in Lab: a kernel named with its template arguments wrapped over 3 lines at their
    commas, and cells broke between a number and its unit ("130" over "GB/s"). In the HTML no space is left between
    a number and its unit, and the kernel may break only before its arguments."""
    launch = LaunchWork(
        "linear_v7<T, BM, BN, BK, TM, TN>",
        65536,
        256,
        32,
        dram_read_sectors=2 * N * 4 // 32,
        dram_write_sectors=N * 4 // 32,
    )
    table = estimate("H100", [launch]).table()
    page = table.html()
    assert f"<code>linear_v7<wbr>{NOWRAP}&lt;T, BM, BN, BK, TM, TN&gt;</span></code>" in page
    assert "<td>272\u00a0µs</td>" in page and re.search(r"<td>[\d.]+\u00a0TB/s</td>", page), page
    cells = re.sub(r"<[^>]+>", " ", page[page.index("<table>") :])  # the title above the table is prose: it wraps
    assert not re.search(r"\d (?:ns|µs|ms|s|[kMGT]?B/s)\b", cells), cells
