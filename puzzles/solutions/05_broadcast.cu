// Puzzle 5 · broadcast: out[r][c] = a[r] + b[c] (a column plus a row).
// spec:   out = a[:, None] + b[None, :]
// launch: one 2-D block of (cols, rows) threads, each rounded up to a multiple of 8
// goal:   coalesced: at most 4 sectors per request (32-byte sectors per warp-wide load or store)
#include "kp.cuh"

// hints: puzzle("broadcast", hint=1), then hint=2 and hint=3
__global__ void broadcast(const float* a, const float* b, float* out, int rows, int cols) {
  int c = threadIdx.x, r = threadIdx.y;
  if (r < rows && c < cols) out[r * cols + c] = a[r] + b[c];
}
