"""kp.goals and kp.grade's verdict on them: a kernel that is right but slow on a GPU FAILs on the GPU model's counter,
and the message names the counter, its value, the goal and the line; a goal is stated only in the counters the model
has, and a wrong one is refused naming the argument."""

import pytest

import kp.puzzle
from kp.goals import Goal, Miss
from kp.puzzle import grade, puzzle

SOLUTIONS = kp.puzzle.PUZZLES_DIR / "solutions"
BY_NAME = {p.name: p for p in kp.puzzle.puzzles()}


def variant(tmp_path, name, old, new):
    """The solution of puzzle `name` with one change, in tmp_path; returns its path and the changed line's number."""
    p = BY_NAME[name]
    text = (SOLUTIONS / p.file).read_text()
    assert text.count(old) == 1, old
    path = tmp_path / p.file
    path.write_text(text.replace(old, new))
    line = next(n for n, s in enumerate(path.read_text().splitlines(), 1) if new.strip().splitlines()[0] in s)
    return path, line


def test_a_transposed_map2d_is_right_but_fails_on_sectors_per_request_at_its_line(tmp_path):
    down_the_columns = "int t = threadIdx.y * blockDim.x + threadIdx.x, r = t % rows, c = t / rows;"
    path, line = variant(tmp_path, "map2d", "int c = threadIdx.x, r = threadIdx.y;", down_the_columns)
    result = grade(BY_NAME["map2d"], path, target="cpu", quiet=True)
    assert not result.passed and result.message.startswith("right on every size"), result.message
    assert [m.goal.counter for m in result.missed] == ["sectors per request"] * 2  # its load and its store
    load, store = sorted(map(str, result.missed))
    assert (
        load.startswith("sectors per request: ")
        and f" at 04_map2d.cu:{line + 1} (its load), the goal is at most 4" in load
    )
    assert store.endswith(f" at 04_map2d.cu:{line + 1} (its store), the goal is at most 4"), store
    assert float(load.split()[3]) > 8, load  # a lane per row: lanes 13 elements apart, most in a sector of their own
    assert load in result.message and store in result.message


def test_the_map2d_solution_meets_its_goal_and_grade_takes_any_file(tmp_path):
    copy = tmp_path / "anywhere.cu"
    copy.write_text((SOLUTIONS / BY_NAME["map2d"].file).read_text())
    result = grade(BY_NAME["map2d"], copy, target="cpu", quiet=True)
    assert result.passed and not result.missed and "meets the GPU model's goals" in result.message, result.message
    assert puzzle("map2d", solution=True, target="cpu", quiet=True).passed


def test_a_goal_names_a_counter_the_model_has_and_the_arguments_it_needs():
    with pytest.raises(RuntimeError, match=r"Goal: counter 'sectors' is not one of 'sectors per request'"):
        Goal("sectors", 4)
    with pytest.raises(RuntimeError, match=r'Goal: reference is what a "modelled time" goal needs'):
        Goal("modelled time", 2)
    with pytest.raises(RuntimeError, match=r"Goal: kind 'load' is for \"sectors per request\" only"):
        Goal("bank-conflict ways", 1, kind="load")
    with pytest.raises(RuntimeError, match=r"Goal: most must be a number at or above 0"):
        Goal("divergent branches", -1)
    goal = Goal("sectors per request", 4)
    assert str(Miss(goal, 32.0, "04_map2d.cu:7")) == "sectors per request: 32 at 04_map2d.cu:7, the goal is at most 4"
