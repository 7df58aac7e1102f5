// The torch side of tests/cuda_cpu/trips.cu: one op runs kernel `which` (0 unroll4, 1 triangle) with x[0] trips
// into out.
#include "binding.h"

void run_trips(int64_t which, const float* x, float* out, int n);

void run_op(int64_t which, kp::Tensor x, kp::Tensor out) {
  kp::check_tensor("run", "x", x, kp::ScalarType::Float);
  kp::check_tensor("run", "out", out, kp::ScalarType::Float);
  kp::check(x.numel() >= 1, "run: x needs its trip count in x[0], got an empty x");
  kp::before_launch("run");
  kp::check(which == 0 || which == 1, "run: which is 0 (unroll4) or 1 (triangle), got " + std::to_string(which));
  run_trips(which, kp::data<const float>(x, "x"), kp::data<float>(out, "out"), static_cast<int>(out.numel()));
}

KP_OPS(m) { m.def("run(int which, Tensor x, Tensor(a!) out) -> ()", TORCH_BOX(&run_op)); }
