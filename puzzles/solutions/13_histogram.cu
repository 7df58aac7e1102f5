// Puzzle 13 · histogram: counts[b] = how many x[i] equal b (counts starts at zero).
// spec:   counts = torch.bincount(x, minlength=bins)
// launch: ceil(size / 64) blocks of 64 threads
#include "kp.cuh"

// hints: puzzle("histogram", hint=1), then hint=2 and hint=3
__global__ void histogram(const int* x, int* counts, int size, int bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < size) atomicAdd(&counts[x[i]], 1);
}
