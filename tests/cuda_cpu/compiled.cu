// Kernels whose counts depend on what nvcc compiles, not on how the source spells the accesses (tests/test_sass.py):
// nvcc merges a lane's accesses of consecutive bytes into one wider instruction, and unrolls loops. One launcher
// runs kernel `which` on n floats, 32 threads per block.
//
//   float4_whole    out4[i] = x4[i]: a float4 copied whole (one LDG.E.128 and one STG.E.128 per lane)
//   float4_members  float4 t = x4[i]; out[i] = t.x + t.y + t.z + t.w: the members read one by one in the source, one
//                   LDG.E.128 in SASS (the stand-in's compiler reads four floats)
//   shared4         four consecutive floats of shared memory per lane, s[4t] .. s[4t + 3]: one LDS.128, 4 wavefronts
//                   (the source's four scalar reads would be four 4-way bank conflicts)
//   unrolled        a loop of 4 over s[k * 32 + t], unrolled by nvcc: 4 LDS per warp, each one wavefront
//   fma_loop        n iterations of a = a * 0.999 + 1 per lane, kept a loop (#pragma unroll 1): one FFMA per iteration
//                   and no load, so the issue term bounds it
//   chain4          four loads, each at the address the one before it loaded (x = 0, 1, 2, ...: x[v] = v): four
//                   dependent rounds, one load in flight in each
//   independent4    a loop of 4 over x[k * n + i], unrolled by nvcc: four independent loads, issued before any is
//                   used, in flight together (one round)
//   halves          an if/else on the warp's parity (warp-uniform): the even warps run 16 FFMA on a value, the odd
//                   ones 16 others, neither side touching memory; one load before and one store after, per lane
//   float4_store_members  out4[i].x = v; .y; .z; .w: a float4 written member by member in the source, one STG.E.128
//                   in SASS at the last member's line (the stand-in's compiler writes four floats); n / 4 lanes
#include <stdexcept>
#include <string>

#include "kp.cuh"

__global__ void float4_whole(const float4* x, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i];
}

__global__ void float4_members(const float4* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 t = x[i];
  out[i] = t.x + t.y + t.z + t.w;
}

__global__ void shared4(const float* x, float* out, int n) {
  __shared__ float s[128];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  for (int k = t; k < 128; k += 32) s[k] = x[blockIdx.x * 128 + k];
  __syncthreads();
  float a = s[4 * t];
  float b = s[4 * t + 1];
  float c = s[4 * t + 2];
  float d = s[4 * t + 3];
  if (i < n) out[i] = a + b + c + d;
}

__global__ void unrolled(const float* x, float* out, int n) {
  __shared__ float s[128];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  for (int k = t; k < 128; k += 32) s[k] = x[blockIdx.x * 128 + k];
  __syncthreads();
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 4; ++k) acc += s[k * 32 + t];
  if (i < n) out[i] = acc;
}

__global__ void fma_loop(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = 1.0f;
#pragma unroll 1
  for (int k = 0; k < n; ++k) a = a * 0.999f + 1.0f;
  if (i < n) out[i] = a;
}

__global__ void chain4(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = float(i);
#pragma unroll
  for (int k = 0; k < 4; ++k) v = x[int(v)];  // the address waits for the load before
  out[i] = v;
}

__global__ void independent4(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 4; ++k) acc += x[k * n + i];
  out[i] = acc;
}

__global__ void halves(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  if ((i / 32) % 2 == 0) {
#pragma unroll
    for (int k = 0; k < 16; ++k) v = v * v + 1.0f;  // 16 FFMA (too long a side for nvcc to predicate)
  } else {
#pragma unroll
    for (int k = 0; k < 16; ++k) v = v * 0.5f - 3.0f;
  }
  out[i] = v;
}

__global__ void float4_store_members(const float* x, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  out[i].x = v;
  out[i].y = v + 1.0f;
  out[i].z = v + 2.0f;
  out[i].w = v + 3.0f;
}

const char* const kCompiled[] = {"float4_whole", "float4_members", "shared4",
                                 "unrolled",     "fma_loop",       "chain4",
                                 "independent4", "halves",         "float4_store_members"};

// n: the floats of out; x holds 4 n.
void run_compiled(int64_t index, const float* x, float* out, int n) {
  if (index < 0 || index >= int64_t(sizeof kCompiled / sizeof kCompiled[0])) throw std::invalid_argument("no kernel");
  const std::string which = kCompiled[index];
  const int threads = 32, blocks = (n + threads - 1) / threads;
  const auto* x4 = reinterpret_cast<const float4*>(x);
  if (which == "float4_whole")
    float4_whole<<<(n / 4 + threads - 1) / threads, threads>>>(x4, reinterpret_cast<float4*>(out), n / 4);
  else if (which == "float4_members")
    float4_members<<<blocks, threads>>>(x4, out, n);
  else if (which == "shared4")
    shared4<<<blocks, threads>>>(x, out, n);
  else if (which == "unrolled")
    unrolled<<<blocks, threads>>>(x, out, n);
  else if (which == "fma_loop")
    fma_loop<<<blocks, threads>>>(x, out, n);
  else if (which == "chain4")
    chain4<<<blocks, threads>>>(x, out, n);
  else if (which == "halves")
    halves<<<blocks, threads>>>(x, out, n);
  else if (which == "float4_store_members")
    float4_store_members<<<(n / 4 + threads - 1) / threads, threads>>>(x, reinterpret_cast<float4*>(out), n / 4);
  else
    independent4<<<blocks, threads>>>(x, out, n);
  KP_CHECK_LAUNCH();
}
