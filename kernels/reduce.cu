// reduce: the sum of every element of a tensor, out = x[0] + x[1] + ... + x[n - 1], climbed as the ladder of NVIDIA's
// classic "Optimizing Parallel Reduction in CUDA" (Mark Harris): six versions of one block's tree, each a step on
// from the one before. Notebook 08 counts each step's divergent branches, bank conflicts and modelled time.
//
// forward:  out = sum over i of x[i]      backward: grad_x[i] = grad_out (the gradient, repeated over x's shape)
// shapes:   x any shape, contiguous or not (made contiguous), n elements, 0 included (an empty sum is 0); out ()
// dtypes:   float32 and float64 (templated on T)
// launch:   blocks of BLOCK = 256 threads, one element per thread (v1-v3) or two (v4-v6, the first add during the
//           load); each block writes its sum to `partial`, and the same kernel runs again on the partial sums
//           until one block is left, which writes `out`: log_256(n) or log_512(n) launches, no atomics, the same
//           bits every run.
// kernels:  v1 reduce_v1: interleaved addressing, `if (tid % (2 * s) == 0)`: at every step the lanes that add are
//              spread over every warp (lanes 0, 2, 4, ... then 0, 4, 8, ...), so every warp runs the add for a few
//              lanes and idles the rest: divergent branches, and `%` is slow.
//           v2 reduce_v2: interleaved addressing with a strided index (`index = 2 * s * tid`): the lanes that add
//              are the first ones, whole warps take the branch or skip it (no divergence until fewer than 32 add),
//              but the warp's shared reads are 2s words apart: bank conflicts, 2-way and worse.
//           v3 reduce_v3: sequential addressing (`if (tid < s) sdata[tid] += sdata[tid + s]`): neighbouring lanes,
//              neighbouring words: no bank conflict, no divergence while s >= 32; half the threads idle from the
//              first step on.
//           v4 reduce_v4: the first add during the load: each thread loads two elements BLOCK apart and adds them,
//              so a block sums 512 elements and half as many blocks run.
//           v5 reduce_v5: v4 with the last warp's six steps unrolled and no __syncthreads() between them (one warp
//              runs them), each step's read and write separated by __syncwarp(). Harris's 2007 version relies on
//              `volatile` and on a warp's lanes running in lockstep; since Volta (independent thread scheduling)
//              they need not, and that unroll is a data race (NVIDIA, "Using CUDA Warp-Level Primitives", 2018;
//              CUDA C++ Programming Guide, "Independent Thread Scheduling"). Check mode names it: tests/test_reduce.py.
//           v6 reduce_v6: v4's load, then warp shuffles (__shfl_down_sync) within each warp, one shared word per
//              warp, and the first warp shuffles those: no shared-memory tree at all.
//           The op `reduce_sum(x, version)` runs one of them (6 by default).
#include "common/kp.cuh"

constexpr int BLOCK = 256;              // threads per block, every version; the trees below assume a power of two
constexpr unsigned FULL = 0xffffffffu;  // every lane of the warp takes part in the shuffle

template <typename T>
__global__ void reduce_v1(const T* __restrict__ x, T* __restrict__ out, int64_t n) {
  __shared__ T sdata[BLOCK];
  unsigned tid = threadIdx.x;
  int64_t i = (int64_t)blockIdx.x * BLOCK + tid;
  sdata[tid] = i < n ? x[i] : T(0);
  __syncthreads();
  for (unsigned s = 1; s < BLOCK; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];  // divergent: the adding lanes are spread over every warp
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <typename T>
__global__ void reduce_v2(const T* __restrict__ x, T* __restrict__ out, int64_t n) {
  __shared__ T sdata[BLOCK];
  unsigned tid = threadIdx.x;
  int64_t i = (int64_t)blockIdx.x * BLOCK + tid;
  sdata[tid] = i < n ? x[i] : T(0);
  __syncthreads();
  for (unsigned s = 1; s < BLOCK; s *= 2) {
    unsigned index = 2 * s * tid;  // the first BLOCK / 2s threads add: whole warps take the branch or skip it
    if (index < BLOCK) sdata[index] += sdata[index + s];  // lanes 2s words apart: bank conflicts
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <typename T>
__global__ void reduce_v3(const T* __restrict__ x, T* __restrict__ out, int64_t n) {
  __shared__ T sdata[BLOCK];
  unsigned tid = threadIdx.x;
  int64_t i = (int64_t)blockIdx.x * BLOCK + tid;
  sdata[tid] = i < n ? x[i] : T(0);
  __syncthreads();
  for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];  // neighbouring lanes, neighbouring words
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// v4 to v6 load two elements per thread, BLOCK apart (both loads coalesce), and add them before the tree.
template <typename T>
__device__ T load_two(const T* __restrict__ x, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * (2 * BLOCK) + threadIdx.x;
  T v = i < n ? x[i] : T(0);
  if (i + BLOCK < n) v += x[i + BLOCK];
  return v;
}

template <typename T>
__global__ void reduce_v4(const T* __restrict__ x, T* __restrict__ out, int64_t n) {
  __shared__ T sdata[BLOCK];
  unsigned tid = threadIdx.x;
  sdata[tid] = load_two(x, n);
  __syncthreads();
  for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <typename T>
__global__ void reduce_v5(const T* __restrict__ x, T* __restrict__ out, int64_t n) {
  __shared__ T sdata[BLOCK];
  unsigned tid = threadIdx.x;
  sdata[tid] = load_two(x, n);
  __syncthreads();
  for (unsigned s = BLOCK / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {  // warp 0 alone: no __syncthreads(), but each step's reads end before any lane writes
    T v = sdata[tid];
#pragma unroll
    for (unsigned s = 32; s > 0; s >>= 1) {
      v += sdata[tid + s];  // lanes >= s add words no one needs: cheaper than a branch
      __syncwarp();
      sdata[tid] = v;
      __syncwarp();
    }
    if (tid == 0) out[blockIdx.x] = v;
  }
}

template <typename T>
__global__ void reduce_v6(const T* __restrict__ x, T* __restrict__ out, int64_t n) {
  __shared__ T warp_sums[BLOCK / 32];
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  T v = load_two(x, n);
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(FULL, v, offset);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {  // the whole first warp, so that every lane the mask names calls the shuffle
    v = lane < BLOCK / 32 ? warp_sums[lane] : T(0);
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(FULL, v, offset);
    if (lane == 0) out[blockIdx.x] = v;
  }
}

// Elements one block of `version` sums.
static int64_t per_block(int version) { return version >= 4 ? 2 * BLOCK : BLOCK; }

// The partial sums the launcher needs for n elements: one per block of every launch but the last.
int64_t reduce_partials(int64_t n, int64_t version) {
  int64_t total = 0;
  for (int64_t len = n; len > 1;) {
    len = ceil_div<int64_t>(len, per_block(static_cast<int>(version)));
    if (len > 1) total += len;
  }
  return total;
}

// One launch of `version` over len elements of src, its block sums to dst.
template <typename T>
static void launch(int version, int64_t blocks, const T* src, T* dst, int64_t len, cudaStream_t stream) {
  if (version == 1)
    reduce_v1<T><<<blocks, BLOCK, 0, stream>>>(src, dst, len);
  else if (version == 2)
    reduce_v2<T><<<blocks, BLOCK, 0, stream>>>(src, dst, len);
  else if (version == 3)
    reduce_v3<T><<<blocks, BLOCK, 0, stream>>>(src, dst, len);
  else if (version == 4)
    reduce_v4<T><<<blocks, BLOCK, 0, stream>>>(src, dst, len);
  else if (version == 5)
    reduce_v5<T><<<blocks, BLOCK, 0, stream>>>(src, dst, len);
  else
    reduce_v6<T><<<blocks, BLOCK, 0, stream>>>(src, dst, len);
  KP_CHECK_LAUNCH();
}

// `partial` holds reduce_partials(n, version) elements; `out` one.
template <typename T>
void reduce_sum(const T* x, T* out, T* partial, int64_t n, int version, cudaStream_t stream) {
  const T* src = x;
  int64_t len = n;
  do {  // at least one launch: an empty x still writes out = 0
    const int64_t blocks = len > 0 ? ceil_div<int64_t>(len, per_block(version)) : 1;
    T* dst = blocks == 1 ? out : partial;
    launch(version, blocks, src, dst, len, stream);
    src = dst, partial += blocks == 1 ? 0 : blocks, len = blocks;
  } while (len > 1);
}

template void reduce_sum<float>(const float*, float*, float*, int64_t, int, cudaStream_t);
template void reduce_sum<double>(const double*, double*, double*, int64_t, int, cudaStream_t);
