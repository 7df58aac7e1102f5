// softmax's torch side: argument checks, dtype dispatch and registration. Kernels: softmax.cu.
//   softmax(x, version=5) -> the softmax of each row of x (R, C), by one of the ladder's five versions
//   softmax_backward(grad_y, y) -> y * (grad_y - rowsum(grad_y * y)), the gradient with respect to x
#include "common/binding.h"

template <typename T>
void softmax_fwd(const T* x, T* y, int64_t R, int64_t C, int version, cudaStream_t stream);
template <typename T>
void softmax_bwd(const T* g, const T* y, T* dx, int64_t R, int64_t C, cudaStream_t stream);

namespace {

void check_rows(const char* op, const char* name, const kp::Tensor& t) {
  kp::check_floating(op, name, t, /*half=*/true);
  kp::check(t.dim() == 2,
            std::string(op) + ": " + name + " must be a matrix (rows, columns), got shape " + kp::shape_of(t));
}

}  // namespace

kp::Tensor softmax(kp::Tensor x, int64_t version) {
  check_rows("softmax", "x", x);
  kp::check(version >= 1 && version <= 5, "softmax: version must be 1 to 5, got " + std::to_string(version));
  x = kp::contiguous(x);
  kp::Tensor y = kp::empty_like(x);
  KP_DISPATCH_FLOATING_AND_HALF(x.scalar_type(), "softmax", [&] {
    softmax_fwd<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<scalar_t>(y, "y"), x.size(0), x.size(1),
                          static_cast<int>(version), kp::stream_of(x));
  });
  return y;
}

kp::Tensor softmax_backward(kp::Tensor grad_y, kp::Tensor y) {
  check_rows("softmax_backward", "y", y);
  kp::check_like("softmax_backward", "grad_y", grad_y, "y", y, /*half=*/true);
  grad_y = kp::contiguous(grad_y);  // autograd may hand in an expanded (stride-0) gradient
  y = kp::contiguous(y);
  kp::Tensor grad_x = kp::empty_like(y);
  KP_DISPATCH_FLOATING_AND_HALF(y.scalar_type(), "softmax_backward", [&] {
    softmax_bwd<scalar_t>(kp::data<const scalar_t>(grad_y, "grad_y"), kp::data<const scalar_t>(y, "y"),
                          kp::data<scalar_t>(grad_x, "grad_x"), y.size(0), y.size(1), kp::stream_of(y));
  });
  return grad_x;
}

KP_OPS(m) {
  m.def("softmax(Tensor x, int version=5) -> Tensor", TORCH_BOX(&softmax));
  m.def("softmax_backward(Tensor grad_y, Tensor y) -> Tensor", TORCH_BOX(&softmax_backward));
}
