// linear's torch side: argument checks, dtype dispatch and registration. Kernels: linear.cu.
//
// Four ops, so that autograd computes only the gradients it needs (ctx.needs_input_grad):
//   linear(input, weight, bias) -> input·weightᵀ + bias
//   linear_grad_input(grad_output, weight) -> grad_output·weight
//   linear_grad_weight(grad_output, input) -> grad_outputᵀ·input
//   linear_grad_bias(grad_output) -> the column sums of grad_output
#include <string>

#include "common/binding.h"

template <typename T>
void linear_fwd(const T* x, const T* w, const T* b, T* y, int64_t B, int64_t M, int64_t N, cudaStream_t stream);
template <typename T>
void linear_bwd_input(const T* g, const T* w, T* dx, int64_t B, int64_t M, int64_t N, cudaStream_t stream);
template <typename T>
void linear_bwd_weight(const T* g, const T* x, T* dw, int64_t B, int64_t M, int64_t N, cudaStream_t stream);
template <typename T>
void linear_bwd_bias(const T* g, T* db, T* sums, int64_t B, int64_t N, cudaStream_t stream);

namespace {

// linear.cu puts output columns on grid.y: at most 65535 tiles of 16.
constexpr int64_t kMaxColumns = 65535 * 16;
// Rows of G per block of the bias gradient: linear.cu's BIAS_CHUNK.
constexpr int64_t kBiasChunk = 256;

// `t` is a float32/float64 tensor of `dim` dimensions (`layout` names them).
void check_matrix(const char* op, const char* name, const kp::Tensor& t, int64_t dim, const char* layout) {
  kp::check_floating(op, name, t);
  kp::check(t.dim() == dim, std::string(op) + ": " + name + " must be " + std::to_string(dim) + "-D " + layout +
                                ", got shape " + kp::shape_of(t));
}

// Dimension `d` of `a` equals dimension `e` of `b`.
void check_sizes_match(const char* op, const char* a_name, const kp::Tensor& a, int64_t d, const char* b_name,
                       const kp::Tensor& b, int64_t e, const char* what) {
  kp::check(a.size(d) == b.size(e), std::string(op) + ": " + a_name + " has shape " + kp::shape_of(a) + " but " +
                                        b_name + " has " + kp::shape_of(b) + ": " + what + " must match");
}

void check_columns(const char* op, const char* name, int64_t columns, const char* what) {
  kp::check(columns <= kMaxColumns, std::string(op) + ": " + name + " has " + std::to_string(columns) + " " + what +
                                        ", more than the kernels' grid takes (" + std::to_string(kMaxColumns) + ")");
}

}  // namespace

kp::Tensor linear(kp::Tensor input, kp::Tensor weight, kp::Tensor bias) {
  check_matrix("linear", "input", input, 2, "(batch, in_features)");
  check_matrix("linear", "weight", weight, 2, "(out_features, in_features)");
  check_matrix("linear", "bias", bias, 1, "(out_features)");
  kp::check_same_kind("linear", "weight", weight, "input", input);
  kp::check_same_kind("linear", "bias", bias, "input", input);
  check_sizes_match("linear", "weight", weight, 1, "input", input, 1, "their in_features (last dimensions)");
  check_sizes_match("linear", "bias", bias, 0, "weight", weight, 0, "their out_features (first dimensions)");
  const int64_t B = input.size(0), M = input.size(1), N = weight.size(0);
  check_columns("linear", "weight", N, "out_features");
  check_columns("linear", "input", M, "in_features");  // the backward's column count
  input = kp::contiguous(input);
  weight = kp::contiguous(weight);
  bias = kp::contiguous(bias);
  kp::Tensor output = torch::stable::new_empty(input, {B, N});
  KP_DISPATCH_FLOATING(input.scalar_type(), "linear", [&] {
    linear_fwd<scalar_t>(kp::data<const scalar_t>(input, "input"), kp::data<const scalar_t>(weight, "weight"),
                         kp::data<const scalar_t>(bias, "bias"), kp::data<scalar_t>(output, "output"), B, M, N,
                         kp::stream_of(input));
  });
  return output;
}

kp::Tensor linear_grad_input(kp::Tensor grad_output, kp::Tensor weight) {
  check_matrix("linear_grad_input", "grad_output", grad_output, 2, "(batch, out_features)");
  check_matrix("linear_grad_input", "weight", weight, 2, "(out_features, in_features)");
  kp::check_same_kind("linear_grad_input", "weight", weight, "grad_output", grad_output);
  check_sizes_match("linear_grad_input", "weight", weight, 0, "grad_output", grad_output, 1,
                    "their out_features (weight's first, grad_output's last dimension)");
  const int64_t B = grad_output.size(0), M = weight.size(1), N = weight.size(0);
  check_columns("linear_grad_input", "weight", M, "in_features");
  grad_output = kp::contiguous(grad_output);
  weight = kp::contiguous(weight);
  kp::Tensor grad_input = torch::stable::new_empty(grad_output, {B, M});
  KP_DISPATCH_FLOATING(grad_output.scalar_type(), "linear_grad_input", [&] {
    linear_bwd_input<scalar_t>(kp::data<const scalar_t>(grad_output, "grad_output"),
                               kp::data<const scalar_t>(weight, "weight"), kp::data<scalar_t>(grad_input, "grad_input"),
                               B, M, N, kp::stream_of(grad_output));
  });
  return grad_input;
}

kp::Tensor linear_grad_weight(kp::Tensor grad_output, kp::Tensor input) {
  check_matrix("linear_grad_weight", "grad_output", grad_output, 2, "(batch, out_features)");
  check_matrix("linear_grad_weight", "input", input, 2, "(batch, in_features)");
  kp::check_same_kind("linear_grad_weight", "input", input, "grad_output", grad_output);
  check_sizes_match("linear_grad_weight", "input", input, 0, "grad_output", grad_output, 0,
                    "their batch sizes (first dimensions)");
  const int64_t B = input.size(0), M = input.size(1), N = grad_output.size(1);
  check_columns("linear_grad_weight", "input", M, "in_features");
  grad_output = kp::contiguous(grad_output);
  input = kp::contiguous(input);
  kp::Tensor grad_weight = torch::stable::new_empty(grad_output, {N, M});
  KP_DISPATCH_FLOATING(grad_output.scalar_type(), "linear_grad_weight", [&] {
    linear_bwd_weight<scalar_t>(kp::data<const scalar_t>(grad_output, "grad_output"),
                                kp::data<const scalar_t>(input, "input"),
                                kp::data<scalar_t>(grad_weight, "grad_weight"), B, M, N, kp::stream_of(grad_output));
  });
  return grad_weight;
}

kp::Tensor linear_grad_bias(kp::Tensor grad_output) {
  check_matrix("linear_grad_bias", "grad_output", grad_output, 2, "(batch, out_features)");
  const int64_t B = grad_output.size(0), N = grad_output.size(1);
  grad_output = kp::contiguous(grad_output);
  kp::Tensor grad_bias = torch::stable::new_empty(grad_output, {N});
  // linear.cu's first stage past kBiasChunk rows: the column sums of each chunk of kBiasChunk rows
  const int64_t chunks = B > kBiasChunk ? (B + kBiasChunk - 1) / kBiasChunk : 0;
  kp::Tensor sums = torch::stable::new_empty(grad_output, {chunks * N});
  KP_DISPATCH_FLOATING(grad_output.scalar_type(), "linear_grad_bias", [&] {
    linear_bwd_bias<scalar_t>(kp::data<const scalar_t>(grad_output, "grad_output"),
                              kp::data<scalar_t>(grad_bias, "grad_bias"), kp::data<scalar_t>(sums, "sums"), B, N,
                              kp::stream_of(grad_output));
  });
  return grad_bias;
}

KP_OPS(m) {
  m.def("linear(Tensor input, Tensor weight, Tensor bias) -> Tensor", TORCH_BOX(&linear));
  m.def("linear_grad_input(Tensor grad_output, Tensor weight) -> Tensor", TORCH_BOX(&linear_grad_input));
  m.def("linear_grad_weight(Tensor grad_output, Tensor input) -> Tensor", TORCH_BOX(&linear_grad_weight));
  m.def("linear_grad_bias(Tensor grad_output) -> Tensor", TORCH_BOX(&linear_grad_bias));
}
