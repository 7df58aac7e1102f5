// CUDA's atomics one by one, for tests/test_profile.py: each thread makes one atomic on out[threadIdx.x % 4]
// (out is zero at the start), which check mode and the GPU model must count as one access, however the stand-in
// does it on the host (a compare-and-swap loop for max, min, inc, dec and the floating-point ones). Case `which`
// is kernel number `which` of kCases, launched as one block of 64 threads.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>

#include "kp.cuh"

#define KP_ATOMIC_CASE(name, T, statement) \
  __global__ void name(T* out) {           \
    const unsigned t = threadIdx.x;        \
    T* p = &out[t % 4];                    \
    statement;                             \
  }
KP_ATOMIC_CASE(int_add, int, atomicAdd(p, 1))
KP_ATOMIC_CASE(int_sub, int, atomicSub(p, 1))
KP_ATOMIC_CASE(int_max, int, atomicMax(p, int(t)))
KP_ATOMIC_CASE(int_min, int, atomicMin(p, -int(t)))
KP_ATOMIC_CASE(int_exch, int, atomicExch(p, int(t)))
KP_ATOMIC_CASE(int_cas, int, atomicCAS(p, 0, int(t) + 1))
KP_ATOMIC_CASE(int_or, int, atomicOr(p, 1 << (t / 4)))
KP_ATOMIC_CASE(unsigned_inc, unsigned, atomicInc(p, 100u))
KP_ATOMIC_CASE(unsigned_dec, unsigned, atomicDec(p, 100u))
KP_ATOMIC_CASE(ull_add, unsigned long long, atomicAdd(p, 1ull))
KP_ATOMIC_CASE(ull_max, unsigned long long, atomicMax(p, (unsigned long long)t))
KP_ATOMIC_CASE(ull_cas, unsigned long long, atomicCAS(p, 0ull, t + 1ull))
KP_ATOMIC_CASE(float_add, float, atomicAdd(p, 0.5f))
KP_ATOMIC_CASE(float_exch, float, atomicExch(p, t + 0.5f))
KP_ATOMIC_CASE(double_add, double, atomicAdd(p, 0.25))
KP_ATOMIC_CASE(half_add, __half, atomicAdd(p, __half(1.0f)))
KP_ATOMIC_CASE(bfloat16_add, __nv_bfloat16, atomicAdd(p, __nv_bfloat16(1.0f)))
KP_ATOMIC_CASE(half2_add, __half2, atomicAdd(p, __floats2half2_rn(1.0f, 2.0f)))
#undef KP_ATOMIC_CASE

// A shared-memory atomic: one shared access per thread (and one global write by each of the first 4 threads).
__global__ void shared_float_add(float* out) {
  __shared__ float s[4];
  const unsigned t = threadIdx.x;
  if (t < 4) s[t] = 0.0f;
  __syncthreads();
  atomicAdd(&s[t % 4], 0.5f);
  __syncthreads();
  if (t < 4) out[t] = s[t];
}

void run_atomics(int64_t which, unsigned char* out) {
  switch (which) {
    case 0:
      int_add<<<1, 64>>>(reinterpret_cast<int*>(out));
      break;
    case 1:
      int_sub<<<1, 64>>>(reinterpret_cast<int*>(out));
      break;
    case 2:
      int_max<<<1, 64>>>(reinterpret_cast<int*>(out));
      break;
    case 3:
      int_min<<<1, 64>>>(reinterpret_cast<int*>(out));
      break;
    case 4:
      int_exch<<<1, 64>>>(reinterpret_cast<int*>(out));
      break;
    case 5:
      int_cas<<<1, 64>>>(reinterpret_cast<int*>(out));
      break;
    case 6:
      int_or<<<1, 64>>>(reinterpret_cast<int*>(out));
      break;
    case 7:
      unsigned_inc<<<1, 64>>>(reinterpret_cast<unsigned*>(out));
      break;
    case 8:
      unsigned_dec<<<1, 64>>>(reinterpret_cast<unsigned*>(out));
      break;
    case 9:
      ull_add<<<1, 64>>>(reinterpret_cast<unsigned long long*>(out));
      break;
    case 10:
      ull_max<<<1, 64>>>(reinterpret_cast<unsigned long long*>(out));
      break;
    case 11:
      ull_cas<<<1, 64>>>(reinterpret_cast<unsigned long long*>(out));
      break;
    case 12:
      float_add<<<1, 64>>>(reinterpret_cast<float*>(out));
      break;
    case 13:
      float_exch<<<1, 64>>>(reinterpret_cast<float*>(out));
      break;
    case 14:
      double_add<<<1, 64>>>(reinterpret_cast<double*>(out));
      break;
    case 15:
      half_add<<<1, 64>>>(reinterpret_cast<__half*>(out));
      break;
    case 16:
      bfloat16_add<<<1, 64>>>(reinterpret_cast<__nv_bfloat16*>(out));
      break;
    case 17:
      half2_add<<<1, 64>>>(reinterpret_cast<__half2*>(out));
      break;
    case 18:
      shared_float_add<<<1, 64>>>(reinterpret_cast<float*>(out));
      break;
    default:
      throw std::invalid_argument("no such case");
  }
  KP_CHECK_LAUNCH();
}
