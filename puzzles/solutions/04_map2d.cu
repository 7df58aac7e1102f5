// Puzzle 4 · map2d: out[r][c] = a[r][c] + 10 on a rows x cols matrix (row-major: element (r, c) is at r * cols + c).
// spec:   out = a + 10
// launch: one 2-D block of (cols, rows) threads, each rounded up to a multiple of 8
// goal:   coalesced: at most 4 sectors per request (32-byte sectors per warp-wide load or store)
#include "kp.cuh"

// hints: puzzle("map2d", hint=1), then hint=2 and hint=3
__global__ void map2d(const float* a, float* out, int rows, int cols) {
  int c = threadIdx.x, r = threadIdx.y;
  if (r < rows && c < cols) out[r * cols + c] = a[r * cols + c] + 10;
}
