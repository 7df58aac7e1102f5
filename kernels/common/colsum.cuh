// Column sums in a block of 32 x 32 threads: the winner of notebook 08's ladder (kernels/colsum.cu, versions 3 to
// 5), for the kernels that sum a matrix's rows (mul_add.cu's sum_to: a broadcast input's gradient). colsum.cu keeps
// its own copy of this function, so that notebook 08 can show it and vary it (a wrong shuffle mask) in one file;
// tests/test_colsum.py holds the two to the same bits (mul_add's sum_to against colsum version 5).
//
// To sum the rows of a matrix x (R, C) into out (C) with it, as version 5 does (two launches, no atomics, the same
// bits every run), a kernel file needs a kernel and a launcher (the CPU stand-in translates headers like the `.cu`:
// they could live in a header too; notebook 08 varies them in the `.cu`). mul_add.cu's sum_rows_kernel and sum_rows
// are the ones to copy (rename them):
//
//   #include "common/colsum.cuh"
//   template <typename T>  // rows [blockIdx.y * rows_per_block, +rows_per_block) of 32 columns into sums[blockIdx.y]
//   __global__ void sum_rows_kernel(const T* x, T* sums, int64_t R, int64_t C, int64_t rows_per_block) {
//     __shared__ T partial[32][33];
//     int64_t begin = (int64_t)blockIdx.y * rows_per_block;
//     int64_t end = begin + rows_per_block < R ? begin + rows_per_block : R;
//     T v = column_sums(x, begin, end, C, partial);
//     int64_t c = (int64_t)blockIdx.x * 32 + threadIdx.y;
//     if (threadIdx.x == 0 && c < C) sums[blockIdx.y * C + c] = v;
//   }
//   // launcher: rows = chunk_rows(R), chunks = ceil(R / rows); one chunk:
//   //       sum_rows_kernel<<<ceil(C / 32), dim3(32, 32)>>>(x, out, R, C, rows);
//   // more: <<<dim3(ceil(C / 32), chunks), dim3(32, 32)>>>(x, sums, R, C, rows), then
//   //       <<<ceil(C / 32), dim3(32, 32)>>>(sums, out, chunks, C, chunks); the binding allocates sums
//   //       (ceil(R / 256) x C: always enough).
#pragma once

#include <cstdint>

// Rows per block of such a column sum over R rows: `rows` (256), or more where that would take more than
// `max_chunks` blocks along gridDim.y (65535: its limit), so that any R launches. Never fewer than `rows`, so that a
// buffer of ceil(R / rows) chunks always holds the partial sums.
inline int64_t chunk_rows(int64_t R, int64_t rows = 256, int64_t max_chunks = 65535) {
  return R > rows * max_chunks ? (R + max_chunks - 1) / max_chunks : rows;
}

// The sum of rows [begin, end) of the block's 32 columns, returned in warp threadIdx.y's lane 0 for column
// blockIdx.x * 32 + threadIdx.y. `partial` is the block's `__shared__ T partial[32][33]`, declared in the calling
// kernel (so that check mode sees it); the extra column keeps the transposed reads free of bank conflicts. Every
// thread of the block must call it: it holds a barrier.
// The sums are of partial's type A (by default x's): a kernel summing 16-bit values passes a float partial, and
// adds in float (layernorm.cu).
template <typename T, typename A>
__device__ A column_sums(const T* __restrict__ x, int64_t begin, int64_t end, int64_t C, A (*partial)[33]) {
  int64_t c = (int64_t)blockIdx.x * 32 + threadIdx.x;
  A sum = 0;
  if (c < C)
    for (int64_t r = begin + threadIdx.y; r < end; r += 32) sum += A(x[r * C + c]);  // neighbouring x: neighbouring c
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  A v = partial[threadIdx.x][threadIdx.y];  // lane l of warp w: row-thread l's sum of column w
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}
