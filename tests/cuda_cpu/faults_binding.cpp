// The torch side of tests/cuda_cpu/faults.cu: one op per faulting kernel.
#include "binding.h"

using kp::ScalarType;
using kp::Tensor;

void wild_write(float* x, long long offset);
void stack(int* out, int kib, int blocks, int threads);
void assert_nonnegative(const float* x, int n);
void trap(int at, int n);
void divide(const int* a, const int* b, int* out, int n);

static void check_dtype(const char* op, const Tensor& x, ScalarType dtype, const char* what) {
  kp::check(kp::served(x),
            std::string(op) + ": x is on " + kp::device_name(x) + ", but this build takes " + kp::kBuildServes);
  kp::check(x.scalar_type() == dtype && x.is_contiguous(), std::string(op) + ": x must be contiguous " + what);
}

Tensor wild_write_op(Tensor x, int64_t offset) {
  check_dtype("wild_write", x, ScalarType::Float, "float32");
  kp::before_launch();
  wild_write(x.mutable_data_ptr<float>(), offset);
  return x;
}

Tensor stack_op(Tensor like, int64_t kib, int64_t blocks, int64_t threads) {
  check_dtype("stack", like, ScalarType::Int, "int32");
  kp::check(kib == 256 || kib == 600, "stack: kib is 256 or 600");
  Tensor out = torch::stable::new_zeros(like, {blocks * threads});
  kp::before_launch();
  stack(out.mutable_data_ptr<int32_t>(), kib, blocks, threads);
  return out;
}

void assert_nonnegative_op(Tensor x) {
  check_dtype("assert_nonnegative", x, ScalarType::Float, "float32");
  kp::before_launch();
  assert_nonnegative(x.const_data_ptr<float>(), x.numel());
}

void trap_op(Tensor like, int64_t at, int64_t n) {
  kp::before_launch();
  trap(at, n);
}

Tensor divide_op(Tensor a, Tensor b) {
  check_dtype("divide", a, ScalarType::Int, "int32");
  check_dtype("divide", b, ScalarType::Int, "int32");
  Tensor out = kp::empty_like(a);
  kp::before_launch();
  divide(a.const_data_ptr<int32_t>(), b.const_data_ptr<int32_t>(), out.mutable_data_ptr<int32_t>(), a.numel());
  return out;
}

KP_OPS(m) {
  m.def("wild_write(Tensor(a!) x, int offset) -> Tensor(a!)", TORCH_BOX(&wild_write_op));
  m.def("stack(Tensor like, int kib, int blocks, int threads) -> Tensor", TORCH_BOX(&stack_op));
  m.def("assert_nonnegative(Tensor x) -> ()", TORCH_BOX(&assert_nonnegative_op));
  m.def("trap(Tensor like, int at, int n) -> ()", TORCH_BOX(&trap_op));
  m.def("divide(Tensor a, Tensor b) -> Tensor", TORCH_BOX(&divide_op));
}
