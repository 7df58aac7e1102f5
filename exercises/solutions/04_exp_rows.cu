// Exercise 04 · exp_rows: lesson 04's exp over a matrix, one warp per row: out[r, c] = exp(x[r, c]).
// spec:   out = exp(x)
// launch: one block of 32 threads (a warp) per row, for any number of columns
// goal:   at most 4 sectors per request: at each step the warp reads 32 neighbouring floats of its row
#include "kp.cuh"

__global__ void exp_rows(const float* x, float* out, int rows, int cols) {
  const float* row = x + (size_t)blockIdx.x * cols;
  float* o = out + (size_t)blockIdx.x * cols;
  // Lanes stride the row by 32: lane l takes columns l, l + 32, ... (not a chunk of its own: those are apart).
  for (int c = threadIdx.x; c < cols; c += 32) o[c] = expf(row[c]);
}
