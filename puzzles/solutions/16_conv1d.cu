// Puzzle 16 · conv1d: out[i] = w[0] a[i] + w[1] a[i + 1] + ... + w[width - 1] a[i + width - 1] (past the end: 0).
// spec:   out = torch's conv1d of a (padded on the right with width - 1 zeros) by w: a cross-correlation
// launch: ceil(size / 64) blocks of 64 threads (width <= 8)
// target: at most 3 global reads per thread; goal: at most 0.25 global loads per FMA
#include "kp.cuh"

// hints: puzzle("conv1d", hint=1), then hint=2 and hint=3
__global__ void conv1d(const float* a, const float* w, float* out, int size, int width) {
  __shared__ float tile[64 + 7], weights[8];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  tile[t] = i < size ? a[i] : 0.0f;
  if (t < width - 1) tile[64 + t] = i + 64 < size ? a[i + 64] : 0.0f;
  if (t < width) weights[t] = w[t];
  __syncthreads();
  float acc = 0.0f;
  for (int k = 0; k < width; k++) acc += tile[t + k] * weights[k];
  if (i < size) out[i] = acc;
}
