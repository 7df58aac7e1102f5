// Puzzle 6 · blocks: out[i] = a[i] + 10, with blocks of 32 threads.
// spec:   out = a + 10
// launch: ceil(size / 32) blocks of 32 threads
#include "kp.cuh"

// hint: Block b holds elements b * blockDim.x to b * blockDim.x + blockDim.x - 1.
__global__ void blocks(const float* a, float* out, int size) {
  // FILL ME IN (about 2 lines)
}
