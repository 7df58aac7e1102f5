// Exercise 09 · softmax_warp: lesson 09's row softmax, one warp per row: out[r, c] = exp(x[r, c] - max_r) / sum_r,
// the row's max and sum found with shuffles (__shfl_xor_sync: every lane ends with the result).
// spec:   out = softmax(x, dim=1)
// launch: one block of 32 threads (a warp) per row
// goal:   at most 4 sectors per request: lanes stride the row, 32 neighbouring floats per step
#include "kp.cuh"

__global__ void softmax_warp(const float* x, float* out, int rows, int cols) {
  // Your kernel; the lesson's last cell grades it: exercise("09_softmax_warp").
  // Stuck? exercise("09_softmax_warp", hint=1), then hint=2 and hint=3.
}
