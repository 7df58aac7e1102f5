// Puzzle 17 · transpose: out[c][r] = a[r][c], a rows x cols, out cols x rows (both row-major).
// spec:   out = a.T
// launch: blocks of 32 x 8 threads, one per 32 x 32 tile of a: ceil(cols / 32) x ceil(rows / 32) of them
// target: each thread reads 4 elements and writes 4; goals: both coalesced, no shared-memory bank conflicts
#include "kp.cuh"

// hints: puzzle("transpose", hint=1), then hint=2 and hint=3
__global__ void transpose(const float* a, float* out, int rows, int cols) {
  // FILL ME IN (about 7 lines)
}
