// Kernels whose memory hierarchy figures follow by hand (tests/test_caches.py; the rules are kp/caches.py's, the
// inputs kernels/common/cuda_cpu_profile.h's "memory hierarchy's inputs"). One launcher runs kernel `which`.
//
//   tiles  grid (p, q) of 32-thread blocks: block (x, y) reads a's row y (32 floats: shared along x) and b's
//          column x (32 floats: shared along y), and writes its own 32 floats of out, as a GEMM's tiles do
//   reuse  q blocks of 32 threads: each thread reads the same float of x p times (a block's L1 hits)
//   uneven q blocks of p warps: warp w reads its float w + 1 times (the block's slowest warp waits p times)
//   strata grid (p, q) of 32-thread blocks: block b = (x, y) sets out[b] to 1 and waits at a[b] __syncthreads: the
//          blocks a sample ran are those of out set, and the barriers counted are the sum of their weights x a[b]
//   groups q blocks of 32 threads: block b reads w's slice b / p (32 floats, which the p blocks of its group share, as
//          the channels of an involution group share a weight) and its own 32 floats of x, and writes its 32 of out
//   mixed  q blocks of 32 threads, one load through a pointer chosen per lane: lanes 0-15 read their block's 16
//          floats of x, lanes 16-31 the 16 floats of w that the p blocks of a group share; writes its 32 of out
#include <stdexcept>

#include "kp.cuh"

__global__ void tiles(const float* a, const float* b, float* out) {
  const int t = threadIdx.x;
  out[(blockIdx.y * gridDim.x + blockIdx.x) * 32 + t] = a[blockIdx.y * 32 + t] + b[blockIdx.x * 32 + t];
}

__global__ void reuse(const float* x, float* out, int times) {
  const int i = blockIdx.x * 32 + threadIdx.x;
  float sum = 0;
  for (int k = 0; k < times; ++k) sum += x[i];
  out[i] = sum;
}

__global__ void uneven(const float* x, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float sum = 0;
  for (int k = 0; k <= int(threadIdx.x / 32); ++k) sum += x[i];
  out[i] = sum;
}

__global__ void strata(const float* a, float* out) {
  const int b = blockIdx.y * gridDim.x + blockIdx.x, waits = int(a[b]);
  if (threadIdx.x == 0) out[b] = 1;
  for (int k = 0; k < waits; ++k) __syncthreads();
}

__global__ void groups(const float* x, const float* w, float* out, int p) {
  const int i = blockIdx.x * 32 + threadIdx.x;
  out[i] = x[i] + w[blockIdx.x / p * 32 + threadIdx.x];
}

__global__ void mixed(const float* x, const float* w, float* out, int p) {
  const int t = threadIdx.x, i = blockIdx.x * 32 + t;
  const float* from = t < 16 ? x + blockIdx.x * 16 + t : w + blockIdx.x / p * 16 + t - 16;
  out[i] = *from;
}

void run_hierarchy(int64_t which, const float* a, const float* b, float* out, int p, int q) {
  if (which == 0)
    tiles<<<dim3(p, q), 32>>>(a, b, out);
  else if (which == 1)
    reuse<<<q, 32>>>(a, out, p);
  else if (which == 2)
    uneven<<<q, 32 * p>>>(a, out);
  else if (which == 3)
    strata<<<dim3(p, q), 32>>>(a, out);
  else if (which == 4)
    groups<<<q, 32>>>(a, b, out, p);
  else if (which == 5)
    mixed<<<q, 32>>>(a, b, out, p);
  else
    throw std::invalid_argument("no such kernel");
  KP_CHECK_LAUNCH();
}
