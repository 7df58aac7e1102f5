// Kernels that measure the CPU stand-in's own costs (bench/cpu_standin.py); plain CUDA.
//
//   sync_loop_kernel   `iters` __syncthreads per thread, nothing else: the price of one arrival
//   copy_kernel        y[i] = x[i], one thread per element: the price of one CUDA thread
#include "common/kp.cuh"

__global__ void sync_loop_kernel(int* out, int iters) {
  int rounds = 0;
  for (int k = 0; k < iters; ++k) {
    ++rounds;
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = rounds;
}

__global__ void copy_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}

void sync_loop(int* out, int blocks, int threads, int iters) {
  sync_loop_kernel<<<blocks, threads>>>(out, iters);
  KP_CHECK_LAUNCH();
}

void copy(const float* x, float* y, int64_t n) {
  if (n == 0) return;
  copy_kernel<<<ceil_div<int64_t>(n, 256), 256>>>(x, y, n);
  KP_CHECK_LAUNCH();
}
