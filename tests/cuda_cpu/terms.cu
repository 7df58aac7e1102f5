// Kernels whose GPU-model terms follow by hand: local memory (tests/test_local.py) and global atomics
// (tests/test_gputime.py: a known miss, the same-address serialisation is not modelled). One launcher runs case
// `which` over n threads in blocks of 256.
//
//   0 local_array      a per-thread float[64] indexed by data: nvcc keeps it on the stack (256 bytes per thread),
//                      filled by 16 STL.128 and read by one LDL: 64 + 1 lines of 128 bytes per warp
//   1 atomic_one       every thread adds 1 to out[0]: one address, served one after another at the L2
//   2 atomic_distinct  every thread adds 1 to out[i]: distinct addresses
#include <stdexcept>

#include "kp.cuh"

__global__ void local_array(const float* x, const int* idx, float* out, int n) {
  float a[64];  // indexed by idx[i] below, so no register can hold it: local memory
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int c = 0; c < 64; ++c) a[c] = x[c] + i;
  out[i] = a[idx[i] & 63];
}

__global__ void atomic_one(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, 1.0f);
}

__global__ void atomic_distinct(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out + i, 1.0f);
}

void run_terms(int64_t which, const float* x, const int* idx, float* out, int n) {
  const int threads = 256, blocks = (n + threads - 1) / threads;
  switch (which) {
    case 0:
      local_array<<<blocks, threads>>>(x, idx, out, n);
      break;
    case 1:
      atomic_one<<<blocks, threads>>>(out, n);
      break;
    case 2:
      atomic_distinct<<<blocks, threads>>>(out, n);
      break;
    default:
      throw std::invalid_argument("no such case");
  }
  KP_CHECK_LAUNCH();
}
