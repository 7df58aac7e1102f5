// Puzzle 21 · block_sum: out[b] = the sum of a[256 b] ... a[256 b + 255] (past the end: 0), 128 threads per block.
// spec:   out = a padded to a multiple of 256, as rows of 256, summed along the rows
// launch: ceil(size / 256) blocks of 128 threads: each thread adds two elements as it loads them
// goals:  no divergent branch (a warp's lanes all take a step, or none do), no bank conflicts
#include "kp.cuh"

// hints: puzzle("block_sum", hint=1), then hint=2 and hint=3
__global__ void block_sum(const float* a, float* out, int size) {
  __shared__ float partial[128];
  int t = threadIdx.x, i = blockIdx.x * 256 + t;
  partial[t] = (i < size ? a[i] : 0.0f) + (i + 128 < size ? a[i + 128] : 0.0f);
  __syncthreads();
  for (int half = 64; half > 0; half /= 2) {
    if (t < half) partial[t] += partial[t + half];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}
