"""kp.exercise: an exercise found by its file's stem, its name or its lesson; a hint in three tiers, printed instead
of a verdict; a FAIL printed and returned, never raised (a lesson's last cell runs with the stub untouched); a bad
name or hint named. The kernels themselves: tests/test_exercise_kernels.py."""

import pytest

from kp.exercise import exercise, exercises, find_exercise


def test_an_exercise_is_found_by_stem_name_file_or_lesson():
    e = find_exercise("05_transpose")
    assert find_exercise("transpose") is e and find_exercise("05_transpose.cu") is e and find_exercise(5) is e
    assert [x.number for x in exercises()] == list(range(1, 10))
    with pytest.raises(ValueError, match="no exercise 'nope'; the exercises: 01_grid_stride, 02_broadcast"):
        find_exercise("nope")


def test_the_stub_fails_without_raising(capsys):
    result = exercise("01_grid_stride", target="cpu")
    assert not result.passed
    assert "exercise 01 · grid_stride (exercises/01_grid_stride.cu): FAIL" in capsys.readouterr().out


def test_a_hint_is_printed_in_three_tiers_and_nothing_is_checked(capsys):
    hints = find_exercise(1).hints
    assert exercise("01_grid_stride", hint=2) is None
    said = capsys.readouterr().out
    assert said.startswith("exercise 01 · grid_stride, hint 2 of 3, the approach (hint=3: a sketch, not the kernel):")
    assert hints[1] in said and hints[0] not in said and "FAIL" not in said
    exercise("grid_stride", hint=3)
    assert capsys.readouterr().out.endswith(hints[2] + "\n")


def test_a_bad_hint_is_named():
    with pytest.raises(RuntimeError, match="exercise: hint must be 1, 2 or 3 .*, not 4"):
        exercise("grid_stride", hint=4)


def test_every_lesson_ends_with_its_exercise_shown_then_graded():
    """Notebooks 01-09: the last two cells show the lesson's stub and grade it (`exercise("NN_<name>")`, NN the
    lesson's number); tests/test_notebooks.py runs them, the stubs untouched."""
    import nbformat

    from kp.files import ROOT

    for e in exercises():
        (path,) = ROOT.glob(f"notebooks/{e.number:02d}_*.ipynb")
        shown, graded = nbformat.read(path, as_version=4).cells[-2:]
        stem = e.file[:-3]
        assert f'show_exercise("{stem}")' in shown.source and graded.source.strip() == f'exercise("{stem}")', path
