// Shared by every kernel file: ceil_div, Pack (16-byte vector loads and stores) and KP_CHECK_LAUNCH.
//
// Kernel files hold kernels and raw-pointer launchers, no torch headers. The same file is built
// by nvcc for a GPU, or translated and built by g++ for the CPU stand-in (kernels/common/cuda_cpu.h).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

template <typename T>
__host__ __device__ constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

// Vectorised memory access: a Pack is 16 bytes of T (4 floats or 2 doubles), loaded and stored with
// one instruction each (ld.global.v4.f32 / st.global.v4.f32) where its address is 16-byte aligned.
// Memory-bound kernels reach the GPU's bandwidth with a quarter of the memory instructions.
template <typename T>
struct alignas(16) Pack {
  static constexpr int N = 16 / sizeof(T);
  T v[N];
};

#ifdef KP_CPU_STANDIN
// g++ copies a Pack's array element by element where it does not vectorise (check mode's -O1): one 16-byte access
// here, as on the GPU, so that check mode and the GPU model (kp.profile) see the instruction the GPU runs.
typedef int kp_bytes16 __attribute__((vector_size(16)));
template <typename T>
__device__ __forceinline__ Pack<T> load_pack(const T* p) {
  Pack<T> x;
  *reinterpret_cast<kp_bytes16*>(&x) = *reinterpret_cast<const kp_bytes16*>(p);
  return x;
}

template <typename T>
__device__ __forceinline__ void store_pack(T* p, const Pack<T>& x) {
  *reinterpret_cast<kp_bytes16*>(p) = *reinterpret_cast<const kp_bytes16*>(&x);
}
#else
template <typename T>
__device__ __forceinline__ Pack<T> load_pack(const T* p) {
  return *reinterpret_cast<const Pack<T>*>(p);
}

template <typename T>
__device__ __forceinline__ void store_pack(T* p, const Pack<T>& x) {
  *reinterpret_cast<Pack<T>*>(p) = x;
}
#endif

namespace kp {

// True when every pointer is 16-byte aligned (nullptr counts as aligned), so Packs may be used.
template <typename... P>
bool packs_fit(const P*... p) {
  return ((reinterpret_cast<std::uintptr_t>(p) % 16 == 0) && ...);
}

// Throws (the binding turns it into a Python RuntimeError) if the last launch failed:
// "<file>:<line>: kernel launch failed: <what>", with the whole path: Python shows it relative to the project
// (kernels/add2.cu:48), as build errors are.
inline void check_launch(const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return;
#ifdef __CUDACC__
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) +
                           ": kernel launch failed: " + cudaGetErrorString(err));
#else
  // The runtime builds the same message, naming the kernel and its configuration: std::string's code, compiled
  // here in every kernel file, was a third of g++'s time on a small one.
  ::kp::throw_launch_failure(file, line);
#endif
}

}  // namespace kp

// After every launch: `kern<<<grid, block>>>(...); KP_CHECK_LAUNCH();`
#define KP_CHECK_LAUNCH() ::kp::check_launch(__FILE__, __LINE__)
