// Exercise 06 · box3: out[i] = (x[i - 1] + x[i] + x[i + 1]) / 3, x = 0 past either end: a 1-D stencil, the shape of
// lesson 06's involution (each output a weighted sum of its neighbourhood). Each block loads its 128 elements and
// the two neighbours (the halo) into shared memory once; the threads read their three from there.
// spec:   out = avg_pool1d(pad(x, 1), 3, stride 1)
// launch: ceil(size / 128) blocks of 128 threads
// goal:   at most 2 global reads per thread, and at most 4 sectors per request (x[i - 1] read by a warp is 33 floats
//         from 5 sectors: misaligned by one)
#include "kp.cuh"

__global__ void box3(const float* x, float* out, int size) {
  __shared__ float s[128 + 2];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x + 1] = i < size ? x[i] : 0.0f;
  if (threadIdx.x == 0) s[0] = i > 0 && i - 1 < size ? x[i - 1] : 0.0f;  // the halo: one lane, one sector
  if (threadIdx.x == blockDim.x - 1) s[blockDim.x + 1] = i + 1 < size ? x[i + 1] : 0.0f;
  __syncthreads();
  if (i < size) out[i] = (s[threadIdx.x] + s[threadIdx.x + 1] + s[threadIdx.x + 2]) / 3.0f;
}
