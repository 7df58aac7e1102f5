// Puzzle 10 · dot: out[0] = sum of a[i] * b[i].
// spec:   out = (a * b).sum()
// launch: one block of 256 threads (size <= 256)
// target: each thread reads a and b once; one thread writes out
#include "kp.cuh"

// hints: puzzle("dot", hint=1), then hint=2 and hint=3
__global__ void dot(const float* a, const float* b, float* out, int size) {
  __shared__ float partial[256];
  int t = threadIdx.x;
  partial[t] = t < size ? a[t] * b[t] : 0.0f;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) partial[t] += partial[t + half];
    __syncthreads();
  }
  if (t == 0) out[0] = partial[0];
}
