// cuda_cpu_fp16.h: CUDA's half and bfloat16 types for the CPU stand-in (what <cuda_fp16.h> and
// <cuda_bf16.h> give a kernel). The source step includes it in place of those headers; a binding built
// for the stand-in includes it through binding.h, so that kernel and binding name the same types.
//
// Storage is the 16 bits; arithmetic goes through float and rounds back to nearest even, as a GPU's
// half and bfloat16 operations round. Conversions from float round to nearest even; NaN becomes the
// canonical NaN CUDA gives (0x7fff).
#pragma once
#define KP_CUDA_CPU_FP16_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

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

struct alignas(4) __half2 {  // 4-byte aligned, as CUDA's: one 32-bit word (atomicAdd swaps it whole)
  __half x, y;
};
struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
typedef __half2 half2;
typedef __nv_bfloat162 nv_bfloat162;

// Conversions and bit casts.
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return float(h); }
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

// Conversions with a rounding mode (the toolkit's __half2int_rd, __int2half_ru, __float2bfloat16_rz, ...): through
// float or double, rounded as the suffix says. A 16-bit value is exact in float, and so is its conversion to an
// integer type after rounding; an integer to half goes through double (exact up to 2^53) and rounds once.
namespace kp {
namespace fp16 {
inline double round_as(double x, int mode) {  // 0 rn (to nearest even), 1 rz, 2 ru, 3 rd
  return mode == 0 ? std::nearbyint(x) : mode == 1 ? std::trunc(x) : mode == 2 ? std::ceil(x) : std::floor(x);
}
template <class I>
inline I to_int(float f, int mode) {  // saturating, NaN -> 0, as PTX's cvt
  if (f != f) return 0;
  const double r = round_as(f, mode);
  if (r <= double(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (r >= double(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}
// The 16-bit value nearest `x` in the direction `mode` says: the nearest-even rounding of x, stepped one ulp
// toward zero, up or down when it lies on the wrong side of x.
template <class T>
inline T from_double(double x, int mode) {
  T r(static_cast<float>(x));
  if (mode == 0 || x != x) return r;
  const double v = float(r);
  const bool too_big = v > x, too_small = v < x;
  const bool step_down = mode == 3 ? too_big : mode == 1 ? (x >= 0 ? too_big : false) : false;
  const bool step_up = mode == 2 ? too_small : mode == 1 ? (x < 0 ? too_small : false) : false;
  if (step_down) r.__x = (r.__x & 0x8000u) ? uint16_t(r.__x + 1) : (r.__x ? uint16_t(r.__x - 1) : 0x8001u);
  if (step_up) r.__x = (r.__x & 0x8000u) ? (r.__x == 0x8000u ? uint16_t(1) : uint16_t(r.__x - 1)) : uint16_t(r.__x + 1);
  return r;
}
}  // namespace fp16
}  // namespace kp

#define KP_HALF_ROUNDED(T, P, sfx, mode)                                                                          \
  inline int P##2int_##sfx(T h) { return ::kp::fp16::to_int<int>(float(h), mode); }                               \
  inline unsigned P##2uint_##sfx(T h) { return ::kp::fp16::to_int<unsigned>(float(h), mode); }                    \
  inline long long P##2ll_##sfx(T h) { return ::kp::fp16::to_int<long long>(float(h), mode); }                    \
  inline unsigned long long P##2ull_##sfx(T h) { return ::kp::fp16::to_int<unsigned long long>(float(h), mode); } \
  inline short P##2short_##sfx(T h) { return ::kp::fp16::to_int<short>(float(h), mode); }                         \
  inline unsigned short P##2ushort_##sfx(T h) { return ::kp::fp16::to_int<unsigned short>(float(h), mode); }
KP_HALF_ROUNDED(__half, __half, rn, 0)
KP_HALF_ROUNDED(__half, __half, rz, 1)
KP_HALF_ROUNDED(__half, __half, ru, 2)
KP_HALF_ROUNDED(__half, __half, rd, 3)
KP_HALF_ROUNDED(__nv_bfloat16, __bfloat16, rn, 0)
KP_HALF_ROUNDED(__nv_bfloat16, __bfloat16, rz, 1)
KP_HALF_ROUNDED(__nv_bfloat16, __bfloat16, ru, 2)
KP_HALF_ROUNDED(__nv_bfloat16, __bfloat16, rd, 3)
#undef KP_HALF_ROUNDED
#define KP_TO_HALF_ROUNDED(T, P, sfx, mode)                                                                   \
  inline T __float2##P##_##sfx(float f) { return ::kp::fp16::from_double<T>(f, mode); }                       \
  inline T __int2##P##_##sfx(int i) { return ::kp::fp16::from_double<T>(i, mode); }                           \
  inline T __uint2##P##_##sfx(unsigned i) { return ::kp::fp16::from_double<T>(i, mode); }                     \
  inline T __short2##P##_##sfx(short i) { return ::kp::fp16::from_double<T>(i, mode); }                       \
  inline T __ushort2##P##_##sfx(unsigned short i) { return ::kp::fp16::from_double<T>(i, mode); }             \
  inline T __ll2##P##_##sfx(long long i) { return ::kp::fp16::from_double<T>(static_cast<double>(i), mode); } \
  inline T __ull2##P##_##sfx(unsigned long long i) { return ::kp::fp16::from_double<T>(static_cast<double>(i), mode); }
KP_TO_HALF_ROUNDED(__half, half, rz, 1)
KP_TO_HALF_ROUNDED(__half, half, ru, 2)
KP_TO_HALF_ROUNDED(__half, half, rd, 3)
KP_TO_HALF_ROUNDED(__nv_bfloat16, bfloat16, rz, 1)
KP_TO_HALF_ROUNDED(__nv_bfloat16, bfloat16, ru, 2)
KP_TO_HALF_ROUNDED(__nv_bfloat16, bfloat16, rd, 3)
#undef KP_TO_HALF_ROUNDED
#define KP_FROM_INT_RN(T, P)                                                                            \
  inline T __int2##P##_rn(int i) { return ::kp::fp16::from_double<T>(i, 0); }                           \
  inline T __uint2##P##_rn(unsigned i) { return ::kp::fp16::from_double<T>(i, 0); }                     \
  inline T __short2##P##_rn(short i) { return ::kp::fp16::from_double<T>(i, 0); }                       \
  inline T __ushort2##P##_rn(unsigned short i) { return ::kp::fp16::from_double<T>(i, 0); }             \
  inline T __ll2##P##_rn(long long i) { return ::kp::fp16::from_double<T>(static_cast<double>(i), 0); } \
  inline T __ull2##P##_rn(unsigned long long i) { return ::kp::fp16::from_double<T>(static_cast<double>(i), 0); }
KP_FROM_INT_RN(__half, half)
KP_FROM_INT_RN(__nv_bfloat16, bfloat16)
#undef KP_FROM_INT_RN
inline __half __double2half(double d) { return __half(d); }
inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16(d); }
inline short __bfloat16_as_short(__nv_bfloat16 b) { return static_cast<short>(b.__x); }
inline __nv_bfloat16 __short_as_bfloat16(short s) {
  return __nv_bfloat16(__nv_bfloat16_raw{static_cast<unsigned short>(s)});
}
inline signed char __half2char_rz(__half h) { return ::kp::fp16::to_int<signed char>(float(h), 1); }
inline unsigned char __half2uchar_rz(__half h) { return ::kp::fp16::to_int<unsigned char>(float(h), 1); }
inline signed char __bfloat162char_rz(__nv_bfloat16 h) { return ::kp::fp16::to_int<signed char>(float(h), 1); }
inline unsigned char __bfloat162uchar_rz(__nv_bfloat16 h) { return ::kp::fp16::to_int<unsigned char>(float(h), 1); }

// More math on one value: through float, rounded once to the 16-bit type.
#define KP_HALF_MATH(T)                                                                          \
  inline T hceil(T a) { return T(std::ceil(float(a))); }                                         \
  inline T hfloor(T a) { return T(std::floor(float(a))); }                                       \
  inline T hrint(T a) { return T(std::nearbyint(float(a))); }                                    \
  inline T htrunc(T a) { return T(std::trunc(float(a))); }                                       \
  inline T hexp2(T a) { return T(std::exp2(float(a))); }                                         \
  inline T hexp10(T a) { return T(std::pow(10.0f, float(a))); }                                  \
  inline T hlog2(T a) { return T(std::log2(float(a))); }                                         \
  inline T hlog10(T a) { return T(std::log10(float(a))); }                                       \
  inline T hrcp(T a) { return T(1.0f / float(a)); }                                              \
  inline T htanh(T a) { return T(std::tanh(float(a))); }                                         \
  inline T __hadd_rn(T a, T b) { return a + b; }                                                 \
  inline T __hsub_rn(T a, T b) { return a - b; }                                                 \
  inline T __hmul_rn(T a, T b) { return a * b; }                                                 \
  inline T __hadd_sat(T a, T b) { return T(::kp::fp16::saturate(float(a) + float(b))); }         \
  inline T __hsub_sat(T a, T b) { return T(::kp::fp16::saturate(float(a) - float(b))); }         \
  inline T __hmul_sat(T a, T b) { return T(::kp::fp16::saturate(float(a) * float(b))); }         \
  inline T __hfma_sat(T a, T b, T c) { return T(::kp::fp16::saturate(float(__hfma(a, b, c)))); } \
  inline T __hfma_relu(T a, T b, T c) { return T(::kp::fp16::relu(float(__hfma(a, b, c)))); }    \
  inline T __hmax_nan(T a, T b) { return __hisnan(a) || __hisnan(b) ? T(NAN) : __hmax(a, b); }   \
  inline T __hmin_nan(T a, T b) { return __hisnan(a) || __hisnan(b) ? T(NAN) : __hmin(a, b); }   \
  inline bool __hequ(T a, T b) { return !(a < b || a > b); }                                     \
  inline bool __hneu(T a, T b) { return !(a == b); }                                             \
  inline bool __hltu(T a, T b) { return !(a >= b); }                                             \
  inline bool __hleu(T a, T b) { return !(a > b); }                                              \
  inline bool __hgtu(T a, T b) { return !(a <= b); }                                             \
  inline bool __hgeu(T a, T b) { return !(a < b); }
namespace kp {
namespace fp16 {
inline float saturate(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
inline float relu(float x) { return x != x ? x : x < 0.0f ? 0.0f : x; }
}  // namespace fp16
}  // namespace kp
KP_HALF_MATH(__half)
KP_HALF_MATH(__nv_bfloat16)
#undef KP_HALF_MATH

// Pairs: x is the low half (the first in memory), y the high one.
inline __half2 __floats2half2_rn(float a, float b) { return {__half(a), __half(b)}; }
inline __half2 __float2half2_rn(float a) { return {__half(a), __half(a)}; }
inline __half2 __halves2half2(__half a, __half b) { return {a, b}; }
inline __half2 __half2half2(__half a) { return {a, a}; }
inline __half __low2half(__half2 v) { return v.x; }
inline __half __high2half(__half2 v) { return v.y; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {__nv_bfloat16(a), __nv_bfloat16(b)}; }
inline __nv_bfloat162 __float2bfloat162_rn(float a) { return {__nv_bfloat16(a), __nv_bfloat16(a)}; }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return {a, b}; }
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return {a, a}; }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 v) { return v.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 v) { return v.y; }
// Both types' pair functions of the same name (CUDA overloads __low2float and friends for both).
#define KP_PAIR_PARTS(T2, P)                                  \
  inline float __low2float(T2 v) { return float(v.x); }       \
  inline float __high2float(T2 v) { return float(v.y); }      \
  inline T2 __low2##P##2(T2 v) { return {v.x, v.x}; }         \
  inline T2 __high2##P##2(T2 v) { return {v.y, v.y}; }        \
  inline T2 __lows2##P##2(T2 a, T2 b) { return {a.x, b.x}; }  \
  inline T2 __highs2##P##2(T2 a, T2 b) { return {a.y, b.y}; } \
  inline T2 __lowhigh2highlow(T2 v) { return {v.y, v.x}; }
KP_PAIR_PARTS(__half2, half)
KP_PAIR_PARTS(__nv_bfloat162, bfloat16)
#undef KP_PAIR_PARTS
#define KP_PAIR_FUNCTIONS(T2, T)                                                                                \
  inline T2 __hadd2(T2 a, T2 b) { return {__hadd(a.x, b.x), __hadd(a.y, b.y)}; }                                \
  inline T2 __hsub2(T2 a, T2 b) { return {__hsub(a.x, b.x), __hsub(a.y, b.y)}; }                                \
  inline T2 __hmul2(T2 a, T2 b) { return {__hmul(a.x, b.x), __hmul(a.y, b.y)}; }                                \
  inline T2 __h2div(T2 a, T2 b) { return {__hdiv(a.x, b.x), __hdiv(a.y, b.y)}; }                                \
  inline T2 __hadd2_rn(T2 a, T2 b) { return __hadd2(a, b); }                                                    \
  inline T2 __hsub2_rn(T2 a, T2 b) { return __hsub2(a, b); }                                                    \
  inline T2 __hmul2_rn(T2 a, T2 b) { return __hmul2(a, b); }                                                    \
  inline T2 __hadd2_sat(T2 a, T2 b) { return {__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)}; }                    \
  inline T2 __hsub2_sat(T2 a, T2 b) { return {__hsub_sat(a.x, b.x), __hsub_sat(a.y, b.y)}; }                    \
  inline T2 __hmul2_sat(T2 a, T2 b) { return {__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)}; }                    \
  inline T2 __hfma2(T2 a, T2 b, T2 c) { return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)}; }                \
  inline T2 __hfma2_sat(T2 a, T2 b, T2 c) { return {__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)}; }    \
  inline T2 __hfma2_relu(T2 a, T2 b, T2 c) { return {__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y)}; } \
  inline T2 __hneg2(T2 a) { return {__hneg(a.x), __hneg(a.y)}; }                                                \
  inline T2 __habs2(T2 a) { return {__habs(a.x), __habs(a.y)}; }                                                \
  inline T2 __hmax2(T2 a, T2 b) { return {__hmax(a.x, b.x), __hmax(a.y, b.y)}; }                                \
  inline T2 __hmin2(T2 a, T2 b) { return {__hmin(a.x, b.x), __hmin(a.y, b.y)}; }                                \
  inline T2 __hmax2_nan(T2 a, T2 b) { return {__hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)}; }                    \
  inline T2 __hmin2_nan(T2 a, T2 b) { return {__hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)}; }                    \
  inline T2 __hisnan2(T2 a) { return {T(__hisnan(a.x) ? 1.0f : 0.0f), T(__hisnan(a.y) ? 1.0f : 0.0f)}; }        \
  inline T2 operator+(T2 a, T2 b) { return __hadd2(a, b); }                                                     \
  inline T2 operator-(T2 a, T2 b) { return __hsub2(a, b); }                                                     \
  inline T2 operator*(T2 a, T2 b) { return __hmul2(a, b); }                                                     \
  inline T2 operator/(T2 a, T2 b) { return __h2div(a, b); }                                                     \
  inline T2& operator+=(T2& a, T2 b) { return a = a + b; }                                                      \
  inline T2& operator-=(T2& a, T2 b) { return a = a - b; }                                                      \
  inline T2& operator*=(T2& a, T2 b) { return a = a * b; }                                                      \
  inline T2& operator/=(T2& a, T2 b) { return a = a / b; }                                                      \
  inline T2 operator-(T2 a) { return __hneg2(a); }                                                              \
  inline T2 operator+(T2 a) { return a; }                                                                       \
  inline bool operator==(T2 a, T2 b) { return a.x == b.x && a.y == b.y; }                                       \
  inline bool operator!=(T2 a, T2 b) { return a.x != b.x && a.y != b.y; }                                       \
  inline bool operator<(T2 a, T2 b) { return a.x < b.x && a.y < b.y; }                                          \
  inline bool operator<=(T2 a, T2 b) { return a.x <= b.x && a.y <= b.y; }                                       \
  inline bool operator>(T2 a, T2 b) { return a.x > b.x && a.y > b.y; }                                          \
  inline bool operator>=(T2 a, T2 b) { return a.x >= b.x && a.y >= b.y; }                                       \
  inline T2 __heq2(T2 a, T2 b) { return {T(a.x == b.x ? 1.0f : 0.0f), T(a.y == b.y ? 1.0f : 0.0f)}; }           \
  inline T2 __hne2(T2 a, T2 b) { return {T(a.x != b.x ? 1.0f : 0.0f), T(a.y != b.y ? 1.0f : 0.0f)}; }           \
  inline T2 __hlt2(T2 a, T2 b) { return {T(a.x < b.x ? 1.0f : 0.0f), T(a.y < b.y ? 1.0f : 0.0f)}; }             \
  inline T2 __hle2(T2 a, T2 b) { return {T(a.x <= b.x ? 1.0f : 0.0f), T(a.y <= b.y ? 1.0f : 0.0f)}; }           \
  inline T2 __hgt2(T2 a, T2 b) { return {T(a.x > b.x ? 1.0f : 0.0f), T(a.y > b.y ? 1.0f : 0.0f)}; }             \
  inline T2 __hge2(T2 a, T2 b) { return {T(a.x >= b.x ? 1.0f : 0.0f), T(a.y >= b.y ? 1.0f : 0.0f)}; }           \
  inline bool __hbeq2(T2 a, T2 b) { return a.x == b.x && a.y == b.y; }                                          \
  inline bool __hbne2(T2 a, T2 b) { return a.x != b.x && a.y != b.y; }                                          \
  inline bool __hblt2(T2 a, T2 b) { return a.x < b.x && a.y < b.y; }                                            \
  inline bool __hble2(T2 a, T2 b) { return a.x <= b.x && a.y <= b.y; }                                          \
  inline bool __hbgt2(T2 a, T2 b) { return a.x > b.x && a.y > b.y; }                                            \
  inline bool __hbge2(T2 a, T2 b) { return a.x >= b.x && a.y >= b.y; }                                          \
  inline T2 h2exp(T2 a) { return {hexp(a.x), hexp(a.y)}; }                                                      \
  inline T2 h2exp2(T2 a) { return {hexp2(a.x), hexp2(a.y)}; }                                                   \
  inline T2 h2exp10(T2 a) { return {hexp10(a.x), hexp10(a.y)}; }                                                \
  inline T2 h2log(T2 a) { return {hlog(a.x), hlog(a.y)}; }                                                      \
  inline T2 h2log2(T2 a) { return {hlog2(a.x), hlog2(a.y)}; }                                                   \
  inline T2 h2log10(T2 a) { return {hlog10(a.x), hlog10(a.y)}; }                                                \
  inline T2 h2sqrt(T2 a) { return {hsqrt(a.x), hsqrt(a.y)}; }                                                   \
  inline T2 h2rsqrt(T2 a) { return {hrsqrt(a.x), hrsqrt(a.y)}; }                                                \
  inline T2 h2rcp(T2 a) { return {hrcp(a.x), hrcp(a.y)}; }                                                      \
  inline T2 h2sin(T2 a) { return {hsin(a.x), hsin(a.y)}; }                                                      \
  inline T2 h2cos(T2 a) { return {hcos(a.x), hcos(a.y)}; }                                                      \
  inline T2 h2tanh(T2 a) { return {htanh(a.x), htanh(a.y)}; }                                                   \
  inline T2 h2ceil(T2 a) { return {hceil(a.x), hceil(a.y)}; }                                                   \
  inline T2 h2floor(T2 a) { return {hfloor(a.x), hfloor(a.y)}; }                                                \
  inline T2 h2rint(T2 a) { return {hrint(a.x), hrint(a.y)}; }                                                   \
  inline T2 h2trunc(T2 a) { return {htrunc(a.x), htrunc(a.y)}; }
KP_PAIR_FUNCTIONS(__half2, __half)
KP_PAIR_FUNCTIONS(__nv_bfloat162, __nv_bfloat16)
#undef KP_PAIR_FUNCTIONS

// Pair comparisons, each half on its own: __h<op>2 gives 1.0 or 0.0 per half, __h<op>2_mask 0xffff or 0 per half
// (low half in the low bits), __hb<op>2 true when both halves compare true; the `u` forms are unordered (true when
// either value is NaN).
#define KP_PAIR_COMPARE(T2, T, op)                                                                          \
  inline T2 __h##op##2(T2 a, T2 b) {                                                                        \
    return {T(::kp::fp16::op##_(a.x, b.x) ? 1.0f : 0.0f), T(::kp::fp16::op##_(a.y, b.y) ? 1.0f : 0.0f)};    \
  }                                                                                                         \
  inline unsigned __h##op##2_mask(T2 a, T2 b) {                                                             \
    return (::kp::fp16::op##_(a.x, b.x) ? 0xffffu : 0u) | (::kp::fp16::op##_(a.y, b.y) ? 0xffff0000u : 0u); \
  }                                                                                                         \
  inline bool __hb##op##2(T2 a, T2 b) { return ::kp::fp16::op##_(a.x, b.x) && ::kp::fp16::op##_(a.y, b.y); }
namespace kp {
namespace fp16 {
inline bool equ_(float a, float b) { return !(a < b || a > b); }
inline bool neu_(float a, float b) { return !(a == b); }
inline bool ltu_(float a, float b) { return !(a >= b); }
inline bool leu_(float a, float b) { return !(a > b); }
inline bool gtu_(float a, float b) { return !(a <= b); }
inline bool geu_(float a, float b) { return !(a < b); }
}  // namespace fp16
}  // namespace kp
#define KP_PAIR_COMPARES(T2, T)                                                                                     \
  KP_PAIR_COMPARE(T2, T, equ)                                                                                       \
  KP_PAIR_COMPARE(T2, T, neu)                                                                                       \
  KP_PAIR_COMPARE(T2, T, ltu)                                                                                       \
  KP_PAIR_COMPARE(T2, T, leu)                                                                                       \
  KP_PAIR_COMPARE(T2, T, gtu)                                                                                       \
  KP_PAIR_COMPARE(T2, T, geu)                                                                                       \
  inline unsigned __heq2_mask(T2 a, T2 b) { return (a.x == b.x ? 0xffffu : 0u) | (a.y == b.y ? 0xffff0000u : 0u); } \
  inline unsigned __hne2_mask(T2 a, T2 b) { return (a.x != b.x ? 0xffffu : 0u) | (a.y != b.y ? 0xffff0000u : 0u); } \
  inline unsigned __hlt2_mask(T2 a, T2 b) { return (a.x < b.x ? 0xffffu : 0u) | (a.y < b.y ? 0xffff0000u : 0u); }   \
  inline unsigned __hle2_mask(T2 a, T2 b) { return (a.x <= b.x ? 0xffffu : 0u) | (a.y <= b.y ? 0xffff0000u : 0u); } \
  inline unsigned __hgt2_mask(T2 a, T2 b) { return (a.x > b.x ? 0xffffu : 0u) | (a.y > b.y ? 0xffff0000u : 0u); }   \
  inline unsigned __hge2_mask(T2 a, T2 b) { return (a.x >= b.x ? 0xffffu : 0u) | (a.y >= b.y ? 0xffff0000u : 0u); }
KP_PAIR_COMPARES(__half2, __half)
KP_PAIR_COMPARES(__nv_bfloat162, __nv_bfloat16)
#undef KP_PAIR_COMPARES
#undef KP_PAIR_COMPARE

#ifdef KP_CUDA_CPU_H  // in a kernel file, where cuda_cpu.h has defined float2 and the atomics
inline float2 __half22float2(__half2 v) { return {float(v.x), float(v.y)}; }
inline float2 __bfloat1622float2(__nv_bfloat162 v) { return {float(v.x), float(v.y)}; }
inline __half2 __float22half2_rn(float2 v) { return {__half(v.x), __half(v.y)}; }
inline __nv_bfloat162 __float22bfloat162_rn(float2 v) { return {__nv_bfloat16(v.x), __nv_bfloat16(v.y)}; }

// Atomic adds of the 16-bit types and their pairs (CUDA has them from compute capability 7.0 for half,
// 8.0 for bfloat16): one access each, as cuda_cpu.h's atomics are. A pair is updated as one 32-bit
// value, which is more than CUDA promises (each half atomically), never less.
#define KP_HALF_ATOMIC_ADD(T)                                              \
  inline T atomicAdd(T* p, T v) {                                          \
    return ::kp::detail::atomic_update(p, [v](T old) { return old + v; }); \
  }
KP_HALF_ATOMIC_ADD(__half)
KP_HALF_ATOMIC_ADD(__nv_bfloat16)
KP_HALF_ATOMIC_ADD(__half2)
KP_HALF_ATOMIC_ADD(__nv_bfloat162)
#undef KP_HALF_ATOMIC_ADD
#endif
