"""kp.exercise: an exercise found by its file's stem, its name or its lesson; hints in three tiers, printed before the
verdict; a FAIL printed and returned, never raised (a lesson's last cell runs with the stub untouched); a bad name or
hint named. The kernels themselves: tests/test_exercise_kernels.py."""

import pytest

from kp.exercise import exercise, exercises, find_exercise


def test_an_exercise_is_found_by_stem_name_file_or_lesson():
    e = find_exercise("05_transpose")
    assert find_exercise("transpose") is e and find_exercise("05_transpose.cu") is e and find_exercise(5) is e
    assert [x.number for x in exercises()] == list(range(1, 10))
    with pytest.raises(ValueError, match="no exercise 'nope'; the exercises: 01_grid_stride, 02_broadcast"):
        find_exercise("nope")


def test_the_stub_fails_without_raising_and_hints_come_first(capsys):
    result = exercise("01_grid_stride", hint=2, target="cpu")
    said = capsys.readouterr().out
    hints = find_exercise(1).hints
    assert said.index(f"hint 1: {hints[0]}") < said.index(f"hint 2: {hints[1]}") < said.index("FAIL")
    assert hints[2] not in said and not result.passed
    assert "exercise 01 · grid_stride (exercises/01_grid_stride.cu): FAIL" in said


def test_a_bad_hint_is_named():
    with pytest.raises(RuntimeError, match="exercise: hint must be 0 to 3, got 4"):
        exercise("grid_stride", hint=4)
