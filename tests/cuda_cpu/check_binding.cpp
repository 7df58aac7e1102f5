// The torch side of tests/cuda_cpu/check.cu: one op runs case `which` of it on x into out.
#include "binding.h"

void run_case(int64_t which, const float* x, float* out, int n);
void run_last_column(const uint8_t* m, float* out, int64_t rows, int64_t cols, bool wide);

void run_op(int64_t which, kp::Tensor x, kp::Tensor out) {
  kp::check_tensor("run", "x", x, kp::ScalarType::Float);
  kp::check_tensor("run", "out", out, kp::ScalarType::Float);
  kp::before_launch("run");
  run_case(which, kp::data<const float>(x, "x"), kp::data<float>(out, "out"), static_cast<int>(x.numel()));
}

// out[r] = m[r, -1] of a 2-D uint8 matrix; `wide`: with a 64-bit index (else the 32-bit one that overflows).
void last_column_op(kp::Tensor m, kp::Tensor out, bool wide) {
  kp::check_tensor("last_column", "m", m, kp::ScalarType::Byte);
  kp::check_tensor("last_column", "out", out, kp::ScalarType::Float);
  if (m.dim() != 2 || out.numel() != m.size(0))
    kp::check(false, "last_column: m must be 2-D and out must have one element per row of m");
  kp::before_launch("last_column");
  run_last_column(kp::data<const uint8_t>(m, "m"), kp::data<float>(out, "out"), m.size(0), m.size(1), wide);
}

// One op call, two launches on one block of memory, handed out twice as a caching allocator does (no cudaFree
// between): all of `pool`, then its first 256 floats as `small`, registered by hand as kp::data registers a tensor.
// The second launch fills n floats of `small`.
void run_fill(float* p, int n);

void reuse_op(kp::Tensor pool, int64_t n) {
  kp::check_tensor("reuse", "pool", pool, kp::ScalarType::Float);
  kp::check(pool.numel() >= 256, "reuse: pool must hold 256 floats at least");
  kp::before_launch("reuse");
  float* p = kp::data<float>(pool, "pool");
  run_fill(p, static_cast<int>(pool.numel()));
#ifdef KP_CHECK
  kp_check_tensor("small", p, 256 * sizeof(float), sizeof(float));
#endif
  run_fill(p, static_cast<int>(n));
}

KP_OPS(m) {
  m.def("reuse(Tensor(a!) pool, int n) -> ()", TORCH_BOX(&reuse_op));
  m.def("run(int which, Tensor x, Tensor(a!) out) -> ()", TORCH_BOX(&run_op));
  m.def("last_column(Tensor m, Tensor(a!) out, bool wide) -> ()", TORCH_BOX(&last_column_op));
}
