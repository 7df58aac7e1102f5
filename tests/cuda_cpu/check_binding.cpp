// The torch side of tests/cuda_cpu/check.cu: one op runs case `which` of it on x into out.
#include "binding.h"

void run_case(int64_t which, const float* x, float* out, int n);

void run_op(int64_t which, kp::Tensor x, kp::Tensor out) {
  kp::check_tensor("run", "x", x, kp::ScalarType::Float);
  kp::check_tensor("run", "out", out, kp::ScalarType::Float);
  kp::before_launch("run");
  run_case(which, kp::data<const float>(x, "x"), kp::data<float>(out, "out"), static_cast<int>(x.numel()));
}

KP_OPS(m) { m.def("run(int which, Tensor x, Tensor(a!) out) -> ()", TORCH_BOX(&run_op)); }
