// Exercise 09 · softmax_warp: lesson 09's row softmax, one warp per row: out[r, c] = exp(x[r, c] - max_r) / sum_r,
// the row's max and sum found with shuffles (__shfl_xor_sync: every lane ends with the result).
// spec:   out = softmax(x, dim=1)
// launch: one block of 32 threads (a warp) per row
// goal:   at most 4 sectors per request: lanes stride the row, 32 neighbouring floats per step
#include "kp.cuh"

__global__ void softmax_warp(const float* x, float* out, int rows, int cols) {
  const float* row = x + (size_t)blockIdx.x * cols;
  float* o = out + (size_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += 32) m = fmaxf(m, row[c]);
  for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, offset));
  float sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += 32) sum += expf(row[c] - m);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffff, sum, offset);
  for (int c = threadIdx.x; c < cols; c += 32) o[c] = expf(row[c] - m) / sum;
}
