// The torch side of bench/kernels/standin_costs.cu.
#include "common/binding.h"

void sync_loop(int* out, int blocks, int threads, int iters);
void copy(const float* x, float* y, int64_t n);

kp::Tensor sync_loop_op(kp::Tensor out, int64_t threads, int64_t iters) {
  kp::check(out.scalar_type() == kp::ScalarType::Int && out.is_contiguous(), "sync_loop: out must be contiguous int32");
  kp::before_launch();
  sync_loop(out.mutable_data_ptr<int32_t>(), out.numel(), threads, iters);
  return out;
}

kp::Tensor copy_op(kp::Tensor x) {
  kp::check(x.scalar_type() == kp::ScalarType::Float && x.is_contiguous(), "copy: x must be contiguous float32");
  kp::Tensor y = torch::stable::empty_like(x);
  kp::before_launch();
  copy(x.const_data_ptr<float>(), y.mutable_data_ptr<float>(), x.numel());
  return y;
}

KP_OPS(m) {
  m.def("sync_loop(Tensor out, int threads, int iters) -> Tensor", TORCH_BOX(&sync_loop_op));
  m.def("copy(Tensor x) -> Tensor", TORCH_BOX(&copy_op));
}
