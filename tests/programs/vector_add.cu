// A standalone CUDA program as textbooks write them: host arrays, cudaMalloc, cudaMemcpy, a launch, a check.
// tests/test_program.py runs it with an argument (the size) and reads its output.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  size_t bytes = n * sizeof(float);
  float* ha = (float*)malloc(bytes);
  float* hb = (float*)malloc(bytes);
  float* hc = (float*)malloc(bytes);
  for (int i = 0; i < n; ++i) {
    ha[i] = i;
    hb[i] = 2.0f * i;
  }
  float *da, *db, *dc;
  cudaMalloc(&da, bytes);
  cudaMalloc(&db, bytes);
  cudaMalloc(&dc, bytes);
  cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice);
  vector_add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(err));
    return 1;
  }
  cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += hc[i] != 3.0f * i;
  printf("n = %d, wrong = %d, c[n-1] = %g\n", n, wrong, hc[n - 1]);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  free(ha);
  free(hb);
  free(hc);
  return wrong != 0;
}
