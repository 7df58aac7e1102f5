// poly2: the quadratic P2(x) = x² + 2x, elementwise (seed 001, fitted to tan as a + b·P2(c·x + d)).
//
// forward:  y[i] = x[i]² + 2·x[i]
// backward: dL/dx[i] = dL/dy[i] · (2·x[i] + 2)   (the seed's backward had a typo, `inptu`; this is the fixed one)
// shapes:   x, y, dL/dy and dL/dx share one shape (contiguous; any number of elements, 0 included)
// dtypes:   float32 and float64 (templated on T)
// launch:   one thread per element, 256 threads per block, for both kernels
// saved for backward: x
#include "common/kp.cuh"

template <typename T>
__global__ void poly2_fwd_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    T xi = x[i];
    y[i] = xi * xi + T(2) * xi;
  }
}

template <typename T>
__global__ void poly2_bwd_kernel(const T* __restrict__ grad_y, const T* __restrict__ x, T* __restrict__ grad_x,
                                 int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) grad_x[i] = grad_y[i] * (T(2) * x[i] + T(2));
}

template <typename T>
void poly2_fwd(const T* x, T* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;  // a grid of zero blocks is an invalid configuration
  const int threads = 256;
  poly2_fwd_kernel<T><<<ceil_div<int64_t>(n, threads), threads, 0, stream>>>(x, y, n);
  KP_CHECK_LAUNCH();
}

template <typename T>
void poly2_bwd(const T* grad_y, const T* x, T* grad_x, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  const int threads = 256;
  poly2_bwd_kernel<T><<<ceil_div<int64_t>(n, threads), threads, 0, stream>>>(grad_y, x, grad_x, n);
  KP_CHECK_LAUNCH();
}

template void poly2_fwd<float>(const float*, float*, int64_t, cudaStream_t);
template void poly2_fwd<double>(const double*, double*, int64_t, cudaStream_t);
template void poly2_bwd<float>(const float*, const float*, float*, int64_t, cudaStream_t);
template void poly2_bwd<double>(const double*, const double*, double*, int64_t, cudaStream_t);
