"""kp.grade: any Puzzle-shaped spec against any kernel file (the exercises' checker as well as the puzzles'), with the
performance goals part of the verdict: a "modelled time" goal against a reference file or callable, and two files for
one spec built apart."""

import types

import pytest
import torch

from kp.goals import Goal
from kp.grade import grade
from kp.puzzlefiles import build_files

KERNEL = """// scale: out = 2 a, a thread per element
#include "kp.cuh"

__global__ void scale(const float* a, float* out, int size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < size) out[i] = 2.0f * a[i];
}
"""
# Right, and one thread does all: a chain of dependent round trips to memory, which the model times as latency
SLOW = KERNEL.replace(
    "if (i < size) out[i] = 2.0f * a[i];", "if (i == 0)\n    for (int k = 0; k < size; k++) out[k] = 2.0f * a[k];"
)


def task(**changes):
    """An exercise-shaped spec that is no Puzzle: only the fields grade reads."""
    fields = dict(
        name="scale", params=("const float* a", "float* out", "int size"), sizes=((5,), (300,)),
        launch=lambda n: ((-(-n // 64), 1), (64, 1)), inputs=lambda n, g: [torch.randn(n, generator=g)],
        out=lambda n, a: torch.full((n,), float("nan")), spec=lambda a, n: 2 * a,
        target={"global reads": lambda n: n, "global writes": lambda n: n}, rtol=0.0, atol=0.0, goals=(),
    )  # fmt: skip
    return types.SimpleNamespace(**{**fields, **changes})


@pytest.fixture
def files(tmp_path):
    (tmp_path / "scale.cu").write_text(KERNEL)
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "scale.cu").write_text(SLOW)
    return tmp_path / "scale.cu", tmp_path / "slow" / "scale.cu"


def test_any_spec_object_and_any_file_is_graded_and_printed_under_its_name(files, capsys):
    result = grade(task(), files[0], target="cpu")
    assert result.passed, result.message
    assert capsys.readouterr().out.startswith(f"scale ({files[0]}): PASS\nright on every size (size=5; size=300)")


def test_two_files_for_one_spec_are_built_apart(files):
    assert build_files(task(), files[0]).parent != build_files(task(), files[1]).parent


def test_a_modelled_time_goal_fails_a_slower_kernel_against_its_reference_file(files):
    goal = Goal("modelled time", 2, reference=files[0])
    assert grade(task(goals=(goal,)), files[0], target="cpu", quiet=True).passed  # itself: a factor of 1
    slow = grade(task(goals=(goal,)), files[1], target="cpu", quiet=True)
    assert not slow.passed and [m.goal for m in slow.missed] == [goal], slow.message
    assert "modelled time: " in slow.message and "x the reference's (" in slow.message, slow.message
    assert slow.missed[0].value > 2 and "the goal is at most 2x" in slow.message


def test_a_modelled_time_goal_takes_a_callable_reference_of_the_case(files):
    asked = []

    def reference(a, size):
        asked.append((a.shape, size))
        return 1e-12  # faster than any kernel

    result = grade(task(goals=(Goal("modelled time", 10, reference=reference),)), files[0], target="cpu", quiet=True)
    assert asked == [(torch.Size([300]), 300)] and not result.passed and "modelled time" in result.message
