// The torch side of tests/cuda_cpu/hierarchy.cu: one op runs kernel `which` of it on a, b into out.
#include "binding.h"

void run_hierarchy(int64_t which, const float* a, const float* b, float* out, int p, int q);

void run_op(int64_t which, kp::Tensor a, kp::Tensor b, kp::Tensor out, int64_t p, int64_t q) {
  kp::check_tensor("run", "a", a, kp::ScalarType::Float);
  kp::check_tensor("run", "b", b, kp::ScalarType::Float);
  kp::check_tensor("run", "out", out, kp::ScalarType::Float);
  kp::before_launch("run");
  // Registered in sequenced statements, b before a: an address both hold (b a view that begins a) is counted under
  // the first registered (tests/test_caches.py). As call arguments their order would be the compiler's choice.
  const float* b_data = kp::data<const float>(b, "b");
  const float* a_data = kp::data<const float>(a, "a");
  float* out_data = kp::data<float>(out, "out");
  run_hierarchy(which, a_data, b_data, out_data, static_cast<int>(p), static_cast<int>(q));
}

KP_OPS(m) { m.def("run(int which, Tensor a, Tensor b, Tensor(a!) out, int p, int q) -> ()", TORCH_BOX(&run_op)); }
