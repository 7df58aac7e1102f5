// linear_ladder: Y = X·Wᵀ + b, the fully connected layer of notebook 05, made faster step by step (notebook 07,
// after siboehm's SGEMM worklog). X (M, K), W (N, K) and b (N) contiguous; Y (M, N). Any M, N and K (0 included):
// every step guards every edge of every tile.
//
// dtypes:   float32 and float64 (templated on T)
// kernels:  v1 linear_v1: one thread per output, threadIdx.x along the rows of Y: a warp reads 32 rows of X (32
//              sectors per request) and writes 32 rows of Y.
//           v2 linear_v2: threadIdx.x along the columns of Y: the warp shares its row of X (one sector), writes a
//              contiguous piece of Y; W is still read 32 rows apart.
//           v3 linear_v3: 32 x 32 tiles of X and W staged in shared memory, loaded along K (both operands are
//              K-contiguous: every load coalesces); W's tile stored transposed, padded to [33] against bank conflicts.
//           v4 linear_v4: 1-D register tiling: a 64 x 64 block of Y per 512 threads, each thread 8 outputs of one
//              column; tiles of 8 along K; 8 multiply-adds per shared read of W's tile.
//           v5 linear_v5: 2-D register tiling: a 64 x 64 block of Y per 256 threads, each thread a 4 x 4 piece of it;
//              per step along K it reads 4 values of X's tile and 4 of W's into registers and does 16 multiply-adds
//              with them: 2 shared reads per multiply-add in v3, 1/8 + 1 in v4, 1/2 here.
//           v6 linear_v6: v5 with each tile row loaded as 16-byte Packs (4 floats or 2 doubles: one load instruction
//              instead of 4 or 2) where K is a multiple of a Pack and X and W are 16-byte aligned, element by element
//              elsewhere; the Pack's values are stored transposed into the tiles.
//           v7 linear_v7<T, BM, BN, BK, TM, TN>: v6 with its tile sizes as template parameters, a BM x BN block of Y
//              per (BM / TM) x (BN / TN) threads, each thread a TM x TN fragment, tiles of BK along k; the tiles' rows
//              padded by TILE_PAD (4) elements, so that the transposed stores hit 32 different banks and the rows
//              stay 16-byte aligned; the fragments read from the tiles as Packs (TM / P + TN / P reads for TM x TN
//              multiply-adds per step along k), the output and b stored and read as Packs where Y's rows allow;
//              the device code in common/linear_tiles.cuh, shared with linear.cu. Five tile configurations
//              (linear_v7_launch: 64x64 4x4, 128x64 8x4, 64x128 4x8, 128x128 8x8, 128x128 8x8 with BK = 16; 256
//              threads each), the op's `tiles` picks one (linear_ladder_ops.py's TILES; autotune times them).
//           The op `linear_ladder(x, w, b, version, tiles)` runs one of them (version 7 by default, at tiles 4).
#include "common/kp.cuh"
#include "common/linear_tiles.cuh"

template <typename T>
__global__ void linear_v1(const T* __restrict__ X, const T* __restrict__ W, const T* __restrict__ b, T* __restrict__ Y,
                          int64_t M, int64_t N, int64_t K) {
  int64_t i = (int64_t)blockIdx.x * 32 + threadIdx.x, n = (int64_t)blockIdx.y * 32 + threadIdx.y;
  if (i >= M || n >= N) return;
  T acc = b[n];
  for (int64_t k = 0; k < K; ++k) acc += X[i * K + k] * W[n * K + k];
  Y[i * N + n] = acc;
}

template <typename T>
__global__ void linear_v2(const T* __restrict__ X, const T* __restrict__ W, const T* __restrict__ b, T* __restrict__ Y,
                          int64_t M, int64_t N, int64_t K) {
  int64_t n = (int64_t)blockIdx.x * 32 + threadIdx.x, i = (int64_t)blockIdx.y * 32 + threadIdx.y;
  if (i >= M || n >= N) return;
  T acc = b[n];
  for (int64_t k = 0; k < K; ++k) acc += X[i * K + k] * W[n * K + k];
  Y[i * N + n] = acc;
}

template <typename T>
__global__ void linear_v3(const T* __restrict__ X, const T* __restrict__ W, const T* __restrict__ b, T* __restrict__ Y,
                          int64_t M, int64_t N, int64_t K) {
  __shared__ T Xs[32][33];  // Xs[row][k]
  __shared__ T Ws[32][33];  // Ws[k][column]: W's tile transposed
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i = (int64_t)blockIdx.y * 32 + ty, n = (int64_t)blockIdx.x * 32 + tx;
  const int64_t w_row = (int64_t)blockIdx.x * 32 + ty;  // the W row this thread loads
  T acc = 0;
  for (int64_t k0 = 0; k0 < K; k0 += 32) {
    Xs[ty][tx] = i < M && k0 + tx < K ? X[i * K + k0 + tx] : T(0);  // neighbouring tx: neighbouring k
    Ws[tx][ty] = w_row < N && k0 + tx < K ? W[w_row * K + k0 + tx] : T(0);
    __syncthreads();
    for (int k = 0; k < 32; ++k) acc += Xs[ty][k] * Ws[k][tx];
    __syncthreads();
  }
  if (i < M && n < N) Y[i * N + n] = acc + b[n];
}

constexpr int V4_BM = 64, V4_BN = 64, V4_BK = 8, V4_TM = 8;  // 64 x 64 outputs per block, 8 per thread

template <typename T>
__global__ void linear_v4(const T* __restrict__ X, const T* __restrict__ W, const T* __restrict__ b, T* __restrict__ Y,
                          int64_t M, int64_t N, int64_t K) {
  __shared__ T Xs[V4_BK][V4_BM];                        // Xs[k][row]: X's tile transposed
  __shared__ T Ws[V4_BK][V4_BN];                        // Ws[k][column]: W's tile transposed
  const int t = threadIdx.x;                            // 512 threads
  const int col = t % V4_BN, row0 = t / V4_BN * V4_TM;  // this thread: rows row0 .. row0 + 7 of column col
  const int load_k = t % V4_BK, load_r = t / V4_BK;     // the loads: 64 rows x 8 k of each operand
  const int64_t m0 = (int64_t)blockIdx.y * V4_BM, n0 = (int64_t)blockIdx.x * V4_BN;
  T acc[V4_TM] = {};
  for (int64_t k0 = 0; k0 < K; k0 += V4_BK) {
    const int64_t k = k0 + load_k;
    Xs[load_k][load_r] = m0 + load_r < M && k < K ? X[(m0 + load_r) * K + k] : T(0);
    Ws[load_k][load_r] = n0 + load_r < N && k < K ? W[(n0 + load_r) * K + k] : T(0);
    __syncthreads();
    for (int kk = 0; kk < V4_BK; ++kk) {
      const T w = Ws[kk][col];  // one shared read of W for 8 multiply-adds
      for (int r = 0; r < V4_TM; ++r) acc[r] += Xs[kk][row0 + r] * w;
    }
    __syncthreads();
  }
  const int64_t n = n0 + col;
  if (n >= N) return;
  for (int r = 0; r < V4_TM; ++r)
    if (m0 + row0 + r < M) Y[(m0 + row0 + r) * N + n] = acc[r] + b[n];
}

constexpr int V5_BM = 64, V5_BN = 64, V5_BK = 8, V5_TM = 4, V5_TN = 4;  // 256 threads, 4 x 4 outputs each
constexpr int V5_THREADS = V5_BM / V5_TM * (V5_BN / V5_TN);

// This thread's 4 x 4 piece of Y, accumulated from one pair of tiles: 8 steps along K, each reading 4 values of X's
// tile and 4 of W's into registers, then doing their 16 multiply-adds.
template <typename T>
__device__ __forceinline__ void multiply_tiles(const T (*Xs)[V5_BM], const T (*Ws)[V5_BN], int tr, int tc,
                                               T (*acc)[V5_TN]) {
  for (int kk = 0; kk < V5_BK; ++kk) {
    T xr[V5_TM], wr[V5_TN];
    for (int i = 0; i < V5_TM; ++i) xr[i] = Xs[kk][tr * V5_TM + i];
    for (int j = 0; j < V5_TN; ++j) wr[j] = Ws[kk][tc * V5_TN + j];
    for (int i = 0; i < V5_TM; ++i)
      for (int j = 0; j < V5_TN; ++j) acc[i][j] += xr[i] * wr[j];
  }
}

// acc + b into the 4 x 4 piece of Y (M, N) whose first row and column are row0 and col0, inside Y's edges.
template <typename T>
__device__ __forceinline__ void store_piece(const T (*acc)[V5_TN], const T* __restrict__ b, T* __restrict__ Y,
                                            int64_t M, int64_t N, int64_t row0, int64_t col0) {
  for (int i = 0; i < V5_TM; ++i)
    for (int j = 0; j < V5_TN; ++j)
      if (row0 + i < M && col0 + j < N) Y[(row0 + i) * N + col0 + j] = acc[i][j] + b[col0 + j];
}

template <typename T>
__global__ void linear_v5(const T* __restrict__ X, const T* __restrict__ W, const T* __restrict__ b, T* __restrict__ Y,
                          int64_t M, int64_t N, int64_t K) {
  __shared__ T Xs[V5_BK][V5_BM];  // Xs[k][row]: X's tile transposed
  __shared__ T Ws[V5_BK][V5_BN];  // Ws[k][column]: W's tile transposed
  const int t = threadIdx.x;
  const int tc = t % (V5_BN / V5_TN), tr = t / (V5_BN / V5_TN);  // this thread's 4 x 4 piece: rows tr*4.., cols tc*4..
  const int64_t m0 = (int64_t)blockIdx.y * V5_BM, n0 = (int64_t)blockIdx.x * V5_BN;
  T acc[V5_TM][V5_TN] = {};
  for (int64_t k0 = 0; k0 < K; k0 += V5_BK) {
    for (int l = t; l < V5_BK * V5_BM; l += V5_THREADS) {  // 512 elements of each tile, 2 per thread
      const int kk = l % V5_BK, r = l / V5_BK;             // neighbouring threads: neighbouring k
      const int64_t k = k0 + kk;
      Xs[kk][r] = m0 + r < M && k < K ? X[(m0 + r) * K + k] : T(0);
      Ws[kk][r] = n0 + r < N && k < K ? W[(n0 + r) * K + k] : T(0);
    }
    __syncthreads();
    multiply_tiles(Xs, Ws, tr, tc, acc);
    __syncthreads();
  }
  store_piece(acc, b, Y, M, N, m0 + tr * V5_TM, n0 + tc * V5_TN);
}

// One 8-wide row of a tile: row `r` of A (rows x K) at k0 .. k0 + 7, stored transposed into tile[k][r]; zeros past
// the edges. 16-byte Packs where `packed` (K a multiple of a Pack, A aligned), element by element otherwise.
template <typename T>
__device__ void load_tile_row(const T* __restrict__ A, int64_t rows, int64_t K, int64_t row0, int64_t k0, int r, int kk,
                              bool packed, T (*tile)[V5_BM]) {
  constexpr int N = Pack<T>::N;
  const int64_t row = row0 + r, k = k0 + kk;
  if (packed && row < rows && k + N <= K) {
    const Pack<T> p = load_pack(A + row * K + k);
    for (int e = 0; e < N; ++e) tile[kk + e][r] = p.v[e];
  } else {
    for (int e = 0; e < N; ++e) tile[kk + e][r] = row < rows && k + e < K ? A[row * K + k + e] : T(0);
  }
}

template <typename T>
__global__ void linear_v6(const T* __restrict__ X, const T* __restrict__ W, const T* __restrict__ b, T* __restrict__ Y,
                          int64_t M, int64_t N, int64_t K, bool packed) {
  constexpr int P = Pack<T>::N;  // elements per Pack: a tile row of 8 is 8 / P Packs
  __shared__ T Xs[V5_BK][V5_BM];
  __shared__ T Ws[V5_BK][V5_BN];
  const int t = threadIdx.x;
  const int tc = t % (V5_BN / V5_TN), tr = t / (V5_BN / V5_TN);
  const int64_t m0 = (int64_t)blockIdx.y * V5_BM, n0 = (int64_t)blockIdx.x * V5_BN;
  T acc[V5_TM][V5_TN] = {};
  for (int64_t k0 = 0; k0 < K; k0 += V5_BK) {
    for (int l = t; l < V5_BM * V5_BK / P; l += V5_THREADS) {  // 128 (float) or 256 (double) Packs of each tile
      const int kk = l % (V5_BK / P) * P, r = l / (V5_BK / P);
      load_tile_row(X, M, K, m0, k0, r, kk, packed, Xs);
      load_tile_row(W, N, K, n0, k0, r, kk, packed, Ws);
    }
    __syncthreads();
    multiply_tiles(Xs, Ws, tr, tc, acc);
    __syncthreads();
  }
  store_piece(acc, b, Y, M, N, m0 + tr * V5_TM, n0 + tc * V5_TN);
}

// Version 7: the block's BM x BN piece of Y, each of its (BM / TM) x (BN / TN) threads a TM x TN fragment, tiles of
// BK along k; the tiles padded (TILE_PAD), read and written as Packs (common/linear_tiles.cuh).
template <typename T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BM / TM * (BN / TN))
    linear_v7(const T* __restrict__ X, const T* __restrict__ W, const T* __restrict__ b, T* __restrict__ Y, int64_t M,
              int64_t N, int64_t K, bool packed_in, bool packed_out) {
  constexpr int THREADS = BM / TM * (BN / TN);
  __shared__ __align__(16) T Xs[BK][BM + TILE_PAD];  // Xs[k][row]: X's tile transposed
  __shared__ __align__(16) T Ws[BK][BN + TILE_PAD];  // Ws[k][column]: W's tile transposed
  const int tc = threadIdx.x % (BN / TN), tr = threadIdx.x / (BN / TN);
  const int64_t m0 = (int64_t)blockIdx.y * BM, n0 = (int64_t)blockIdx.x * BN;
  T acc[TM][TN] = {};
  for (int64_t k0 = 0; k0 < K; k0 += BK) {
    load_tile<T, BM, BK, THREADS, true>(X, K, M, K, m0, k0, packed_in, Xs);
    load_tile<T, BN, BK, THREADS, true>(W, K, N, K, n0, k0, packed_in, Ws);
    __syncthreads();
    multiply_fragments<T, BM, BN, BK, TM, TN>(Xs, Ws, tr, tc, acc);
    __syncthreads();
  }
  store_fragment<T, BM, BN, TM, TN>(acc, b, Y, M, N, m0, n0, tr, tc, packed_out);
}

// Version 7's grid: BN columns by BM rows of Y per block.
inline dim3 v7_grid(int64_t M, int64_t N, int BM, int BN) {
  return dim3(ceil_div<int64_t>(N, BN), ceil_div<int64_t>(M, BM));
}

// Version 7 with tile configuration `tiles` (the binding checks 0 <= tiles < V7_TILES): {BM, BN, BK, TM, TN} and
// threads = (BM / TM) x (BN / TN) on each launch line below, one case per configuration, in the order of
// linear_ladder_ops.py's TILES (a test holds the two to the same numbers). Each launch names its numbers, so that
// the GPU model finds ptxas's registers for that instantiation.
constexpr int V7_TILES = 5;

template <typename T>
void linear_v7_launch(const T* x, const T* w, const T* b, T* y, int64_t M, int64_t N, int64_t K, int tiles,
                      cudaStream_t stream) {
  const bool in = K % Pack<T>::N == 0 && kp::packs_fit(x, w), out = N % Pack<T>::N == 0 && kp::packs_fit(y, b);
  switch (tiles) {
    case 0:
      linear_v7<T, 64, 64, 8, 4, 4><<<v7_grid(M, N, 64, 64), 256, 0, stream>>>(x, w, b, y, M, N, K, in, out);
      break;
    case 1:
      linear_v7<T, 128, 64, 8, 8, 4><<<v7_grid(M, N, 128, 64), 256, 0, stream>>>(x, w, b, y, M, N, K, in, out);
      break;
    case 2:
      linear_v7<T, 64, 128, 8, 4, 8><<<v7_grid(M, N, 64, 128), 256, 0, stream>>>(x, w, b, y, M, N, K, in, out);
      break;
    case 3:
      linear_v7<T, 128, 128, 8, 8, 8><<<v7_grid(M, N, 128, 128), 256, 0, stream>>>(x, w, b, y, M, N, K, in, out);
      break;
    case 4:
      linear_v7<T, 128, 128, 16, 8, 8><<<v7_grid(M, N, 128, 128), 256, 0, stream>>>(x, w, b, y, M, N, K, in, out);
      break;
    default:  // the binding checks tiles; a new configuration needs its case here
      throw std::invalid_argument("linear_ladder: no tile configuration " + std::to_string(tiles));
  }
}

template <typename T>
void linear_ladder(const T* x, const T* w, const T* b, T* y, int64_t M, int64_t N, int64_t K, int version, int tiles,
                   cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  if (version == 7) {
    linear_v7_launch(x, w, b, y, M, N, K, tiles, stream);
  } else if (version == 1) {
    linear_v1<T>
        <<<dim3(ceil_div<int64_t>(M, 32), ceil_div<int64_t>(N, 32)), dim3(32, 32), 0, stream>>>(x, w, b, y, M, N, K);
  } else if (version == 2) {
    linear_v2<T>
        <<<dim3(ceil_div<int64_t>(N, 32), ceil_div<int64_t>(M, 32)), dim3(32, 32), 0, stream>>>(x, w, b, y, M, N, K);
  } else if (version == 3) {
    linear_v3<T>
        <<<dim3(ceil_div<int64_t>(N, 32), ceil_div<int64_t>(M, 32)), dim3(32, 32), 0, stream>>>(x, w, b, y, M, N, K);
  } else if (version == 4) {
    linear_v4<T><<<dim3(ceil_div<int64_t>(N, V4_BN), ceil_div<int64_t>(M, V4_BM)), V4_BM * V4_BN / V4_TM, 0, stream>>>(
        x, w, b, y, M, N, K);
  } else if (version == 6) {
    const bool packed = K % Pack<T>::N == 0 && kp::packs_fit(x, w);
    linear_v6<T><<<dim3(ceil_div<int64_t>(N, V5_BN), ceil_div<int64_t>(M, V5_BM)), V5_THREADS, 0, stream>>>(
        x, w, b, y, M, N, K, packed);
  } else {
    linear_v5<T><<<dim3(ceil_div<int64_t>(N, V5_BN), ceil_div<int64_t>(M, V5_BM)), V5_THREADS, 0, stream>>>(x, w, b, y,
                                                                                                            M, N, K);
  }
  KP_CHECK_LAUNCH();
}

template void linear_ladder<float>(const float*, const float*, const float*, float*, int64_t, int64_t, int64_t, int,
                                   int, cudaStream_t);
template void linear_ladder<double>(const double*, const double*, const double*, double*, int64_t, int64_t, int64_t,
                                    int, int, cudaStream_t);
