// Puzzle 6 · blocks: out[i] = a[i] + 10, with blocks of 32 threads.
// spec:   out = a + 10
// launch: ceil(size / 32) blocks of 32 threads
#include "kp.cuh"

// hints: puzzle("blocks", hint=1), then hint=2 and hint=3
__global__ void blocks(const float* a, float* out, int size) {
  // FILL ME IN (about 2 lines)
}
