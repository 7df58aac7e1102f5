// Exercise 03 · odd_poly: lesson 03's poly2 made odd: out[i] = p(x[i]) for x >= 0 and -p(-x[i]) below, with
// p(x) = c0 + c1 x + c2 x^2 (coef = [c0, c1, c2]): the same formula on |x|, its sign put back.
// spec:   out = sign(x) * p(|x|) (sign(0) = 1)
// launch: ceil(size / 128) blocks of 128 threads
// goal:   no divergent branch: no `if` on the data (a bounds check `if (i < size)` splits only the ragged last warp,
//         lanes 0..k-1 one way: that one is allowed)
#include "kp.cuh"

__global__ void odd_poly(const float* x, const float* coef, float* out, int size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < size) {
    float v = x[i], ax = fabsf(v);
    float p = coef[0] + ax * (coef[1] + ax * coef[2]);
    out[i] = copysignf(1.0f, v) * p;  // a select, not a branch: every lane runs the same instructions
  }
}
