// Puzzle 22 · softmax: out[r][c] = exp(a[r][c] - m) / sum over c' of exp(a[r][c'] - m), m the row's maximum.
// spec:   out = torch.softmax(a, 1)
// launch: rows blocks of 32 threads: one warp per row (any cols)
// target: no shared memory (the lanes pass values with __shfl_xor_sync); goal: loads and stores coalesced
#include "kp.cuh"

// hints: puzzle("softmax", hint=1), then hint=2 and hint=3
__global__ void softmax(const float* a, float* out, int rows, int cols) {
  const float* row = a + blockIdx.x * cols;
  int lane = threadIdx.x;
  float m = -INFINITY, sum = 0.0f;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, row[c]);
  for (int k = 16; k > 0; k /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, k));
  for (int c = lane; c < cols; c += 32) sum += expf(row[c] - m);
  for (int k = 16; k > 0; k /= 2) sum += __shfl_xor_sync(0xffffffff, sum, k);
  for (int c = lane; c < cols; c += 32) out[blockIdx.x * cols + c] = expf(row[c] - m) / sum;
}
