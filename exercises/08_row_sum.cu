// Exercise 08 · row_sum: out[r] = the sum of row r, one block of 128 threads (4 warps) per row: each warp adds its
// lanes' partial sums with shuffles, the 4 warp sums meet in shared memory, and warp 0 adds those.
// spec:   out = a.sum(1)
// launch: one block of 128 threads per row
// goal:   no divergent branch (an `if (t % (2 * s) == 0)` tree diverges; a split at one lane, `lane < 4`, is allowed)
#include "kp.cuh"

__global__ void row_sum(const float* a, float* out, int rows, int cols) {
  // Your kernel; the lesson's last cell grades it: exercise("08_row_sum").
  // Stuck? exercise("08_row_sum", hint=1), then hint=2 and hint=3.
}
