// A loop whose trip count the kernel reads from memory (tests/test_compiled.py): nvcc cannot know it, so with
// `#pragma unroll 4` it lays the loop out as a body of 4 copies and a remainder loop of one, both at the loop's line;
// the trace's trip counts per entry (cuda_cpu_profile.h, BranchStats::trips) say how often each ran.
//
//   unroll4   t = x[0] iterations of a = a * 0.999 + 1 per lane (one FFMA each), every warp alike, then out[i] = a
//   triangle  for j < x[0]: for k < j: a = a * 0.999 + 1: the inner loop entered x[0] times per warp, with 0, 1, 2 ...
//             trips
#include "kp.cuh"

__global__ void unroll4(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int trips = int(x[0]);
  float a = 1.0f;
#pragma unroll 4
  for (int k = 0; k < trips; ++k) a = a * 0.999f + 1.0f;
  if (i < n) out[i] = a;
}

__global__ void triangle(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int rows = int(x[0]);
  float a = 1.0f;
  for (int j = 0; j < rows; ++j)
    for (int k = 0; k < j; ++k) a = a * 0.999f + 1.0f;
  if (i < n) out[i] = a;
}

// which: 0 unroll4, 1 triangle; n: the floats of out, 32 threads per block; x[0]: the trip count.
void run_trips(int64_t which, const float* x, float* out, int n) {
  if (which == 0)
    unroll4<<<(n + 31) / 32, 32>>>(x, out, n);
  else
    triangle<<<(n + 31) / 32, 32>>>(x, out, n);
  KP_CHECK_LAUNCH();
}
