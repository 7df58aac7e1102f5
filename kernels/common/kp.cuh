// Shared by every kernel file: ceil_div and KP_CHECK_LAUNCH.
//
// Kernel files hold kernels and raw-pointer launchers, no torch headers. The same file is built
// by nvcc for a GPU, or translated and built by g++ for the CPU stand-in (kernels/common/cuda_cpu.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

template <typename T>
__host__ __device__ constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

namespace kp {

// Throws (the binding turns it into a Python RuntimeError) if the last launch failed.
inline void check_launch(const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return;
#ifdef __CUDACC__
  const char* detail = cudaGetErrorString(err);
#else
  const char* detail = ::kp::last_error_message();  // names the kernel and its configuration
#endif
  const char* base = std::strrchr(file, '/');
  throw std::runtime_error(std::string(base ? base + 1 : file) + ":" + std::to_string(line) +
                           ": kernel launch failed: " + detail);
}

}  // namespace kp

// After every launch: `kern<<<grid, block>>>(...); KP_CHECK_LAUNCH();`
#define KP_CHECK_LAUNCH() ::kp::check_launch(__FILE__, __LINE__)
