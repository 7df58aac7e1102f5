// The torch side of tests/cuda_cpu/terms.cu: one op runs case `which` over out's n elements (x: 64 floats, idx: n
// ints, read by case 0 only).
#include "binding.h"

void run_terms(int64_t which, const float* x, const int* idx, float* out, int n);

void run_op(int64_t which, kp::Tensor x, kp::Tensor idx, kp::Tensor out) {
  kp::check_tensor("run", "x", x, kp::ScalarType::Float);
  kp::check_tensor("run", "idx", idx, kp::ScalarType::Int);
  kp::check_tensor("run", "out", out, kp::ScalarType::Float);
  kp::before_launch("run");
  run_terms(which, kp::data<const float>(x, "x"), kp::data<const int>(idx, "idx"), kp::data<float>(out, "out"),
            static_cast<int>(out.numel()));
}

KP_OPS(m) { m.def("run(int which, Tensor x, Tensor idx, Tensor(a!) out) -> ()", TORCH_BOX(&run_op)); }
