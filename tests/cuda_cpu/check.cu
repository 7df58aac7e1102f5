// Kernels for check mode's tests (tests/test_check_mode.py): small bugs of each kind check mode finds, each
// on a line marked `// BUG: <case>`, and correct kernels that look risky, which must report nothing.
// One launcher runs case `which` on x (input, n floats) into out (n floats).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

namespace cg = cooperative_groups;

#include "check_header.cuh"

constexpr int kBlock = 64;

// ---- out-of-bounds global accesses

__global__ void read_past_end(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + x[i + 1];  // BUG: read_past_end
}

__global__ void write_without_bound(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 2 * x[i < n ? i : 0];  // BUG: write_without_bound
}

__device__ float load(const float* p, int i) { return p[i]; }

__global__ void read_before_start(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = load(x, i - 1);  // BUG: read_before_start (through a __device__ function)
}

// ---- shared-memory races

// A tree reduction that forgot the __syncthreads() between filling shared memory and reading it.
__global__ void reduce_missing_sync(const float* x, float* out, int n) {
  __shared__ float s[kBlock];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;  // BUG: reduce_missing_sync (the write)
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];  // BUG: reduce_missing_sync (the read)
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// The legacy warp-synchronous tail (volatile, no __syncwarp): a race since Volta.
__global__ void warp_tail_without_syncwarp(const float* x, float* out, int n) {
  __shared__ float s[kBlock];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (t < 32) {
    volatile float* v = s;
    v[t] += v[t + 32];  // BUG: warp_tail_without_syncwarp (the read)
    v[t] += v[t + 16];  // BUG: warp_tail_without_syncwarp (the write)
    v[t] += v[t + 8];
    v[t] += v[t + 4];
    v[t] += v[t + 2];
    v[t] += v[t + 1];
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// A loop over tiles without the barrier at the end of its body: the next iteration's store to the tile races with
// the reads of the last one (thread t reads its neighbour's element).
__global__ void tile_loop_without_end_barrier(const float* x, float* out, int n) {
  __shared__ float tile[kBlock];
  int t = threadIdx.x;
  float acc = 0.0f;
  for (int base = 0; base < n; base += kBlock) {  // LOOP: tile_loop_without_end_barrier
    tile[t] = base + t < n ? x[base + t] : 0.0f;  // BUG: tile_loop_without_end_barrier (the write)
    __syncthreads();                              // BARRIER: tile_loop_without_end_barrier
    acc += tile[(t + 1) % kBlock];                // BUG: tile_loop_without_end_barrier (the read)
  }
  if (t < n) out[t] = acc;
}

// ---- out-of-bounds shared accesses

__global__ void shift_left_in_shared(const float* x, float* out, int n) {
  __shared__ float tile[kBlock];
  __shared__ float other[kBlock];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  tile[t] = i < n ? x[i] : 0.0f;
  other[t] = 0.0f;
  __syncthreads();
  if (i < n) out[i] = tile[t + 1] + other[t];  // BUG: shift_left_in_shared
}

// Two arrays of 33 floats, not a whole number of 128-byte lines: the stand-in starts each __shared__ variable on
// 128 bytes, so one of them sits past a gap of padding, and its [-1] must still be found. Which one depends on how
// g++ lays them out; each case reads one, so together they read both.
__global__ void read_before_first_odd_array(const float* x, float* out, int n) {
  __shared__ float first[33];
  __shared__ float second[33];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 33) first[t] = second[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n && t < 33) out[i] = first[t - 1];  // BUG: read_before_first_odd_array
}

__global__ void read_before_second_odd_array(const float* x, float* out, int n) {
  __shared__ float first[33];
  __shared__ float second[33];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 33) first[t] = second[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n && t < 33) out[i] = second[t - 1];  // BUG: read_before_second_odd_array
}

// Two arrays of one declaration: no guard lies between them, only the padding to the second's 128 bytes, where
// [33] of the one below must still be found. Which one is below depends on g++; each case reads one.
__global__ void read_past_first_of_one_declaration(const float* x, float* out, int n) {
  __shared__ float first[33], second[33];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 33) first[t] = second[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n && t < 33) out[i] = first[t + 1];  // BUG: read_past_first_of_one_declaration
}

__global__ void read_past_second_of_one_declaration(const float* x, float* out, int n) {
  __shared__ float first[33], second[33];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 33) first[t] = second[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n && t < 33) out[i] = second[t + 1];  // BUG: read_past_second_of_one_declaration
}

__global__ void dynamic_past_launch_size(const float* x, float* out, int n) {
  extern __shared__ float buf[];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  buf[t] = i < n ? x[i] : 0.0f;  // BUG: dynamic_past_launch_size
  __syncthreads();
  if (i < n) out[i] = buf[t];
}

// ---- divergent barriers

__global__ void barrier_in_branch(const float* x, float* out, int n) {
  __shared__ float s[kBlock];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;
  if (t < 32) {
    __syncthreads();  // BUG: barrier_in_branch
  } else {
    __syncthreads();  // the other one
  }
  if (i < n) out[i] = s[t];
}

// Block 1's threads past n skip the barrier under the `if` (then exit): a barrier in code whose condition differs
// between the threads of a block.
__global__ void barrier_under_if(const float* x, float* out, int n) {
  __shared__ float s[kBlock];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (i < n) {
    s[t] = x[i];
    __syncthreads();  // BUG: barrier_under_if
    out[i] = s[t];
  }
}

// Threads 32-63 skip the first barrier and wait at the second, which threads 0-31 have not reached.
__global__ void barrier_skipped_by_live_threads(const float* x, float* out, int n) {
  __shared__ float s[kBlock];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;
  if (t < 32) __syncthreads();  // BUG: barrier_skipped_by_live_threads
  __syncthreads();
  if (i < n) out[i] = s[t];
}

__global__ void shuffle_mask_names_absent_lanes(const float* x, float* out, int n) {
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  float v = i < n ? x[i] : 0.0f;
  if (t % 32 < 16) v += __shfl_down_sync(0xffffffffu, v, 1);  // BUG: shuffle_mask_names_absent_lanes
  if (i < n) out[i] = v;
}

// ---- out-of-bounds local arrays (a thread's own: registers or local memory on a GPU)

// add2's bug of notebook 01 on its Pack path: the op on element k of a thread's 4 values writes element k + 1.
__device__ __forceinline__ void sum_at(const float* a, float* s, int k) {
  s[k + 1] = a[k] + a[k];  // BUG: local_array_off_by_one
}

__global__ void local_array_off_by_one(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a[4] = {x[i], x[i], x[i], x[i]}, s[4] = {};
  for (int k = 0; k < 4; ++k) sum_at(a, s, k);
  out[i] = s[1];
}

// ---- uninitialised shared reads (a warning)

__global__ void read_before_write(const float* x, float* out, int n) {
  __shared__ float s[kBlock];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  float stale = s[t];  // BUG: read_before_write
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = s[t] + 0.0f * stale;
}

// Every lane of warp 0 stores its own lane number to one shared slot: which one lands is undefined.
__global__ void lanes_store_different_values(const float* x, float* out, int n) {
  __shared__ float last;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 32) last = float(t);  // BUG: lanes_store_different_values
  __syncthreads();
  if (i < n) out[i] = x[i] * last;
}

// The last-block pattern without its __threadfence(): the last block may not see another block's partial sum.
__device__ unsigned int g_blocks_done_unfenced = 0;

__global__ void last_block_without_fence(const float* x, float* out, int n) {
  __shared__ bool last;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  float v = i < n ? x[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (t == 0) {
    out[1 + blockIdx.x] = v;  // BUG: last_block_without_fence (the write, no __threadfence after it)
    last = atomicInc(&g_blocks_done_unfenced, gridDim.x) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && t == 0) {
    float total = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) total += out[1 + b];  // BUG: last_block_without_fence (the read)
    out[0] = total;
    g_blocks_done_unfenced = 0;
  }
}

// ---- a wrong answer: who wrote it (check_against_reference)

__global__ void copy_with_one_wrong(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i == 37 ? -x[i] : x[i];  // BUG: copy_with_one_wrong
}

// ---- correct kernels that look risky: no findings

__global__ void tree_reduction(const float* x, float* out, int n) {
  __shared__ float s[kBlock];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

__global__ void warp_shuffle_reduction(const float* x, float* out, int n) {
  __shared__ float warp_sums[kBlock / 32];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  float v = i < n ? x[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (t % 32 == 0) warp_sums[t / 32] = v;
  __syncthreads();
  if (t < 32) {
    v = t < kBlock / 32 ? warp_sums[t] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (t == 0) out[blockIdx.x] = v;
  }
}

// The warp-synchronous tail done right: __syncwarp between the steps.
__global__ void warp_tail_with_syncwarp(const float* x, float* out, int n) {
  __shared__ float s[kBlock];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (t < 32) {
    float v = s[t] + s[t + 32];
    for (int offset = 16; offset > 0; offset /= 2) {
      __syncwarp();
      s[t] = v;
      __syncwarp();
      v += s[t + offset];
    }
    if (t == 0) out[blockIdx.x] = v;
  }
}

__global__ void grid_stride_scale(const float* x, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = 3 * x[i];
}

// A histogram of the signs of x in shared memory, by atomics.
__global__ void shared_histogram(const float* x, float* out, int n) {
  __shared__ int bins[2];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 2) bins[t] = 0;
  __syncthreads();
  if (i < n) atomicAdd(&bins[x[i] < 0 ? 0 : 1], 1);
  __syncthreads();
  if (t < 2) atomicAdd(&out[t], static_cast<float>(bins[t]));
}

// A 3-point stencil with halo cells loaded by the first and last threads of the block.
__global__ void stencil_with_halo(const float* x, float* out, int n) {
  __shared__ float tile[kBlock + 2];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  tile[t + 1] = i < n ? x[i] : 0.0f;
  if (t == 0) tile[0] = i > 0 && i - 1 < n ? x[i - 1] : 0.0f;
  if (t == blockDim.x - 1) tile[t + 2] = i + 1 < n ? x[i + 1] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = tile[t] + tile[t + 1] + tile[t + 2];
}

// Dynamic shared memory used within the launch's size, through pointer arithmetic.
__global__ void dynamic_reverse(const float* x, float* out, int n) {
  extern __shared__ float buf[];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  float* mine = buf + t;
  *mine = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = buf[blockDim.x - 1 - t];
}

// Exited threads do not count at a barrier (since Volta it waits for the threads that have not exited): block 1's
// threads past n return, the others meet at the __syncthreads.
__global__ void return_before_barrier(const float* x, float* out, int n) {
  __shared__ float s[kBlock];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (i >= n) return;
  s[t] = x[i];
  __syncthreads();
  out[i] = s[t];
}

// The lanes of warp 0 store the same value (the warp's sum, after a shuffle reduction) to one shared slot.
__global__ void lanes_store_the_same_value(const float* x, float* out, int n) {
  __shared__ float sum;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  float v = t < 32 && i < n ? x[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (t < 32) sum = v;
  __syncthreads();
  if (i < n) out[i] = sum;
}

// A float atomic max by the atomicCAS loop: a plain read seeds the guess, the CAS checks it.
__device__ float atomic_max_float(float* p, float v) {
  int* bits = reinterpret_cast<int*>(p);
  int old = *bits;
  while (v > __int_as_float(old)) {
    int assumed = old;
    old = atomicCAS(bits, assumed, __float_as_int(v));
    if (old == assumed) break;
  }
  return __int_as_float(old);
}

__global__ void cas_loop_max(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomic_max_float(&out[0], x[i]);
}

// The same in shared memory, beside an integer atomicMax (the stand-in's is an atomic load and a CAS loop): a block's
// maximum of x, and of its elements' signs.
__global__ void shared_atomic_max(const float* x, float* out, int n) {
  __shared__ float top;
  __shared__ int positive;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t == 0) top = -1e30f, positive = 0;
  __syncthreads();
  if (i < n) atomic_max_float(&top, x[i]), atomicMax(&positive, x[i] > 0);
  __syncthreads();
  if (t == 0) out[2 * blockIdx.x] = top, out[2 * blockIdx.x + 1] = float(positive);
}

// The CUDA Programming Guide's last-block pattern (threadfence section): each block's partial sum (here of its
// first warp's elements), a __threadfence(), an atomicInc ticket; the block that draws the last ticket adds them.
__device__ unsigned int g_blocks_done = 0;

__global__ void last_block_sums(const float* x, float* out, int n) {
  __shared__ bool last;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  float v = i < n ? x[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (t == 0) {
    out[1 + blockIdx.x] = v;
    __threadfence();
    last = atomicInc(&g_blocks_done, gridDim.x) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && t == 0) {
    float total = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) total += out[1 + b];
    out[0] = total;
    g_blocks_done = 0;
  }
}

// One extern __shared__ char[] carved into a float array and an int array, each written before the barrier.
__global__ void carved_dynamic_shared(const float* x, float* out, int n) {
  extern __shared__ char smem[];
  float* values = reinterpret_cast<float*>(smem);
  int* flags = reinterpret_cast<int*>(&values[blockDim.x]);
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  values[t] = i < n ? x[i] : 0.0f;
  flags[t] = i < n;
  __syncthreads();
  int j = blockDim.x - 1 - t;
  if (i < n) out[i] = flags[j] ? values[j] : -1.0f;
}

// A __forceinline__ function as cooperative groups' reduce operation.
__device__ __forceinline__ float add_floats(float a, float b) { return a + b; }

__global__ void cg_reduce_with_forceinline_op(const float* x, float* out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = cg::reduce(warp, i < n ? x[i] : 0.0f, add_floats);
  if (i < n) out[i] = v;
}

// A 16-byte read of x that, with out a narrow view of x (op(x, x[:62])), runs past out's end but not x's: no bug.
// On the stand-in g++ reads a float4 as four floats; a vector of GCC's is one 16-byte read, as a float4 is on a GPU.
#ifdef __CUDACC__
using Floats4 = float4;
#else
struct Floats4 {
  typedef float Vector __attribute__((vector_size(16)));
  Vector v;
};
#endif
__device__ float sum4(const Floats4& f) {
#ifdef __CUDACC__
  return f.x + f.y + f.z + f.w;
#else
  return f.v[0] + f.v[1] + f.v[2] + f.v[3];
#endif
}
__global__ void vector_read_of_a_view(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    Floats4 v = reinterpret_cast<const Floats4*>(x)[i];
    if (i == 0) out[0] = sum4(v);
  }
}

// ---- tensors past 2^31 bytes (one thread per row of a rows x cols uint8 matrix: its last column)

__global__ void last_column(const uint8_t* m, float* out, int64_t rows, int64_t cols) {
  int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (r < rows) out[r] = m[r * cols + cols - 1];  // a 64-bit index: right past 2^31 bytes
}

__global__ void last_column_int32(const uint8_t* m, float* out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) out[r] = m[r * cols + cols - 1];  // BUG: last_column_int32 (r * cols overflows int past 2^31)
}

// ---- one op call's temporary, freed between two launches (check_binding.cpp's reuse)

__global__ void fill_ones(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 1.0f;  // BUG: fill_ones (n past the second temporary's end)
}

void run_fill(float* p, int n) {
  fill_ones<<<(n + kBlock - 1) / kBlock, kBlock>>>(p, n);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string("fill: ") + cudaGetErrorString(err));
}

void run_last_column(const uint8_t* m, float* out, int64_t rows, int64_t cols, bool wide) {
  const int blocks = int((rows + kBlock - 1) / kBlock);
  if (wide)
    last_column<<<blocks, kBlock>>>(m, out, rows, cols);
  else
    last_column_int32<<<blocks, kBlock>>>(m, out, int(rows), int(cols));
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string("last_column: ") + cudaGetErrorString(err));
}

// ---- the launcher

// The cases, by number (the op's `which`).
const char* const kCases[] = {
    "read_past_end",
    "write_without_bound",
    "read_before_start",
    "reduce_missing_sync",
    "warp_tail_without_syncwarp",
    "tile_loop_without_end_barrier",
    "shift_left_in_shared",
    "read_before_first_odd_array",
    "read_before_second_odd_array",
    "read_past_first_of_one_declaration",
    "read_past_second_of_one_declaration",
    "dynamic_past_launch_size",
    "barrier_under_if",
    "barrier_skipped_by_live_threads",
    "barrier_in_branch",
    "shuffle_mask_names_absent_lanes",
    "local_array_off_by_one",
    "read_before_write",
    "lanes_store_different_values",
    "last_block_without_fence",
    "copy_with_one_wrong",
    "tree_reduction",
    "warp_shuffle_reduction",
    "warp_tail_with_syncwarp",
    "grid_stride_scale",
    "shared_histogram",
    "stencil_with_halo",
    "dynamic_reverse",
    "reverse_in_header",
    "return_before_barrier",
    "lanes_store_the_same_value",
    "cas_loop_max",
    "shared_atomic_max",
    "last_block_sums",
    "carved_dynamic_shared",
    "cg_reduce_with_forceinline_op",
    "vector_read_of_a_view",
};

void run_case(int64_t index, const float* x, float* out, int n) {
  if (index < 0 || index >= int64_t(sizeof kCases / sizeof kCases[0])) throw std::invalid_argument("no such case");
  const std::string which = kCases[index];
  const int blocks = (n + kBlock - 1) / kBlock;
  const size_t dyn = kBlock * sizeof(float);
  if (which == "read_past_end")
    read_past_end<<<blocks, kBlock>>>(x, out, n);
  else if (which == "write_without_bound")
    write_without_bound<<<blocks, kBlock>>>(x, out, n);
  else if (which == "read_before_start")
    read_before_start<<<blocks, kBlock>>>(x, out, n);
  else if (which == "reduce_missing_sync")
    reduce_missing_sync<<<blocks, kBlock>>>(x, out, n);
  else if (which == "warp_tail_without_syncwarp")
    warp_tail_without_syncwarp<<<blocks, kBlock>>>(x, out, n);
  else if (which == "tile_loop_without_end_barrier")
    tile_loop_without_end_barrier<<<1, kBlock>>>(x, out, n);
  else if (which == "shift_left_in_shared")
    shift_left_in_shared<<<blocks, kBlock>>>(x, out, n);
  else if (which == "read_before_first_odd_array")
    read_before_first_odd_array<<<blocks, kBlock>>>(x, out, n);
  else if (which == "read_before_second_odd_array")
    read_before_second_odd_array<<<blocks, kBlock>>>(x, out, n);
  else if (which == "read_past_first_of_one_declaration")
    read_past_first_of_one_declaration<<<blocks, kBlock>>>(x, out, n);
  else if (which == "read_past_second_of_one_declaration")
    read_past_second_of_one_declaration<<<blocks, kBlock>>>(x, out, n);
  else if (which == "dynamic_past_launch_size")
    dynamic_past_launch_size<<<blocks, kBlock, dyn / 2>>>(x, out, n);
  else if (which == "barrier_under_if")
    barrier_under_if<<<blocks, kBlock>>>(x, out, n);
  else if (which == "barrier_skipped_by_live_threads")
    barrier_skipped_by_live_threads<<<blocks, kBlock>>>(x, out, n);
  else if (which == "barrier_in_branch")
    barrier_in_branch<<<blocks, kBlock>>>(x, out, n);
  else if (which == "shuffle_mask_names_absent_lanes")
    shuffle_mask_names_absent_lanes<<<blocks, kBlock>>>(x, out, n);
  else if (which == "local_array_off_by_one")
    local_array_off_by_one<<<blocks, kBlock>>>(x, out, n);
  else if (which == "read_before_write")
    read_before_write<<<blocks, kBlock>>>(x, out, n);
  else if (which == "copy_with_one_wrong")
    copy_with_one_wrong<<<blocks, kBlock>>>(x, out, n);
  else if (which == "tree_reduction")
    tree_reduction<<<blocks, kBlock>>>(x, out, n);
  else if (which == "warp_shuffle_reduction")
    warp_shuffle_reduction<<<blocks, kBlock>>>(x, out, n);
  else if (which == "warp_tail_with_syncwarp")
    warp_tail_with_syncwarp<<<blocks, kBlock>>>(x, out, n);
  else if (which == "grid_stride_scale")
    grid_stride_scale<<<2, 32>>>(x, out, n);
  else if (which == "shared_histogram")
    shared_histogram<<<blocks, kBlock>>>(x, out, n);
  else if (which == "stencil_with_halo")
    stencil_with_halo<<<blocks, kBlock>>>(x, out, n);
  else if (which == "dynamic_reverse")
    dynamic_reverse<<<blocks, kBlock, dyn>>>(x, out, n);
  else if (which == "reverse_in_header")
    reverse_in_header<<<blocks, kBlock>>>(x, out, n);
  else if (which == "return_before_barrier")
    return_before_barrier<<<blocks, kBlock>>>(x, out, n);
  else if (which == "lanes_store_the_same_value")
    lanes_store_the_same_value<<<blocks, kBlock>>>(x, out, n);
  else if (which == "lanes_store_different_values")
    lanes_store_different_values<<<blocks, kBlock>>>(x, out, n);
  else if (which == "cas_loop_max")
    cas_loop_max<<<blocks, kBlock>>>(x, out, n);
  else if (which == "shared_atomic_max")
    shared_atomic_max<<<blocks, kBlock>>>(x, out, n);
  else if (which == "last_block_sums")
    last_block_sums<<<blocks, kBlock>>>(x, out, n);
  else if (which == "last_block_without_fence")
    last_block_without_fence<<<blocks, kBlock>>>(x, out, n);
  else if (which == "carved_dynamic_shared")
    carved_dynamic_shared<<<blocks, kBlock, kBlock * (sizeof(float) + sizeof(int))>>>(x, out, n);
  else if (which == "cg_reduce_with_forceinline_op")
    cg_reduce_with_forceinline_op<<<blocks, kBlock>>>(x, out, n);
  else if (which == "vector_read_of_a_view")
    vector_read_of_a_view<<<1, kBlock>>>(x, out, n);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string(which) + ": " + cudaGetErrorString(err));
}
