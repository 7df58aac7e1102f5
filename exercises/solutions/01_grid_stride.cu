// Exercise 01 · grid_stride: out[i] = a[i]^2 + b[i]^2 (lesson 01's sum of squares) with a fixed grid of 4 blocks of
// 64 threads, whatever the size: each thread takes several elements.
// spec:   out = a * a + b * b
// launch: 4 blocks of 64 threads (256 threads in all), for every size
// goal:   at most 4 sectors per request (a warp's 32 floats next to each other), at most ceil(size / 256) elements
//         per thread
#include "kp.cuh"

__global__ void grid_stride(const float* a, const float* b, float* out, int size) {
  // The grid strides: thread t takes t, t + 256, t + 512, ...; at each step a warp's lanes read 32 neighbours.
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size; i += gridDim.x * blockDim.x)
    out[i] = a[i] * a[i] + b[i] * b[i];
}
