// The torch side of tests/cuda_cpu/patterns.cu: one op runs pattern `which` of it on x into out.
#include "binding.h"

void run_pattern(int64_t which, const float* x, float* out, int n, int k);

void run_op(int64_t which, kp::Tensor x, kp::Tensor out, int64_t k) {
  kp::check_tensor("run", "x", x, kp::ScalarType::Float);
  kp::check_tensor("run", "out", out, kp::ScalarType::Float);
  kp::before_launch("run");
  const int64_t n = which == 6 ? x.numel() : out.numel();  // 6: the histogram, whose out holds the counts
  run_pattern(which, kp::data<const float>(x, "x"), kp::data<float>(out, "out"), static_cast<int>(n),
              static_cast<int>(k));
}

KP_OPS(m) { m.def("run(int which, Tensor x, Tensor(a!) out, int k) -> ()", TORCH_BOX(&run_op)); }
