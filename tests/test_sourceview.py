"""kp.sourceview: a profile's records as Nsight's source view, on records made here (kp.profile's own tests show it on
a real profile): the counted lines with their figures and a few lines around them, the worst highlighted, the advice
on top, labelled as a model."""

from types import SimpleNamespace

from kp.sourceview import profile_html


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
        lines=[line(18), line(55, "shared", units=320, ideal=10, worst=32)],
        advice=lambda: ["a 32-way bank conflict: ..."],
    )
    page = profile_html(source)
    assert "a model, not a measurement" in page and "<li>a 32-way bank conflict: ...</li>" in page
    assert "out[i] = x[(int64_t)i * k];" in page and "4 sectors (ideal 4)" in page  # line 18, as it is
    assert "<tr class='bad'><td>55</td>" in page and "32 wavefronts (ideal 1)" in page
    assert "<tr class=''><td>18</td>" in page  # coalesced, all lanes: not highlighted
    assert "<td>16</td>" in page and "<td>57</td>" in page  # two lines of context either side
    assert "<td>15</td>" not in page and "<td>58</td>" not in page


def test_a_line_with_inactive_lanes_is_marked():
    page = profile_html(SimpleNamespace(lines=[line(33, lanes=160)], advice=lambda: []))
    assert "<tr class='warn'><td>33</td>" in page and "<td>16</td></tr>" in page  # 16 active lanes


def test_a_divergent_branch_shows_its_executions_and_is_marked():
    branch = SimpleNamespace(
        file="tests/cuda_cpu/patterns.cu", line=34, kernel="even_lanes", executions=32, divergent=32, active_lanes=32.0
    )
    page = profile_html(SimpleNamespace(lines=[], branches=[branch], advice=lambda: []))
    assert "<tr class='warn'><td>34</td>" in page and "<td>branch</td><td>32</td><td>32 divergent</td>" in page
