// Puzzle 12 · axis_sum: out[r] = a[r][0] + ... + a[r][cols - 1], one block per row.
// spec:   out = a.sum(1)
// launch: rows blocks of 256 threads (cols <= 256)
#include "kp.cuh"

// hints: puzzle("axis_sum", hint=1), then hint=2 and hint=3
__global__ void axis_sum(const float* a, float* out, int rows, int cols) {
  __shared__ float partial[256];
  int t = threadIdx.x, r = blockIdx.x;
  partial[t] = t < cols ? a[r * cols + t] : 0.0f;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) partial[t] += partial[t + half];
    __syncthreads();
  }
  if (t == 0) out[r] = partial[0];
}
