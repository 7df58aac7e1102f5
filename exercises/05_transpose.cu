// Exercise 05 · transpose: out[c, r] = a[r, c], through a 32 x 32 tile of shared memory so that both the reads of a
// and the writes of out are along rows (lesson 05's linear reads its weights through such tiles).
// spec:   out = a.T (out is cols x rows)
// launch: blocks of 32 x 8 threads, one per 32 x 32 tile: blockIdx.x along a's columns, blockIdx.y along its rows
// goal:   at most 4 sectors per request (reads and writes along rows) and no bank conflict (1-way) in the tile
#include "kp.cuh"

__global__ void transpose(const float* a, float* out, int rows, int cols) {
  // Your kernel; the lesson's last cell grades it: exercise("05_transpose").
  // Stuck? exercise("05_transpose", hint=1), then hint=2 and hint=3.
}
