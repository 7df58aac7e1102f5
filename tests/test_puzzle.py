"""The puzzles of notebook 00 (kp.puzzle, puzzles/): every solution passes and every untouched stub fails, on every
target; a learner's bug is named at its line (an off-by-one, a race, a missing barrier), an answer that reads more
than the target fails with the count, and a name that is no puzzle is refused with the list."""

import re

import pytest

import kp.build
import kp.files
import kp.grade
import kp.load
import kp.puzzle
from kp.puzzle import puzzle, puzzles

SOLUTIONS = kp.puzzle.PUZZLES_DIR / "solutions"
NAMES = [p.name for p in puzzles()]
FILES = {p.name: p.file for p in puzzles()}


@pytest.mark.parametrize("name", NAMES)
def test_the_solution_passes_and_the_untouched_stub_fails(name, target):
    solved = puzzle(name, solution=True, target=target, quiet=True)
    assert solved.passed, solved.message
    assert all(solved.most[c] <= t for c, t in solved.target.items()), (solved.most, solved.target)
    stub = puzzle(name, target=target, quiet=True)
    assert not stub.passed and "wrong result" in stub.message, stub.message


def stub_of(solution):
    """The solution with each kernel's (and device function's) body replaced by one marked place to write, saying how
    many lines it took."""
    out, lines, i = [], solution.splitlines(), 0
    while i < len(lines):
        out.append(lines[i])
        if lines[i].startswith(("__global__", "__device__")) and lines[i].endswith("{"):
            end = lines.index("}", i)
            out.append(f"  // FILL ME IN (about {end - i - 1} line{'s' if end - i - 1 > 1 else ''})")
            i = end
            continue
        i += 1
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("name", NAMES)
def test_a_stub_is_its_solution_with_the_bodies_left_to_fill_in_and_no_algorithm(name):
    """The learner's file: the same comment, spec, launch and signatures as the solution, one marked place to write per
    kernel, and where the hints are: the algorithm is in the hints, not in the file."""
    stub, solution = (kp.puzzle.PUZZLES_DIR / FILES[name]).read_text(), (SOLUTIONS / FILES[name]).read_text()
    assert stub == stub_of(solution)
    assert f'// hints: puzzle("{name}", hint=1), then hint=2 and hint=3\n' in stub and "// hint: " not in stub
    assert "// spec:" in stub and "// launch:" in stub


@pytest.mark.parametrize("name", NAMES)
def test_every_puzzle_has_three_hints_each_telling_more_and_none_is_the_kernel(name):
    nudge, approach, sketch = kp.puzzle.hints(name)
    assert nudge and approach and sketch and len({nudge, approach, sketch}) == 3, (nudge, approach, sketch)
    body = [ln.strip() for ln in (SOLUTIONS / FILES[name]).read_text().splitlines() if ln.startswith("  ")]
    assert not [ln for ln in body if len(ln) > 24 and ln in sketch], "the sketch spells out the solution's lines"


def test_a_hint_is_printed_by_level_and_checks_nothing(capsys):
    assert puzzle("dot", hint=1) is None
    printed = capsys.readouterr().out
    assert printed.startswith("puzzle 10 · dot, hint 1 of 3, a nudge (hint=2: the approach):\n"), printed
    assert "PASS" not in printed and "FAIL" not in printed
    puzzle("dot", hint=3)
    assert capsys.readouterr().out.startswith("puzzle 10 · dot, hint 3 of 3, a sketch, not the kernel:\npartial[t]")
    with pytest.raises(RuntimeError, match=r"puzzle: hint must be 1, 2 or 3 \(a nudge, the approach, .*not 4"):
        puzzle("dot", hint=4)


def test_the_scoreboard_shows_each_puzzles_goals_and_a_fail_on_a_goal(monkeypatch, capsys):
    """Right but slow reads "FAIL: goal"; the goals column names each puzzle's goals in a word or two."""
    verdicts = {"map": True, "map2d": False}

    def checked(name, quiet=False):
        passed = verdicts.get(name, False)
        return kp.grade.PuzzleResult(name, passed, "", missed=[] if passed or name != "map2d" else ["a miss"])

    monkeypatch.setattr(kp.puzzle, "puzzle", checked)
    assert kp.puzzle.scoreboard() == 1
    rows = {ln.split()[2]: ln for ln in capsys.readouterr().out.splitlines()[2:]}
    assert re.search(r" – +PASS$", rows["map"]) and re.search(r" coalesced +FAIL: goal$", rows["map2d"]), rows
    assert re.search(r" coalesced, no bank conflicts +FAIL$", rows["transpose"]), rows["transpose"]


@pytest.fixture
def mine(tmp_path, monkeypatch):
    """A learner's puzzles folder in tmp_path: `mine(name, old, new)` writes the solution with one change."""
    monkeypatch.setattr(kp.puzzle, "PUZZLES_DIR", tmp_path)

    def write(name, old, new):
        text = (SOLUTIONS / FILES[name]).read_text()
        assert text.count(old) == 1, old
        (tmp_path / FILES[name]).write_text(text.replace(old, new))
        first = new.strip().splitlines()[0] if new.strip() else None
        lines = text.replace(old, new).splitlines()
        return tmp_path / FILES[name], next((n for n, s in enumerate(lines, 1) if first and first in s), None)

    return write


def test_an_off_by_one_is_named_at_its_line(mine, capsys):
    path, line = mine("guard", "if (i < size) out[i] = a[i] + 10;", "out[i] = a[i] + 10;")
    result = puzzle("guard")
    assert not result.passed
    assert f"read of 'a'[5] at {path}:{line}" in result.message, result.message
    printed = capsys.readouterr().out
    assert printed.startswith(f"puzzle 3 · guard ({path}): FAIL\ncheck mode, on size=5:")


def test_a_histogram_without_atomics_is_a_race_named_at_its_line(mine):
    path, line = mine("histogram", "atomicAdd(&counts[x[i]], 1);", "counts[x[i]] += 1;")
    result = puzzle("histogram", quiet=True)
    assert not result.passed and "global-memory race on 'counts'" in result.message, result.message
    assert f"at {path}:{line}" in result.message


def test_a_scan_without_its_middle_barrier_is_a_shared_memory_race(mine):
    path, _ = mine("prefix_sum", "    __syncthreads();  // everyone has read before anyone writes\n", "")
    result = puzzle("prefix_sum", quiet=True)
    assert not result.passed and "shared-memory race on 'sums[" in result.message, result.message
    assert re.search(rf"reads it at {re.escape(str(path))}:\d+", result.message)


def test_a_barrier_under_an_if_is_named_in_the_learners_file_not_in_the_copy(mine):
    path, line = mine("shared", "  __syncthreads();\n  if", "  if (i < size) __syncthreads();\n  if")
    result = puzzle("shared", quiet=True)
    assert not result.passed and f"divergent __syncthreads() at {path}:{line}" in result.message, result.message
    assert "build/puzzles" not in result.message


def test_a_right_answer_that_reads_too_much_fails_with_the_count(mine):
    naive = "acc += row < n && m0 + j < m && col < k ? a[row * m + m0 + j] * b[(m0 + j) * k + col] : 0.0f;"
    mine("matmul", "acc += ta[y][j] * tb[j][x];", naive)
    result = puzzle("matmul", quiet=True)
    assert not result.passed and "right on every size" in result.message
    assert "global reads: 44, the target is 4" in result.message, result.message  # 2 x 20 + the tiles' 4, for m = 20


def test_a_dot_product_by_float_atomics_passes_with_one_write_per_thread(mine):
    """A float atomicAdd is one global write of its thread, as an int one is: the stand-in's compare-and-swap loop
    behind it is not the kernel's accesses (issue 32: it scored 2 and failed a correct kernel)."""
    tree = SOLUTIONS.joinpath(FILES["dot"]).read_text().split("{\n", 1)[1].rsplit("}", 1)[0]
    atomics = (
        "  int t = threadIdx.x;\n"
        "  if (t == 0) out[0] = a[0] * b[0];  // out starts as NaN: one thread sets it, the others add\n"
        "  __syncthreads();\n"
        "  if (t > 0 && t < size) atomicAdd(out, a[t] * b[t]);\n"
    )
    mine("dot", tree, atomics)
    result = puzzle("dot", target="cpu", quiet=True)
    assert result.passed, result.message
    assert result.most == {"global reads": 2, "global writes": 1, "shared reads": 0, "shared writes": 0}


def test_the_files_are_numbered_in_puzzle_order_and_found_by_name_file_or_number():
    """A file browser lists puzzles/ alphabetically: the numbers put it in puzzle order."""
    files = sorted(p.name for p in kp.puzzle.PUZZLES_DIR.glob("*.cu"))
    assert files == [p.file for p in puzzles()] == sorted(p.name for p in SOLUTIONS.glob("*.cu"))
    assert files[:2] == ["01_map.cu", "02_zip.cu"]
    for name in ("map", "01_map", "01_map.cu", "puzzles/01_map.cu", 1):
        assert kp.puzzle._find(name).name == "map"


def test_an_unwritten_element_says_that_out_starts_filled_with_nan(mine):
    mine("map", "out[i] = a[i] + 10;", "if (i > 0) out[i] = a[i] + 10;")
    result = puzzle("map", target="cpu", quiet=True)
    assert "the first wrong element is [0]: expected" in result.message and "got nan" in result.message
    assert result.message.endswith("(out starts filled with NaN, and no thread wrote this element)"), result.message


def test_a_nan_computed_from_outs_start_says_so_and_names_the_writer(mine):
    """An atomicAdd onto out's starting NaN: written, and NaN; the message says both, without contradicting itself."""
    tree = SOLUTIONS.joinpath(FILES["dot"]).read_text().split("{\n", 1)[1].rsplit("}", 1)[0]
    path, line = mine("dot", tree, "  int t = threadIdx.x;\n  if (t < size) atomicAdd(out, a[t] * b[t]);\n")
    result = puzzle("dot", target="cpu", quiet=True)
    assert "last written by kernel 'dot'" in result.message and f"at {path}:" in result.message, result.message
    assert "did not write" not in result.message
    assert result.message.endswith(
        "(out starts filled with NaN, and the value written there is NaN too: computed from a NaN, such as out's own "
        "starting value (an atomicAdd onto it, a `+=`))"
    ), result.message


def test_profile_true_shows_the_gpu_models_counts_per_line_and_keeps_them(capsys):
    result = puzzle("map", solution=True, target="cpu", profile=True)
    printed = capsys.readouterr().out
    assert result.passed and "the GPU model's counts for size=100, per line of your file" in printed
    assert {ln.file for ln in result.profile.lines} == {"puzzles/solutions/01_map.cu"}
    assert "global load" in printed and "no advice: " in printed  # the table as text, then the advice
    assert "|" not in printed  # a terminal gets aligned text, not markdown pipes
    stub = puzzle("map", target="cpu", profile=True)
    assert stub.profile is None and "no profile: the GPU model counts a kernel that is right" in capsys.readouterr().out


def test_profiling_a_puzzle_call_from_outside_says_how_to_profile_a_puzzle():
    with pytest.raises(kp.gpumodel.profile.ProfileError, match=r"launched no kernel .*puzzle\(name, profile=True\)"):
        kp.gpumodel.profile.profile(lambda: puzzle("map", solution=True, target="cpu", quiet=True))


def test_load_kernel_of_a_puzzle_path_resolves_from_the_project_and_points_to_profile(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # as a notebook in notebooks/ would: the path is the project's
    with pytest.raises(FileNotFoundError, match=r'puzzles/10_dot.cu is a puzzle: .*puzzle\("dot", profile=True\)'):
        kp.load.load_kernel("puzzles/10_dot.cu")
    assert kp.build.resolve_kernel("kernels/add2.cu")[0] == kp.files.KERNELS / "add2.cu"


def test_score_tables_are_html_in_jupyter_and_aligned_text_elsewhere(monkeypatch, capsys):
    puzzle("map", solution=True, target="cpu")
    text = capsys.readouterr().out
    assert re.search(r"^most by one thread +1 +1 +0 +0$", text, re.M) and "|" not in text, text
    shown = []
    monkeypatch.setattr(kp.grade, "_jupyter", lambda: shown.append)
    puzzle("map", solution=True, target="cpu")
    assert shown and shown[0].startswith("<table>") and "<td>most by one thread</td>" in shown[0]
    shown.clear()
    capsys.readouterr()
    puzzle("map", solution=True, target="cpu", quiet=True, profile=True)  # the source view, then no advice in words
    assert len(shown) == 1 and "out[i] = a[i] + 10;" in shown[0] and "<table" in shown[0], shown
    assert (
        capsys.readouterr()
        .out.rstrip()
        .endswith(
            "no advice: the GPU model sees no uncoalesced global access, no "
            "shared-memory bank conflict, no divergent branch and no lanes "
            "left out mid-warp"
        )
    )


def test_an_unknown_puzzle_is_refused_with_the_names_in_order():
    with pytest.raises(ValueError, match=r"no puzzle 'mapp'; the puzzles, in order: map, zip, guard, map2d, "):
        puzzle("mapp")
