// A kernel with its own __shared__ array, in a header that check.cu includes: the source step translates it like the
// .cu, so its array is registered and checked (tests/test_check.py: a correct kernel, it must stay silent).
#pragma once

__global__ void reverse_in_header(const float* x, float* out, int n) {
  __shared__ float s[64];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - t);
  if (i < n && j < n) out[i] = s[blockDim.x - 1 - t];
}
