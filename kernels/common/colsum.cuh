// Column sums in a block of 32 x 32 threads: the winner of notebook 08's ladder (kernels/colsum.cu, versions 3 to
// 5), for the kernels that sum a matrix's rows (mul_add.cu's sum_to: a broadcast input's gradient). colsum.cu keeps
// its own copy of this function, so that notebook 08 can show it and vary it (a wrong shuffle mask) in one file.
#pragma once

// The sum of rows [begin, end) of the block's 32 columns, returned in warp threadIdx.y's lane 0 for column
// blockIdx.x * 32 + threadIdx.y. `partial` is the block's `__shared__ T partial[32][33]`, declared in the calling
// kernel (so that check mode sees it); the extra column keeps the transposed reads free of bank conflicts. Every
// thread of the block must call it: it holds a barrier.
template <typename T>
__device__ T column_sums(const T* __restrict__ x, int64_t begin, int64_t end, int64_t C, T (*partial)[33]) {
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
