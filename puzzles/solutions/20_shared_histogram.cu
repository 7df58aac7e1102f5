// Puzzle 20 · shared_histogram: counts[b] = how many x[i] equal b (counts starts at zero), bins <= 64.
// spec:   counts = torch.bincount(x, minlength=bins)
// launch: ceil(size / 256) blocks of 256 threads
// goal:   at most one global atomic per bin per block
#include "kp.cuh"

// hints: puzzle("shared_histogram", hint=1), then hint=2 and hint=3
__global__ void shared_histogram(const int* x, int* counts, int size, int bins) {
  __shared__ int mine[64];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < bins) mine[t] = 0;
  __syncthreads();
  if (i < size) atomicAdd(&mine[x[i]], 1);
  __syncthreads();
  if (t < bins && mine[t] > 0) atomicAdd(&counts[t], mine[t]);
}
