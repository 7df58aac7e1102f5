// Puzzle 3 · guard: out[i] = a[i] + 10, with more threads than elements.
// spec:   out = a + 10
// launch: one block of `size` rounded up to a multiple of 32 threads: some threads have no element
#include "kp.cuh"

// hints: puzzle("guard", hint=1), then hint=2 and hint=3
__global__ void guard(const float* a, float* out, int size) {
  int i = threadIdx.x;
  if (i < size) out[i] = a[i] + 10;
}
