// layernorm's torch side: argument checks, the buffers of the backward, dtype dispatch and registration.
// Kernels: layernorm.cu.
//   layernorm(x, weight, bias, eps=1e-5) -> (y, mean, rstd): each row of x (R, C) normalised, scaled by weight and
//     shifted by bias (C); the rows' means and 1 / sqrt(var + eps), (R), for the backward
//   layernorm_backward(grad_y, x, weight, mean, rstd) -> (grad_x, grad_weight, grad_bias)
#include <tuple>

#include "common/binding.h"

template <typename T>
void layernorm_fwd(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t R, int64_t C, double eps,
                   cudaStream_t stream);
template <typename T>
void layernorm_bwd(const T* g, const T* x, const T* w, const T* mean, const T* rstd, T* dx, T* dw, T* db, T* gx,
                   T* sums, int64_t R, int64_t C, cudaStream_t stream);

namespace {

// x is a float matrix with at least one column; weight (and bias) one value per column, of x's dtype and device.
void check_rows(const char* op, const kp::Tensor& x, const kp::Tensor& weight) {
  kp::check_floating(op, "x", x);
  kp::check(x.dim() == 2, std::string(op) + ": x must be a matrix (rows, columns), got shape " + kp::shape_of(x));
  kp::check(x.size(1) >= 1, std::string(op) + ": x must have at least one column, got shape " + kp::shape_of(x));
  kp::check_floating(op, "weight", weight);
  kp::check_same_kind(op, "weight", weight, "x", x);
  kp::check(weight.dim() == 1 && weight.size(0) == x.size(1), std::string(op) + ": weight has shape " +
                                                                  kp::shape_of(weight) + " but x has " +
                                                                  kp::shape_of(x) + ": one weight per column");
}

}  // namespace

std::tuple<kp::Tensor, kp::Tensor, kp::Tensor> layernorm(kp::Tensor x, kp::Tensor weight, kp::Tensor bias, double eps) {
  check_rows("layernorm", x, weight);
  kp::check_like("layernorm", "bias", bias, "weight", weight);
  kp::check(eps >= 0, "layernorm: eps must be at least 0, got " + std::to_string(eps));
  x = kp::contiguous(x);
  weight = kp::contiguous(weight);
  bias = kp::contiguous(bias);
  const int64_t R = x.size(0), C = x.size(1);
  kp::Tensor y = kp::empty_like(x), mean = torch::stable::new_empty(x, {R}), rstd = torch::stable::new_empty(x, {R});
  KP_DISPATCH_FLOATING(x.scalar_type(), "layernorm", [&] {
    layernorm_fwd<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<const scalar_t>(weight, "weight"),
                            kp::data<const scalar_t>(bias, "bias"), kp::data<scalar_t>(y, "y"),
                            kp::data<scalar_t>(mean, "mean"), kp::data<scalar_t>(rstd, "rstd"), R, C, eps,
                            kp::stream_of(x));
  });
  return {y, mean, rstd};
}

std::tuple<kp::Tensor, kp::Tensor, kp::Tensor> layernorm_backward(kp::Tensor grad_y, kp::Tensor x, kp::Tensor weight,
                                                                  kp::Tensor mean, kp::Tensor rstd) {
  const char* op = "layernorm_backward";
  check_rows(op, x, weight);
  kp::check_like(op, "grad_y", grad_y, "x", x);
  kp::check_floating(op, "mean", mean);
  kp::check_same_kind(op, "mean", mean, "x", x);
  kp::check(mean.dim() == 1 && mean.size(0) == x.size(0), std::string(op) + ": mean has shape " + kp::shape_of(mean) +
                                                              " but x has " + kp::shape_of(x) + ": one mean per row");
  kp::check_like(op, "rstd", rstd, "mean", mean);
  grad_y = kp::contiguous(grad_y);  // autograd may hand in an expanded (stride-0) gradient
  x = kp::contiguous(x);
  weight = kp::contiguous(weight);
  mean = kp::contiguous(mean);
  rstd = kp::contiguous(rstd);
  const int64_t R = x.size(0), C = x.size(1), chunks = R > 256 ? (R + 255) / 256 : 0;
  kp::Tensor dx = kp::empty_like(x), gx = kp::empty_like(x);
  kp::Tensor dw = torch::stable::new_empty(x, {C}), db = torch::stable::new_empty(x, {C});
  kp::Tensor sums = torch::stable::new_empty(x, {chunks * C});  // the column sums' first stage past 256 rows
  KP_DISPATCH_FLOATING(x.scalar_type(), op, [&] {
    layernorm_bwd<scalar_t>(kp::data<const scalar_t>(grad_y, "grad_y"), kp::data<const scalar_t>(x, "x"),
                            kp::data<const scalar_t>(weight, "weight"), kp::data<const scalar_t>(mean, "mean"),
                            kp::data<const scalar_t>(rstd, "rstd"), kp::data<scalar_t>(dx, "grad_x"),
                            kp::data<scalar_t>(dw, "grad_weight"), kp::data<scalar_t>(db, "grad_bias"),
                            kp::data<scalar_t>(gx, "grad_y_xhat"), kp::data<scalar_t>(sums, "sums"), R, C,
                            kp::stream_of(x));
  });
  return {dx, dw, db};
}

KP_OPS(m) {
  m.def("layernorm(Tensor x, Tensor weight, Tensor bias, float eps=1e-05) -> (Tensor, Tensor, Tensor)",
        TORCH_BOX(&layernorm));
  m.def(
      "layernorm_backward(Tensor grad_y, Tensor x, Tensor weight, Tensor mean, Tensor rstd) -> (Tensor, Tensor, "
      "Tensor)",
      TORCH_BOX(&layernorm_backward));
}
