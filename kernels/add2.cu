// add2: the elementwise sum of two tensors of the same shape (notebook 01 trains a² + b² through it).
//
// forward:  c[i] = a[i] + b[i]
// backward: dL/da = dL/dc and dL/db = dL/dc: the gradient passes through, no kernel needed
// shapes:   a, b and c share one shape (contiguous; any number of elements, 0 included)
// dtypes:   float32 and float64 (templated on T)
// kernels:  v1 add2_fwd_kernel: one thread per element, 256 threads per block (the plain first version)
//           v2 add2_fwd_kernel_v2: one thread per Pack of N elements (16 bytes: 4 floats or 2 doubles),
//              moved with one 16-byte load per input and one 16-byte store where a, b and c are 16-byte
//              aligned (torch's allocations are; a view such as x[1:] is not: then one by one); the last
//              thread takes what is left of n. A quarter of v1's memory instructions for the same bytes.
//           The op `add2` launches v2; the op `add2_v1` launches v1, to compare the two.
// saved for backward: nothing
#include "common/kp.cuh"

// The op on element i: every kernel below runs this one line, so an edit here changes them all.
template <typename T>
__device__ __forceinline__ void add2_at(const T* a, const T* b, T* c, int64_t i) {
  c[i] = a[i] + b[i];
}

template <typename T>
__global__ void add2_fwd_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) add2_at(a, b, c, i);
}

template <typename T>
__global__ void add2_fwd_kernel_v2(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int64_t n,
                                   bool packed) {
  constexpr int N = Pack<T>::N;
  int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  if (packed && i + N <= n) {
    Pack<T> pa = load_pack(a + i), pb = load_pack(b + i), pc;
#pragma unroll
    for (int k = 0; k < N; ++k) add2_at(pa.v, pb.v, pc.v, k);  // in registers
    store_pack(c + i, pc);
  } else {  // not 16-byte aligned (a view such as x[1:]), or the last thread: one element at a time
    for (int64_t end = i + N < n ? i + N : n; i < end; ++i) add2_at(a, b, c, i);
  }
}

template <typename T>
void add2_fwd_v1(const T* a, const T* b, T* c, int64_t n, cudaStream_t stream) {
  if (n == 0) return;  // a grid of zero blocks is an invalid configuration
  const int threads = 256;
  add2_fwd_kernel<T><<<ceil_div<int64_t>(n, threads), threads, 0, stream>>>(a, b, c, n);
  KP_CHECK_LAUNCH();
}

template <typename T>
void add2_fwd(const T* a, const T* b, T* c, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  const int threads = 256;
  add2_fwd_kernel_v2<T>
      <<<ceil_div<int64_t>(n, threads * Pack<T>::N), threads, 0, stream>>>(a, b, c, n, kp::packs_fit(a, b, c));
  KP_CHECK_LAUNCH();
}

template void add2_fwd_v1<float>(const float*, const float*, float*, int64_t, cudaStream_t);
template void add2_fwd_v1<double>(const double*, const double*, double*, int64_t, cudaStream_t);
template void add2_fwd<float>(const float*, const float*, float*, int64_t, cudaStream_t);
template void add2_fwd<double>(const double*, const double*, double*, int64_t, cudaStream_t);
