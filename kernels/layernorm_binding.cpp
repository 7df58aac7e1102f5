// layernorm's torch side: argument checks, the buffers of the backward, dtype dispatch and registration.
// Kernels: layernorm.cu.
//   layernorm(x, weight, bias, eps=1e-5) -> (y, mean, rstd): each row of x (R, C) normalised, scaled by weight and
//     shifted by bias (C); the rows' means and 1 / sqrt(var + eps), (R), for the backward, in float32 for a
//     float16 or bfloat16 x (the kernels' accumulation type, as torch's CUDA layer norm saves them)
//   layernorm_backward(grad_y, x, weight, mean, rstd) -> (grad_x, grad_weight, grad_bias)
#include <tuple>
#include <type_traits>

#include "common/binding.h"

// S, the statistics' and partial sums' type: T's accumulation type (rows.cuh's acc_t<T>: float, or double for
// double).
template <typename T, typename S>
void layernorm_fwd(const T* x, const T* w, const T* b, T* y, S* mean, S* rstd, int64_t R, int64_t C, double eps,
                   cudaStream_t stream);
template <typename T, typename S>
void layernorm_bwd(const T* g, const T* x, const T* w, const S* mean, const S* rstd, T* dx, T* dw, T* db, S* gx,
                   S* sums, int64_t R, int64_t C, cudaStream_t stream);
template <typename T>
using stat_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

namespace {

// x is a float matrix with at least one column; weight (and bias) one value per column, of x's dtype and device.
void check_rows(const char* op, const kp::Tensor& x, const kp::Tensor& weight) {
  kp::check_floating(op, "x", x, /*half=*/true);
  kp::check(x.dim() == 2, std::string(op) + ": x must be a matrix (rows, columns), got shape " + kp::shape_of(x));
  kp::check(x.size(1) >= 1, std::string(op) + ": x must have at least one column, got shape " + kp::shape_of(x));
  kp::check_floating(op, "weight", weight, /*half=*/true);
  kp::check_same_kind(op, "weight", weight, "x", x);
  kp::check(weight.dim() == 1 && weight.size(0) == x.size(1), std::string(op) + ": weight has shape " +
                                                                  kp::shape_of(weight) + " but x has " +
                                                                  kp::shape_of(x) + ": one weight per column");
}

// The dtype of mean and rstd for an x of `x`'s: float64 for float64, float32 otherwise.
kp::ScalarType stat_type(const kp::Tensor& x) {
  return x.scalar_type() == kp::ScalarType::Double ? kp::ScalarType::Double : kp::ScalarType::Float;
}

}  // namespace

std::tuple<kp::Tensor, kp::Tensor, kp::Tensor> layernorm(kp::Tensor x, kp::Tensor weight, kp::Tensor bias, double eps) {
  check_rows("layernorm", x, weight);
  kp::check_like("layernorm", "bias", bias, "weight", weight, /*half=*/true);
  kp::check(eps >= 0, "layernorm: eps must be at least 0, got " + std::to_string(eps));
  x = kp::contiguous(x);
  weight = kp::contiguous(weight);
  bias = kp::contiguous(bias);
  const int64_t R = x.size(0), C = x.size(1);
  kp::Tensor y = kp::empty_like(x);
  kp::Tensor mean = torch::stable::new_empty(x, {R}, stat_type(x));
  kp::Tensor rstd = torch::stable::new_empty(x, {R}, stat_type(x));
  KP_DISPATCH_FLOATING_AND_HALF(x.scalar_type(), "layernorm", [&] {
    using S = stat_t<scalar_t>;
    layernorm_fwd<scalar_t, S>(kp::data<const scalar_t>(x, "x"), kp::data<const scalar_t>(weight, "weight"),
                               kp::data<const scalar_t>(bias, "bias"), kp::data<scalar_t>(y, "y"),
                               kp::data<S>(mean, "mean"), kp::data<S>(rstd, "rstd"), R, C, eps, kp::stream_of(x));
  });
  return {y, mean, rstd};
}

std::tuple<kp::Tensor, kp::Tensor, kp::Tensor> layernorm_backward(kp::Tensor grad_y, kp::Tensor x, kp::Tensor weight,
                                                                  kp::Tensor mean, kp::Tensor rstd) {
  const char* op = "layernorm_backward";
  check_rows(op, x, weight);
  kp::check_like(op, "grad_y", grad_y, "x", x, /*half=*/true);
  kp::check(mean.scalar_type() == stat_type(x),
            std::string(op) + ": mean has dtype " + torch::headeronly::toString(mean.scalar_type()) + " but x has " +
                torch::headeronly::toString(x.scalar_type()) + ": mean and rstd are " +
                torch::headeronly::toString(stat_type(x)) + ", as layernorm returns them");
  kp::check(kp::same_device(mean, x),
            std::string(op) + ": mean is on " + kp::device_name(mean) + " but x is on " + kp::device_name(x));
  kp::check(mean.dim() == 1 && mean.size(0) == x.size(0), std::string(op) + ": mean has shape " + kp::shape_of(mean) +
                                                              " but x has " + kp::shape_of(x) + ": one mean per row");
  kp::check_like(op, "rstd", rstd, "mean", mean);
  grad_y = kp::contiguous(grad_y);  // autograd may hand in an expanded (stride-0) gradient
  x = kp::contiguous(x);
  weight = kp::contiguous(weight);
  mean = kp::contiguous(mean);
  rstd = kp::contiguous(rstd);
  const int64_t R = x.size(0), C = x.size(1), chunks = R > 256 ? (R + 255) / 256 : 0;
  kp::Tensor dx = kp::empty_like(x), gx = torch::stable::new_empty(x, {R, C}, stat_type(x));
  kp::Tensor dw = torch::stable::new_empty(x, {C}), db = torch::stable::new_empty(x, {C});
  // The column sums' first stage past 256 rows, in the accumulation type.
  kp::Tensor sums = torch::stable::new_empty(x, {chunks * C}, stat_type(x));
  KP_DISPATCH_FLOATING_AND_HALF(x.scalar_type(), op, [&] {
    using S = stat_t<scalar_t>;
    layernorm_bwd<scalar_t, S>(kp::data<const scalar_t>(grad_y, "grad_y"), kp::data<const scalar_t>(x, "x"),
                               kp::data<const scalar_t>(weight, "weight"), kp::data<const S>(mean, "mean"),
                               kp::data<const S>(rstd, "rstd"), kp::data<scalar_t>(dx, "grad_x"),
                               kp::data<scalar_t>(dw, "grad_weight"), kp::data<scalar_t>(db, "grad_bias"),
                               kp::data<S>(gx, "grad_y_xhat"), kp::data<S>(sums, "sums"), R, C, kp::stream_of(x));
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
