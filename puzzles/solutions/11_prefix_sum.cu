// Puzzle 11 · prefix_sum: out[i] = a[0] + ... + a[i] (an inclusive scan).
// spec:   out = a.cumsum(0)
// launch: one block of 256 threads (size <= 256)
#include "kp.cuh"

// hints: puzzle("prefix_sum", hint=1), then hint=2 and hint=3
__global__ void prefix_sum(const float* a, float* out, int size) {
  __shared__ float sums[256];
  int t = threadIdx.x;
  sums[t] = t < size ? a[t] : 0.0f;
  __syncthreads();
  for (int step = 1; step < blockDim.x; step *= 2) {
    float add = t >= step ? sums[t - step] : 0.0f;
    __syncthreads();  // everyone has read before anyone writes
    sums[t] += add;
    __syncthreads();
  }
  if (t < size) out[t] = sums[t];
}
