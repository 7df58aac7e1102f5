// template_op: y = f(x, alpha), elementwise, with its own backward kernel (by `make new-op`).
//
// To make it yours: edit f and df under EDIT HERE below (the only math in this file: both kernels
// call them), then the reference in notebooks/NN_template_op.ipynb (EDIT HERE too), then the lines
// below; run the notebook and `pytest tests/test_template_op.py`. As generated, both pass.
//
// forward:  y[i] = f(x[i], alpha)
// backward: dL/dx[i] = dL/dy[i] · df(x[i], alpha), where df = ∂f/∂x
// f, df:    Swish: f = x·σ(αx), df = σ(αx)·(1 + αx·(1 - σ(αx))), σ(x) = 1 / (1 + e^-x); SiLU at α = 1  // scalar-only
// plain: // f, df:    SiLU: f(x) = x·σ(x), df(x) = σ(x)·(1 + x·(1 - σ(x))), where σ(x) = 1 / (1 + e^-x)
// alpha:    a float argument of both ops; autograd takes it as a constant (no gradient)  // scalar-only
// shapes:   x, y, dL/dy and dL/dx share one shape (contiguous; any number of elements, 0 included)
// dtypes:   float32 and float64 (templated on T; poly2.cu shows how to take half types too)
// launch:   one thread per Pack of N elements (16 bytes: 4 floats or 2 doubles), 256 threads per block, for
//           both kernels; 16-byte loads and stores where the tensors are aligned, else one by one
// saved for backward: x
#include "common/kp.cuh"

// ---- EDIT HERE: f and its derivative df = ∂f/∂x, on one element (exp(float) is the float overload) ----
template <typename T>
__device__ __forceinline__ T f(T x, T alpha) {
  T s = T(1) / (T(1) + exp(-alpha * x));  // σ(αx)  // scalar-only
  // plain: T s = T(1) / (T(1) + exp(-x));  // σ(x)
  return x * s;
}

template <typename T>
__device__ __forceinline__ T df(T x, T alpha) {
  T s = T(1) / (T(1) + exp(-alpha * x));       // scalar-only
  return s * (T(1) + alpha * x * (T(1) - s));  // scalar-only
  // plain: T s = T(1) / (T(1) + exp(-x));
  // plain: return s * (T(1) + x * (T(1) - s));
}
// ---- end of EDIT HERE: the kernels and launchers below need no change for a new f ----

// Each thread takes N consecutive elements (a Pack: 16 bytes, 4 floats or 2 doubles): with one 16-byte load and
// store where `vec` (every tensor 16-byte aligned, the same for every thread), else one by one; the last thread
// takes what is left of n. See add2.cu for the step from one element per thread.
template <typename T>
__global__ void template_op_fwd_kernel(const T* x, T* y, int64_t n, bool vec, T alpha) {
  constexpr int N = Pack<T>::N;
  int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  if (vec && i + N <= n) {
    Pack<T> px = load_pack(x + i), py;
#pragma unroll
    for (int k = 0; k < N; ++k) py.v[k] = f(px.v[k], alpha);
    store_pack(y + i, py);
  } else {
    for (int64_t end = i + N < n ? i + N : n; i < end; ++i) y[i] = f(x[i], alpha);
  }
}

template <typename T>
__global__ void template_op_bwd_kernel(const T* grad_y, const T* x, T* grad_x, int64_t n, bool vec, T alpha) {
  constexpr int N = Pack<T>::N;
  int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  if (vec && i + N <= n) {
    Pack<T> pg = load_pack(grad_y + i), px = load_pack(x + i), pdx;
#pragma unroll
    for (int k = 0; k < N; ++k) pdx.v[k] = pg.v[k] * df(px.v[k], alpha);
    store_pack(grad_x + i, pdx);
  } else {
    for (int64_t end = i + N < n ? i + N : n; i < end; ++i) grad_x[i] = grad_y[i] * df(x[i], alpha);
  }
}

template <typename T>
void template_op_fwd(const T* x, T* y, int64_t n, T alpha, cudaStream_t stream) {
  if (n == 0) return;  // a grid of zero blocks is an invalid configuration
  const int threads = 256;
  const int64_t blocks = ceil_div<int64_t>(n, threads * Pack<T>::N);
  template_op_fwd_kernel<T><<<blocks, threads, 0, stream>>>(x, y, n, kp::packs_fit(x, y), alpha);
  KP_CHECK_LAUNCH();
}

template <typename T>
void template_op_bwd(const T* grad_y, const T* x, T* grad_x, int64_t n, T alpha, cudaStream_t stream) {
  if (n == 0) return;
  const int threads = 256;
  const int64_t blocks = ceil_div<int64_t>(n, threads * Pack<T>::N);
  bool vec = kp::packs_fit(grad_y, x, grad_x);
  template_op_bwd_kernel<T><<<blocks, threads, 0, stream>>>(grad_y, x, grad_x, n, vec, alpha);
  KP_CHECK_LAUNCH();
}

// The launchers' float and double versions, which the binding calls (T deduced from the arguments).
template void template_op_fwd(const float*, float*, int64_t, float alpha, cudaStream_t);
template void template_op_fwd(const double*, double*, int64_t, double alpha, cudaStream_t);
template void template_op_bwd(const float*, const float*, float*, int64_t, float alpha, cudaStream_t);
template void template_op_bwd(const double*, const double*, double*, int64_t, double alpha, cudaStream_t);
