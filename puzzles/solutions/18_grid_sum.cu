// Puzzle 18 · grid_sum: out[0] = a[0] + ... + a[size - 1] over many blocks (out starts at zero).
// spec:   out = a.sum()
// launch: ceil(size / 128) blocks of 128 threads
// goal:   one global atomic per block
#include "kp.cuh"

// hints: puzzle("grid_sum", hint=1), then hint=2 and hint=3
__global__ void grid_sum(const float* a, float* out, int size) {
  __shared__ float partial[128];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  partial[t] = i < size ? a[i] : 0.0f;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) partial[t] += partial[t + half];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, partial[0]);
}
