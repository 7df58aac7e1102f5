// exp's torch side: argument checks, dtype dispatch and registration. Kernels: exp.cu.
#include "common/binding.h"

template <typename T>
void exp_fwd(const T* x, T* y, int64_t n, cudaStream_t stream);
template <typename T>
void exp_bwd(const T* grad_y, const T* y, T* grad_x, int64_t n, cudaStream_t stream);

// Named exp_forward, not exp: that name belongs to the C library.
kp::Tensor exp_forward(kp::Tensor x) {
  kp::check_floating("exp", "x", x);
  x = kp::contiguous(x);
  kp::Tensor y = kp::empty_like(x);
  KP_DISPATCH_FLOATING(x.scalar_type(), "exp", [&] {
    exp_fwd<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<scalar_t>(y, "y"), x.numel(), kp::stream_of(x));
  });
  return y;
}

kp::Tensor exp_backward(kp::Tensor grad_y, kp::Tensor y) {
  kp::check_floating("exp_backward", "y", y);
  kp::check_like("exp_backward", "grad_y", grad_y, "y", y);
  grad_y = kp::contiguous(grad_y);  // autograd may hand in an expanded (stride-0) gradient
  y = kp::contiguous(y);
  kp::Tensor grad_x = kp::empty_like(y);
  KP_DISPATCH_FLOATING(y.scalar_type(), "exp_backward", [&] {
    exp_bwd<scalar_t>(kp::data<const scalar_t>(grad_y, "grad_y"), kp::data<const scalar_t>(y, "y"),
                      kp::data<scalar_t>(grad_x, "grad_x"), y.numel(), kp::stream_of(y));
  });
  return grad_x;
}

KP_OPS(m) {
  m.def("exp(Tensor x) -> Tensor", TORCH_BOX(&exp_forward));
  m.def("exp_backward(Tensor grad_y, Tensor y) -> Tensor", TORCH_BOX(&exp_backward));
}
