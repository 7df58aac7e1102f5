// The torch side of tests/cuda_cpu/compiled.cu: one op runs kernel `which` of it on x (4 n floats) into out (n).
#include "binding.h"

void run_compiled(int64_t which, const float* x, float* out, int n);

void run_op(int64_t which, kp::Tensor x, kp::Tensor out) {
  kp::check_tensor("run", "x", x, kp::ScalarType::Float);
  kp::check_tensor("run", "out", out, kp::ScalarType::Float);
  kp::check(x.numel() >= 4 * out.numel(), "run: x needs 4 floats per element of out, got " + std::to_string(x.numel()));
  kp::before_launch("run");
  run_compiled(which, kp::data<const float>(x, "x"), kp::data<float>(out, "out"), static_cast<int>(out.numel()));
}

KP_OPS(m) { m.def("run(int which, Tensor x, Tensor(a!) out) -> ()", TORCH_BOX(&run_op)); }
