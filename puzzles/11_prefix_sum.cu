// Puzzle 11 · prefix_sum: out[i] = a[0] + ... + a[i] (an inclusive scan).
// spec:   out = a.cumsum(0)
// launch: one block of 256 threads (size <= 256)
#include "kp.cuh"

// hints: puzzle("prefix_sum", hint=1), then hint=2 and hint=3
__global__ void prefix_sum(const float* a, float* out, int size) {
  // FILL ME IN (about 11 lines)
}
