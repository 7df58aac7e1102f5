// layernorm: each row of a matrix normalised to mean 0 and variance 1, then scaled and shifted per column (a
// transformer's normalisation; notebook 09).
//
// forward:  mean_r = sum_c x[r, c] / C, var_r = sum_c (x[r, c] - mean_r)² / C (biased, as torch's),
//           rstd_r = 1 / sqrt(var_r + eps), xhat[r, c] = (x[r, c] - mean_r) rstd_r,
//           y[r, c] = xhat[r, c] w[c] + b[c]                                           (layernorm_fwd_kernel)
// backward: with g = dL/dy and d[r, c] = g[r, c] w[c] (the gradient reaching xhat),
//           dL/dx[r, c] = rstd_r (d[r, c] - mean_c d[r, c] - xhat[r, c] mean_c(d[r, c] xhat[r, c]))
//                                                                                      (layernorm_bwd_kernel)
//           dL/dw[c] = sum_r g[r, c] xhat[r, c], dL/db[c] = sum_r g[r, c]: column sums, by notebook 08's
//           column_sums (common/colsum.cuh) over g·xhat (which the dx kernel writes) and over g
//                                                                                      (layernorm_colsum_kernel)
// shapes:   x, y, g (R, C), contiguous, C >= 1; w, b (C); mean and rstd (R); any R, 0 included
// dtypes:   float32, float64, float16 and bfloat16 (templated on T); every sum in acc_t<T> (float for the 16-bit
//           types), and mean and rstd saved in it too, as torch's CUDA layer norm does: a mean rounded to 16 bits
//           would cost a row of 1e3 + noise its every digit of xhat in the backward
// launch:   forward and dx: one warp per row, 8 rows per block of 256. The forward reads its row once for the
//           mean and the variance together (Welford: each lane a running count, mean and sum of squared
//           deviations, the lanes' triples merged by shuffles with Chan's formula), which never subtracts two large
//           sums (E[x²] - E[x]² loses every digit of a row of 1e4 + noise), then once more to write y.
//           Column sums: 32 x 32 blocks, one per 32 columns and 256 rows; past 256 rows a second launch sums the
//           chunks' sums (two stages, the same bits every run: notebook 08's version 5).
// saved for backward: x, w, mean, rstd
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "common/colsum.cuh"
#include "common/kp.cuh"
#include "common/rows.cuh"

constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;  // rows per block
constexpr int64_t CHUNK = 256;       // rows per block of the column sums (more past 65535 chunks)

// A running mean and sum of squared deviations of n values (Welford, 1962).
template <typename A>
struct Welford {
  A n = 0, mean = 0, m2 = 0;

  __device__ void add(A v) {
    n += A(1);
    A delta = v - mean;
    mean += delta / n;
    m2 += delta * (v - mean);
  }

  // The statistics of both sets of values together (Chan, Golub and LeVeque, 1979).
  __device__ void merge(A n2, A mean2, A m22) {
    A total = n + n2;
    if (total == A(0)) return;
    A delta = mean2 - mean;
    mean += delta * (n2 / total);
    m2 += m22 + delta * delta * (n * n2 / total);
    n = total;
  }
};

template <typename T>
__global__ void layernorm_fwd_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                     T* __restrict__ y, acc_t<T>* __restrict__ mean, acc_t<T>* __restrict__ rstd,
                                     int64_t R, int64_t C, double eps) {
  using A = acc_t<T>;
  int64_t r = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32;
  if (r >= R) return;  // the whole warp: every shuffle below has its 32 lanes
  const int lane = threadIdx.x % 32;
  const T* row = x + r * C;
  Welford<A> s;
  for (int64_t c = lane; c < C; c += 32) s.add(A(row[c]));
  for (int offset = 16; offset > 0; offset /= 2) {
    A n2 = __shfl_xor_sync(0xffffffff, s.n, offset), mean2 = __shfl_xor_sync(0xffffffff, s.mean, offset);
    A m22 = __shfl_xor_sync(0xffffffff, s.m2, offset);
    s.merge(n2, mean2, m22);
  }
  const A inv = A(1) / sqrt(s.m2 / A(C) + A(eps));
  for (int64_t c = lane; c < C; c += 32) y[r * C + c] = T((A(row[c]) - s.mean) * inv * A(w[c]) + A(b[c]));
  if (lane == 0) {
    mean[r] = s.mean;
    rstd[r] = inv;
  }
}

// dx, and g·xhat into gx (the rows whose column sums are dL/dw; kept in acc_t<T>, not rounded to 16 bits).
template <typename T>
__global__ void layernorm_bwd_kernel(const T* __restrict__ g, const T* __restrict__ x, const T* __restrict__ w,
                                     const acc_t<T>* __restrict__ mean, const acc_t<T>* __restrict__ rstd,
                                     T* __restrict__ dx, acc_t<T>* __restrict__ gx, int64_t R, int64_t C) {
  using A = acc_t<T>;
  int64_t r = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32;
  if (r >= R) return;
  const int lane = threadIdx.x % 32;
  const int64_t base = r * C;
  const A mu = mean[r], inv = rstd[r];
  A sum_d = 0, sum_dx = 0;  // sums of d and of d xhat over the row
  for (int64_t c = lane; c < C; c += 32) {
    A xhat = (A(x[base + c]) - mu) * inv, d = A(g[base + c]) * A(w[c]);
    sum_d += d;
    sum_dx += d * xhat;
  }
  sum_d = warp_reduce(sum_d, Sum()) / A(C);
  sum_dx = warp_reduce(sum_dx, Sum()) / A(C);
  for (int64_t c = lane; c < C; c += 32) {
    A xhat = (A(x[base + c]) - mu) * inv, gc = A(g[base + c]);
    dx[base + c] = T(inv * (gc * A(w[c]) - sum_d - xhat * sum_dx));
    gx[base + c] = gc * xhat;
  }
}

// Rows [blockIdx.y * rows_per_block, + rows_per_block) of the block's 32 columns of m (R, C), summed in
// acc_t<I> into sums[blockIdx.y][c] (mul_add.cu's sum_rows_kernel), written as O.
template <typename I, typename O>
__global__ void layernorm_colsum_kernel(const I* __restrict__ m, O* __restrict__ sums, int64_t R, int64_t C,
                                        int64_t rows_per_block) {
  __shared__ acc_t<I> partial[32][33];
  int64_t begin = (int64_t)blockIdx.y * rows_per_block, end = begin + rows_per_block < R ? begin + rows_per_block : R;
  acc_t<I> v = column_sums(m, begin, end, C, partial);
  int64_t c = (int64_t)blockIdx.x * 32 + threadIdx.y;
  if (threadIdx.x == 0 && c < C) sums[blockIdx.y * C + c] = O(v);
}

// out (C) = the column sums of m (R, C), added in acc_t<I>; `sums` holds ceil(R / CHUNK) x C of them (the binding
// allocates it), so that only the last stage rounds to O.
template <typename I, typename O>
void column_sum(const I* m, O* out, acc_t<I>* sums, int64_t R, int64_t C, cudaStream_t stream) {
  const int64_t rows = chunk_rows(R, CHUNK), blocks = ceil_div<int64_t>(C, 32), chunks = ceil_div<int64_t>(R, rows);
  if (chunks <= 1) {  // one chunk (or none: zeros): its sums are the result
    layernorm_colsum_kernel<I, O><<<blocks, dim3(32, 32), 0, stream>>>(m, out, R, C, rows);
  } else {
    layernorm_colsum_kernel<I, acc_t<I>><<<dim3(blocks, chunks), dim3(32, 32), 0, stream>>>(m, sums, R, C, rows);
    KP_CHECK_LAUNCH();
    layernorm_colsum_kernel<acc_t<I>, O><<<blocks, dim3(32, 32), 0, stream>>>(sums, out, chunks, C, chunks);
  }
  KP_CHECK_LAUNCH();
}

// S is acc_t<T>, named by the binding (which does not include rows.cuh): a template parameter, so that both
// sides declare the same function.
template <typename T, typename S>
void layernorm_fwd(const T* x, const T* w, const T* b, T* y, S* mean, S* rstd, int64_t R, int64_t C, double eps,
                   cudaStream_t stream) {
  static_assert(std::is_same<S, acc_t<T>>::value, "mean and rstd are in T's accumulation type");
  if (R == 0) return;  // a grid of zero blocks is an invalid configuration
  layernorm_fwd_kernel<T><<<ceil_div<int64_t>(R, WARPS), THREADS, 0, stream>>>(x, w, b, y, mean, rstd, R, C, eps);
  KP_CHECK_LAUNCH();
}

template <typename T, typename S>
void layernorm_bwd(const T* g, const T* x, const T* w, const S* mean, const S* rstd, T* dx, T* dw, T* db, S* gx,
                   S* sums, int64_t R, int64_t C, cudaStream_t stream) {
  static_assert(std::is_same<S, acc_t<T>>::value, "the statistics and partial sums are in T's accumulation type");
  if (R > 0) {
    layernorm_bwd_kernel<T><<<ceil_div<int64_t>(R, WARPS), THREADS, 0, stream>>>(g, x, w, mean, rstd, dx, gx, R, C);
    KP_CHECK_LAUNCH();
  }
  column_sum(gx, dw, sums, R, C, stream);
  column_sum(g, db, sums, R, C, stream);
}

// The instantiations the binding calls.
#define LAYERNORM_INSTANTIATE(T, S)                                                                                    \
  template void layernorm_fwd<T, S>(const T*, const T*, const T*, T*, S*, S*, int64_t, int64_t, double, cudaStream_t); \
  template void layernorm_bwd<T, S>(const T*, const T*, const T*, const S*, const S*, T*, T*, T*, S*, S*, int64_t,     \
                                    int64_t, cudaStream_t);
LAYERNORM_INSTANTIATE(float, float)
LAYERNORM_INSTANTIATE(double, double)
LAYERNORM_INSTANTIATE(__half, float)
LAYERNORM_INSTANTIATE(__nv_bfloat16, float)
