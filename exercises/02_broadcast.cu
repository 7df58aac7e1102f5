// Exercise 02 · broadcast: out[r, c] = a[r, c] * w[c] + bias[r] (lesson 02's mul_add, w broadcast down the rows and
// bias along the columns), the matrices row-major.
// spec:   out = a * w[None, :] + bias[:, None]
// launch: blocks of 16 x 16 threads over (columns, rows): blockIdx.x along the columns, blockIdx.y along the rows
// goal:   at most 4 sectors per request: a warp's lanes read and write neighbouring elements of a row
#include "kp.cuh"

__global__ void broadcast(const float* a, const float* w, const float* bias, float* out, int rows, int cols) {
  // Your kernel; the lesson's last cell grades it: exercise("02_broadcast").
  // Stuck? exercise("02_broadcast", hint=1), then hint=2 and hint=3.
}
