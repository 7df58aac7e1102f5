// attention: scaled dot-product attention, softmax(Q Kᵀ / sqrt(d)) V, for each of B·H heads; notebook 10 climbs from
// the naive three-kernel version, whose N x N scores live in memory, to a fused flash-attention and its backward.
//
// forward:  S = Q Kᵀ · scale (scale = 1 / sqrt(d)), with S[i, j] = -inf where j > i when causal; P = softmax(S) by
//           rows; O = P V; L[i] = m_i + log(sum_j exp(S[i, j] - m_i)), m_i = max_j S[i, j] (the log-sum-exp: P[i, j]
//           = exp(S[i, j] - L[i]), one number per row from which the backward rebuilds P)
// backward: with ℓ the loss, dO = dℓ/dO and dL = dℓ/dL (the log-sum-exp is an output too, which a loss may use):
//           P recomputed from Q, K and L; dV = Pᵀ dO; dP = dO Vᵀ; D[i] = sum_c dO[i, c] O[i, c] - dL[i];
//           dS = P ∘ (dP - D) (D subtracted per row); dQ = dS K · scale; dK = dSᵀ Q · scale
//           (flash-attention-2's algorithm, Dao 2023; since ∂L[i] / ∂S[i, j] = P[i, j], L's gradient adds
//           P[i, j] dL[i] to dS, which is the same as subtracting dL[i] from D[i])
// shapes:   q, k, v, o, dO (BH, N, d) contiguous, BH = batch x heads <= 65535, N >= 1, 1 <= d <= 128; L, dL (BH, N)
// dtypes:   float32 and float64 (templated on T; sums in T, common/rows.cuh's acc_t)
// kernels:  v1, naive: attention_scores (S = Q Kᵀ · scale, 16 x 16 shared-memory tiles, masked), attention_softmax
//              (P = softmax(S) in place, one warp per row, L saved), attention_pv (O = P V, 16 x 16 tiles); the
//              N x N matrix is written once and read twice: 8 N² bytes per head in float32.
//           v2, fused: attention_fwd_kernel: one block per tile of ROWS query rows, one thread per row holding its
//              q, its running max m, sum l and output o; K and V go through shared memory TILE keys at a time; each
//              tile's scores rescale o and l by exp(m_old - m_new) when the max grows (online softmax, notebook 09's
//              version 4). Nothing of size N x N exists; causal blocks stop at their last row's key, so the tiles
//              wholly above the diagonal are never loaded.
//           The op `attention(q, k, v, causal, version)` runs one of them (2 by default); both return (O, L).
// backward: attention_bwd_d_kernel (D, one thread per row), then attention_bwd_dkdv_kernel: one block per tile of
//           ROWS keys, one thread per key accumulating its dK and dV rows while Q, dO, L and D stream through shared
//           memory TILE rows at a time; and attention_bwd_dq_kernel: one block per tile of ROWS queries, K and V
//           streamed, one thread's dQ row each. Two loops instead of flash-attention-2's one loop with dQ added by
//           atomics: each output row has one writer, so the result is the same bits every run (a float atomicAdd
//           sums in the order the blocks arrive) and needs no zeroed buffer, at the price of computing P twice.
// saved for backward: q, k, v, o, L
#include "common/kp.cuh"
#include "common/rows.cuh"

constexpr int MAX_HEAD_DIM = 128;  // the per-thread rows (q, o, dK, ...) are arrays of this many
constexpr int ROWS = 64;           // threads per block of the fused kernels: one query (or key) row each
constexpr int TILE = 16;           // rows of the other side per trip through shared memory; 16 x 128 doubles: 16 KiB
constexpr int MM = 16;             // the naive matmuls' square tiles
constexpr int THREADS = 256;       // the naive softmax's block: one warp per row
constexpr int WARPS = THREADS / 32;

__device__ __forceinline__ float log_of(float x) { return logf(x); }
__device__ __forceinline__ double log_of(double x) { return log(x); }
__device__ __forceinline__ int64_t first_of(int64_t a, int64_t b) { return a < b ? a : b; }  // min, one type

// ---- v1: naive, three kernels and an N x N matrix --------------------------------------------------------------

// S[b] = Q[b] K[b]ᵀ · scale, -inf above the diagonal when causal. A 16 x 16 tile of S per block (blockIdx.z: the
// head); Q's and K's 16 x 16 slices through shared memory, padded to 17 columns so that ks[tx][kk], read down a
// column by a warp, falls in 16 different banks.
template <typename T>
__global__ void attention_scores(const T* __restrict__ q, const T* __restrict__ k, T* __restrict__ s, int64_t N, int d,
                                 T scale, bool causal) {
  __shared__ T qs[MM][MM + 1];
  __shared__ T ks[MM][MM + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t head = blockIdx.z, i = (int64_t)blockIdx.y * MM + ty, j = (int64_t)blockIdx.x * MM + tx;
  const int64_t kj = (int64_t)blockIdx.x * MM + ty;  // the key row this thread loads
  const T* qh = q + head * N * d;
  const T* kh = k + head * N * d;
  T acc = 0;
  for (int c0 = 0; c0 < d; c0 += MM) {
    qs[ty][tx] = i < N && c0 + tx < d ? qh[i * d + c0 + tx] : T(0);
    ks[ty][tx] = kj < N && c0 + tx < d ? kh[kj * d + c0 + tx] : T(0);
    __syncthreads();
    for (int c = 0; c < MM; ++c) acc += qs[ty][c] * ks[tx][c];
    __syncthreads();
  }
  if (i < N && j < N) s[head * N * N + i * N + j] = causal && j > i ? T(-INFINITY) : acc * scale;
}

// Each row of S (BH·N rows of N) replaced by its softmax, one warp per row, and its log-sum-exp saved in L. Three
// reads of the row (max, sum, write) as notebook 09's version 3: the row is in memory anyway, which is the point.
template <typename T>
__global__ void attention_softmax(T* __restrict__ s, T* __restrict__ lse, int64_t rows, int64_t N) {
  using A = acc_t<T>;
  const int64_t r = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32;
  if (r >= rows) return;  // the whole warp: its lanes share r
  const int lane = threadIdx.x % 32;
  T* row = s + r * N;
  A m = -INFINITY, sum = 0;
  for (int64_t c = lane; c < N; c += 32) m = Max()(m, A(row[c]));
  m = warp_reduce(m, Max());  // finite: column 0 is never masked
  for (int64_t c = lane; c < N; c += 32) sum += exp_of(A(row[c]) - m);
  sum = warp_reduce(sum, Sum());
  for (int64_t c = lane; c < N; c += 32) row[c] = T(exp_of(A(row[c]) - m) / sum);
  if (lane == 0) lse[r] = T(m + log_of(sum));
}

// O[b] = P[b] V[b]: a 16 x 16 tile of O per block. When causal, P is 0 right of the diagonal, so the loop stops at
// the tile's last row.
template <typename T>
__global__ void attention_pv(const T* __restrict__ p, const T* __restrict__ v, T* __restrict__ o, int64_t N, int d,
                             bool causal) {
  __shared__ T ps[MM][MM + 1];
  __shared__ T vs[MM][MM + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t head = blockIdx.z, i = (int64_t)blockIdx.y * MM + ty;
  const int c = blockIdx.x * MM + tx;
  const T* ph = p + head * N * N;
  const T* vh = v + head * N * d;
  const int64_t end = causal ? first_of(N, ((int64_t)blockIdx.y + 1) * MM) : N;
  T acc = 0;
  for (int64_t j0 = 0; j0 < end; j0 += MM) {
    ps[ty][tx] = i < N && j0 + tx < N ? ph[i * N + j0 + tx] : T(0);
    vs[ty][tx] = j0 + ty < N && c < d ? vh[(j0 + ty) * d + c] : T(0);
    __syncthreads();
    for (int jj = 0; jj < MM; ++jj) acc += ps[ty][jj] * vs[jj][tx];
    __syncthreads();
  }
  if (i < N && c < d) o[head * N * d + i * d + c] = acc;
}

// ---- v2: fused flash-attention forward -------------------------------------------------------------------------

// Rows [row0, row0 + n) of a head's (N, d) matrix into shared memory as tile[r][c]; rows past N read as zeros, so that
// no thread reads an unwritten shared value. Every thread of the block calls it.
template <typename T>
__device__ void load_tile(T (*tile)[MAX_HEAD_DIM], const T* head, int64_t row0, int64_t N, int d) {
  for (int e = threadIdx.x; e < TILE * d; e += blockDim.x) {
    const int r = e / d, c = e % d;
    tile[r][c] = row0 + r < N ? head[(row0 + r) * d + c] : T(0);
  }
}

template <typename T>
__global__ void attention_fwd_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                                     T* __restrict__ o, T* __restrict__ lse, int64_t N, int d, T scale, bool causal) {
  using A = acc_t<T>;
  __shared__ T ks[TILE][MAX_HEAD_DIM];
  __shared__ T vs[TILE][MAX_HEAD_DIM];
  const int64_t head = blockIdx.y, row0 = (int64_t)blockIdx.x * ROWS, i = row0 + threadIdx.x;
  const bool live = i < N;  // a thread past N still loads tiles and meets the barriers
  const int64_t base = head * N * d;
  A qi[MAX_HEAD_DIM], oi[MAX_HEAD_DIM];
  for (int c = 0; c < d; ++c) {
    qi[c] = live ? A(q[base + i * d + c]) * A(scale) : A(0);  // scaled once here, not once per key
    oi[c] = 0;
  }
  A m = -INFINITY, l = 0;
  // Causal: no row of this block sees a key past its last row, so the tiles beyond are never loaded.
  const int64_t end = causal ? first_of(N, row0 + ROWS) : N;
  for (int64_t j0 = 0; j0 < end; j0 += TILE) {
    load_tile(ks, k + base, j0, N, d);
    load_tile(vs, v + base, j0, N, d);
    __syncthreads();
    if (live) {
      A s[TILE], top = m;
      for (int jj = 0; jj < TILE; ++jj) {
        const int64_t j = j0 + jj;
        A dot = 0;
        for (int c = 0; c < d; ++c) dot += qi[c] * A(ks[jj][c]);
        s[jj] = j >= N || (causal && j > i) ? A(-INFINITY) : dot;
        top = Max()(top, s[jj]);
      }
      if (top != A(-INFINITY)) {            // a tile wholly masked for this row adds nothing (and -inf - -inf is NaN)
        const A rescale = exp_of(m - top);  // 0 on the first tile, where m is still -inf
        l *= rescale;
        for (int c = 0; c < d; ++c) oi[c] *= rescale;
        for (int jj = 0; jj < TILE; ++jj) {
          const A p = exp_of(s[jj] - top);
          l += p;
          for (int c = 0; c < d; ++c) oi[c] += p * A(vs[jj][c]);
        }
        m = top;
      }
    }
    __syncthreads();  // every thread is done with this tile before the next overwrites it
  }
  if (!live) return;
  for (int c = 0; c < d; ++c) o[base + i * d + c] = T(oi[c] / l);
  lse[head * N + i] = T(m + log_of(l));
}

// ---- backward ----------------------------------------------------------------------------------------------------

// D[r] = sum_c dO[r, c] O[r, c] - dL[r], one thread per row of all BH·N.
template <typename T>
__global__ void attention_bwd_d_kernel(const T* __restrict__ go, const T* __restrict__ o, const T* __restrict__ glse,
                                       T* __restrict__ dd, int64_t rows, int d) {
  using A = acc_t<T>;
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  A sum = 0;
  for (int c = 0; c < d; ++c) sum += A(go[r * d + c]) * A(o[r * d + c]);
  dd[r] = T(sum - A(glse[r]));
}

// dK and dV for a tile of ROWS keys, one thread per key j: for each query i, p = exp(q_i·k_j·scale - L_i),
// dV_j += p dO_i, dS = p (dO_i·v_j - D_i), dK_j += dS q_i · scale. The queries come TILE at a time through shared
// memory with their dO rows, L and D; causal blocks start at the first tile holding a query at or below their first
// key (the tiles above see none of these keys).
template <typename T>
__global__ void attention_bwd_dkdv_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                                          const T* __restrict__ go, const T* __restrict__ lse, const T* __restrict__ dd,
                                          T* __restrict__ dk, T* __restrict__ dv, int64_t N, int d, T scale,
                                          bool causal) {
  using A = acc_t<T>;
  __shared__ T qs[TILE][MAX_HEAD_DIM];
  __shared__ T gs[TILE][MAX_HEAD_DIM];
  __shared__ T ls[TILE];
  __shared__ T ds[TILE];
  const int64_t head = blockIdx.y, key0 = (int64_t)blockIdx.x * ROWS, j = key0 + threadIdx.x;
  const bool live = j < N;
  const int64_t base = head * N * d;
  A kj[MAX_HEAD_DIM], vj[MAX_HEAD_DIM], dkj[MAX_HEAD_DIM], dvj[MAX_HEAD_DIM];
  for (int c = 0; c < d; ++c) {
    kj[c] = live ? A(k[base + j * d + c]) : A(0);
    vj[c] = live ? A(v[base + j * d + c]) : A(0);
    dkj[c] = dvj[c] = 0;
  }
  for (int64_t i0 = causal ? key0 / TILE * TILE : 0; i0 < N; i0 += TILE) {
    load_tile(qs, q + base, i0, N, d);
    load_tile(gs, go + base, i0, N, d);
    if (threadIdx.x < TILE) {
      ls[threadIdx.x] = i0 + threadIdx.x < N ? lse[head * N + i0 + threadIdx.x] : T(0);
      ds[threadIdx.x] = i0 + threadIdx.x < N ? dd[head * N + i0 + threadIdx.x] : T(0);
    }
    __syncthreads();
    if (live) {
      for (int ii = 0; ii < TILE; ++ii) {
        const int64_t i = i0 + ii;
        if (i >= N || (causal && j > i)) continue;  // P[i, j] = 0: nothing flows to k_j or v_j
        A dot = 0, dp = 0;
        for (int c = 0; c < d; ++c) {
          dot += A(qs[ii][c]) * kj[c];
          dp += A(gs[ii][c]) * vj[c];
        }
        const A p = exp_of(dot * A(scale) - A(ls[ii]));
        const A dsij = p * (dp - A(ds[ii])) * A(scale);
        for (int c = 0; c < d; ++c) {
          dvj[c] += p * A(gs[ii][c]);
          dkj[c] += dsij * A(qs[ii][c]);
        }
      }
    }
    __syncthreads();
  }
  if (!live) return;
  for (int c = 0; c < d; ++c) {
    dk[base + j * d + c] = T(dkj[c]);
    dv[base + j * d + c] = T(dvj[c]);
  }
}

// dQ for a tile of ROWS queries, one thread per query i: dQ_i = sum_j p (dO_i·v_j - D_i) k_j · scale, K and V
// streamed TILE keys at a time as in the forward (and, causal, stopping at the block's last row).
template <typename T>
__global__ void attention_bwd_dq_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                                        const T* __restrict__ go, const T* __restrict__ lse, const T* __restrict__ dd,
                                        T* __restrict__ dq, int64_t N, int d, T scale, bool causal) {
  using A = acc_t<T>;
  __shared__ T ks[TILE][MAX_HEAD_DIM];
  __shared__ T vs[TILE][MAX_HEAD_DIM];
  const int64_t head = blockIdx.y, row0 = (int64_t)blockIdx.x * ROWS, i = row0 + threadIdx.x;
  const bool live = i < N;
  const int64_t base = head * N * d;
  A qi[MAX_HEAD_DIM], gi[MAX_HEAD_DIM], dqi[MAX_HEAD_DIM];
  for (int c = 0; c < d; ++c) {
    qi[c] = live ? A(q[base + i * d + c]) : A(0);
    gi[c] = live ? A(go[base + i * d + c]) : A(0);
    dqi[c] = 0;
  }
  const A li = live ? A(lse[head * N + i]) : A(0), di = live ? A(dd[head * N + i]) : A(0);
  const int64_t end = causal ? first_of(N, row0 + ROWS) : N;
  for (int64_t j0 = 0; j0 < end; j0 += TILE) {
    load_tile(ks, k + base, j0, N, d);
    load_tile(vs, v + base, j0, N, d);
    __syncthreads();
    if (live) {
      for (int jj = 0; jj < TILE; ++jj) {
        const int64_t j = j0 + jj;
        if (j >= N || (causal && j > i)) continue;
        A dot = 0, dp = 0;
        for (int c = 0; c < d; ++c) {
          dot += qi[c] * A(ks[jj][c]);
          dp += gi[c] * A(vs[jj][c]);
        }
        const A dsij = exp_of(dot * A(scale) - li) * (dp - di) * A(scale);
        for (int c = 0; c < d; ++c) dqi[c] += dsij * A(ks[jj][c]);
      }
    }
    __syncthreads();
  }
  if (!live) return;
  for (int c = 0; c < d; ++c) dq[base + i * d + c] = T(dqi[c]);
}

// ---- launchers -----------------------------------------------------------------------------------------------------

// s: the naive version's (BH, N, N) scores, then probabilities (unused by version 2).
template <typename T>
void attention_fwd(const T* q, const T* k, const T* v, T* o, T* lse, T* s, int64_t BH, int64_t N, int d, bool causal,
                   int version, cudaStream_t stream) {
  if (BH == 0) return;  // a grid of zero blocks is an invalid configuration
  const T scale = T(1) / sqrt(T(d));
  if (version == 1) {
    const dim3 tile(MM, MM);
    attention_scores<T><<<dim3(ceil_div<int64_t>(N, MM), ceil_div<int64_t>(N, MM), BH), tile, 0, stream>>>(
        q, k, s, N, d, scale, causal);
    KP_CHECK_LAUNCH();
    attention_softmax<T><<<ceil_div<int64_t>(BH * N, WARPS), THREADS, 0, stream>>>(s, lse, BH * N, N);
    KP_CHECK_LAUNCH();
    attention_pv<T><<<dim3(ceil_div(d, MM), ceil_div<int64_t>(N, MM), BH), tile, 0, stream>>>(s, v, o, N, d, causal);
  } else {
    attention_fwd_kernel<T>
        <<<dim3(ceil_div<int64_t>(N, ROWS), BH), ROWS, 0, stream>>>(q, k, v, o, lse, N, d, scale, causal);
  }
  KP_CHECK_LAUNCH();
}

// dd: a (BH, N) buffer for D.
template <typename T>
void attention_bwd(const T* go, const T* glse, const T* q, const T* k, const T* v, const T* o, const T* lse, T* dq,
                   T* dk, T* dv, T* dd, int64_t BH, int64_t N, int d, bool causal, cudaStream_t stream) {
  if (BH == 0) return;
  const T scale = T(1) / sqrt(T(d));
  attention_bwd_d_kernel<T><<<ceil_div<int64_t>(BH * N, THREADS), THREADS, 0, stream>>>(go, o, glse, dd, BH * N, d);
  KP_CHECK_LAUNCH();
  const dim3 grid(ceil_div<int64_t>(N, ROWS), BH);
  attention_bwd_dkdv_kernel<T><<<grid, ROWS, 0, stream>>>(q, k, v, go, lse, dd, dk, dv, N, d, scale, causal);
  KP_CHECK_LAUNCH();
  attention_bwd_dq_kernel<T><<<grid, ROWS, 0, stream>>>(q, k, v, go, lse, dd, dq, N, d, scale, causal);
  KP_CHECK_LAUNCH();
}

template void attention_fwd<float>(const float*, const float*, const float*, float*, float*, float*, int64_t, int64_t,
                                   int, bool, int, cudaStream_t);
template void attention_fwd<double>(const double*, const double*, const double*, double*, double*, double*, int64_t,
                                    int64_t, int, bool, int, cudaStream_t);
template void attention_bwd<float>(const float*, const float*, const float*, const float*, const float*, const float*,
                                   const float*, float*, float*, float*, float*, int64_t, int64_t, int, bool,
                                   cudaStream_t);
template void attention_bwd<double>(const double*, const double*, const double*, const double*, const double*,
                                    const double*, const double*, double*, double*, double*, double*, int64_t, int64_t,
                                    int, bool, cudaStream_t);
