// Puzzle 22 · softmax: out[r][c] = exp(a[r][c] - m) / sum over c' of exp(a[r][c'] - m), m the row's maximum.
// spec:   out = torch.softmax(a, 1)
// launch: rows blocks of 32 threads: one warp per row (any cols)
// target: no shared memory (the lanes pass values with __shfl_xor_sync); goal: loads and stores coalesced
#include "kp.cuh"

// hints: puzzle("softmax", hint=1), then hint=2 and hint=3
__global__ void softmax(const float* a, float* out, int rows, int cols) {
  // FILL ME IN (about 8 lines)
}
