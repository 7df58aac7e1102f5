// The device API kernels people copy use, beyond conformance.cu's, for tests/test_cuda_cpu_device_api.py:
// each result is checked against CUDA's documented semantics. Plain CUDA: nvcc builds this file unchanged.
//
//   vote_barrier_kernel  __syncthreads_count, __syncthreads_and, __syncthreads_or, twice in a row
//   bits_kernel          __brev, __brevll, __byte_perm, __funnelshift_l/_lc/_r/_rc
//   inc_dec_kernel       atomicInc and atomicDec with a wrap-around limit, from every thread
//   clock_kernel         clock64() increases
//   match_reduce_kernel  __match_any_sync, __match_all_sync, __reduce_{add,min,max,and,or,xor}_sync
//   groups_kernel        cooperative groups: this_thread_block, tiled_partition<32> and <16>, shfl_down,
//                        ballot, cg::reduce with plus
//   rounding_kernel      __fadd/__fmul/__fmaf/__fdiv _rn/_rz/_ru/_rd, __float2int_rn/_rz/_ru/_rd
//   half_kernel          __half and __nv_bfloat16: conversions, + - * /, __hfma, __hmax, hsqrt, __half2
//   integer_kernel       __mul24, __umul24, __mulhi, __umulhi, __mul64hi, __sad, __usad, __hadd, __rhadd,
//                        __uhadd, __urhadd, __dp4a (signed, unsigned), __double2hiint/loint, cache-hint loads
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kp.cuh"

namespace cg = cooperative_groups;

__global__ void vote_barrier_kernel(const int* pred, int* out) {
  const int t = threadIdx.x, p = pred[t];
  const int count = __syncthreads_count(p);
  const int all = __syncthreads_and(p);
  const int any = __syncthreads_or(p);
  const int count_not = __syncthreads_count(!p);
  out[4 * t] = count, out[4 * t + 1] = all, out[4 * t + 2] = any, out[4 * t + 3] = count_not;
}

__global__ void bits_kernel(const unsigned* x, const unsigned* y, const unsigned* s, unsigned* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned* o = out + 8 * i;
  o[0] = __brev(x[i]);
  const unsigned long long wide = __brevll(static_cast<unsigned long long>(y[i]) << 32 | x[i]);
  o[1] = static_cast<unsigned>(wide), o[2] = static_cast<unsigned>(wide >> 32);
  o[3] = __byte_perm(x[i], y[i], s[i]);
  o[4] = __funnelshift_l(x[i], y[i], s[i] & 63);
  o[5] = __funnelshift_lc(x[i], y[i], s[i] & 63);
  o[6] = __funnelshift_r(x[i], y[i], s[i] & 63);
  o[7] = __funnelshift_rc(x[i], y[i], s[i] & 63);
}

__global__ void inc_dec_kernel(unsigned* counters, unsigned limit) {
  atomicInc(&counters[0], limit);
  atomicDec(&counters[1], limit);
}

__global__ void clock_kernel(long long* out) {
  const long long start = clock64();
  volatile int spin = 0;
  for (int i = 0; i < 1000; ++i) spin = spin + i;
  out[threadIdx.x] = clock64() - start;
}

__global__ void match_reduce_kernel(const int* keys, unsigned* out) {
  const int key = keys[threadIdx.x];
  int pred = -1;
  unsigned* o = out + 10 * threadIdx.x;
  o[0] = __match_any_sync(0xffffffffu, key);
  o[1] = __match_all_sync(0xffffffffu, key, &pred);
  o[2] = pred;
  if (threadIdx.x < 16) o[3] = __match_all_sync(0x0000ffffu, 7, &pred) | (pred << 31);  // the lanes of the mask
  o[4] = __reduce_add_sync(0xffffffffu, static_cast<unsigned>(key));
  o[5] = static_cast<unsigned>(__reduce_min_sync(0xffffffffu, key));
  o[6] = static_cast<unsigned>(__reduce_max_sync(0xffffffffu, key));
  o[7] = __reduce_and_sync(0xffffffffu, static_cast<unsigned>(key));
  o[8] = __reduce_or_sync(0xffffffffu, static_cast<unsigned>(key));
  o[9] = __reduce_xor_sync(0xffffffffu, static_cast<unsigned>(key));
}

// Per block of 128: out[block] = the block's sum (warp tiles reduce, then the block), and per thread the
// next value within its tile of 16 (its own at the tile's end) and the tile's ballot of x > 0.
__global__ void groups_kernel(const float* x, float* sums, float* next, unsigned* ballots, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  cg::thread_block_tile<16> half = cg::tiled_partition<16>(block);
  __shared__ float partial[4];
  const int i = blockIdx.x * blockDim.x + block.thread_rank();
  const float v = i < n ? x[i] : 0.0f;
  const float warp_sum = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = warp_sum;
  block.sync();
  if (block.thread_rank() == 0) sums[blockIdx.x] = partial[0] + partial[1] + partial[2] + partial[3];
  const float after = half.shfl_down(v, 1);
  const unsigned positive = half.ballot(v > 0);
  if (i < n) next[i] = after, ballots[i] = positive;
}

__global__ void rounding_kernel(const float* a, const float* b, const float* c, float* out, int* ints, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float* o = out + 16 * i;
  o[0] = __fadd_rn(a[i], b[i]), o[1] = __fadd_rz(a[i], b[i]), o[2] = __fadd_ru(a[i], b[i]);
  o[3] = __fadd_rd(a[i], b[i]);
  o[4] = __fmul_rn(a[i], b[i]), o[5] = __fmul_rz(a[i], b[i]), o[6] = __fmul_ru(a[i], b[i]);
  o[7] = __fmul_rd(a[i], b[i]);
  o[8] = __fmaf_rn(a[i], b[i], c[i]), o[9] = __fmaf_rz(a[i], b[i], c[i]), o[10] = __fmaf_ru(a[i], b[i], c[i]);
  o[11] = __fmaf_rd(a[i], b[i], c[i]);
  o[12] = __fdiv_rn(a[i], b[i]), o[13] = __fdiv_rz(a[i], b[i]), o[14] = __fdiv_ru(a[i], b[i]);
  o[15] = __fdiv_rd(a[i], b[i]);
  int* k = ints + 4 * i;
  k[0] = __float2int_rn(a[i]), k[1] = __float2int_rz(a[i]), k[2] = __float2int_ru(a[i]), k[3] = __float2int_rd(a[i]);
}

__global__ void integer_kernel(const int* x, const int* y, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int a = __ldcg(x + i), b = __ldcs(y + i);
  const unsigned ua = a, ub = b;
  int* o = out + 14 * i;
  o[0] = __mul24(a, b), o[1] = __umul24(ua, ub), o[2] = __mulhi(a, b), o[3] = __umulhi(ua, ub);
  o[4] = static_cast<int>(__mul64hi(static_cast<long long>(a) << 20, static_cast<long long>(b) << 20));
  o[5] = __sad(a, b, 7u), o[6] = __usad(ua, ub, 7u), o[7] = __hadd(a, b), o[8] = __rhadd(a, b);
  o[9] = __uhadd(ua, ub), o[10] = __urhadd(ua, ub), o[11] = __dp4a(a, b, 5), o[12] = __dp4a(ua, ub, 5u);
  const double d = static_cast<double>(a) / 7.0;
  __stcg(o + 13, __double2hiint(d) ^ __double2loint(d));
}

void integer(const int* x, const int* y, int* out, int n) {
  integer_kernel<<<ceil_div(n, 64), 64>>>(x, y, out, n);
  KP_CHECK_LAUNCH();
}

// Per element, 9 results of type T from floats a, b, c: T(a), a+b, a-b, a*b, a/b, fma(a, b, c), max(a, b),
// sqrt(|a|), and -a; all as the 16 bits, widened to int. Then a __half2 sum of (a, b) + (c, c).
template <typename T>
__device__ void half_ops(float fa, float fb, float fc, int* o) {
  const T a = fa, b = fb, c = fc;
  const T r[9] = {a, a + b, a - b, a * b, a / b, __hfma(a, b, c), __hmax(a, b), hsqrt(__habs(a)), -a};
  for (int k = 0; k < 9; ++k) {
    T v = r[k];
    unsigned short u;
    memcpy(&u, &v, 2);
    o[k] = u;
  }
}

__global__ void half_kernel(const float* a, const float* b, const float* c, int* out, float* pairs, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  half_ops<__half>(a[i], b[i], c[i], out + 18 * i);
  half_ops<__nv_bfloat16>(a[i], b[i], c[i], out + 18 * i + 9);
  const __half2 sum = __hadd2(__floats2half2_rn(a[i], b[i]), __float2half2_rn(c[i]));
  pairs[2 * i] = __half2float(__low2half(sum)), pairs[2 * i + 1] = __half2float(__high2half(sum));
}

void half_arithmetic(const float* a, const float* b, const float* c, int* out, float* pairs, int n) {
  half_kernel<<<ceil_div(n, 64), 64>>>(a, b, c, out, pairs, n);
  KP_CHECK_LAUNCH();
}

void vote_barrier(const int* pred, int* out, int threads) {
  vote_barrier_kernel<<<1, threads>>>(pred, out);
  KP_CHECK_LAUNCH();
}

void bits(const unsigned* x, const unsigned* y, const unsigned* s, unsigned* out, int n) {
  bits_kernel<<<ceil_div(n, 64), 64>>>(x, y, s, out, n);
  KP_CHECK_LAUNCH();
}

void inc_dec(unsigned* counters, unsigned limit, int blocks, int threads) {
  inc_dec_kernel<<<blocks, threads>>>(counters, limit);
  KP_CHECK_LAUNCH();
}

void clock_ticks(long long* out, int threads) {
  clock_kernel<<<1, threads>>>(out);
  KP_CHECK_LAUNCH();
}

void match_reduce(const int* keys, unsigned* out) {
  match_reduce_kernel<<<1, 32>>>(keys, out);
  KP_CHECK_LAUNCH();
}

void groups(const float* x, float* sums, float* next, unsigned* ballots, int n) {
  groups_kernel<<<ceil_div(n, 128), 128>>>(x, sums, next, ballots, n);
  KP_CHECK_LAUNCH();
}

void rounding(const float* a, const float* b, const float* c, float* out, int* ints, int n) {
  rounding_kernel<<<ceil_div(n, 64), 64>>>(a, b, c, out, ints, n);
  KP_CHECK_LAUNCH();
}
