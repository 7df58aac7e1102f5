// Exercise 07 · matmul_tiled: the next rung of lesson 07's ladder, out = a @ b (a: n x m, b: m x k), each block's 16 x
// 16 tile of out from 16 x 16 tiles of a and b staged in shared memory: every element loaded once per block serves
// 16 multiply-adds.
// spec:   out = a @ b
// launch: blocks of 16 x 16 threads over out: blockIdx.x along its columns, blockIdx.y along its rows
// goal:   at most 0.25 global load requests per FFMA (nvcc's SASS; one thread per output reading a row and a column
//         from global memory makes 2 per FFMA)
#include "kp.cuh"

constexpr int T = 16;

__global__ void matmul_tiled(const float* a, const float* b, float* out, int n, int m, int k) {
  __shared__ float as[T][T + 1], bs[T][T + 1];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float sum = 0.0f;
  for (int t = 0; t < m; t += T) {
    as[threadIdx.y][threadIdx.x] = row < n && t + threadIdx.x < m ? a[row * m + t + threadIdx.x] : 0.0f;
    bs[threadIdx.y][threadIdx.x] = t + threadIdx.y < m && col < k ? b[(t + threadIdx.y) * k + col] : 0.0f;
    __syncthreads();
    for (int j = 0; j < T; ++j) sum += as[threadIdx.y][j] * bs[j][threadIdx.x];
    __syncthreads();  // every thread is done with these tiles before the next are loaded
  }
  if (row < n && col < k) out[row * k + col] = sum;
}
