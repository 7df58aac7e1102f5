// softmax: the softmax of each row of a matrix, the output of a classifier and the weights of attention. Notebook 09
// climbs it as a ladder of five versions (llm.c's dev/cuda style); all five compute the same thing.
//
// forward:  y[r, c] = exp(x[r, c] - m_r) / s_r, with m_r = max_c x[r, c] and s_r = sum_c exp(x[r, c] - m_r):
//           subtracting the row's max keeps every exp at most 1, so a logit of 1e30 does not overflow. A row of
//           -inf only has m_r = -inf, exp(-inf - -inf) = exp(NaN): its softmax is NaN, as torch's is.
// backward: dL/dx[r, c] = y[r, c] (g[r, c] - sum_k g[r, k] y[r, k]), with g = dL/dy   (softmax_bwd_kernel)
// shapes:   x, y, g (R, C), contiguous; any R and C, 0 included
// dtypes:   float32, float64, float16 and bfloat16 (templated on T); sums and exps in float for the 16-bit types
//           and float32, in double for float64 (common/rows.cuh's acc_t)
// kernels:  v1 softmax_v1: one thread per row, three passes over it (max, sum, write); neighbouring threads read
//              addresses C apart, so no load coalesces, and R threads in all.
//           v2 softmax_v2: one block of 256 threads per row; each thread strides over the row, the 256 partial
//              maxima (then sums) meet in shared memory and reduce in a tree with a barrier per step.
//           v3 softmax_v3: one warp per row (8 rows per block of 256): the 32 partials reduce by __shfl_xor_sync
//              (common/rows.cuh's warp_reduce), no shared memory and no barrier.
//           v4 softmax_v4: v3 with online softmax: one read of the row gives its max and sum together, each lane
//              keeping a running max m and a sum s of exp(x - m), rescaling s by exp(m_old - m_new) when m grows;
//              the lanes' (m, s) pairs merge the same way. Two reads of x in all (v3: three).
//           v5 softmax_v5: v4 with 16-byte loads and stores (Packs: 4 floats, 2 doubles, 8 halves) where C is a
//              multiple of a Pack and x and y are 16-byte aligned; else v4's scalar loop.
//           The op `softmax(x, version)` runs one of them (5 by default).
// backward: softmax_bwd_kernel: one warp per row: the dot product sum_k g y by shuffles, then dx.
// saved for backward: y
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/kp.cuh"
#include "common/rows.cuh"

constexpr int THREADS = 256;         // per block, every version
constexpr int WARPS = THREADS / 32;  // rows per block in versions 3 to 5 and the backward

template <typename T>
__global__ void softmax_v1(const T* __restrict__ x, T* __restrict__ y, int64_t R, int64_t C) {
  using A = acc_t<T>;
  int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const T* row = x + r * C;
  A m = -INFINITY, s = 0;
  for (int64_t c = 0; c < C; ++c) m = Max()(m, A(row[c]));
  for (int64_t c = 0; c < C; ++c) s += exp_of(A(row[c]) - m);
  for (int64_t c = 0; c < C; ++c) y[r * C + c] = T(exp_of(A(row[c]) - m) / s);
}

// `v` reduced with `op` over the block's THREADS threads, returned in all of them: a tree in `partial` (the block's
// __shared__ array of THREADS). Every thread must call it: it holds barriers.
template <typename A, typename Op>
__device__ A block_reduce(A v, A* partial, Op op) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] = op(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
  v = partial[0];
  __syncthreads();  // every thread has read partial[0] before the next reduction writes it
  return v;
}

template <typename T>
__global__ void softmax_v2(const T* __restrict__ x, T* __restrict__ y, int64_t C) {
  using A = acc_t<T>;
  __shared__ A partial[THREADS];
  const T* row = x + (int64_t)blockIdx.x * C;
  A m = -INFINITY, s = 0;
  for (int64_t c = threadIdx.x; c < C; c += THREADS) m = Max()(m, A(row[c]));
  m = block_reduce(m, partial, Max());
  for (int64_t c = threadIdx.x; c < C; c += THREADS) s += exp_of(A(row[c]) - m);
  s = block_reduce(s, partial, Sum());
  for (int64_t c = threadIdx.x; c < C; c += THREADS) y[(int64_t)blockIdx.x * C + c] = T(exp_of(A(row[c]) - m) / s);
}

template <typename T>
__global__ void softmax_v3(const T* __restrict__ x, T* __restrict__ y, int64_t R, int64_t C) {
  using A = acc_t<T>;
  int64_t r = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32;
  if (r >= R) return;  // the whole warp: its lanes share r, so every shuffle below has all 32
  const int lane = threadIdx.x % 32;
  const T* row = x + r * C;
  A m = -INFINITY, s = 0;
  for (int64_t c = lane; c < C; c += 32) m = Max()(m, A(row[c]));
  m = warp_reduce(m, Max());
  for (int64_t c = lane; c < C; c += 32) s += exp_of(A(row[c]) - m);
  s = warp_reduce(s, Sum());
  for (int64_t c = lane; c < C; c += 32) y[r * C + c] = T(exp_of(A(row[c]) - m) / s);
}

// Online softmax's step: (m, s), the max and the sum of exp(. - m) of the values seen, takes v. A larger v rescales
// s to the new max; a -inf with no finite value seen yet adds nothing (exp(-inf - -inf) would be NaN).
template <typename A>
__device__ __forceinline__ void online_add(A& m, A& s, A v) {
  if (v > m) {
    s = s * exp_of(m - v) + A(1);  // exp(-inf) = 0 when m is still -inf
    m = v;
  } else if (m != A(-INFINITY)) {
    s += exp_of(v - m);
  }
}

// Two (max, sum) pairs merged into (m, s): each sum rescaled to the larger max.
template <typename A>
__device__ __forceinline__ void online_merge(A& m, A& s, A m2, A s2) {
  A top = m2 > m ? m2 : m;
  if (top == A(-INFINITY)) return;  // neither has seen a finite value: (-inf, 0) stays
  s = s * exp_of(m - top) + s2 * exp_of(m2 - top);
  m = top;
}

// The lanes' (m, s) merged across the warp by butterfly shuffles, in every lane.
template <typename A>
__device__ __forceinline__ void warp_merge(A& m, A& s) {
  for (int offset = 16; offset > 0; offset /= 2) {
    A m2 = __shfl_xor_sync(0xffffffff, m, offset), s2 = __shfl_xor_sync(0xffffffff, s, offset);
    online_merge(m, s, m2, s2);
  }
}

template <typename T>
__global__ void softmax_v4(const T* __restrict__ x, T* __restrict__ y, int64_t R, int64_t C) {
  using A = acc_t<T>;
  int64_t r = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32;
  if (r >= R) return;
  const int lane = threadIdx.x % 32;
  const T* row = x + r * C;
  A m = -INFINITY, s = 0;
  for (int64_t c = lane; c < C; c += 32) online_add(m, s, A(row[c]));
  warp_merge(m, s);
  for (int64_t c = lane; c < C; c += 32) y[r * C + c] = T(exp_of(A(row[c]) - m) / s);
}

// `packed`: C is a multiple of Pack<T>::N and x, y are 16-byte aligned, so every row starts on a Pack.
template <typename T>
__global__ void softmax_v5(const T* __restrict__ x, T* __restrict__ y, int64_t R, int64_t C, bool packed) {
  using A = acc_t<T>;
  constexpr int N = Pack<T>::N;
  int64_t r = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32;
  if (r >= R) return;
  const int lane = threadIdx.x % 32;
  const T* row = x + r * C;
  A m = -INFINITY, s = 0;
  if (packed) {
    for (int64_t c = lane * N; c < C; c += 32 * N) {  // lane l reads Packs l, l + 32, ...: 512 contiguous bytes a step
      Pack<T> p = load_pack(row + c);
#pragma unroll
      for (int k = 0; k < N; ++k) online_add(m, s, A(p.v[k]));
    }
  } else {
    for (int64_t c = lane; c < C; c += 32) online_add(m, s, A(row[c]));
  }
  warp_merge(m, s);
  if (packed) {
    for (int64_t c = lane * N; c < C; c += 32 * N) {
      Pack<T> p = load_pack(row + c), q;
#pragma unroll
      for (int k = 0; k < N; ++k) q.v[k] = T(exp_of(A(p.v[k]) - m) / s);
      store_pack(y + r * C + c, q);
    }
  } else {
    for (int64_t c = lane; c < C; c += 32) y[r * C + c] = T(exp_of(A(row[c]) - m) / s);
  }
}

template <typename T>
__global__ void softmax_bwd_kernel(const T* __restrict__ g, const T* __restrict__ y, T* __restrict__ dx, int64_t R,
                                   int64_t C) {
  using A = acc_t<T>;
  int64_t r = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32;
  if (r >= R) return;
  const int lane = threadIdx.x % 32;
  const int64_t base = r * C;
  A dot = 0;
  for (int64_t c = lane; c < C; c += 32) dot += A(g[base + c]) * A(y[base + c]);
  dot = warp_reduce(dot, Sum());
  for (int64_t c = lane; c < C; c += 32) dx[base + c] = T(A(y[base + c]) * (A(g[base + c]) - dot));
}

template <typename T>
void softmax_fwd(const T* x, T* y, int64_t R, int64_t C, int version, cudaStream_t stream) {
  if (R == 0 || C == 0) return;  // a grid of zero blocks is an invalid configuration
  const int64_t warp_blocks = ceil_div<int64_t>(R, WARPS);
  if (version == 1) {
    softmax_v1<T><<<ceil_div<int64_t>(R, THREADS), THREADS, 0, stream>>>(x, y, R, C);
  } else if (version == 2) {
    softmax_v2<T><<<R, THREADS, 0, stream>>>(x, y, C);
  } else if (version == 3) {
    softmax_v3<T><<<warp_blocks, THREADS, 0, stream>>>(x, y, R, C);
  } else if (version == 4) {
    softmax_v4<T><<<warp_blocks, THREADS, 0, stream>>>(x, y, R, C);
  } else {
    const bool packed = C % Pack<T>::N == 0 && kp::packs_fit(x, y);
    softmax_v5<T><<<warp_blocks, THREADS, 0, stream>>>(x, y, R, C, packed);
  }
  KP_CHECK_LAUNCH();
}

template <typename T>
void softmax_bwd(const T* g, const T* y, T* dx, int64_t R, int64_t C, cudaStream_t stream) {
  if (R == 0 || C == 0) return;
  softmax_bwd_kernel<T><<<ceil_div<int64_t>(R, WARPS), THREADS, 0, stream>>>(g, y, dx, R, C);
  KP_CHECK_LAUNCH();
}

template void softmax_fwd<float>(const float*, float*, int64_t, int64_t, int, cudaStream_t);
template void softmax_fwd<double>(const double*, double*, int64_t, int64_t, int, cudaStream_t);
template void softmax_fwd<__half>(const __half*, __half*, int64_t, int64_t, int, cudaStream_t);
template void softmax_fwd<__nv_bfloat16>(const __nv_bfloat16*, __nv_bfloat16*, int64_t, int64_t, int, cudaStream_t);
template void softmax_bwd<float>(const float*, const float*, float*, int64_t, int64_t, cudaStream_t);
template void softmax_bwd<double>(const double*, const double*, double*, int64_t, int64_t, cudaStream_t);
template void softmax_bwd<__half>(const __half*, const __half*, __half*, int64_t, int64_t, cudaStream_t);
template void softmax_bwd<__nv_bfloat16>(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int64_t, int64_t,
                                         cudaStream_t);
