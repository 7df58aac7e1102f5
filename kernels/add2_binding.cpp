// add2's torch side: argument checks, dtype dispatch and registration. Kernels: add2.cu.
#include "common/binding.h"

template <typename T>
void add2_fwd(const T* a, const T* b, T* c, int64_t n, cudaStream_t stream);

kp::Tensor add2(kp::Tensor a, kp::Tensor b) {
  kp::check_floating("add2", "a", a);
  kp::check_like("add2", "b", b, "a", a);
  a = torch::stable::contiguous(a);
  b = torch::stable::contiguous(b);
  kp::Tensor c = torch::stable::empty_like(a);
  KP_DISPATCH_FLOATING(a.scalar_type(), "add2", [&] {
    add2_fwd<scalar_t>(a.const_data_ptr<scalar_t>(), b.const_data_ptr<scalar_t>(), c.mutable_data_ptr<scalar_t>(),
                       a.numel(), kp::stream_of(a));
  });
  return c;
}

KP_OPS(m) { m.def("add2(Tensor a, Tensor b) -> Tensor", TORCH_BOX(&add2)); }
