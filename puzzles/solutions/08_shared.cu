// Puzzle 8 · shared: out[i] = a[i] + 10, through shared memory.
// spec:   out = a + 10
// launch: ceil(size / 32) blocks of 32 threads
// target: each thread reads a once from global memory into `cache`, and reads `cache` once
#include "kp.cuh"

// hints: puzzle("shared", hint=1), then hint=2 and hint=3
__global__ void shared(const float* a, float* out, int size) {
  __shared__ float cache[32];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (i < size) cache[t] = a[i];
  __syncthreads();
  if (i < size) out[i] = cache[t] + 10;
}
