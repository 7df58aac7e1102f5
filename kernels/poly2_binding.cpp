// poly2's torch side: argument checks, dtype dispatch and registration. Kernels: poly2.cu.
#include "common/binding.h"

template <typename T>
void poly2_fwd(const T* x, T* y, int64_t n, cudaStream_t stream);
template <typename T>
void poly2_bwd(const T* grad_y, const T* x, T* grad_x, int64_t n, cudaStream_t stream);

kp::Tensor poly2(kp::Tensor x) {
  kp::check_floating("poly2", "x", x, /*half=*/true);
  x = kp::contiguous(x);
  kp::Tensor y = kp::empty_like(x);
  KP_DISPATCH_FLOATING_AND_HALF(x.scalar_type(), "poly2", [&] {
    poly2_fwd<scalar_t>(kp::data<scalar_t>(x, "x"), kp::data<scalar_t>(y, "y"), x.numel(), kp::stream_of(x));
  });
  return y;
}

kp::Tensor poly2_backward(kp::Tensor grad_y, kp::Tensor x) {
  kp::check_floating("poly2_backward", "x", x, /*half=*/true);
  kp::check_like("poly2_backward", "grad_y", grad_y, "x", x, /*half=*/true);
  grad_y = kp::contiguous(grad_y);  // autograd may hand in an expanded (stride-0) gradient
  x = kp::contiguous(x);
  kp::Tensor grad_x = kp::empty_like(x);
  KP_DISPATCH_FLOATING_AND_HALF(x.scalar_type(), "poly2_backward", [&] {
    poly2_bwd<scalar_t>(kp::data<scalar_t>(grad_y, "grad_y"), kp::data<scalar_t>(x, "x"),
                        kp::data<scalar_t>(grad_x, "grad_x"), x.numel(), kp::stream_of(x));
  });
  return grad_x;
}

KP_OPS(m) {
  m.def("poly2(Tensor x) -> Tensor", TORCH_BOX(&poly2));
  m.def("poly2_backward(Tensor grad_y, Tensor x) -> Tensor", TORCH_BOX(&poly2_backward));
}
