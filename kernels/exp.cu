// exp: the elementwise exponential, used as an activation and as a link function
// (notebook 04: the link of a Poisson regression).
//
// forward:  y[i] = exp(x[i])
// backward: dL/dx[i] = dL/dy[i] · y[i]   (d exp(x)/dx = exp(x): the saved output, no second exp)
// shapes:   x, y, dL/dy and dL/dx share one shape (contiguous; any number of elements, 0 included)
// dtypes:   float32 and float64 (templated on T); exp overflows to inf above x ≈ 88.72 (float32)
//           and x ≈ 709.78 (float64), and underflows to 0 below x ≈ -103.97 (float32) and -745.13 (float64)
// launch:   one thread per Pack of N elements (16 bytes: 4 floats or 2 doubles), 256 threads per block,
//           for both kernels; 16-byte loads and stores where the tensors are aligned
// saved for backward: y (the output, not x)
#include "common/kp.cuh"

// Each thread takes N consecutive elements (a Pack: 16 bytes, 4 floats or 2 doubles): with one 16-byte load
// and store where the tensors are 16-byte aligned (`packed`, the same for every thread), else one by one;
// the last thread takes what is left of n. See add2.cu for the step from one element per thread.
template <typename T>
__global__ void exp_fwd_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, bool packed) {
  constexpr int N = Pack<T>::N;
  int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  if (packed && i + N <= n) {
    Pack<T> px = load_pack(x + i), py;
#pragma unroll
    for (int k = 0; k < N; ++k) py.v[k] = exp(px.v[k]);  // exp(float) is the float overload, as in CUDA's math API
    store_pack(y + i, py);
  } else {
    for (int64_t end = i + N < n ? i + N : n; i < end; ++i) y[i] = exp(x[i]);
  }
}

template <typename T>
__global__ void exp_bwd_kernel(const T* __restrict__ grad_y, const T* __restrict__ y, T* __restrict__ grad_x, int64_t n,
                               bool packed) {
  constexpr int N = Pack<T>::N;
  int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  if (packed && i + N <= n) {
    Pack<T> pg = load_pack(grad_y + i), py = load_pack(y + i), pdx;
#pragma unroll
    for (int k = 0; k < N; ++k) pdx.v[k] = pg.v[k] * py.v[k];
    store_pack(grad_x + i, pdx);
  } else {
    for (int64_t end = i + N < n ? i + N : n; i < end; ++i) grad_x[i] = grad_y[i] * y[i];
  }
}

template <typename T>
void exp_fwd(const T* x, T* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;  // a grid of zero blocks is an invalid configuration
  const int threads = 256;
  exp_fwd_kernel<T><<<ceil_div<int64_t>(n, threads * Pack<T>::N), threads, 0, stream>>>(x, y, n, kp::packs_fit(x, y));
  KP_CHECK_LAUNCH();
}

template <typename T>
void exp_bwd(const T* grad_y, const T* y, T* grad_x, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  const int threads = 256;
  bool packed = kp::packs_fit(grad_y, y, grad_x);
  exp_bwd_kernel<T><<<ceil_div<int64_t>(n, threads * Pack<T>::N), threads, 0, stream>>>(grad_y, y, grad_x, n, packed);
  KP_CHECK_LAUNCH();
}

template void exp_fwd<float>(const float*, float*, int64_t, cudaStream_t);
template void exp_fwd<double>(const double*, double*, int64_t, cudaStream_t);
template void exp_bwd<float>(const float*, const float*, float*, int64_t, cudaStream_t);
template void exp_bwd<double>(const double*, const double*, double*, int64_t, cudaStream_t);
