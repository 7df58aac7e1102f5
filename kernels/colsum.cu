// colsum: the column sums of a matrix, out[c] = sum over r of x[r, c]: a bias's gradient (linear's, of notebook 05)
// and a broadcast input's (mul_add's sum_to, of notebook 02). Notebook 08 climbs it as a ladder of five versions.
//
// forward:  out[c] = x[0, c] + x[1, c] + ... + x[R - 1, c]
// shapes:   x (R, C), contiguous; out (C); any R and C, 0 included (an empty column sums to 0)
// dtypes:   float32 and float64 (templated on T)
// kernels:  v1 colsum_v1: one thread per column walks its R rows (neighbouring threads, neighbouring columns: the
//              loads coalesce); C threads in all, so a short, wide matrix keeps a GPU busy and a tall, narrow one
//              does not.
//           v2 colsum_v2: blocks of 32 columns x 8 row-threads; each thread sums every 8th row of its column, the
//              8 partial sums meet in shared memory and add up in a tree.
//           v3 colsum_v3: 32 x 32 threads; 32 partial sums per column in a padded shared tile; warp w adds column w's
//              32 with __shfl_down_sync, no shared memory and no barrier between the steps.
//           v4 colsum_v4: v3 on a chunk of 256 rows per block, the rows spread over the grid (parallel for any R),
//              each block's column sums added to `out` with atomicAdd: the order of the additions, and so the last
//              bits of a float result, change from run to run on a GPU.
//           v5 colsum_v5: v4 without atomics: each block writes its chunk's sums to a (chunks, C) buffer, and v3
//              sums that buffer's columns: two launches, the same bits every run.
//           The op `colsum(x, version)` runs one of them (5 by default).
#include "common/kp.cuh"

constexpr int CHUNK_ROWS = 256;  // rows per block in v4 and v5

template <typename T>
__global__ void colsum_v1(const T* __restrict__ x, T* __restrict__ out, int64_t R, int64_t C) {
  int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  T sum = 0;
  for (int64_t r = 0; r < R; ++r) sum += x[r * C + c];
  out[c] = sum;
}

template <typename T>
__global__ void colsum_v2(const T* __restrict__ x, T* __restrict__ out, int64_t R, int64_t C) {
  __shared__ T partial[8][32];
  int64_t c = (int64_t)blockIdx.x * 32 + threadIdx.x;
  T sum = 0;
  if (c < C)
    for (int64_t r = threadIdx.y; r < R; r += 8) sum += x[r * C + c];
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  for (int s = 4; s > 0; s >>= 1) {
    if (threadIdx.y < s) partial[threadIdx.y][threadIdx.x] += partial[threadIdx.y + s][threadIdx.x];
    __syncthreads();
  }
  if (threadIdx.y == 0 && c < C) out[c] = partial[0][threadIdx.x];
}

// The sum of rows [begin, end) of the block's 32 columns, in warp threadIdx.y's lane 0 for column
// blockIdx.x * 32 + threadIdx.y. Every thread of the 32 x 32 block must call it (it holds a barrier).
template <typename T>
__device__ T column_sums(const T* __restrict__ x, int64_t begin, int64_t end, int64_t C) {
  __shared__ T partial[32][33];  // [row-thread][column]; the extra column keeps the transposed reads conflict-free
  int64_t c = (int64_t)blockIdx.x * 32 + threadIdx.x;
  T sum = 0;
  if (c < C)
    for (int64_t r = begin + threadIdx.y; r < end; r += 32) sum += x[r * C + c];  // neighbouring x: neighbouring c
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  T v = partial[threadIdx.x][threadIdx.y];  // lane l of warp w: row-thread l's sum of column w
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}

template <typename T>
__global__ void colsum_v3(const T* __restrict__ x, T* __restrict__ out, int64_t R, int64_t C) {
  T v = column_sums(x, 0, R, C);
  int64_t c = (int64_t)blockIdx.x * 32 + threadIdx.y;
  if (threadIdx.x == 0 && c < C) out[c] = v;
}

template <typename T>
__global__ void colsum_v4(const T* __restrict__ x, T* __restrict__ out, int64_t R, int64_t C) {
  int64_t begin = (int64_t)blockIdx.y * CHUNK_ROWS, end = begin + CHUNK_ROWS < R ? begin + CHUNK_ROWS : R;
  T v = column_sums(x, begin, end, C);
  int64_t c = (int64_t)blockIdx.x * 32 + threadIdx.y;
  if (threadIdx.x == 0 && c < C) atomicAdd(&out[c], v);  // out starts at zero
}

template <typename T>
__global__ void colsum_v5_partial(const T* __restrict__ x, T* __restrict__ partial, int64_t R, int64_t C) {
  int64_t begin = (int64_t)blockIdx.y * CHUNK_ROWS, end = begin + CHUNK_ROWS < R ? begin + CHUNK_ROWS : R;
  T v = column_sums(x, begin, end, C);
  int64_t c = (int64_t)blockIdx.x * 32 + threadIdx.y;
  if (threadIdx.x == 0 && c < C) partial[blockIdx.y * C + c] = v;
}

// The rows one block of versions 4 and 5 sums: the binding sizes `partial` and checks gridDim.y's limit by it, so an
// edit of CHUNK_ROWS (notebook 08's exercise) changes both sides.
int64_t colsum_chunk_rows() { return CHUNK_ROWS; }

// `out` is zeroed for version 4; `partial` holds ceil(R / CHUNK_ROWS) x C elements for version 5.
template <typename T>
void colsum(const T* x, T* out, T* partial, int64_t R, int64_t C, int version, cudaStream_t stream) {
  if (C == 0) return;
  const int64_t column_blocks = ceil_div<int64_t>(C, 32), chunks = ceil_div<int64_t>(R, CHUNK_ROWS);
  if (version == 1) {
    colsum_v1<T><<<ceil_div<int64_t>(C, 256), 256, 0, stream>>>(x, out, R, C);
  } else if (version == 2) {
    colsum_v2<T><<<column_blocks, dim3(32, 8), 0, stream>>>(x, out, R, C);
  } else if (version == 3 || R == 0) {
    colsum_v3<T><<<column_blocks, dim3(32, 32), 0, stream>>>(x, out, R, C);
  } else if (version == 4) {
    colsum_v4<T><<<dim3(column_blocks, chunks), dim3(32, 32), 0, stream>>>(x, out, R, C);
  } else {
    colsum_v5_partial<T><<<dim3(column_blocks, chunks), dim3(32, 32), 0, stream>>>(x, partial, R, C);
    KP_CHECK_LAUNCH();
    colsum_v3<T><<<column_blocks, dim3(32, 32), 0, stream>>>(partial, out, chunks, C);
  }
  KP_CHECK_LAUNCH();
}

template void colsum<float>(const float*, float*, float*, int64_t, int64_t, int, cudaStream_t);
template void colsum<double>(const double*, double*, double*, int64_t, int64_t, int, cudaStream_t);
