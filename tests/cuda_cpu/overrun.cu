// Kernels that reach outside their tensor, for tests/test_overrun.py: on the CPU stand-in each fails its launch
// naming the tensor, the side, the element and how far, at any distance (the tensor's redzones near it, its guard
// regions farther: kernels/common/cuda_cpu_redzones.cpp), and the process goes on.
//
//   shift_write_kernel  one thread per element of x; thread i writes x[i + shift] (shift 1: the off-by-one)
//   shift_read_kernel   one thread per element of out; thread i reads x[i + shift] into out[i]
//   both_ends_kernel    two threads: one writes x[-1], the other x[n], in the same launch
#include "kp.cuh"

__global__ void shift_write_kernel(float* x, long long shift, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i + shift] = 1.0f;
}

__global__ void shift_read_kernel(const float* x, float* out, long long shift, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i + shift];
}

__global__ void both_ends_kernel(float* x, int n) {
  if (threadIdx.x == 0) x[-1] = 1.0f;
  if (threadIdx.x == 1) x[n] = 1.0f;
}

void shift_write(float* x, long long shift, int n) {
  shift_write_kernel<<<ceil_div(n, 256), 256>>>(x, shift, n);
  KP_CHECK_LAUNCH();
}

void shift_read(const float* x, float* out, long long shift, int n) {
  shift_read_kernel<<<ceil_div(n, 256), 256>>>(x, out, shift, n);
  KP_CHECK_LAUNCH();
}

void both_ends(float* x, int n) {
  both_ends_kernel<<<1, 2>>>(x, n);
  KP_CHECK_LAUNCH();
}
