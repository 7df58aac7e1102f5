// Exercise 08 · row_sum: out[r] = the sum of row r, one block of 128 threads (4 warps) per row: each warp adds its
// lanes' partial sums with shuffles, the 4 warp sums meet in shared memory, and warp 0 adds those.
// spec:   out = a.sum(1)
// launch: one block of 128 threads per row
// goal:   no divergent branch (an `if (t % (2 * s) == 0)` tree diverges; a split at one lane, `lane < 4`, is allowed)
#include "kp.cuh"

__global__ void row_sum(const float* a, float* out, int rows, int cols) {
  __shared__ float warp_sums[4];
  const float* row = a + (size_t)blockIdx.x * cols;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float v = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) v += row[c];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {  // the whole warp: every lane the mask names calls the shuffle
    v = lane < 4 ? warp_sums[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
    if (lane == 0) out[blockIdx.x] = v;
  }
}
