// Puzzle 15 · matmul: out = a @ b, a is n x m, b is m x k, out is n x k (row-major).
// spec:   out = a @ b
// launch: a grid of (ceil(k / 16), ceil(n / 16)) blocks of 16 x 16 threads; thread (x, y) of block (bx, by)
//         computes out[by * 16 + y][bx * 16 + x]
// target: each thread reads a and b once per 16-wide tile of m; goal: at most 0.25 global loads per FMA
#include "kp.cuh"

// hints: puzzle("matmul", hint=1), then hint=2 and hint=3
__global__ void matmul(const float* a, const float* b, float* out, int n, int m, int k) {
  // FILL ME IN (about 12 lines)
}
