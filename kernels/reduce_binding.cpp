// reduce's torch side: argument checks, the partial sums' buffer, dtype dispatch and registration. Kernels: reduce.cu.
#include "common/binding.h"

template <typename T>
void reduce_sum(const T* x, T* out, T* partial, int64_t n, int version, cudaStream_t stream);
int64_t reduce_partials(int64_t n, int64_t version);  // of reduce.cu: its launches' block sums

kp::Tensor reduce_sum_op(kp::Tensor x, int64_t version) {
  kp::check_floating("reduce_sum", "x", x);
  kp::check(version >= 1 && version <= 6, "reduce_sum: version must be 1 to 6, got " + std::to_string(version));
  x = kp::contiguous(x);
  const int64_t n = x.numel();
  kp::Tensor out = torch::stable::new_empty(x, {});
  kp::Tensor partial = torch::stable::new_empty(x, {reduce_partials(n, version)});
  KP_DISPATCH_FLOATING(x.scalar_type(), "reduce_sum", [&] {
    reduce_sum<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<scalar_t>(out, "out"),
                         kp::data<scalar_t>(partial, "partial"), n, static_cast<int>(version), kp::stream_of(x));
  });
  return out;
}

KP_OPS(m) { m.def("reduce_sum(Tensor x, int version=6) -> Tensor", TORCH_BOX(&reduce_sum_op)); }
