"""kp.checksource: the loop whose iterations a race spans and the `if` a barrier is under, read from a `.cu` file's
text (comments do not count)."""

from kp.checksource import loop_carried, under_if

KERNEL = """\
__global__ void k(float* s, int n) {
  for (int b = 0; b < n; b += 64) {  // for (a comment) {
    s[0] = 1;
    __syncthreads();
    float v = s[1];
  }
  if (n > 3) __syncthreads();
  if (n > 4) {
    for (int j = 0; j < 2; ++j) {
      __syncthreads();
    }
  } else
    __syncthreads();
  __syncthreads();
  while (n--) { s[2] = 0; s[3] = s[2]; }
}
"""


def write(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(KERNEL)
    return str(path)


def test_two_lines_a_barrier_separates_in_a_loop_body_are_loop_carried(tmp_path):
    path = write(tmp_path)
    assert loop_carried(path, 3, 5) == (2, [4])
    assert loop_carried(path, 15, 15) is None  # one line: nothing between
    assert loop_carried(path, 3, 7) is None  # not in one loop body
    assert loop_carried(tmp_path / "missing.cu", 3, 5) is None


def test_a_barrier_under_an_if_or_else_through_loops_and_one_at_the_functions_level(tmp_path):
    path = write(tmp_path)
    assert under_if(path, 7) == 7  # `if (...) __syncthreads();`
    assert under_if(path, 10) == 8  # in a loop, in the if's block
    assert under_if(path, 13) == 12  # the else's statement
    assert under_if(path, 14) is None  # at the function's level
    assert under_if(path, 4) is None  # in a loop at the function's level
