// Puzzle 5 · broadcast: out[r][c] = a[r] + b[c] (a column plus a row).
// spec:   out = a[:, None] + b[None, :]
// launch: one 2-D block of (cols, rows) threads, each rounded up to a multiple of 8
#include "kp.cuh"

// hint: As map2d; a is indexed by the row only, b by the column only.
__global__ void broadcast(const float* a, const float* b, float* out, int rows, int cols) {
  // FILL ME IN (about 2 lines)
}
