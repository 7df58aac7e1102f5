// Puzzle 9 · pooling: out[i] = a[i - 2] + a[i - 1] + a[i] (a value before the start counts 0).
// spec:   out = a + a shifted by 1 + a shifted by 2
// launch: ceil(size / 32) blocks of 32 threads
// target: at most 2 global reads per thread
#include "kp.cuh"

// hints: puzzle("pooling", hint=1), then hint=2 and hint=3
__global__ void pooling(const float* a, float* out, int size) {
  __shared__ float cache[32 + 2];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  cache[t + 2] = i < size ? a[i] : 0.0f;
  if (t < 2) cache[t] = i - 2 >= 0 && i - 2 < size ? a[i - 2] : 0.0f;
  __syncthreads();
  if (i < size) out[i] = cache[t] + cache[t + 1] + cache[t + 2];
}
