// cuda_cpu_fp16.h: CUDA's half and bfloat16 types for the CPU stand-in (what <cuda_fp16.h> and
// <cuda_bf16.h> give a kernel). The source step includes it in place of those headers; a binding built
// for the stand-in includes it through binding.h, so that kernel and binding name the same types.
//
// Storage is the 16 bits; arithmetic goes through float and rounds back to nearest even, as a GPU's
// half and bfloat16 operations round. Conversions from float round to nearest even; NaN becomes the
// canonical NaN CUDA gives (0x7fff).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace kp {
namespace fp16 {

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// float -> IEEE binary16, round to nearest even.
inline uint16_t half_from_float(float f) {
  const uint32_t u = bits_of(f) & 0x7fffffffu, sign = bits_of(f) >> 16 & 0x8000u;
  if (u > 0x7f800000u) return 0x7fffu;                    // NaN
  if (u >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // 65520 and up round to infinity
  if (u >= 0x38800000u)                                   // normal: 2^-14 and up
    return uint16_t(sign | (u + 0x0fffu + (u >> 13 & 1u) - 0x38000000u) >> 13);
  // Subnormal (or zero): a multiple of 2^-24; scaling by 2^24 is exact, nearbyint rounds to even.
  return uint16_t(sign | uint32_t(std::nearbyint(float_of(u) * 16777216.0f)));
}

inline float float_from_half(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = h >> 10 & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return float_of(sign | 0x7f800000u | mant << 13);
  if (exp == 0) return float_of(sign | bits_of(float(mant) * 5.9604644775390625e-8f));  // mant x 2^-24
  return float_of(sign | (exp + 112) << 23 | mant << 13);
}

// float -> bfloat16 (the top 16 bits of a float), round to nearest even.
inline uint16_t bfloat16_from_float(float f) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
  return uint16_t((u + 0x7fffu + (u >> 16 & 1u)) >> 16);
}

inline float float_from_bfloat16(uint16_t b) { return float_of(uint32_t(b) << 16); }

}  // namespace fp16
}  // namespace kp

// The 16-bit floating types, as CUDA defines them (kp.build undoes torch's -D__CUDA_NO_HALF_* flags for
// nvcc, so that both targets compile the same kernel): implicit conversions from and to float, and
// arithmetic and comparison operators that go through float. As in CUDA, an int with a half is ambiguous:
// write T(2) * h, not 2 * h.
#define KP_HALF_TYPE(T, RAW, FROM, TO)                                \
  struct RAW {                                                        \
    unsigned short x;                                                 \
  };                                                                  \
  struct T {                                                          \
    unsigned short __x;                                               \
    T() = default;                                                    \
    T(float f) : __x(::kp::fp16::FROM(f)) {}                          \
    T(double d) : __x(::kp::fp16::FROM(static_cast<float>(d))) {}     \
    T(int i) : __x(::kp::fp16::FROM(static_cast<float>(i))) {}        \
    T(RAW r) : __x(r.x) {}                                            \
    operator float() const { return ::kp::fp16::TO(__x); }            \
    operator RAW() const { return {__x}; }                            \
    T& operator+=(T o) { return *this = T(float(*this) + float(o)); } \
    T& operator-=(T o) { return *this = T(float(*this) - float(o)); } \
    T& operator*=(T o) { return *this = T(float(*this) * float(o)); } \
    T& operator/=(T o) { return *this = T(float(*this) / float(o)); } \
  };                                                                  \
  inline T operator+(T a, T b) { return T(float(a) + float(b)); }     \
  inline T operator-(T a, T b) { return T(float(a) - float(b)); }     \
  inline T operator*(T a, T b) { return T(float(a) * float(b)); }     \
  inline T operator/(T a, T b) { return T(float(a) / float(b)); }     \
  inline T operator-(T a) {                                           \
    T r = a;                                                          \
    r.__x ^= 0x8000u;                                                 \
    return r;                                                         \
  }                                                                   \
  inline T operator+(T a) { return a; }                               \
  inline bool operator==(T a, T b) { return float(a) == float(b); }   \
  inline bool operator!=(T a, T b) { return float(a) != float(b); }   \
  inline bool operator<(T a, T b) { return float(a) < float(b); }     \
  inline bool operator<=(T a, T b) { return float(a) <= float(b); }   \
  inline bool operator>(T a, T b) { return float(a) > float(b); }     \
  inline bool operator>=(T a, T b) { return float(a) >= float(b); }
KP_HALF_TYPE(__half, __half_raw, half_from_float, float_from_half)
KP_HALF_TYPE(__nv_bfloat16, __nv_bfloat16_raw, bfloat16_from_float, float_from_bfloat16)
#undef KP_HALF_TYPE
typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;

struct __half2 {
  __half x, y;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
typedef __half2 half2;
typedef __nv_bfloat162 nv_bfloat162;

// Conversions and bit casts.
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return float(h); }
inline __half __int2half_rn(int i) { return __half(static_cast<float>(i)); }
inline int __half2int_rn(__half h) { return static_cast<int>(std::nearbyint(float(h))); }
inline int __half2int_rz(__half h) { return static_cast<int>(float(h)); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return float(b); }
inline short __half_as_short(__half h) { return static_cast<short>(h.__x); }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline __half __short_as_half(short s) { return __half(__half_raw{static_cast<unsigned short>(s)}); }
inline __half __ushort_as_half(unsigned short s) { return __half(__half_raw{s}); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.__x; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short s) { return __nv_bfloat16(__nv_bfloat16_raw{s}); }

// Arithmetic, comparisons and math on one value (CUDA overloads each for both types).
#define KP_HALF_FUNCTIONS(T)                                                              \
  inline T __hadd(T a, T b) { return a + b; }                                             \
  inline T __hsub(T a, T b) { return a - b; }                                             \
  inline T __hmul(T a, T b) { return a * b; }                                             \
  inline T __hdiv(T a, T b) { return a / b; }                                             \
  inline T __hfma(T a, T b, T c) { return T(std::fma(float(a), float(b), float(c))); }    \
  inline T __hneg(T a) { return -a; }                                                     \
  inline T __habs(T a) {                                                                  \
    T r = a;                                                                              \
    r.__x &= 0x7fffu;                                                                     \
    return r;                                                                             \
  }                                                                                       \
  inline bool __heq(T a, T b) { return a == b; }                                          \
  inline bool __hne(T a, T b) { return a != b; }                                          \
  inline bool __hlt(T a, T b) { return a < b; }                                           \
  inline bool __hle(T a, T b) { return a <= b; }                                          \
  inline bool __hgt(T a, T b) { return a > b; }                                           \
  inline bool __hge(T a, T b) { return a >= b; }                                          \
  inline T __hmax(T a, T b) { return T(std::fmax(float(a), float(b))); }                  \
  inline T __hmin(T a, T b) { return T(std::fmin(float(a), float(b))); }                  \
  inline bool __hisnan(T a) { return std::isnan(float(a)); }                              \
  inline int __hisinf(T a) { return std::isinf(float(a)) ? (float(a) < 0 ? -1 : 1) : 0; } \
  inline T hexp(T a) { return T(std::exp(float(a))); }                                    \
  inline T hlog(T a) { return T(std::log(float(a))); }                                    \
  inline T hsqrt(T a) { return T(std::sqrt(float(a))); }                                  \
  inline T hrsqrt(T a) { return T(1.0f / std::sqrt(float(a))); }                          \
  inline T hsin(T a) { return T(std::sin(float(a))); }                                    \
  inline T hcos(T a) { return T(std::cos(float(a))); }
KP_HALF_FUNCTIONS(__half)
KP_HALF_FUNCTIONS(__nv_bfloat16)
#undef KP_HALF_FUNCTIONS

// Pairs.
inline __half2 __floats2half2_rn(float a, float b) { return {__half(a), __half(b)}; }
inline __half2 __float2half2_rn(float a) { return {__half(a), __half(a)}; }
inline __half2 __halves2half2(__half a, __half b) { return {a, b}; }
inline __half __low2half(__half2 v) { return v.x; }
inline __half __high2half(__half2 v) { return v.y; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {__nv_bfloat16(a), __nv_bfloat16(b)}; }
#define KP_PAIR_FUNCTIONS(T2)                                                                    \
  inline T2 __hadd2(T2 a, T2 b) { return {__hadd(a.x, b.x), __hadd(a.y, b.y)}; }                 \
  inline T2 __hsub2(T2 a, T2 b) { return {__hsub(a.x, b.x), __hsub(a.y, b.y)}; }                 \
  inline T2 __hmul2(T2 a, T2 b) { return {__hmul(a.x, b.x), __hmul(a.y, b.y)}; }                 \
  inline T2 __h2div(T2 a, T2 b) { return {__hdiv(a.x, b.x), __hdiv(a.y, b.y)}; }                 \
  inline T2 __hfma2(T2 a, T2 b, T2 c) { return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)}; } \
  inline T2 operator+(T2 a, T2 b) { return __hadd2(a, b); }                                      \
  inline T2 operator-(T2 a, T2 b) { return __hsub2(a, b); }                                      \
  inline T2 operator*(T2 a, T2 b) { return __hmul2(a, b); }                                      \
  inline T2 operator/(T2 a, T2 b) { return __h2div(a, b); }
KP_PAIR_FUNCTIONS(__half2)
KP_PAIR_FUNCTIONS(__nv_bfloat162)
#undef KP_PAIR_FUNCTIONS

#ifdef KP_CUDA_CPU_H  // in a kernel file, where cuda_cpu.h has defined float2
inline float2 __half22float2(__half2 v) { return {float(v.x), float(v.y)}; }
inline float2 __bfloat1622float2(__nv_bfloat162 v) { return {float(v.x), float(v.y)}; }

// Atomic adds of the 16-bit types and their pairs (CUDA has them from compute capability 7.0 for half,
// 8.0 for bfloat16): one access each, as cuda_cpu.h's atomics are. A pair is updated as one 32-bit
// value, which is more than CUDA promises (each half atomically), never less.
#define KP_HALF_ATOMIC_ADD(T) \
  inline T atomicAdd(T* p, T v) { return ::kp::detail::atomic_update(p, [v](T old) { return old + v; }); }
KP_HALF_ATOMIC_ADD(__half)
KP_HALF_ATOMIC_ADD(__nv_bfloat16)
KP_HALF_ATOMIC_ADD(__half2)
KP_HALF_ATOMIC_ADD(__nv_bfloat162)
#undef KP_HALF_ATOMIC_ADD
#endif
