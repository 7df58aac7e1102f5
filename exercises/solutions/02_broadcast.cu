// Exercise 02 · broadcast: out[r, c] = a[r, c] * w[c] + bias[r] (lesson 02's mul_add, w broadcast down the rows and
// bias along the columns), the matrices row-major.
// spec:   out = a * w[None, :] + bias[:, None]
// launch: blocks of 16 x 16 threads over (columns, rows): blockIdx.x along the columns, blockIdx.y along the rows
// goal:   at most 4 sectors per request: a warp's lanes read and write neighbouring elements of a row
#include "kp.cuh"

__global__ void broadcast(const float* a, const float* w, const float* bias, float* out, int rows, int cols) {
  // threadIdx.x runs along a row: a warp (16 x 2 threads) reads two runs of 16 neighbouring floats.
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[r * cols + c] = a[r * cols + c] * w[c] + bias[r];
}
