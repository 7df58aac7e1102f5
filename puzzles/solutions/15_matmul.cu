// Puzzle 15 · matmul: out = a @ b, a is n x m, b is m x k, out is n x k (row-major).
// spec:   out = a @ b
// launch: a grid of (ceil(k / 16), ceil(n / 16)) blocks of 16 x 16 threads; thread (x, y) of block (bx, by)
//         computes out[by * 16 + y][bx * 16 + x]
// target: each thread reads a and b once per 16-wide tile of m; goal: at most 0.25 global loads per FMA
#include "kp.cuh"

// hints: puzzle("matmul", hint=1), then hint=2 and hint=3
__global__ void matmul(const float* a, const float* b, float* out, int n, int m, int k) {
  __shared__ float ta[16][16], tb[16][16];
  int x = threadIdx.x, y = threadIdx.y;
  int row = blockIdx.y * 16 + y, col = blockIdx.x * 16 + x;
  float acc = 0.0f;
  for (int m0 = 0; m0 < m; m0 += 16) {
    ta[y][x] = row < n && m0 + x < m ? a[row * m + m0 + x] : 0.0f;
    tb[y][x] = m0 + y < m && col < k ? b[(m0 + y) * k + col] : 0.0f;
    __syncthreads();
    for (int j = 0; j < 16; ++j) acc += ta[y][j] * tb[j][x];
    __syncthreads();
  }
  if (row < n && col < k) out[row * k + col] = acc;
}
