// template_op's torch side: argument checks, dtype dispatch, registration (by `make new-op`).
// Kernels: template_op.cu.
//
// A new f needs no change here. A new argument does: the schema strings in KP_OPS at the bottom, the
// functions' parameters and checks, and the launcher declarations (as in the .cu file).
#include "common/binding.h"

template <typename T>
void template_op_fwd(const T* x, T* y, int64_t n, T alpha, cudaStream_t stream);
template <typename T>
void template_op_bwd(const T* grad_y, const T* x, T* grad_x, int64_t n, T alpha, cudaStream_t stream);

// Not named after the op: an op may share its name with a C library function (exp, tanh).
kp::Tensor forward(kp::Tensor x, double alpha) {
  kp::check_floating("template_op", "x", x);
  x = kp::contiguous(x);
  kp::Tensor y = kp::empty_like(x);
  KP_DISPATCH_FLOATING(x.scalar_type(), "template_op", [&] {
    const scalar_t* x_data = kp::data<const scalar_t>(x, "x");
    scalar_t* y_data = kp::data<scalar_t>(y, "y");
    template_op_fwd(x_data, y_data, x.numel(), scalar_t(alpha), kp::stream_of(x));
  });
  return y;
}

kp::Tensor backward(kp::Tensor grad_y, kp::Tensor x, double alpha) {
  kp::check_floating("template_op_backward", "x", x);
  kp::check_like("template_op_backward", "grad_y", grad_y, "x", x);
  grad_y = kp::contiguous(grad_y);  // autograd may hand in an expanded (stride-0) gradient
  x = kp::contiguous(x);
  kp::Tensor grad_x = kp::empty_like(x);
  KP_DISPATCH_FLOATING(x.scalar_type(), "template_op_backward", [&] {
    const scalar_t* grad_y_data = kp::data<const scalar_t>(grad_y, "grad_y");
    const scalar_t* x_data = kp::data<const scalar_t>(x, "x");
    scalar_t* grad_x_data = kp::data<scalar_t>(grad_x, "grad_x");
    template_op_bwd(grad_y_data, x_data, grad_x_data, x.numel(), scalar_t(alpha), kp::stream_of(x));
  });
  return grad_x;
}

KP_OPS(m) {
  m.def("template_op(Tensor x, float alpha) -> Tensor", TORCH_BOX(&forward));
  m.def("template_op_backward(Tensor grad_y, Tensor x, float alpha) -> Tensor", TORCH_BOX(&backward));
}
