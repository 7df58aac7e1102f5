// The torch side of tests/cuda_cpu/overrun.cu: one op per kernel.
#include "binding.h"

using kp::ScalarType;
using kp::Tensor;

void shift_write(float* x, long long shift, int n);
void shift_read(const float* x, float* out, long long shift, int n);
void both_ends(float* x, int n);

Tensor shift_write_op(Tensor x, int64_t shift) {
  kp::check_tensor("shift_write", "x", x, ScalarType::Float);
  kp::before_launch("shift_write");
  shift_write(kp::data<float>(x, "x"), shift, x.numel());
  return x;
}

Tensor shift_read_op(Tensor x, int64_t shift) {
  kp::check_tensor("shift_read", "x", x, ScalarType::Float);
  Tensor out = kp::empty_like(x);
  kp::before_launch("shift_read");
  shift_read(kp::data<const float>(x, "x"), kp::data<float>(out, "out"), shift, x.numel());
  return out;
}

Tensor both_ends_op(Tensor x) {
  kp::check_tensor("both_ends", "x", x, ScalarType::Float);
  kp::before_launch("both_ends");
  both_ends(kp::data<float>(x, "x"), x.numel());
  return x;
}

KP_OPS(m) {
  m.def("shift_write(Tensor(a!) x, int shift) -> Tensor(a!)", TORCH_BOX(&shift_write_op));
  m.def("shift_read(Tensor x, int shift) -> Tensor", TORCH_BOX(&shift_read_op));
  m.def("both_ends(Tensor(a!) x) -> Tensor(a!)", TORCH_BOX(&both_ends_op));
}
