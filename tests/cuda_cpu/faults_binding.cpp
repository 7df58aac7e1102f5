// The torch side of tests/cuda_cpu/faults.cu: one op per faulting kernel.
#include "binding.h"

using kp::ScalarType;
using kp::Tensor;

void wild_write(float* x, long long offset);
void stack(int* out, int kib, int blocks, int threads);
void assert_nonnegative(const float* x, int n);
void trap(int at, int n);
void divide(const int* a, const int* b, int* out, int n);

Tensor wild_write_op(Tensor x, int64_t offset) {
  kp::check_tensor("wild_write", "x", x, ScalarType::Float);
  kp::before_launch("wild_write");
  wild_write(kp::data<float>(x, "x"), offset);
  return x;
}

Tensor stack_op(Tensor like, int64_t kib, int64_t blocks, int64_t threads) {
  kp::check_tensor("stack", "like", like, ScalarType::Int);
  kp::check(kib == 256 || kib == 600, "stack: kib is 256 or 600");
  Tensor out = torch::stable::new_zeros(like, {blocks * threads});
  kp::before_launch("stack");
  stack(kp::data<int32_t>(out, "out"), kib, blocks, threads);
  return out;
}

void assert_nonnegative_op(Tensor x) {
  kp::check_tensor("assert_nonnegative", "x", x, ScalarType::Float);
  kp::before_launch("assert_nonnegative");
  assert_nonnegative(kp::data<const float>(x, "x"), x.numel());
}

void trap_op(Tensor like, int64_t at, int64_t n) {
  kp::before_launch("trap");
  trap(at, n);
}

Tensor divide_op(Tensor a, Tensor b) {
  kp::check_tensor("divide", "a", a, ScalarType::Int);
  kp::check_tensor("divide", "b", b, ScalarType::Int);
  Tensor out = kp::empty_like(a);
  kp::before_launch("divide");
  divide(kp::data<const int32_t>(a, "a"), kp::data<const int32_t>(b, "b"), kp::data<int32_t>(out, "out"), a.numel());
  return out;
}

KP_OPS(m) {
  m.def("wild_write(Tensor(a!) x, int offset) -> Tensor(a!)", TORCH_BOX(&wild_write_op));
  m.def("stack(Tensor like, int kib, int blocks, int threads) -> Tensor", TORCH_BOX(&stack_op));
  m.def("assert_nonnegative(Tensor x) -> ()", TORCH_BOX(&assert_nonnegative_op));
  m.def("trap(Tensor like, int at, int n) -> ()", TORCH_BOX(&trap_op));
  m.def("divide(Tensor a, Tensor b) -> Tensor", TORCH_BOX(&divide_op));
}
