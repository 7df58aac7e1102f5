// Puzzle 14 · warp_sum: out[w] = the sum of the 32 elements of warp w (a[32 w] ... a[32 w + 31]; past the end: 0).
// spec:   out = a padded to a multiple of 32, as rows of 32, summed along the rows
// launch: ceil(size / 64) blocks of 64 threads (2 warps each)
// target: no shared memory: the lanes of a warp pass values to each other with __shfl_down_sync
#include "kp.cuh"

// hints: puzzle("warp_sum", hint=1), then hint=2 and hint=3
__global__ void warp_sum(const float* a, float* out, int size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < size ? a[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  if (threadIdx.x % 32 == 0 && i < size) out[i / 32] = v;
}
