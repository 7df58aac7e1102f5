// Puzzle 21 · block_sum: out[b] = the sum of a[256 b] ... a[256 b + 255] (past the end: 0), 128 threads per block.
// spec:   out = a padded to a multiple of 256, as rows of 256, summed along the rows
// launch: ceil(size / 256) blocks of 128 threads: each thread adds two elements as it loads them
// goals:  no divergent branch (a warp's lanes all take a step, or none do), no bank conflicts
#include "kp.cuh"

// hints: puzzle("block_sum", hint=1), then hint=2 and hint=3
__global__ void block_sum(const float* a, float* out, int size) {
  // FILL ME IN (about 9 lines)
}
