// Exercise 01 · grid_stride: out[i] = a[i]^2 + b[i]^2 (lesson 01's sum of squares) with a fixed grid of 4 blocks of
// 64 threads, whatever the size: each thread takes several elements.
// spec:   out = a * a + b * b
// launch: 4 blocks of 64 threads (256 threads in all), for every size
// goal:   at most 4 sectors per request (a warp's 32 floats next to each other), at most ceil(size / 256) elements
//         per thread
#include "kp.cuh"

__global__ void grid_stride(const float* a, const float* b, float* out, int size) {
  // Your kernel; the lesson's last cell grades it: exercise("01_grid_stride").
  // Stuck? exercise("01_grid_stride", hint=1), then hint=2 and hint=3.
}
