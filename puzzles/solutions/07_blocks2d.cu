// Puzzle 7 · blocks2d: out[r][c] = a[r][c] + 10, with a 2-D grid of 8 x 8 blocks.
// spec:   out = a + 10
// launch: a grid of (ceil(cols / 8), ceil(rows / 8)) blocks of 8 x 8 threads
#include "kp.cuh"

// hints: puzzle("blocks2d", hint=1), then hint=2 and hint=3
__global__ void blocks2d(const float* a, float* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[r * cols + c] = a[r * cols + c] + 10;
}
