"""The lessons' exercises (exercises/, graded by kp.exercise through kp.grade): every solution passes on every target
(its values in check mode on ragged sizes, its counts of one thread, its performance goals in the GPU model's
counters); every stub fails; and for each performance goal a correct but slow kernel fails, the FAIL naming the goal's
counter and the line (for a kernel-wide counter, the kernel) that misses it."""

import re

import pytest

from kp.exercise import EXERCISES_DIR, exercise, exercises
from kp.files import ROOT, write_if_changed

NAMES = [e.file[:-3] for e in exercises()]

# Per exercise: a body for its kernel that is right on every size but slow in the way its goal counts, the counter
# that must name it, and the text of the line the FAIL must point at.
SLOW = {
    "01_grid_stride": (
        """  int threads = gridDim.x * blockDim.x, chunk = (size + threads - 1) / threads;
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = t * chunk; i < size && i < (t + 1) * chunk; ++i)  // a chunk per thread: lanes 16 floats apart
    out[i] = a[i] * a[i] + b[i] * b[i];""",
        "sectors per request",
        "out[i] = a[i] * a[i]",
    ),
    "02_broadcast": (
        """  int c = blockIdx.x * blockDim.x + threadIdx.y, r = blockIdx.y * blockDim.y + threadIdx.x;  // x: a column
  if (r < rows && c < cols) out[r * cols + c] = a[r * cols + c] * w[c] + bias[r];""",
        "sectors per request",
        "out[r * cols + c] =",
    ),
    "03_odd_poly": (
        """  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < size) {
    float v = x[i], ax = fabsf(v);
    float p = coef[0] + ax * (coef[1] + ax * coef[2]);
    if (v >= 0) out[i] = p;
    else out[i] = -p;
  }""",
        "divergent branches",
        "if (v >= 0)",
    ),
    "04_exp_rows": (
        """  const float* row = x + (size_t)blockIdx.x * cols;
  float* o = out + (size_t)blockIdx.x * cols;
  int chunk = (cols + 31) / 32;
  for (int c = threadIdx.x * chunk; c < cols && c < (threadIdx.x + 1) * chunk; ++c) o[c] = expf(row[c]);""",
        "sectors per request",
        "o[c] = expf(row[c])",
    ),
    "05_transpose": (
        """  __shared__ float tile[32][32];
  int c = blockIdx.x * 32 + threadIdx.x;
  for (int k = threadIdx.y; k < 32; k += 8) {
    int r = blockIdx.y * 32 + k;
    if (r < rows && c < cols) tile[k][threadIdx.x] = a[r * cols + c];
  }
  __syncthreads();
  int r = blockIdx.y * 32 + threadIdx.x;
  for (int k = threadIdx.y; k < 32; k += 8) {
    int oc = blockIdx.x * 32 + k;
    if (oc < cols && r < rows) out[oc * rows + r] = tile[threadIdx.x][k];
  }""",
        "bank-conflict ways",
        "= tile[threadIdx.x][k]",
    ),
    "06_box3": (
        """  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < size) out[i] = ((i > 0 ? x[i - 1] : 0.0f) + x[i] + (i + 1 < size ? x[i + 1] : 0.0f)) / 3.0f;""",
        "sectors per request",
        "out[i] = ((i > 0",
    ),
    "07_matmul_tiled": (
        """  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  if (row < n && col < k) {
    float sum = 0.0f;
    for (int j = 0; j < m; ++j) sum += a[row * m + j] * b[j * k + col];  // two loads per FMA
    out[row * k + col] = sum;
  }""",
        "global loads per FMA",
        "sum += a[row * m + j]",
    ),
    "08_row_sum": (
        """  __shared__ float s[128];
  const float* row = a + (size_t)blockIdx.x * cols;
  float v = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) v += row[c];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int k = 1; k < 128; k *= 2) {
    if (threadIdx.x % (2 * k) == 0) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];""",
        "divergent branches",
        "if (threadIdx.x % (2 * k) == 0)",
    ),
    "09_softmax_warp": (
        """  const float* row = x + (size_t)blockIdx.x * cols;
  float* o = out + (size_t)blockIdx.x * cols;
  int chunk = (cols + 31) / 32, begin = threadIdx.x * chunk, end = begin + chunk < cols ? begin + chunk : cols;
  float m = -INFINITY;
  for (int c = begin; c < end; ++c) m = fmaxf(m, row[c]);
  for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, offset));
  float sum = 0.0f;
  for (int c = begin; c < end; ++c) sum += expf(row[c] - m);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffff, sum, offset);
  for (int c = begin; c < end; ++c) o[c] = expf(row[c] - m) / sum;""",
        "sectors per request",
        "m = fmaxf(m, row[c])",
    ),
}


def test_every_exercise_has_a_slow_kernel_here_and_every_goal_a_counter_it_misses():
    assert set(SLOW) == set(NAMES)
    for e in exercises():
        assert e.goals and len(e.hints) == 3 and (EXERCISES_DIR / e.file).is_file()
        assert {g.counter for g in e.goals} >= {SLOW[e.file[:-3]][1]}


@pytest.mark.parametrize("name", NAMES)
def test_the_solution_passes(name, target):
    result = exercise(name, solution=True, target=target, quiet=True)
    assert result.passed, result.message
    assert "meets the GPU model's goals" in result.message and "not counted" not in result.message


@pytest.mark.parametrize("name", NAMES)
def test_the_stub_fails_on_its_values(name):
    result = exercise(name, quiet=True, target="cpu")
    assert not result.passed and result.message.startswith("wrong result for "), result.message


def slow_file(name):
    """The solution with its kernel's body replaced by SLOW's, in build/exercises_slow/ (a fixed path: its build is
    cached from run to run)."""
    text = (EXERCISES_DIR / "solutions" / f"{name}.cu").read_text()
    head = re.search(r"__global__ void \w+\([^)]*\) \{\n", text)
    body_end = text.rindex("\n}\n")
    path = ROOT / "build" / "exercises_slow" / f"{name}.cu"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_if_changed(path, text[: head.end()] + SLOW[name][0] + text[body_end:])
    return path


@pytest.mark.parametrize("name", NAMES)
def test_a_correct_but_slow_kernel_fails_naming_the_counter_and_the_line(name, capsys):
    from kp.exercise import find_exercise
    from kp.grade import grade

    e, path = find_exercise(name), slow_file(name)
    body, counter, marker = SLOW[name]
    result = grade(e, path, target="cpu", title=f"slow {name}")
    assert not result.passed and result.profile is not None, result.message  # right on every size: it was counted
    said = capsys.readouterr().out
    assert "FAIL" in said and ("misses a goal of the GPU model" in said or "misses goals" in said), said
    missed = [m for m in result.missed if m.goal.counter == counter]
    assert missed, result.message
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if marker in text)
    assert any(m.where == f"{path.name}:{line}" for m in missed), (line, [str(m) for m in missed])
    assert (
        f"{counter}: " in said
        and f"at {path.name}:{line}" in said
        and f"the goal is at most {missed[0].goal.most:g}" in said
    )
