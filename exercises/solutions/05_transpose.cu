// Exercise 05 · transpose: out[c, r] = a[r, c], through a 32 x 32 tile of shared memory so that both the reads of a
// and the writes of out are along rows (lesson 05's linear reads its weights through such tiles).
// spec:   out = a.T (out is cols x rows)
// launch: blocks of 32 x 8 threads, one per 32 x 32 tile: blockIdx.x along a's columns, blockIdx.y along its rows
// goal:   at most 4 sectors per request (reads and writes along rows) and no bank conflict (1-way) in the tile
#include "kp.cuh"

__global__ void transpose(const float* a, float* out, int rows, int cols) {
  __shared__ float tile[32][33];  // 33: a column of the tile falls in 32 different banks
  int c = blockIdx.x * 32 + threadIdx.x;
  for (int k = threadIdx.y; k < 32; k += 8) {
    int r = blockIdx.y * 32 + k;
    if (r < rows && c < cols) tile[k][threadIdx.x] = a[r * cols + c];
  }
  __syncthreads();
  int r = blockIdx.y * 32 + threadIdx.x;  // out's row is a's column: lanes now run along a's rows
  for (int k = threadIdx.y; k < 32; k += 8) {
    int oc = blockIdx.x * 32 + k;
    if (oc < cols && r < rows) out[oc * rows + r] = tile[threadIdx.x][k];
  }
}
