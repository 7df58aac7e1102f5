// Conformance kernels for the CPU stand-in (kernels/common/cuda_cpu.h): each exercises one part of
// CUDA's execution model, and tests/test_cuda_cpu.py checks its result against a reference.
// Plain CUDA: nvcc builds this file unchanged.
//
//   tiled_matmul_kernel      16x16 tiles in static __shared__, two __syncthreads per tile
//   block_sum_static_kernel  tree reduction in static __shared__
//   block_sum_dynamic_kernel the same in extern __shared__ sized by the launch
//   warp_sum_kernel          __shfl_down_sync reduction, one result per warp
//   first_warp_sum_kernel    __shfl_xor_sync inside `if (threadIdx.x < 32)` of a 256-thread block
//   warp_scan_kernel         inclusive scan with __shfl_up_sync
//   votes_kernel             __ballot_sync, __all_sync, __any_sync (full and half masks)
//   histogram_kernel         atomicAdd on int counters from many blocks
//   atomic_sum_kernel        atomicAdd on float/double
//   atomic_minmax_kernel     atomicMax, atomicMin, atomicExch, atomicCAS
//   index3d_kernel           3D grid and block indexing
//   grid_stride_kernel       a grid-stride loop over few blocks
//   rotate_kernel            file-scope __shared__ and extern __shared__, __syncwarp between lanes
//   math_kernel              the math functions and intrinsics kernels use
//   empty_kernel             launched with any configuration (the configuration errors)
//   deadlock_kernel          lanes 0-15 wait in __syncwarp for lanes 16-31, which wait in __syncthreads
#include <cuda_runtime.h>

#include "kp.cuh"

constexpr int TILE = 16;

template <typename T>
__global__ void tiled_matmul_kernel(const T* A, const T* B, T* C, int M, int K, int N) {
  __shared__ T As[TILE][TILE];
  __shared__ T Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  T acc = 0;
  for (int t = 0; t < K; t += TILE) {
    As[threadIdx.y][threadIdx.x] = (row < M && t + threadIdx.x < K) ? A[row * K + t + threadIdx.x] : T(0);
    Bs[threadIdx.y][threadIdx.x] = (col < N && t + threadIdx.y < K) ? B[(t + threadIdx.y) * N + col] : T(0);
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

template <typename T>
__global__ void block_sum_static_kernel(const T* x, T* out, int n) {
  __shared__ T buf[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? x[i] : T(0);
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}

template <typename T>
__global__ void block_sum_dynamic_kernel(const T* x, T* out, int n) {
  extern __shared__ unsigned char smem_bytes[];
  T* buf = reinterpret_cast<T*>(smem_bytes);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? x[i] : T(0);
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}

template <typename T>
__global__ void warp_sum_kernel(const T* x, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  T v = i < n ? x[i] : T(0);
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  if (threadIdx.x % warpSize == 0) out[i / warpSize] = v;
}

template <typename T>
__global__ void first_warp_sum_kernel(const T* x, T* out) {
  if (threadIdx.x < 32) {  // only warp 0 of the 256-thread block takes part
    T v = x[blockIdx.x * 32 + threadIdx.x];
    for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffff, v, mask);
    out[blockIdx.x * 32 + threadIdx.x] = v;  // every lane holds the warp's sum
  }
}

template <typename T>
__global__ void warp_scan_kernel(const T* x, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x % warpSize;
  T v = i < n ? x[i] : T(0);
  for (int offset = 1; offset < warpSize; offset *= 2) {
    T up = __shfl_up_sync(0xffffffff, v, offset);
    if (lane >= offset) v += up;
  }
  if (i < n) out[i] = v;
}

// out per warp: ballot, all, any over the full warp, then ballot and all over lanes 0-15 only.
__global__ void votes_kernel(const float* x, long long* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int warp = i / 32, lane = threadIdx.x % 32;
  bool positive = x[i] > 0;
  unsigned ballot = __ballot_sync(0xffffffff, positive);
  int all = __all_sync(0xffffffff, positive);
  int any = __any_sync(0xffffffff, positive);
  if (lane < 16) {
    unsigned half = __ballot_sync(0x0000ffff, positive);
    int half_all = __all_sync(0x0000ffff, positive);
    if (lane == 0) {
      out[warp * 5 + 3] = half;
      out[warp * 5 + 4] = half_all;
    }
  }
  if (lane == 0) {
    out[warp * 5 + 0] = ballot;
    out[warp * 5 + 1] = all;
    out[warp * 5 + 2] = any;
  }
}

__global__ void histogram_kernel(const int* values, int* counts, int n, int bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&counts[((values[i] % bins) + bins) % bins], 1);
}

template <typename T>
__global__ void atomic_sum_kernel(const T* x, T* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, x[i]);
}

// out: [max, min, number of atomicExch calls seen, number of threads whose atomicCAS won]
__global__ void atomic_minmax_kernel(const int* x, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicMax(&out[0], x[i]);
  atomicMin(&out[1], x[i]);
  atomicExch(&out[2], 1);
  if (atomicCAS(&out[3], 0, i + 1) == 0) atomicAdd(&out[4], 1);  // exactly one thread wins
}

// Each thread writes its global (z, y, x) coordinate, encoded, at that coordinate.
__global__ void index3d_kernel(long long* out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  int width = gridDim.x * blockDim.x, height = gridDim.y * blockDim.y;
  out[(z * height + y) * width + x] = z * 1000000LL + y * 1000LL + x;
}

template <typename T>
__global__ void grid_stride_kernel(const T* x, T* y, int n, T scale) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = scale * x[i];
}

// Each lane reads its right-hand neighbour's value within the warp, through file-scope shared
// memory (static and extern); __syncwarp orders the writes before the reads.
__shared__ float rotate_static[256];
extern __shared__ float rotate_dynamic[];

__global__ void rotate_kernel(const float* x, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int warp_base = threadIdx.x / 32 * 32, lane = threadIdx.x % 32;
  rotate_static[threadIdx.x] = x[i];
  rotate_dynamic[threadIdx.x] = 2 * x[i];
  __syncwarp();
  int src = warp_base + (lane + 1) % 32;
  out[2 * i] = rotate_static[src];
  out[2 * i + 1] = rotate_dynamic[src];
}

__host__ __device__ __forceinline__ float squared(float v) { return v * v; }

// out[i, :] = expf, __expf, fmaxf, rsqrtf, tanhf, __fdividef, squared, sqrt (double)
__global__ void math_kernel(const float* __restrict__ x, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  float* o = out + 8 * i;
  o[0] = expf(v);
  o[1] = __expf(v);
  o[2] = fmaxf(v, 0.5f);
  o[3] = rsqrtf(fabsf(v) + 1.0f);
  o[4] = tanhf(v);
  o[5] = __fdividef(v, 3.0f);
  o[6] = squared(v);
  o[7] = (float)sqrt((double)fabsf(v));
}

__global__ void empty_kernel() {}

__global__ void deadlock_kernel(int* out) {
  if (threadIdx.x < 16) {
    __syncwarp();  // waits for lanes 16-31 of warp 0, which wait below for lanes 0-15
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1;
}

// ---------------------------------------------------------------------------------------------
// Launchers: raw pointers, called by conformance_binding.cpp.

template <typename T>
void tiled_matmul(const T* A, const T* B, T* C, int M, int K, int N) {
  dim3 block(TILE, TILE);
  dim3 grid(ceil_div(N, TILE), ceil_div(M, TILE));
  tiled_matmul_kernel<T><<<grid, block>>>(A, B, C, M, K, N);
  KP_CHECK_LAUNCH();
}

template <typename T>
void block_sum(const T* x, T* out, int n, bool dynamic) {
  const int threads = 256;
  if (dynamic) {
    block_sum_dynamic_kernel<T><<<ceil_div(n, threads), threads, threads * sizeof(T)>>>(x, out, n);
  } else {
    block_sum_static_kernel<T><<<ceil_div(n, threads), threads>>>(x, out, n);
  }
  KP_CHECK_LAUNCH();
}

template <typename T>
void warp_sum(const T* x, T* out, int n) {
  warp_sum_kernel<T><<<ceil_div(n, 128), 128>>>(x, out, n);
  KP_CHECK_LAUNCH();
}

template <typename T>
void first_warp_sum(const T* x, T* out, int blocks) {
  first_warp_sum_kernel<T><<<blocks, 256>>>(x, out);
  KP_CHECK_LAUNCH();
}

template <typename T>
void warp_scan(const T* x, T* out, int n) {
  warp_scan_kernel<T><<<ceil_div(n, 64), 64>>>(x, out, n);
  KP_CHECK_LAUNCH();
}

void votes(const float* x, long long* out, int n) {
  votes_kernel<<<n / 64, 64>>>(x, out);
  KP_CHECK_LAUNCH();
}

void histogram(const int* values, int* counts, int n, int bins) {
  histogram_kernel<<<ceil_div(n, 128), 128>>>(values, counts, n, bins);
  KP_CHECK_LAUNCH();
}

template <typename T>
void atomic_sum(const T* x, T* total, int n) {
  atomic_sum_kernel<T><<<ceil_div(n, 256), 256>>>(x, total, n);
  KP_CHECK_LAUNCH();
}

void atomic_minmax(const int* x, int* out, int n) {
  atomic_minmax_kernel<<<ceil_div(n, 256), 256>>>(x, out, n);
  KP_CHECK_LAUNCH();
}

void index3d(long long* out, int gx, int gy, int gz, int bx, int by, int bz) {
  index3d_kernel<<<dim3(gx, gy, gz), dim3(bx, by, bz)>>>(out);
  KP_CHECK_LAUNCH();
}

template <typename T>
void grid_stride(const T* x, T* y, int n, T scale, int blocks) {
  grid_stride_kernel<T><<<blocks, 128>>>(x, y, n, scale);
  KP_CHECK_LAUNCH();
}

void rotate(const float* x, float* out, int blocks) {
  rotate_kernel<<<blocks, 256, 256 * sizeof(float)>>>(x, out);
  KP_CHECK_LAUNCH();
}

void math(const float* x, float* out, int n) {
  math_kernel<<<ceil_div(n, 128), 128>>>(x, out, n);
  KP_CHECK_LAUNCH();
}

// After a launch with 2048 threads per block: cudaPeekAtLastError twice, then cudaGetLastError
// twice. CUDA answers 9, 9, 9, 0: peeking keeps the error, getting it clears it.
void last_error_codes(int* codes) {
  empty_kernel<<<1, 2048>>>();
  codes[0] = cudaPeekAtLastError();
  codes[1] = cudaPeekAtLastError();
  codes[2] = cudaGetLastError();
  codes[3] = cudaGetLastError();
}

void launch_empty(int gx, int gy, int gz, int bx, int by, int bz, size_t shmem) {
  empty_kernel<<<dim3(gx, gy, gz), dim3(bx, by, bz), shmem>>>();
  KP_CHECK_LAUNCH();
}

void deadlock(int* out) {
  deadlock_kernel<<<2, 256>>>(out);
  KP_CHECK_LAUNCH();
}

template void tiled_matmul<float>(const float*, const float*, float*, int, int, int);
template void tiled_matmul<double>(const double*, const double*, double*, int, int, int);
template void block_sum<float>(const float*, float*, int, bool);
template void block_sum<double>(const double*, double*, int, bool);
template void warp_sum<float>(const float*, float*, int);
template void warp_sum<double>(const double*, double*, int);
template void first_warp_sum<float>(const float*, float*, int);
template void first_warp_sum<double>(const double*, double*, int);
template void warp_scan<float>(const float*, float*, int);
template void warp_scan<double>(const double*, double*, int);
template void atomic_sum<float>(const float*, float*, int);
template void atomic_sum<double>(const double*, double*, int);
template void grid_stride<float>(const float*, float*, int, float, int);
template void grid_stride<double>(const double*, double*, int, double, int);
