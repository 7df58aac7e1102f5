// Access patterns whose GPU counters follow from the rules by hand (tests/test_profile.py; the rules are
// kernels/common/cuda_cpu_profile.h's). One launcher runs pattern `which` with parameter `k`.
//
//   strided     out[i] = x[i * k]: a float per lane, k floats apart (k = 0: every lane reads x[0])
//   strided64   the same on doubles (x and out viewed as double, n/2 of them)
//   vector4     out4[i] = x4[i]: a float4 (16 bytes) per lane
//   even_lanes  only the even lanes copy: half the lanes of every request are inactive
//   shared      s[t * k] = x[i]; out[i] = s[t * k] (k = -1: every lane reads s[0], a broadcast)
//   transpose   a 32x32 tile through shared memory, read by columns; k = 1: padded to [32][33]
//   histogram   counts[x[i]] += 1 without atomics (k = 0: a global race) or with atomicAdd (k = 1)
//   swap_dynamic  through `extern __shared__ float s[]`, each lane reads its neighbour's element with no barrier: a
//   race shared_gather  one warp: lane t reads element x[t] of a zeroed __shared__ array of k-byte elements (float,
//   float2,
//                 float4: one LDS, LDS.64 or LDS.128 per lane), the addresses the test picks
#include <stdexcept>
#include <string>

#include "kp.cuh"

__global__ void strided(const float* x, float* out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[(int64_t)i * k];
}

__global__ void strided64(const double* x, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i];
}

__global__ void vector4(const float4* x, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i];
}

__global__ void even_lanes(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && threadIdx.x % 2 == 0) out[i] = x[i];
}

__global__ void shared_stride(const float* x, float* out, int n, int k) {
  __shared__ float s[32 * 33];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  int at = k < 0 ? 0 : t * k;
  if (k < 0) {
    if (t == 0) s[0] = x[i];
  } else {
    s[at] = x[i];
  }
  __syncthreads();
  out[i] = s[at];
}

template <int Width>
__global__ void transpose(const float* x, float* out) {
  __shared__ float tile[32][Width];
  int r = threadIdx.y, c = threadIdx.x;
  tile[r][c] = x[r * 32 + c];
  __syncthreads();
  out[r * 32 + c] = tile[c][r];
}

__global__ void histogram(const float* x, float* counts, int n, int atomic) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int bin = (int)x[i];
  if (atomic)
    atomicAdd(&counts[bin], 1.0f);
  else
    counts[bin] += 1.0f;  // RACE: histogram
}

const char* const kPatterns[] = {"strided",   "strided64", "vector4",      "even_lanes",   "shared",
                                 "transpose", "histogram", "swap_dynamic", "shared_gather"};

__device__ float total(float v) { return v; }
__device__ float total(float2 v) { return v.x + v.y; }
__device__ float total(float4 v) { return v.x + v.y + v.z + v.w; }

// x: the element each lane reads (0 to 1023 / the elements' floats), n = 32.
template <typename T>
__global__ void shared_gather(const float* x, float* out, int n) {
  constexpr int kElements = 1024 / (sizeof(T) / sizeof(float));
  __shared__ T s[kElements];
  int t = threadIdx.x;
  for (int e = t; e < kElements; e += blockDim.x) s[e] = T{};
  __syncthreads();
  if (t < n) out[t] = total(s[(int)x[t]]);
}

// n: the elements of out (of x for the histogram, whose out holds the counts).
__global__ void swap_dynamic(const float* x, float* out, int n) {
  extern __shared__ float s[];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;
  if (i < n) out[i] = s[t ^ 1];  // RACE: swap_dynamic
}

void run_pattern(int64_t index, const float* x, float* out, int n, int k) {
  if (index < 0 || index >= int64_t(sizeof kPatterns / sizeof kPatterns[0])) throw std::invalid_argument("no pattern");
  const std::string which = kPatterns[index];
  const int threads = 32;
  const int blocks = (n + threads - 1) / threads;
  if (which == "strided")
    strided<<<blocks, threads>>>(x, out, n, k);
  else if (which == "strided64")
    strided64<<<(n / 2 + threads - 1) / threads, threads>>>(reinterpret_cast<const double*>(x),
                                                            reinterpret_cast<double*>(out), n / 2);
  else if (which == "vector4")
    vector4<<<(n / 4 + threads - 1) / threads, threads>>>(reinterpret_cast<const float4*>(x),
                                                          reinterpret_cast<float4*>(out), n / 4);
  else if (which == "even_lanes")
    even_lanes<<<blocks, threads>>>(x, out, n);
  else if (which == "shared")
    shared_stride<<<blocks, threads>>>(x, out, n, k);
  else if (which == "transpose" && k)
    transpose<33><<<1, dim3(32, 32)>>>(x, out);
  else if (which == "transpose")
    transpose<32><<<1, dim3(32, 32)>>>(x, out);
  else if (which == "histogram")
    histogram<<<blocks, threads>>>(x, out, n, k);
  else if (which == "shared_gather" && k == 16)
    shared_gather<float4><<<1, threads>>>(x, out, n);
  else if (which == "shared_gather" && k == 8)
    shared_gather<float2><<<1, threads>>>(x, out, n);
  else if (which == "shared_gather")
    shared_gather<float><<<1, threads>>>(x, out, n);
  else
    swap_dynamic<<<blocks, threads, threads * sizeof(float)>>>(x, out, n);
  KP_CHECK_LAUNCH();
}
