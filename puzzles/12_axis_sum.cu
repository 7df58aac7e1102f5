// Puzzle 12 · axis_sum: out[r] = a[r][0] + ... + a[r][cols - 1], one block per row.
// spec:   out = a.sum(1)
// launch: rows blocks of 256 threads (cols <= 256)
#include "kp.cuh"

// hints: puzzle("axis_sum", hint=1), then hint=2 and hint=3
__global__ void axis_sum(const float* a, float* out, int rows, int cols) {
  // FILL ME IN (about 9 lines)
}
