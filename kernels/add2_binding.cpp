// add2's torch side: argument checks, dtype dispatch and registration. Kernels: add2.cu.
#include "common/binding.h"

template <typename T>
void add2_fwd(const T* a, const T* b, T* c, int64_t n, cudaStream_t stream);
template <typename T>
void add2_fwd_v1(const T* a, const T* b, T* c, int64_t n, cudaStream_t stream);

// `version` 2: the vectorised kernel where the pointers allow it; 1: the plain one-element-per-thread kernel.
template <int version>
kp::Tensor add2(kp::Tensor a, kp::Tensor b) {
  const char* op = version == 2 ? "add2" : "add2_v1";
  kp::check_floating(op, "a", a);
  kp::check_like(op, "b", b, "a", a);
  a = kp::contiguous(a);
  b = kp::contiguous(b);
  kp::Tensor c = kp::empty_like(a);
  KP_DISPATCH_FLOATING(a.scalar_type(), op, [&] {
    auto launch = version == 2 ? add2_fwd<scalar_t> : add2_fwd_v1<scalar_t>;
    launch(kp::data<const scalar_t>(a, "a"), kp::data<const scalar_t>(b, "b"), kp::data<scalar_t>(c, "c"), a.numel(),
           kp::stream_of(a));
  });
  return c;
}

KP_OPS(m) {
  m.def("add2(Tensor a, Tensor b) -> Tensor", TORCH_BOX(&add2<2>));
  m.def("add2_v1(Tensor a, Tensor b) -> Tensor", TORCH_BOX(&add2<1>));
}
