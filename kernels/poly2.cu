// poly2: the quadratic P2(x) = x² + 2x, elementwise (notebook 03 fits a + b·P2(c·x + d) to tan).
//
// forward:  y[i] = x[i]² + 2·x[i]
// backward: dL/dx[i] = dL/dy[i] · (2·x[i] + 2)   (P2's derivative is 2x + 2)
// shapes:   x, y, dL/dy and dL/dx share one shape (contiguous; any number of elements, 0 included)
// dtypes:   float32, float64, float16 and bfloat16 (templated on T; with __half and __nv_bfloat16 each
//           + and * goes through float and rounds to nearest even, as on a GPU and in torch; as in CUDA, an
//           int times a __half is ambiguous: write T(2) * x, as below)
// launch:   one thread per Pack of N elements (16 bytes: 4 floats, 2 doubles, 8 halves), 256 threads per block,
//           for both kernels; 16-byte loads and stores where the tensors are aligned
// saved for backward: x
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/kp.cuh"

// Each thread takes N consecutive elements (a Pack: 16 bytes, 4 floats, 2 doubles or 8 halves): with one 16-byte load
// and store where the tensors are 16-byte aligned (`packed`, the same for every thread), else one by one;
// the last thread takes what is left of n. See add2.cu for the step from one element per thread.
template <typename T>
__device__ __forceinline__ T poly2_of(T x) {
  return x * x + T(2) * x;
}

template <typename T>
__device__ __forceinline__ T poly2_grad(T grad_y, T x) {
  return grad_y * (T(2) * x + T(2));
}

template <typename T>
__global__ void poly2_fwd_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, bool packed) {
  constexpr int N = Pack<T>::N;
  int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  if (packed && i + N <= n) {
    Pack<T> px = load_pack(x + i), py;
#pragma unroll
    for (int k = 0; k < N; ++k) py.v[k] = poly2_of(px.v[k]);
    store_pack(y + i, py);
  } else {
    for (int64_t end = i + N < n ? i + N : n; i < end; ++i) y[i] = poly2_of(x[i]);
  }
}

template <typename T>
__global__ void poly2_bwd_kernel(const T* __restrict__ grad_y, const T* __restrict__ x, T* __restrict__ grad_x,
                                 int64_t n, bool packed) {
  constexpr int N = Pack<T>::N;
  int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  if (packed && i + N <= n) {
    Pack<T> pg = load_pack(grad_y + i), px = load_pack(x + i), pdx;
#pragma unroll
    for (int k = 0; k < N; ++k) pdx.v[k] = poly2_grad(pg.v[k], px.v[k]);
    store_pack(grad_x + i, pdx);
  } else {
    for (int64_t end = i + N < n ? i + N : n; i < end; ++i) grad_x[i] = poly2_grad(grad_y[i], x[i]);
  }
}

template <typename T>
void poly2_fwd(const T* x, T* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;  // a grid of zero blocks is an invalid configuration
  const int threads = 256;
  poly2_fwd_kernel<T><<<ceil_div<int64_t>(n, threads * Pack<T>::N), threads, 0, stream>>>(x, y, n, kp::packs_fit(x, y));
  KP_CHECK_LAUNCH();
}

template <typename T>
void poly2_bwd(const T* grad_y, const T* x, T* grad_x, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  const int threads = 256;
  bool packed = kp::packs_fit(grad_y, x, grad_x);
  poly2_bwd_kernel<T><<<ceil_div<int64_t>(n, threads * Pack<T>::N), threads, 0, stream>>>(grad_y, x, grad_x, n, packed);
  KP_CHECK_LAUNCH();
}

template void poly2_fwd<float>(const float*, float*, int64_t, cudaStream_t);
template void poly2_fwd<double>(const double*, double*, int64_t, cudaStream_t);
template void poly2_bwd<float>(const float*, const float*, float*, int64_t, cudaStream_t);
template void poly2_bwd<double>(const double*, const double*, double*, int64_t, cudaStream_t);
template void poly2_fwd<__half>(const __half*, __half*, int64_t, cudaStream_t);
template void poly2_fwd<__nv_bfloat16>(const __nv_bfloat16*, __nv_bfloat16*, int64_t, cudaStream_t);
template void poly2_bwd<__half>(const __half*, const __half*, __half*, int64_t, cudaStream_t);
template void poly2_bwd<__nv_bfloat16>(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int64_t,
                                       cudaStream_t);
