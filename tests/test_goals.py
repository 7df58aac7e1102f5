"""kp.goals and kp.grade's verdict on them: a kernel that is right but slow on a GPU FAILs on the GPU model's counter,
and the message names the counter, its value, the goal and the line; a goal is stated only in the counters the model
has, and a wrong one is refused naming the argument."""

import types

import pytest
import torch

import helpers
import kp.files
import kp.gpumodel.profile
import kp.gpumodel.sass
import kp.puzzle
import kp.toolchain
from kp.goals import Goal, Miss, misses
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
    assert load.startswith("sectors per request: 19.8 at "), load  # lanes a row (52 bytes) apart: a sector each
    assert load == "sectors per request: 19.8 at 04_map2d.cu:10 (its load), the goal is at most 4"  # the README's
    assert load in result.message and store in result.message


def test_the_map2d_solution_meets_its_goal_and_grade_takes_any_file(tmp_path):
    copy = tmp_path / "anywhere.cu"
    copy.write_text((SOLUTIONS / BY_NAME["map2d"].file).read_text())
    result = grade(BY_NAME["map2d"], copy, target="cpu", quiet=True)
    assert result.passed and not result.missed and "meets the GPU model's goals" in result.message, result.message
    assert puzzle("map2d", solution=True, target="cpu", quiet=True).passed


def test_a_dot_by_interleaved_addressing_is_right_but_fails_on_bank_conflicts_at_its_line(tmp_path):
    """Harris's reduction #2: thread t adds at 2 s t, so a warp's lanes hit every other bank, then every fourth..."""
    strided = "    int s = 128 / half, at = 2 * s * t;\n    if (at < 256) partial[at] += partial[at + s];"
    path, line = variant(tmp_path, "dot", "    if (t < half) partial[t] += partial[t + half];", strided)
    result = grade(BY_NAME["dot"], path, target="cpu", quiet=True)
    assert not result.passed and {m.goal.counter for m in result.missed} == {"bank-conflict ways"}, result.message
    assert f"bank-conflict ways: 8 at 10_dot.cu:{line + 1}, the goal is at most 1" in result.message, result.message


def test_a_matmul_without_tiles_is_right_but_fails_on_global_loads_per_fma_at_its_line(tmp_path):
    naive = "acc += row < n && m0 + j < m && col < k ? a[row * m + m0 + j] * b[(m0 + j) * k + col] : 0.0f;"
    path, line = variant(tmp_path, "matmul", "acc += ta[y][j] * tb[j][x];", naive)
    result = grade(BY_NAME["matmul"], path, target="cpu", quiet=True)
    said = f"global loads per FMA: 2.16 at 15_matmul.cu:{line} (60500 loads for 28000 FMAs, 56000 of the loads at"
    assert not result.passed and said in result.message, result.message  # 2 per FMA, and the tiles it still loads
    solved = puzzle("matmul", solution=True, target="cpu", quiet=True)
    assert solved.passed and not solved.missed, solved.message


def test_a_goal_names_a_counter_the_model_has_and_the_arguments_it_needs():
    with pytest.raises(RuntimeError, match=r"Goal: counter 'sectors' is not one of 'sectors per request'"):
        Goal("sectors", 4)
    with pytest.raises(RuntimeError, match=r'Goal: reference is what a "modelled time" goal needs'):
        Goal("modelled time", 2)
    with pytest.raises(RuntimeError, match=r"Goal: kind 'load' is for \"sectors per request\" only"):
        Goal("bank-conflict ways", 1, kind="load")
    with pytest.raises(RuntimeError, match=r'Goal: fmas is what a "global loads per FMA" goal needs'):
        Goal("global loads per FMA", 0.25)
    with pytest.raises(RuntimeError, match=r"Goal: most must be a number at or above 0"):
        Goal("divergent branches", -1)
    goal = Goal("sectors per request", 4)
    assert str(Miss(goal, 32.0, "04_map2d.cu:7")) == "sectors per request: 32 at 04_map2d.cu:7, the goal is at most 4"
    assert str(Goal("sectors per request", 4, kind="load")) == "global loads' sectors per request at most 4"
    assert str(Goal("modelled time", 1.5, reference=print)) == "modelled time at most 1.5x the reference's"


def test_a_modelled_time_goal_is_read_only_with_its_references_seconds():
    prof = types.SimpleNamespace(launches=[], lines=[], branches=[], source_lines=[])
    with pytest.raises(RuntimeError, match=r'misses: a "modelled time" goal needs reference_seconds'):
        misses(prof, [Goal("modelled time", 2, reference=print)])
    assert misses(prof, [Goal("bank-conflict ways", 1), Goal("divergent branches", 0)]) == []


def body_of(name, body):
    """Puzzle `name`'s solution with its (first) kernel's body replaced by `body`."""
    text = (SOLUTIONS / BY_NAME[name].file).read_text()
    start = text.index("{\n", text.index("__global__")) + 2
    return text[:start] + body + text[text.index("\n}\n", start) + 1 :]


TILE = "for (int j = y; j < 32; j += 8)\n"
SLOW = {  # per goal of puzzles 16-22: a right kernel that misses it, and the line (its text) that the FAIL names
    ("conv1d", "global loads per FMA"): (
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  float acc = 0.0f;\n"
        "  for (int k = 0; k < width; k++) acc += i + k < size ? a[i + k] * w[k] : 0.0f;\n"
        "  if (i < size) out[i] = acc;\n",
        "acc += i + k < size",
    ),
    ("transpose", "sectors per request"): (
        "  int c = blockIdx.x * 32 + threadIdx.x, r0 = blockIdx.y * 32;\n"
        "  for (int r = r0 + threadIdx.y; r < r0 + 32; r += 8)\n"
        "    if (r < rows && c < cols) out[c * rows + r] = a[r * cols + c];\n",
        "out[c * rows + r] = a[r * cols + c]",
    ),
    ("transpose", "bank-conflict ways"): ("tile[32][33]", "tile[32][32]", "= tile[x][j]"),
    ("grid_sum", "global atomics per block"): (
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < size) atomicAdd(out, a[i]);\n",
        "atomicAdd(out, a[i])",
    ),
    ("grid_sum", "bank-conflict ways"): (
        "    if (t < half) partial[t] += partial[t + half];",
        "    int s = 64 / half, at = 2 * s * t;\n    if (at < 128) partial[at] += partial[at + s];",
        "partial[at] += ",
    ),
    ("shared_histogram", "global atomics per block"): (
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < size) atomicAdd(&counts[x[i]], 1);\n",
        "atomicAdd(&counts[x[i]], 1)",
    ),
    ("block_sum", "divergent branches"): (
        "    if (t < half) partial[t] += partial[t + half];",
        "    int s = 64 / half;\n    if (t % (2 * s) == 0) partial[t] += partial[t + s];",
        "if (t % (2 * s) == 0)",
    ),
    ("block_sum", "bank-conflict ways"): (
        "    if (t < half) partial[t] += partial[t + half];",
        "    int s = 64 / half, at = 2 * s * t;\n    if (at < 128) partial[at] += partial[at + s];",
        "partial[at] += ",
    ),
    ("softmax", "sectors per request"): (
        "  const float* row = a + blockIdx.x * cols;\n  int per = (cols + 31) / 32, c0 = threadIdx.x * per;\n"
        "  int c1 = c0 + per < cols ? c0 + per : cols;\n  float m = -INFINITY, sum = 0.0f;\n"
        "  for (int c = c0; c < c1; c++) m = fmaxf(m, row[c]);\n"
        "  for (int k = 16; k > 0; k /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, k));\n"
        "  for (int c = c0; c < c1; c++) sum += expf(row[c] - m);\n"
        "  for (int k = 16; k > 0; k /= 2) sum += __shfl_xor_sync(0xffffffff, sum, k);\n"
        "  for (int c = c0; c < c1; c++) out[blockIdx.x * cols + c] = expf(row[c] - m) / sum;\n",
        "m = fmaxf(m, row[c])",
    ),
}


def test_every_goal_of_puzzles_16_to_22_has_a_slow_kernel_here():
    goals = {(p.name, g.counter) for p in BY_NAME.values() if p.number >= 16 for g in p.goals}
    assert goals == set(SLOW)


@pytest.mark.parametrize("name, counter", list(SLOW))
def test_a_right_but_slow_kernel_fails_naming_the_counter_and_its_line(tmp_path, name, counter):
    *change, marker = SLOW[(name, counter)]
    text = (SOLUTIONS / BY_NAME[name].file).read_text()
    if len(change) == 1:
        text = body_of(name, change[0])
    else:
        assert text.count(change[0]) == 1, change[0]
        text = text.replace(*change)
    path = tmp_path / BY_NAME[name].file
    path.write_text(text)
    line = next(n for n, s in enumerate(text.splitlines(), 1) if marker in s)
    result = grade(BY_NAME[name], path, target="cpu", quiet=True)
    assert not result.passed and result.message.startswith("right on every size"), result.message
    named = [m for m in result.missed if m.goal.counter == counter]
    assert named and all(str(m).startswith(f"{counter}: ") for m in named), result.message
    assert f" at {path.name}:{line}" in str(named[0]) and str(named[0]) in result.message, (line, result.message)


SGEMM = kp.files.ROOT / "bench" / "kernels" / "sgemm" / "sgemm.cu"


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None or kp.gpumodel.sass.nvdisasm() is None,
                    reason="no nvcc or no nvdisasm here: the lines would be the source's, nothing re-read")  # fmt: skip
def test_a_bank_conflict_goal_sees_the_conflict_of_what_nvcc_re_reads_narrower():
    """siboehm's kernel 5 at 128³ (tests/test_profile.py) on the RTX A6000's SASS (sm_86): nvcc loads As's rows with
    LDS.128 whose lanes pair up on one address (no conflict) and re-reads each row's first float with a scalar LDS, the
    warp's two rows 256 bytes apart in one bank: a 2-way conflict. The lines a goal reads (Profile.lines, the H100's
    charged_lines) include such re-reads, as the GPU runs them and Nsight Compute counts them, so on those lines the As
    line misses a goal of no bank conflicts; counted at the LDS.128's width alone (the compiled lines, without the
    re-reads) it would not. (The H100's nvcc loads this line with scalar LDS, 2-way anyway: the A6000 shows a
    re-read.)"""
    checked = helpers.load_kernel(SGEMM, target="cpu", check=True, quiet=True)
    torch.manual_seed(0)
    p = kp.gpumodel.profile.profile(
        checked.sgemm, torch.randn(128, 128), torch.randn(128, 128), torch.randn(128, 128), 0.5, 3.0, 5
    )
    (kernel,) = {la.kernel for la in p.launches}
    as_line = next(n for n, ln in enumerate(SGEMM.read_text().splitlines(), 1) if "regM[i] = As[" in ln)
    found = [i.opcode for i in p.kernel_sass(kernel, "RTX A6000") if i.line == as_line and i.space == "shared"]
    if sorted(found) != ["LDS"] * 8 + ["LDS.128"] * 16:
        pytest.skip(f"this nvcc compiles kernel 5's As loads otherwise than the hand count assumes: {found}")
    assert p.lines == p.charged_lines("H100")  # what a goal reads: the lines as charged, re-reads included
    (wide,) = [ln for ln in p.compiled("RTX A6000")[0] if ln.line == as_line and ln.space == "shared"]
    assert wide.worst == 1  # the LDS.128 alone: lanes paired on one row's float4, no conflict
    charged = types.SimpleNamespace(lines=p.charged_lines("RTX A6000"))
    missed = {m.where: m.value for m in misses(charged, [Goal("bank-conflict ways", 1)])}
    assert missed[f"sgemm.cu:{as_line}"] == 2
