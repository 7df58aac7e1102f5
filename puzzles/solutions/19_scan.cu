// Puzzle 19 · scan: out[i] = a[0] + ... + a[i] over many blocks (an inclusive scan), in three launches:
//   scan_blocks: each block scans its 256 elements into out and writes its total to sums[block];
//   scan_sums:   one block scans sums (one element per block of the first launch, at most 256 of them);
//   add_sums:    each block but the first adds sums[block - 1] to its elements of out.
// The first two scan in shared memory alike: scan_shared, called by every thread of the block, can serve both.
// spec:   out = a.cumsum(0)
// launch: scan_blocks and add_sums ceil(size / 256) blocks of 256 threads, scan_sums 1 block of 256
#include "kp.cuh"

// hints: puzzle("scan", hint=1), then hint=2 and hint=3
// s[0 .. blockDim.x - 1] becomes its inclusive scan, in place (after a barrier: every thread of the block calls it).
__device__ void scan_shared(float* s) {
  int t = threadIdx.x;
  __syncthreads();
  for (int step = 1; step < blockDim.x; step *= 2) {
    float add = t >= step ? s[t - step] : 0.0f;
    __syncthreads();
    s[t] += add;
    __syncthreads();
  }
}

__global__ void scan_blocks(const float* a, float* sums, float* out, int size) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < size ? a[i] : 0.0f;
  scan_shared(s);
  if (i < size) out[i] = s[t];
  if (t == blockDim.x - 1) sums[blockIdx.x] = s[t];
}

__global__ void scan_sums(float* sums, int blocks) {
  __shared__ float s[256];
  int t = threadIdx.x;
  s[t] = t < blocks ? sums[t] : 0.0f;
  scan_shared(s);
  if (t < blocks) sums[t] = s[t];
}

__global__ void add_sums(const float* sums, float* out, int size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x > 0 && i < size) out[i] += sums[blockIdx.x - 1];
}
