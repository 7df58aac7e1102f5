// Exercise 07 · matmul_tiled: the next rung of lesson 07's ladder, out = a @ b (a: n x m, b: m x k), each block's 16 x
// 16 tile of out from 16 x 16 tiles of a and b staged in shared memory: every element loaded once per block serves
// 16 multiply-adds.
// spec:   out = a @ b
// launch: blocks of 16 x 16 threads over out: blockIdx.x along its columns, blockIdx.y along its rows
// goal:   at most 0.25 global load requests per FFMA (nvcc's SASS; one thread per output reading a row and a column
//         from global memory makes 2 per FFMA)
#include "kp.cuh"

__global__ void matmul_tiled(const float* a, const float* b, float* out, int n, int m, int k) {
  // Your kernel; the lesson's last cell grades it: exercise("07_matmul_tiled").
  // Stuck? exercise("07_matmul_tiled", hint=1), then hint=2 and hint=3.
}
