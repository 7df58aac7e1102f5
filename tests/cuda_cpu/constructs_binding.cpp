// The torch side of tests/cuda_cpu/constructs.cu: one op per launcher, on float32 tensors.
#include "binding.h"

using kp::ScalarType;
using kp::Tensor;

void typed_args(const float* in, const float* bias, float* out, int n);
void big_smem(const float* x, float* y, int n, int smem_bytes, bool opt_in);
void pairs(const float* a, const float* b, float* out, float* sums, int pairs);
void host_runtime(const float* x, float* y, int n, int* info, float* ms);
void arch_branch(const float* x, float* y, int n);
void half_api(const float* a, const float* b, float* out, unsigned* bits, int n);
void malloc_overrun(float* out, int n);

Tensor typed_args_op(Tensor x, Tensor bias) {
  kp::check_tensor("typed_args", "x", x, ScalarType::Float);
  kp::check_tensor("typed_args", "bias", bias, ScalarType::Float);
  kp::check(x.numel() == bias.numel(), "typed_args: bias must have as many elements as x");
  Tensor out = torch::stable::new_zeros(x, {3, x.numel()});
  kp::before_launch("typed_args");
  typed_args(kp::data<float>(x, "x"), kp::data<float>(bias, "bias"), kp::data<float>(out, "out"), x.numel());
  return out;
}

Tensor big_smem_op(Tensor x, int64_t smem_bytes, bool opt_in) {
  kp::check_tensor("big_smem", "x", x, ScalarType::Float);
  Tensor y = kp::empty_like(x);
  kp::before_launch("big_smem");
  big_smem(kp::data<float>(x, "x"), kp::data<float>(y, "y"), x.numel(), int(smem_bytes), opt_in);
  return y;
}

std::tuple<Tensor, Tensor> pairs_op(Tensor a, Tensor b) {
  kp::check_tensor("pairs", "a", a, ScalarType::Float);
  kp::check_tensor("pairs", "b", b, ScalarType::Float);
  kp::check(a.numel() == b.numel() && a.numel() % 2 == 0, "pairs: a and b must have the same even number of elements");
  Tensor out = torch::stable::new_zeros(a, {a.numel() / 2, 6});
  Tensor sums = torch::stable::new_zeros(a, {6});
  kp::before_launch("pairs");
  pairs(kp::data<float>(a, "a"), kp::data<float>(b, "b"), kp::data<float>(out, "out"), kp::data<float>(sums, "sums"),
        a.numel() / 2);
  return {out, sums};
}

std::tuple<Tensor, Tensor, Tensor> host_runtime_op(Tensor x) {
  kp::check_tensor("host_runtime", "x", x, ScalarType::Float);
  Tensor y = kp::empty_like(x);
  Tensor info = torch::stable::new_zeros(x, {18}, ScalarType::Int);
  Tensor ms = torch::stable::new_zeros(x, {1});
  kp::before_launch("host_runtime");
  host_runtime(kp::data<float>(x, "x"), kp::data<float>(y, "y"), x.numel(), kp::data<int>(info, "info"),
               kp::data<float>(ms, "ms"));
  return {y, info, ms};
}

Tensor arch_branch_op(Tensor x) {
  kp::check_tensor("arch_branch", "x", x, ScalarType::Float);
  Tensor y = kp::empty_like(x);
  kp::before_launch("arch_branch");
  arch_branch(kp::data<float>(x, "x"), kp::data<float>(y, "y"), x.numel());
  return y;
}

std::tuple<Tensor, Tensor> half_api_op(Tensor a, Tensor b) {
  kp::check_tensor("half_api", "a", a, ScalarType::Float);
  kp::check_tensor("half_api", "b", b, ScalarType::Float);
  kp::check(a.numel() == b.numel(), "half_api: a and b must have the same number of elements");
  Tensor out = torch::stable::new_zeros(a, {a.numel(), 12});
  Tensor bits = torch::stable::new_zeros(a, {a.numel(), 8}, ScalarType::Int);
  kp::before_launch("half_api");
  half_api(kp::data<float>(a, "a"), kp::data<float>(b, "b"), kp::data<float>(out, "out"),
           reinterpret_cast<unsigned*>(kp::data<int>(bits, "bits")), a.numel());
  return {out, bits};
}

Tensor malloc_overrun_op(Tensor like, int64_t n) {
  Tensor out = torch::stable::new_zeros(like, {n});
  kp::before_launch("malloc_overrun");
  malloc_overrun(kp::data<float>(out, "out"), int(n));
  return out;
}

KP_OPS(m) {
  m.def("typed_args(Tensor x, Tensor bias) -> Tensor", TORCH_BOX(&typed_args_op));
  m.def("big_smem(Tensor x, int smem_bytes, bool opt_in) -> Tensor", TORCH_BOX(&big_smem_op));
  m.def("pairs(Tensor a, Tensor b) -> (Tensor, Tensor)", TORCH_BOX(&pairs_op));
  m.def("host_runtime(Tensor x) -> (Tensor, Tensor, Tensor)", TORCH_BOX(&host_runtime_op));
  m.def("arch_branch(Tensor x) -> Tensor", TORCH_BOX(&arch_branch_op));
  m.def("half_api(Tensor a, Tensor b) -> (Tensor, Tensor)", TORCH_BOX(&half_api_op));
  m.def("malloc_overrun(Tensor like, int n) -> Tensor", TORCH_BOX(&malloc_overrun_op));
}
