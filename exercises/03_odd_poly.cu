// Exercise 03 · odd_poly: lesson 03's poly2 made odd: out[i] = p(x[i]) for x >= 0 and -p(-x[i]) below, with
// p(x) = c0 + c1 x + c2 x^2 (coef = [c0, c1, c2]).
// spec:   out = sign(x) * p(|x|) (sign(0) = 1)
// launch: ceil(size / 128) blocks of 128 threads
// goal:   no divergent branch: no `if` on the data (a bounds check `if (i < size)` splits only the ragged last warp,
//         lanes 0..k-1 one way: that one is allowed)
#include "kp.cuh"

__global__ void odd_poly(const float* x, const float* coef, float* out, int size) {
  // Your kernel; the lesson's last cell grades it: exercise("03_odd_poly").
  // Stuck? exercise("03_odd_poly", hint=1), then hint=2 and hint=3.
}
