"""bench/profile_cost.py: its list of the notebooks' profile() calls is still what the notebooks say (each call's code
is in the cell it names, and every cell that profiles is listed), and it prints a table of what each costs."""

import importlib.util
import json
import re

import pytest

import kp.files

NOTEBOOKS = kp.files.ROOT / "notebooks"


def bench_module():
    spec = importlib.util.spec_from_file_location("bench_profile_cost", kp.files.ROOT / "bench" / "profile_cost.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


profile_cost = bench_module()


def code_cells(stem):
    """{cell id: its code} of notebooks/<stem>.ipynb."""
    cells = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text())["cells"]
    return {c["id"]: "".join(c["source"]) for c in cells if c["cell_type"] == "code"}


PROFILES = re.compile(r"(?<![.\w])(profile|modelled)\(")  # profile(...), modelled(...); not torch.profiler.profile()


@pytest.mark.parametrize("call", profile_cost.CALLS, ids=lambda c: f"{c.notebook[:2]}-{c.what}")
def test_each_listed_call_is_in_the_cell_it_names(call):
    cells = code_cells(call.notebook)
    assert call.cell in cells, f"{call.notebook} has no code cell {call.cell}"
    assert call.text in cells[call.cell], f"{call.notebook}, cell {call.cell} no longer says {call.text!r}"


def test_every_cell_that_profiles_is_listed():
    listed = {(c.notebook, c.cell) for c in profile_cost.CALLS}
    unlisted = [
        (path.stem, cell)
        for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
        for cell, code in code_cells(path.stem).items()
        if PROFILES.search(code) and (path.stem, cell) not in listed
    ]
    assert not unlisted, f"cells that profile, missing from bench/profile_cost.py's CALLS: {unlisted}"


def test_the_pattern_finds_the_calls_and_not_torch_profiler():
    assert PROFILES.search("p = profile(f, x)") and PROFILES.search("model=modelled(checked.add2),")
    assert not PROFILES.search("torch.profiler.profile()") and not PROFILES.search("def profile_row(x)")


def test_quick_prints_each_calls_seconds_against_the_goal(capsys):
    profile_cost.main(["--quick"])
    out = capsys.readouterr().out
    assert "load average" in out
    head = next(line for line in out.splitlines() if line.startswith("| notebook"))
    for column in ("profile (s)", "SASS warm (s)", "model (s)", "total (s)", "CPU (s)", "goal (< 10 s)"):
        assert f"| {column} |" in head
    rows = [line for line in out.splitlines() if line.startswith("| 01 |")]
    assert len(rows) == 2 and all(row.rstrip().endswith("| met |") for row in rows)
    assert "2 of 2 calls under 10 s" in out


def test_call_and_repeat_time_one_call_again_and_again(capsys):
    profile_cost.main(["--quick", "--call", "add2 4096", "--repeat", "2"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 01 |")]
    assert len(rows) == 2 and all("| add2 4096 |" in row for row in rows)


def test_a_call_that_matches_nothing_is_an_error_that_names_it():
    with pytest.raises(RuntimeError, match="--call 'no such call'"):
        profile_cost.main(["--call", "no such call"])
    with pytest.raises(RuntimeError, match="--repeat 0"):
        profile_cost.main(["--quick", "--repeat", "0"])


# ---------------------------------------------------------------------------------------------
# What made the profiles cheaper, each kept by a test (the counts themselves: test_profile, test_counts, ...).


def test_collector_paused_turns_the_collector_off_and_back_as_it_was():
    import gc

    from kp.gpumodel.counts import collector_paused

    was = gc.isenabled()
    try:
        for before in (True, False):
            (gc.enable if before else gc.disable)()
            with collector_paused():
                assert not gc.isenabled()
            assert gc.isenabled() == before
        gc.enable()
        with pytest.raises(KeyError), collector_paused():
            raise KeyError("an error inside still turns it back on")
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_touch_rows_parse_in_one_pass_as_row_by_row():
    from kp.gpumodel.counts import Touch, _touches, parse

    rows = ["1\t0\t5\t2\t3\t1", "0\t1\t123456789012\t3\t1023\t2"]
    assert _touches(rows) == [Touch(*map(int, r.split("\t"))) for r in rows]
    assert _touches([]) == []
    with pytest.raises(ValueError, match="6 fields"):
        _touches(["1\t2\t3"])
    report = "array\t0\tglobal\tx\t4096\t8\t\n" + "".join(f"touch\t{r}\n" for r in rows) + "dropped\t3\n"
    assert parse(report).touches == _touches(rows)
