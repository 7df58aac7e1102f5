// linear: a fully connected layer, Y = X·Wᵀ + b, through shared-memory tiled matrix products.
//
// forward:  Y[i, n] = sum_m X[i, m] W[n, m] + b[n]              (linear_fwd_kernel)
// backward: with G = dL/dY,
//           dL/dX = G·W    dX[i, m] = sum_n G[i, n] W[n, m]   (linear_bwd_input_kernel)
//           dL/dW = Gᵀ·X   dW[n, m] = sum_i G[i, n] X[i, m]   (linear_bwd_weight_kernel)
//           dL/db = column sums of G    db[n] = sum_i G[i, n]  (linear_bwd_bias_kernel), a reduction
//           and each of the three products, on a large output, by one register-tiled kernel
//           (linear_tiled_kernel) that reads X, W and G as they are or transposed
// shapes:   X (B, M), W (N, M), b (N); Y and G (B, N); contiguous; any sizes, 0 included
// dtypes:   float32 and float64 (templated on T)
// launch:   the three products: one thread per output element, TILE x TILE (16 x 16) blocks; a block
//           stages a TILE x TILE tile of each operand in __shared__ per step along the inner dimension
//           (two __syncthreads per step), zero-filling past the edges; grid.x runs over row tiles,
//           grid.y over column tiles (at most 65535, so at most 1,048,560 columns: the binding checks).
//           An output of at least FAST_MIN_BLOCKS (16) blocks of 128 x 128 takes linear_tiled_kernel instead
//           (below that the GPU model has the 16 x 16 tiles faster: they spread over more of the GPU):
//           linear_ladder.cu's version 7 at its default tiles, with common/linear_tiles.cuh's device code:
//           128 x 128 outputs per block of 256 threads, each thread an 8 x 8 fragment in registers, tiles of
//           16 along the inner dimension in padded __shared__ arrays, each tile loaded along its operand's
//           contiguous index (coalesced whether the product reads it as it is or transposed), 16-byte Packs
//           where aligned; grid.x over row tiles, grid.y over column tiles.
//           The bias gradient: notebook 08's column sums (common/colsum.cuh's column_sums, as mul_add's sum_to):
//           32 x 32 blocks, one per 32 columns and BIAS_CHUNK (256) rows of G, each warp one column's sum of the
//           32 partial sums by shuffles; past 256 rows, a second launch sums the chunks' sums (a buffer the binding
//           allocates), so that every run gives the same bits. At most BIAS_MAX_CHUNKS (65535, gridDim.y's limit)
//           chunks: past 16,776,960 rows each block takes more rows.
// saved for backward: X and W (b is not needed)
#include "common/colsum.cuh"
#include "common/kp.cuh"
#include "common/linear_tiles.cuh"

constexpr int TILE = 16;
constexpr int64_t BIAS_CHUNK = 256;  // rows of G per block of the bias gradient (more past BIAS_MAX_CHUNKS chunks)
constexpr int64_t BIAS_MAX_CHUNKS = 65535;  // gridDim.y's limit: the first stage's chunks
// The register-tiled product: linear_ladder.cu's version 7 at its default tiles (a test holds the two to the same
// numbers), for outputs of at least FAST_MIN_BLOCKS of its blocks.
constexpr int FAST_BM = 128, FAST_BN = 128, FAST_BK = 16, FAST_TM = 8, FAST_TN = 8;
constexpr int FAST_THREADS = FAST_BM / FAST_TM * (FAST_BN / FAST_TN);
constexpr int64_t FAST_MIN_BLOCKS = 16;

// sum_k A(r, k) B(k, c) for this thread's output element (r, c) = (blockIdx.x * TILE + threadIdx.y,
// blockIdx.y * TILE + threadIdx.x), where A(r, k) = A[r * a_row + k * a_k] and B(k, c) = B[k * b_k + c * b_col]:
// the strides let one routine read X, W and G as they are or transposed. Each tile is loaded so that
// neighbouring threadIdx.x read neighbouring addresses, whichever index of the operand is the contiguous one.
// Every thread of the block must call it (it holds barriers), also those whose (r, c) is outside the output.
template <typename T>
__device__ T tiled_product(const T* __restrict__ A, int64_t a_row, int64_t a_k, const T* __restrict__ B, int64_t b_k,
                           int64_t b_col, int64_t rows, int64_t cols, int64_t K) {
  __shared__ T As[TILE][TILE + 1];  // As[r][k]; the extra column keeps transposed stores free of bank conflicts
  __shared__ T Bs[TILE][TILE + 1];  // Bs[k][c]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row0 = (int64_t)blockIdx.x * TILE, col0 = (int64_t)blockIdx.y * TILE;
  T acc = 0;
  for (int64_t k0 = 0; k0 < K; k0 += TILE) {
    if (a_k == 1) {  // k is contiguous in A: threadIdx.x walks k
      int64_t r = row0 + ty, k = k0 + tx;
      As[ty][tx] = (r < rows && k < K) ? A[r * a_row + k * a_k] : T(0);
    } else {  // r is contiguous in A: threadIdx.x walks r
      int64_t r = row0 + tx, k = k0 + ty;
      As[tx][ty] = (r < rows && k < K) ? A[r * a_row + k * a_k] : T(0);
    }
    if (b_col == 1) {  // c is contiguous in B: threadIdx.x walks c
      int64_t k = k0 + ty, c = col0 + tx;
      Bs[ty][tx] = (k < K && c < cols) ? B[k * b_k + c * b_col] : T(0);
    } else {  // k is contiguous in B: threadIdx.x walks k
      int64_t k = k0 + tx, c = col0 + ty;
      Bs[tx][ty] = (k < K && c < cols) ? B[k * b_k + c * b_col] : T(0);
    }
    __syncthreads();  // the tiles are complete
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();  // everyone is done with them before the next step overwrites them
  }
  return acc;
}

// Y (B, N) = X (B, M) · Wᵀ + b: A = X as it is, B(k, c) = W[c, k].
template <typename T>
__global__ void linear_fwd_kernel(const T* __restrict__ X, const T* __restrict__ W, const T* __restrict__ b,
                                  T* __restrict__ Y, int64_t B, int64_t M, int64_t N) {
  T acc = tiled_product(X, M, 1, W, 1, M, B, N, M);
  int64_t i = (int64_t)blockIdx.x * TILE + threadIdx.y, n = (int64_t)blockIdx.y * TILE + threadIdx.x;
  if (i < B && n < N) Y[i * N + n] = acc + b[n];
}

// dX (B, M) = G (B, N) · W (N, M): both as they are.
template <typename T>
__global__ void linear_bwd_input_kernel(const T* __restrict__ G, const T* __restrict__ W, T* __restrict__ dX, int64_t B,
                                        int64_t M, int64_t N) {
  T acc = tiled_product(G, N, 1, W, M, 1, B, M, N);
  int64_t i = (int64_t)blockIdx.x * TILE + threadIdx.y, m = (int64_t)blockIdx.y * TILE + threadIdx.x;
  if (i < B && m < M) dX[i * M + m] = acc;
}

// dW (N, M) = Gᵀ · X (B, M): A(r, k) = G[k, r], X as it is.
template <typename T>
__global__ void linear_bwd_weight_kernel(const T* __restrict__ G, const T* __restrict__ X, T* __restrict__ dW,
                                         int64_t B, int64_t M, int64_t N) {
  T acc = tiled_product(G, 1, N, X, M, 1, N, M, B);
  int64_t n = (int64_t)blockIdx.x * TILE + threadIdx.y, m = (int64_t)blockIdx.y * TILE + threadIdx.x;
  if (n < N && m < M) dW[n * M + m] = acc;
}

// Rows [blockIdx.y * rows_per_block, + rows_per_block) of the block's 32 columns of G (B, N), summed into
// sums[blockIdx.y][n]: db's first stage, or with one chunk db itself (mul_add.cu's sum_rows_kernel).
template <typename T>
__global__ void linear_bwd_bias_kernel(const T* __restrict__ G, T* __restrict__ sums, int64_t B, int64_t N,
                                       int64_t rows_per_block) {
  __shared__ T partial[32][33];
  int64_t begin = (int64_t)blockIdx.y * rows_per_block, end = begin + rows_per_block < B ? begin + rows_per_block : B;
  T v = column_sums(G, begin, end, N, partial);
  int64_t n = (int64_t)blockIdx.x * 32 + threadIdx.y;
  if (threadIdx.x == 0 && n < N) sums[blockIdx.y * N + n] = v;
}

// C (rows, cols) = A·B (+ bias[c] where bias is not null), register-tiled (common/linear_tiles.cuh): A(r, k) =
// A[r * lda + k] where A_ALONG_K, else A[k * lda + r]; B(k, c) = B[c * ldb + k] where B_ALONG_K, else B[k * ldb + c].
// Each tile is loaded along the operand's contiguous index. packed_a, packed_b, packed_c: that pointer (and bias)
// 16-byte aligned and its leading dimension a multiple of a Pack, so its loads or stores may be 16-byte Packs.
template <typename T, bool A_ALONG_K, bool B_ALONG_K>
__global__ void __launch_bounds__(FAST_THREADS)
    linear_tiled_kernel(const T* __restrict__ A, int64_t lda, const T* __restrict__ B, int64_t ldb,
                        const T* __restrict__ bias, T* __restrict__ C, int64_t rows, int64_t cols, int64_t K,
                        bool packed_a, bool packed_b, bool packed_c) {
  __shared__ __align__(16) T As[FAST_BK][FAST_BM + TILE_PAD];  // As[k][r]
  __shared__ __align__(16) T Bs[FAST_BK][FAST_BN + TILE_PAD];  // Bs[k][c]
  const int tc = threadIdx.x % (FAST_BN / FAST_TN), tr = threadIdx.x / (FAST_BN / FAST_TN);
  const int64_t row0 = (int64_t)blockIdx.x * FAST_BM, col0 = (int64_t)blockIdx.y * FAST_BN;
  T acc[FAST_TM][FAST_TN] = {};
  for (int64_t k0 = 0; k0 < K; k0 += FAST_BK) {
    load_tile<T, FAST_BM, FAST_BK, FAST_THREADS, A_ALONG_K>(A, lda, rows, K, row0, k0, packed_a, As);
    load_tile<T, FAST_BN, FAST_BK, FAST_THREADS, B_ALONG_K>(B, ldb, cols, K, col0, k0, packed_b, Bs);
    __syncthreads();
    multiply_fragments<T, FAST_BM, FAST_BN, FAST_BK, FAST_TM, FAST_TN>(As, Bs, tr, tc, acc);
    __syncthreads();
  }
  store_fragment<T, FAST_BM, FAST_BN, FAST_TM, FAST_TN>(acc, bias, C, rows, cols, row0, col0, tr, tc, packed_c);
}

// Whether an output of rows x cols takes linear_tiled_kernel: at least FAST_MIN_BLOCKS of its blocks (fewer would
// leave most of a GPU idle where the 16 x 16 tiles spread over many more blocks).
inline bool fast(int64_t rows, int64_t cols) {
  return ceil_div<int64_t>(rows, FAST_BM) * ceil_div<int64_t>(cols, FAST_BN) >= FAST_MIN_BLOCKS;
}

// linear_tiled_kernel's grid over C (rows, cols): row tiles on x, column tiles on y.
inline dim3 tiled_grid(int64_t rows, int64_t cols) {
  return dim3(ceil_div<int64_t>(rows, FAST_BM), ceil_div<int64_t>(cols, FAST_BN));
}

// Whether a matrix of leading dimension ld at p (and q, if given) may be read or written in 16-byte Packs.
template <typename T>
bool packs(const T* p, int64_t ld, const T* q = nullptr) {
  return ld % Pack<T>::N == 0 && kp::packs_fit(p, q);
}

// Launchers. Nothing to launch for an empty output (a grid of zero blocks is an invalid configuration);
// an empty inner dimension launches as usual and writes zeros (plus b in the forward).

template <typename T>
void linear_fwd(const T* x, const T* w, const T* b, T* y, int64_t B, int64_t M, int64_t N, cudaStream_t stream) {
  if (B == 0 || N == 0) return;
  if (fast(B, N)) {  // A = X, B(k, c) = W[c, k]
    linear_tiled_kernel<T, true, true><<<tiled_grid(B, N), FAST_THREADS, 0, stream>>>(
        x, M, w, M, b, y, B, N, M, packs(x, M), packs(w, M), packs(y, N, b));
  } else {
    dim3 grid(ceil_div<int64_t>(B, TILE), ceil_div<int64_t>(N, TILE)), block(TILE, TILE);
    linear_fwd_kernel<T><<<grid, block, 0, stream>>>(x, w, b, y, B, M, N);
  }
  KP_CHECK_LAUNCH();
}

template <typename T>
void linear_bwd_input(const T* g, const T* w, T* dx, int64_t B, int64_t M, int64_t N, cudaStream_t stream) {
  if (B == 0 || M == 0) return;
  if (fast(B, M)) {  // A = G, B = W, as they are
    linear_tiled_kernel<T, true, false><<<tiled_grid(B, M), FAST_THREADS, 0, stream>>>(
        g, N, w, M, nullptr, dx, B, M, N, packs(g, N), packs(w, M), packs(dx, M));
  } else {
    dim3 grid(ceil_div<int64_t>(B, TILE), ceil_div<int64_t>(M, TILE)), block(TILE, TILE);
    linear_bwd_input_kernel<T><<<grid, block, 0, stream>>>(g, w, dx, B, M, N);
  }
  KP_CHECK_LAUNCH();
}

template <typename T>
void linear_bwd_weight(const T* g, const T* x, T* dw, int64_t B, int64_t M, int64_t N, cudaStream_t stream) {
  if (N == 0 || M == 0) return;
  if (fast(N, M)) {  // A(r, k) = G[k, r], B = X as it is
    linear_tiled_kernel<T, false, false><<<tiled_grid(N, M), FAST_THREADS, 0, stream>>>(
        g, N, x, M, nullptr, dw, N, M, B, packs(g, N), packs(x, M), packs(dw, M));
  } else {
    dim3 grid(ceil_div<int64_t>(N, TILE), ceil_div<int64_t>(M, TILE)), block(TILE, TILE);
    linear_bwd_weight_kernel<T><<<grid, block, 0, stream>>>(g, x, dw, B, M, N);
  }
  KP_CHECK_LAUNCH();
}

// db (N) = the column sums of G (B, N), notebook 08's version 5: the sums of chunks of BIAS_CHUNK rows into `sums`
// (ceil(B / BIAS_CHUNK) x N, allocated by the binding), then the column sums of those; the same bits on every run.
template <typename T>
void linear_bwd_bias(const T* g, T* db, T* sums, int64_t B, int64_t N, cudaStream_t stream) {
  if (N == 0) return;
  // BIAS_CHUNK rows per block, or as many more as keep the chunks within gridDim.y's limit (at most the binding's
  // ceil(B / BIAS_CHUNK) rows of `sums`, so the buffer is always large enough).
  const int64_t rows = chunk_rows(B, BIAS_CHUNK, BIAS_MAX_CHUNKS);
  const int64_t blocks = ceil_div<int64_t>(N, 32), chunks = ceil_div<int64_t>(B, rows);
  if (chunks <= 1) {  // one chunk (or none: zeros): its sums are db
    linear_bwd_bias_kernel<T><<<blocks, dim3(32, 32), 0, stream>>>(g, db, B, N, rows);
  } else {
    linear_bwd_bias_kernel<T><<<dim3(blocks, chunks), dim3(32, 32), 0, stream>>>(g, sums, B, N, rows);
    KP_CHECK_LAUNCH();
    linear_bwd_bias_kernel<T><<<blocks, dim3(32, 32), 0, stream>>>(sums, db, chunks, N, chunks);
  }
  KP_CHECK_LAUNCH();
}

template void linear_fwd<float>(const float*, const float*, const float*, float*, int64_t, int64_t, int64_t,
                                cudaStream_t);
template void linear_fwd<double>(const double*, const double*, const double*, double*, int64_t, int64_t, int64_t,
                                 cudaStream_t);
template void linear_bwd_input<float>(const float*, const float*, float*, int64_t, int64_t, int64_t, cudaStream_t);
template void linear_bwd_input<double>(const double*, const double*, double*, int64_t, int64_t, int64_t, cudaStream_t);
template void linear_bwd_weight<float>(const float*, const float*, float*, int64_t, int64_t, int64_t, cudaStream_t);
template void linear_bwd_weight<double>(const double*, const double*, double*, int64_t, int64_t, int64_t, cudaStream_t);
template void linear_bwd_bias<float>(const float*, float*, float*, int64_t, int64_t, cudaStream_t);
template void linear_bwd_bias<double>(const double*, double*, double*, int64_t, int64_t, cudaStream_t);
