// Puzzle 18 · grid_sum: out[0] = a[0] + ... + a[size - 1] over many blocks (out starts at zero).
// spec:   out = a.sum()
// launch: ceil(size / 128) blocks of 128 threads
// goal:   one global atomic per block
#include "kp.cuh"

// hints: puzzle("grid_sum", hint=1), then hint=2 and hint=3
__global__ void grid_sum(const float* a, float* out, int size) {
  // FILL ME IN (about 9 lines)
}
