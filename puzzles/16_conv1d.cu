// Puzzle 16 · conv1d: out[i] = w[0] a[i] + w[1] a[i + 1] + ... + w[width - 1] a[i + width - 1] (past the end: 0).
// spec:   out = torch's conv1d of a (padded on the right with width - 1 zeros) by w: a cross-correlation
// launch: ceil(size / 64) blocks of 64 threads (width <= 8)
// target: at most 3 global reads per thread; goal: at most 0.25 global loads per FMA
#include "kp.cuh"

// hints: puzzle("conv1d", hint=1), then hint=2 and hint=3
__global__ void conv1d(const float* a, const float* w, float* out, int size, int width) {
  // FILL ME IN (about 9 lines)
}
