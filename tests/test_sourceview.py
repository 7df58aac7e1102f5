"""kp.sourceview: a profile's records as Nsight's source view, on records made here (kp.gpumodel.profile's own tests
show it on a real profile): the counted lines with their figures and a few lines around them, the worst highlighted, the
advice on top, labelled as a model."""

import dataclasses
import html
from types import SimpleNamespace

from kp.gpumodel.counts import Line
from kp.sourceview import REREAD, line_advice, line_table, profile_html


def line(n, space="global", kind="load", requests=10, units=40, ideal=40, lanes=320, worst=0):
    return SimpleNamespace(
        file="tests/cuda_cpu/patterns.cu",
        line=n,
        space=space,
        kind=kind,
        requests=requests,
        units=units,
        ideal=ideal,
        worst=worst,
        excess=units / ideal,
        per_request=units / requests,
        active_lanes=lanes / requests,
    )


def test_counted_lines_show_their_figures_with_the_source_and_the_worst_are_highlighted():
    source = SimpleNamespace(
        lines=[line(20), line(57, "shared", units=320, ideal=10, worst=32)],
        advice=lambda: ["a 32-way bank conflict: ..."],
    )
    page = profile_html(source)
    assert "a model, not a measurement" in page and "<li>a 32-way bank conflict: ...</li>" in page
    assert "out[i] = x[(int64_t)i * k];" in page and "<td>4 (4)</td>" in page  # line 20, as it is
    assert "<tr class='bad'><td>57</td>" in page and "<td>32 (1)</td>" in page
    assert "<tr class=''><td>20</td>" in page  # coalesced, all lanes: not highlighted
    assert "<td>18</td>" in page and "<td>59</td>" in page  # two lines of context either side
    assert "<td>17</td>" not in page and "<td>60</td>" not in page


def test_a_line_with_inactive_lanes_is_marked():
    page = profile_html(SimpleNamespace(lines=[line(33, lanes=160)], advice=lambda: []))
    assert "<tr class='warn'><td>33</td>" in page and "<td>16</td><td class='code'>" in page  # 16 active lanes


def test_a_divergent_branch_shows_its_executions_and_is_marked():
    branch = SimpleNamespace(
        file="tests/cuda_cpu/patterns.cu", line=34, kernel="even_lanes", executions=32, divergent=32, active_lanes=32.0
    )
    page = profile_html(SimpleNamespace(lines=[], branches=[branch], advice=lambda: []))
    assert "<tr class='warn'><td>34</td>" in page and "<td>branch</td><td>32</td><td>32 diverged</td>" in page


def test_a_continuation_line_is_indented_one_step_from_its_statement_not_under_its_parenthesis():
    from kp.sourceview import shown_source

    source = [
        "template <typename T>",
        "__global__ void k(const T* __restrict__ a, int64_t n,",
        "                               bool packed) {",
        "  k2<T>",
        "      <<<ceil_div<int64_t>(n, 256), 256, 0, stream>>>(a, n);",
        "  if (i < n) {",
        "    c[i] = a[i];",
        "  }",
        "#pragma unroll",
        "  x = cond",
        "             ? 1",
        "             : 2;",
    ]
    assert shown_source(source) == [
        "template <typename T>",
        "__global__ void k(const T* __restrict__ a, int64_t n,",
        "    bool packed) {",
        "  k2<T>",
        "      <<<ceil_div<int64_t>(n, 256), 256, 0, stream>>>(a, n);",
        "  if (i < n) {",
        "    c[i] = a[i];",
        "  }",
        "#pragma unroll",
        "  x = cond",
        "      ? 1",
        "      : 2;",
    ]


def test_long_lines_wrap_at_a_space_with_a_hanging_indent():
    from kp.sourceview import CODE_WIDTH, wrap_code

    text = "    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x)"
    wrapped = wrap_code(text)
    assert len(wrapped) == 3 and all(len(w) <= CODE_WIDTH for w in wrapped)
    assert all(w.startswith(" " * 8) for w in wrapped[1:]) and " ".join(w.strip() for w in wrapped) == text.strip()
    assert wrap_code("x" * (CODE_WIDTH + 3)) == ["x" * CODE_WIDTH, "    xxx"]  # no space: cut


def test_every_kernels_source_view_fits_labs_output_area():
    """Every line of every .cu and .cuh a notebook profiles, counted with the widest figures the view shows: no row
    wider than kp.table.WIDTH characters (about 850 px of Lab's monospace)."""
    from kp.files import ROOT
    from kp.table import WIDTH, html_chars

    files = sorted((ROOT / "kernels").glob("*.cu")) + sorted((ROOT / "kernels" / "common").glob("*.cuh"))
    files = [f for f in files if not f.name.startswith("cuda_cpu")]  # the stand-in itself: never profiled
    for path in files:
        n = len(path.read_text().splitlines())
        wide = [
            line(k, "shared", "atomic", 16_777_216, 16_777_216 * 2.05, 17_280_000, lanes=16_777_216 * 31.5)
            for k in range(1, n + 1)
        ]
        for k in wide:
            k.file = str(path.relative_to(ROOT))
            k.rereads = k.requests // 3  # with the mark of a line whose requests include re-reads
        page = profile_html(SimpleNamespace(lines=wide, advice=lambda: []))
        assert html_chars(page) <= WIDTH, (path.name, html_chars(page))


# siboehm's kernel 5's As line at sm_86 as kp.gpumodel.profile charges it (tests/test_profile.py on the kernel itself):
# 2048 LDS.128 requests of 4 wavefronts and the 1024 scalar LDS re-reading each row's first float, 2 wavefronts each
AS_ROWS = Line("k5", "tests/cuda_cpu/patterns.cu", 55, "shared", "load", 3072, 10240, 9216, 65536, 3072 * 32, worst=2,
               sass=("LDS",) * 8 + ("LDS.128",) * 16, basis="SASS sm_86", rereads=1024)  # fmt: skip


def test_a_line_whose_requests_include_re_reads_is_marked_and_its_note_says_how_many():
    page = profile_html(SimpleNamespace(lines=[AS_ROWS, line(18)], advice=lambda: []))
    assert "<td>3,072†</td><td>3.33 (3)</td>" in page and "<td>10</td><td>4 (4)</td>" in page  # line 18: no mark
    assert "† line 55: 1,024 of its 3,072 shared load requests are re-reads (its SASS: 8 x LDS, 16 x LDS.128). " in page
    assert f"{html.escape(REREAD)}</small>" in page
    assert "†" not in profile_html(SimpleNamespace(lines=[dataclasses.replace(AS_ROWS, rereads=0)], advice=list))


def test_the_table_and_the_advice_say_which_requests_are_re_reads():
    """Profile.table's and Profile.advice's words (kp.gpumodel.profile gives them the lines the estimate charges)."""
    table = line_table([AS_ROWS], [], "SASS sm_86")
    assert table.rows[0]["requests"] == "3072 incl. 1024 re-read" and table.title.endswith(f"SASS sm_86); {REREAD}")
    assert line_table([dataclasses.replace(AS_ROWS, rereads=0)], [], "SASS sm_86").title.endswith("SASS sm_86)")
    (said,) = line_advice([AS_ROWS], [])
    assert said.endswith("(3.33 wavefronts per request where 3 would do, 1024 of its 3072 requests nvcc's narrower "
                         "re-reads)")  # fmt: skip
