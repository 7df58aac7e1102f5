// Constructs of published CUDA (llm.c's dev/cuda files use each of them) that the CPU stand-in runs as nvcc does,
// written here for tests/test_constructs.py; the same file builds with nvcc.
//   typed_args:      NULL, nullptr, 0, integer and floating literals and enums as kernel arguments
//   big_smem:        a launcher's own `dim3 gridDim, blockDim`; cudaFuncSetAttribute (carve-out, and dynamic shared
//                    memory past 48 KiB); big_smem_unopted: the same launch without the attribute fails
//   pairs:           the half and bfloat16 pair API and atomicAdd on the 16-bit types (constructs.cuh includes
//                    CUDA's headers itself)
//   host_runtime:    cudaMalloc/Free, cudaMemset, cudaMemcpy(Async), device properties and attributes, events,
//                    cudaGetLastError
//   arch_branch:     inline PTX in an `#if __CUDA_ARCH__` branch the stand-in does not compile
//   half_api:        more of cuda_fp16.h and cuda_bf16.h: directed rounding, math, saturation, pair comparisons
//   malloc_overrun:  an off-by-one into a launcher's cudaMalloc'd buffer, which check mode names
#include <cuda_runtime.h>

#include "constructs.cuh"
#include "kp.cuh"

enum Mode { MODE_ADD = 0, MODE_SCALE = 1 };
enum class Sign : int { Keep, Negate };

// out[i] = ±(in[i] + bias[i] or 0 without bias) x (scale with MODE_SCALE, else 1) + offset[i] or 0 without offset.
__global__ void typed_args_kernel(float* out, const float* in, const float* bias, const float* offset, int n,
                                  size_t stride, float scale, Mode mode, Sign sign) {
  const size_t i = (blockIdx.x * blockDim.x + threadIdx.x) * stride;
  if (i >= size_t(n)) return;
  float v = in[i] + (bias != NULL ? bias[i] : 0.0f);
  if (mode == MODE_SCALE) v *= scale;
  if (sign == Sign::Negate) v = -v;
  out[i] = v + (offset ? offset[i] : 0.0f);
}

// out: 3 rows of n: without bias and offset (NULL, 0) scaled; with bias, nullptr offset; with both, negated.
void typed_args(const float* in, const float* bias, float* out, int n) {
  const int blocks = (n + 127) / 128;
  typed_args_kernel<<<blocks, 128>>>(out, in, NULL, 0, n, 1, 2.5, MODE_SCALE, Sign::Keep);
  KP_CHECK_LAUNCH();
  typed_args_kernel<<<blocks, 128>>>(out + n, in, bias, nullptr, n, 1u, 1.0f, MODE_ADD, Sign::Keep);
  KP_CHECK_LAUNCH();
  typed_args_kernel<<<blocks, 128>>>(out + 2 * n, in, bias, bias, n, 1, 0.5f, MODE_SCALE, Sign::Negate);
  KP_CHECK_LAUNCH();
}

// Every block fills its dynamic shared memory (m floats) with buf[j] = j, then y[i] = x[i] + buf[m - 1 - threadIdx.x].
__global__ void big_smem_kernel(const float* x, float* y, int n, int m) {
  extern __shared__ float buf[];
  for (int j = threadIdx.x; j < m; j += blockDim.x) buf[j] = float(j);
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + buf[m - 1 - threadIdx.x];
}

__global__ void big_smem_unopted_kernel(const float* x, float* y, int n, int m) {
  extern __shared__ float buf[];
  for (int j = threadIdx.x; j < m; j += blockDim.x) buf[j] = float(j);
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + buf[m - 1 - threadIdx.x];
}

void big_smem(const float* x, float* y, int n, int smem_bytes, bool opt_in) {
  dim3 blockDim(128);  // a launcher's own variables, named as CUDA's built-ins
  dim3 gridDim((n + blockDim.x - 1) / blockDim.x);
  const int m = smem_bytes / int(sizeof(float));
  if (opt_in) {
    cudaFuncSetAttribute(big_smem_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                         cudaSharedmemCarveoutMaxShared);
    cudaFuncSetAttribute(big_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    KP_CHECK_LAUNCH();  // (the attribute calls' errors, if any)
    big_smem_kernel<<<gridDim, blockDim, smem_bytes>>>(x, y, n, m);
  } else {
    big_smem_unopted_kernel<<<gridDim, blockDim, smem_bytes>>>(x, y, n, m);
  }
  KP_CHECK_LAUNCH();
}

// Per pair i (a[2i], a[2i+1]) and (b[2i], b[2i+1]): out[6i..6i+5] = r.x, r.y with r = p * q + p in bfloat16
// (p from __halves2bfloat162, q from __floats2bfloat162_rn), h.x, h.y with h = (a[2i], b[2i]) - 1 in half, the
// pair sum of r (constructs.cuh) and __high2float of r - q. Each thread adds (1, 0.5) to *hacc, (1, 0.25) to *bacc,
// 1 to *hs and *bs.
__global__ void pairs_kernel(const float* a, const float* b, float* out, __half2* hacc, __nv_bfloat162* bacc,
                             __half* hs, __nv_bfloat16* bs, int pairs) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= pairs) return;
  const __nv_bfloat162 p = __halves2bfloat162(__float2bfloat16(a[2 * i]), __float2bfloat16(a[2 * i + 1]));
  const __nv_bfloat162 q = __floats2bfloat162_rn(b[2 * i], b[2 * i + 1]);
  const __nv_bfloat162 r = p * q + p;
  __half2 h = __floats2half2_rn(a[2 * i], b[2 * i]);
  h -= __half2half2(__float2half(1.0f));
  out[6 * i] = __low2float(r);
  out[6 * i + 1] = __high2float(r);
  out[6 * i + 2] = __low2float(h);
  out[6 * i + 3] = __high2float(h);
  out[6 * i + 4] = pair_sum(r);
  out[6 * i + 5] = __high2float(__hsub2(r, q));
  atomicAdd(hacc, __floats2half2_rn(1.0f, 0.5f));
  atomicAdd(bacc, __floats2bfloat162_rn(1.0f, 0.25f));
  atomicAdd(hs, __float2half(1.0f));
  atomicAdd(bs, __float2bfloat16(1.0f));
}

// sums: 6 floats, the accumulators as floats: hacc.x, hacc.y, bacc.x, bacc.y, hs, bs.
void pairs(const float* a, const float* b, float* out, float* sums, int pairs) {
  __half2* hacc;
  __nv_bfloat162* bacc;
  __half* hs;
  __nv_bfloat16* bs;
  cudaMalloc(&hacc, sizeof(__half2));
  cudaMalloc(&bacc, sizeof(__nv_bfloat162));
  cudaMalloc(&hs, sizeof(__half));
  cudaMalloc(&bs, sizeof(__nv_bfloat16));
  cudaMemset(hacc, 0, sizeof(__half2));
  cudaMemset(bacc, 0, sizeof(__nv_bfloat162));
  cudaMemset(hs, 0, sizeof(__half));
  cudaMemset(bs, 0, sizeof(__nv_bfloat16));
  pairs_kernel<<<(pairs + 63) / 64, 64>>>(a, b, out, hacc, bacc, hs, bs, pairs);
  KP_CHECK_LAUNCH();
  __half2 h2;
  __nv_bfloat162 b2;
  __half h1;
  __nv_bfloat16 b1;
  cudaMemcpy(&h2, hacc, sizeof h2, cudaMemcpyDeviceToHost);
  cudaMemcpy(&b2, bacc, sizeof b2, cudaMemcpyDeviceToHost);
  cudaMemcpy(&h1, hs, sizeof h1, cudaMemcpyDeviceToHost);
  cudaMemcpy(&b1, bs, sizeof b1, cudaMemcpyDeviceToHost);
  const float host[6] = {__low2float(h2),  __high2float(h2), __low2float(b2),
                         __high2float(b2), __half2float(h1), __bfloat162float(b1)};
  cudaMemcpy(sums, host, sizeof host, cudaMemcpyHostToDevice);
  cudaFree(hacc);
  cudaFree(bacc);
  cudaFree(hs);
  cudaFree(bs);
}

__global__ void twice_kernel(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

// y = 2x through device buffers of the launcher's own; info: 18 ints (see tests/test_constructs.py); ms: the
// launch's time between two events.
void host_runtime(const float* x, float* y, int n, int* info, float* ms) {
  int out[18] = {};
  float *dx = nullptr, *dy = nullptr;
  out[0] = cudaMalloc(&dx, n * sizeof(float));
  out[1] = cudaMalloc(reinterpret_cast<void**>(&dy), n * sizeof(float));
  cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyDeviceToDevice);
  cudaMemset(dy, 0xff, n * sizeof(float));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  twice_kernel<<<(n + 255) / 256, 256>>>(dx, dy, n);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float elapsed = -1.0f;
  out[2] = cudaEventElapsedTime(&elapsed, start, stop);
  cudaMemcpyAsync(y, dy, n * sizeof(float), cudaMemcpyDeviceToDevice, 0);
  out[3] = cudaDeviceSynchronize();
  cudaDeviceProp prop;
  out[4] = cudaGetDeviceProperties(&prop, 0);
  out[5] = prop.multiProcessorCount;
  out[6] = int(prop.sharedMemPerBlockOptin);
  out[7] = prop.major * 10 + prop.minor;
  out[8] = prop.l2CacheSize;
  out[9] = prop.maxThreadsPerMultiProcessor;
  cudaDeviceGetAttribute(&out[10], cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&out[11], cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  out[12] = cudaGetLastError();  // cudaSuccess: nothing failed so far
  float host[3] = {1.0f, 2.0f, 3.0f}, back[3] = {};
  cudaMemcpy(dx, host, sizeof host, cudaMemcpyHostToDevice);
  cudaMemcpy(back, dx, sizeof back, cudaMemcpyDeviceToHost);
  out[13] = back[0] == 1.0f && back[1] == 2.0f && back[2] == 3.0f;
  out[14] = cudaMemcpy(dx, dy, 4, static_cast<cudaMemcpyKind>(7));               // not a copy kind: an error
  out[15] = cudaGetLastError() == out[14] && cudaGetLastError() == cudaSuccess;  // recorded once, then cleared
  // A 3 x 5 block of floats through pitched memory: in with cudaMemcpy2D, rows 0 and 2 cleared by cudaMemset2D.
  float grid[15], back2d[15];
  for (int i = 0; i < 15; ++i) grid[i] = float(i + 1);
  float* pitched = nullptr;
  size_t pitch = 0;
  out[16] = cudaMallocPitch(&pitched, &pitch, 5 * sizeof(float), 3) == cudaSuccess && pitch >= 5 * sizeof(float);
  cudaMemcpy2D(pitched, pitch, grid, 5 * sizeof(float), 5 * sizeof(float), 3, cudaMemcpyHostToDevice);
  cudaMemset2D(pitched, 2 * pitch, 0, 5 * sizeof(float), 2);
  cudaMemcpy2D(back2d, 5 * sizeof(float), pitched, pitch, 5 * sizeof(float), 3, cudaMemcpyDeviceToHost);
  out[17] = 1;
  for (int i = 0; i < 15; ++i) out[17] &= back2d[i] == (i / 5 == 1 ? grid[i] : 0.0f);
  cudaFree(pitched);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(dx);
  cudaFree(dy);
  cudaMemcpy(info, out, sizeof out, cudaMemcpyHostToDevice);
  cudaMemcpy(ms, &elapsed, sizeof elapsed, cudaMemcpyHostToDevice);
}

// 1/x, with PTX's approximate reciprocal where nvcc compiles for a GPU of compute capability 8.0 or more.
__device__ float reciprocal(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#else
  return 1.0f / x;
#endif
}

__global__ void arch_branch_kernel(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if __CUDA_ARCH__ >= 700
  if (i < n) asm("mov.f32 %0, %1;" : "=f"(y[i]) : "f"(reciprocal(x[i])));
#else
  if (i < n) y[i] = reciprocal(x[i]);
#endif
}

void arch_branch(const float* x, float* y, int n) {
  arch_branch_kernel<<<(n + 127) / 128, 128>>>(x, y, n);
  KP_CHECK_LAUNCH();
}

// More of the half and bfloat16 API, per element i of a and b (see tests/test_constructs.py for the table):
// directed-rounding conversions, math, saturation, pair comparisons and masks.
__global__ void half_api_kernel(const float* a, const float* b, float* out, unsigned* bits, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = a[i], y = b[i];
  const __half hx = __float2half(x), hy = __float2half(y);
  const __nv_bfloat16 bx = __float2bfloat16(x);
  float* o = out + 12 * i;
  o[0] = __half2float(__float2half_rz(x));
  o[1] = __half2float(__float2half_ru(x));
  o[2] = __half2float(__float2half_rd(x));
  o[3] = __bfloat162float(__float2bfloat16_rz(x));
  o[4] = __bfloat162float(__float2bfloat16_ru(x));
  o[5] = __bfloat162float(__float2bfloat16_rd(x));
  o[6] = __half2float(hceil(hx));
  o[7] = __bfloat162float(hfloor(bx));
  o[8] = __half2float(__hadd_sat(hx, hy));
  o[9] = __half2float(__hfma_relu(hx, hy, hy));
  o[10] = __low2float(__lowhigh2highlow(__halves2half2(hx, hy)));
  o[11] = __high2float(__lows2half2(__halves2half2(hx, hy), __halves2half2(hy, hx)));
  unsigned* u = bits + 8 * i;
  u[0] = unsigned(__half2int_rd(hx));
  u[1] = unsigned(__half2int_ru(hx));
  u[2] = unsigned(__bfloat162int_rz(bx));
  u[3] = unsigned(__half2ll_rn(hx));
  u[4] = __hlt2_mask(__halves2half2(hx, hy), __halves2half2(hy, hx));
  u[5] = __hbgeu2(__halves2half2(hx, __float2half(NAN)), __halves2half2(hy, hx));
  u[6] = __hisnan(__hmax_nan(hx, __float2half(NAN)));
  u[7] = __half_as_ushort(__int2half_ru(int(x * 5000.0f)));
}

void half_api(const float* a, const float* b, float* out, unsigned* bits, int n) {
  half_api_kernel<<<(n + 127) / 128, 128>>>(a, b, out, bits, n);
  KP_CHECK_LAUNCH();
}

__global__ void overrun_kernel(float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) y[i] = 1.0f;  // one past the end: the bug check mode names
}

// Copies n ones into out through a buffer of the launcher's own, with `overrun_kernel`'s off-by-one.
void malloc_overrun(float* out, int n) {
  float* buffer;
  // Rounded up to 256 bytes, as on a GPU: for n = 1000 the stray write lands in the allocation's slack.
  cudaMalloc(&buffer, n * sizeof(float));
  overrun_kernel<<<(n + 127) / 128, 128>>>(buffer, n);
  KP_CHECK_LAUNCH();
  cudaMemcpy(out, buffer, n * sizeof(float), cudaMemcpyDeviceToDevice);
  cudaFree(buffer);
}
