// Kernels that fault, for tests/test_cuda_cpu_faults.py: on the CPU stand-in each fails its launch
// with CUDA's error and the kernel, thread, block and line, and the process goes on.
//
//   wild_write_kernel  thread (5,0,0) of block (1,0,0) writes `offset` floats past its pointer
//   stack_kernel       each thread fills a local array of KiB kibibytes, across a __syncthreads
//   assert_kernel      assert(x[i] >= 0) in every thread
//   trap_kernel        the thread with global index `at` calls __trap()
//   divide_kernel      integer division, by zero where b is 0 (a GPU gives an unspecified value)
#include <cassert>

#include "kp.cuh"

__global__ void wild_write_kernel(float* x, long long offset) {
  if (blockIdx.x == 1 && threadIdx.x == 5) x[offset] = 1.0f;
}

template <int KiB>
__global__ void stack_kernel(int* out) {
  volatile char local[KiB << 10];
  for (int i = 0; i < (KiB << 10); i += 4096) local[i] = char(i >> 12);
  __syncthreads();
  int sum = 0;
  for (int i = 0; i < (KiB << 10); i += 4096) sum += local[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

__global__ void assert_kernel(const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) assert(x[i] >= 0);
}

__global__ void trap_kernel(int at) {
  if (blockIdx.x * blockDim.x + threadIdx.x == at) __trap();
}

__global__ void divide_kernel(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] / b[i];
}

void wild_write(float* x, long long offset) {
  wild_write_kernel<<<2, 32>>>(x, offset);
  KP_CHECK_LAUNCH();
}

void stack(int* out, int kib, int blocks, int threads) {
  if (kib == 256)
    stack_kernel<256><<<blocks, threads>>>(out);
  else
    stack_kernel<600><<<blocks, threads>>>(out);
  KP_CHECK_LAUNCH();
}

void assert_nonnegative(const float* x, int n) {
  assert_kernel<<<ceil_div(n, 64), 64>>>(x, n);
  KP_CHECK_LAUNCH();
}

void trap(int at, int n) {
  trap_kernel<<<ceil_div(n, 64), 64>>>(at);
  KP_CHECK_LAUNCH();
}

void divide(const int* a, const int* b, int* out, int n) {
  divide_kernel<<<ceil_div(n, 64), 64>>>(a, b, out, n);
  KP_CHECK_LAUNCH();
}
