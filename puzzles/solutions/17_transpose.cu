// Puzzle 17 · transpose: out[c][r] = a[r][c], a rows x cols, out cols x rows (both row-major).
// spec:   out = a.T
// launch: blocks of 32 x 8 threads, one per 32 x 32 tile of a: ceil(cols / 32) x ceil(rows / 32) of them
// target: each thread reads 4 elements and writes 4; goals: both coalesced, no shared-memory bank conflicts
#include "kp.cuh"

// hints: puzzle("transpose", hint=1), then hint=2 and hint=3
__global__ void transpose(const float* a, float* out, int rows, int cols) {
  __shared__ float tile[32][33];  // 33: a column of the tile falls in 32 different banks
  int x = threadIdx.x, y = threadIdx.y, r0 = blockIdx.y * 32, c0 = blockIdx.x * 32;
  for (int j = y; j < 32; j += 8)
    if (r0 + j < rows && c0 + x < cols) tile[j][x] = a[(r0 + j) * cols + c0 + x];
  __syncthreads();
  for (int j = y; j < 32; j += 8)
    if (c0 + j < cols && r0 + x < rows) out[(c0 + j) * rows + r0 + x] = tile[x][j];
}
