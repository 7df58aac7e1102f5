// Row reductions, shared by softmax.cu and layernorm.cu (notebook 09): the accumulation type of each scalar type,
// exp in that type, and a warp's reduction by butterfly shuffles. Device code only (the stand-in translates headers
// like the `.cu`, so a kernel, its `__shared__` arrays and its launch could live here too; these ops keep theirs).
#pragma once

#include <math.h>

// What a row's sums accumulate in: float for float, __half and __nv_bfloat16 (a 16-bit sum of 1000 terms keeps
// about 3 significant bits of the last ones; torch accumulates half in float too), double for double.
template <typename T>
struct Accumulate {
  using type = float;
};
template <>
struct Accumulate<double> {
  using type = double;
};
template <typename T>
using acc_t = typename Accumulate<T>::type;

// exp in the accumulation type: expf for float (a double exp would cost a float kernel its speed on a GPU).
__device__ __forceinline__ float exp_of(float x) { return expf(x); }
__device__ __forceinline__ double exp_of(double x) { return exp(x); }

struct Max {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return b > a ? b : a;  // a NaN stays out of the max; softmax still turns its row to NaN through the sum
  }
};
struct Sum {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a + b;
  }
};

// `v` reduced with `op` over the 32 lanes of the warp, in every lane: a butterfly (__shfl_xor_sync), so that no
// lane has to broadcast the result afterwards. Every lane of the warp must call it (the full mask names them all).
template <typename A, typename Op>
__device__ __forceinline__ A warp_reduce(A v, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffff, v, offset));
  return v;
}
