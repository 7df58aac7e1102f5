// involution's torch side: argument checks, dtype dispatch and registration. Kernels: involution.cu.
//
// Three ops, one per kernel (named after what they return), so that the autograd Function launches only the gradients
// it is asked for:
//   involution(input, weight, stride, padding, dilation) -> out
//   involution_grad_input(grad_out, weight, height, width, stride, padding, dilation) -> grad_input
//   involution_grad_weight(grad_out, input, groups, kernel_h, kernel_w, stride, padding, dilation) -> grad_weight
#include <string>
#include <vector>

#include "common/binding.h"

template <typename T>
void involution_fwd(const T* input, const T* weight, T* out, int64_t N, int64_t C, int64_t H, int64_t W, int64_t G,
                    int64_t KH, int64_t KW, int64_t stride, int64_t padding, int64_t dilation, cudaStream_t stream);
template <typename T>
void involution_bwd_input(const T* grad_out, const T* weight, T* grad_input, int64_t N, int64_t C, int64_t H, int64_t W,
                          int64_t G, int64_t KH, int64_t KW, int64_t stride, int64_t padding, int64_t dilation,
                          cudaStream_t stream);
template <typename T>
void involution_bwd_weight(const T* grad_out, const T* input, T* grad_weight, int64_t N, int64_t C, int64_t H,
                           int64_t W, int64_t G, int64_t KH, int64_t KW, int64_t stride, int64_t padding,
                           int64_t dilation, cudaStream_t stream);

namespace {

using kp::check;
using std::to_string;

// `a` and `b`: float32/float64 tensors this build serves, of one dtype and on one device.
void check_pair(const std::string& op, const char* a_name, const kp::Tensor& a, const char* b_name,
                const kp::Tensor& b) {
  kp::check_floating(op.c_str(), a_name, a);
  kp::check_floating(op.c_str(), b_name, b);
  kp::check_same_kind(op.c_str(), b_name, b, a_name, a);
}

void check_dims(const std::string& op, const char* name, const kp::Tensor& t, int64_t dims, const char* layout) {
  check(t.dim() == dims,
        op + ": " + name + " must be " + to_string(dims) + "-D " + layout + ", got shape " + kp::shape_of(t));
}

// `name`'s size along `dim` (`what`) equals `expected`, which `ref` gave.
void check_size(const std::string& op, const char* name, const kp::Tensor& t, int64_t dim, const char* what,
                int64_t expected, const char* ref) {
  check(t.size(dim) == expected, op + ": " + name + " has " + what + " " + to_string(t.size(dim)) + " (dim " +
                                     to_string(dim) + ") but " + ref + " has " + to_string(expected));
}

void check_hyper(const std::string& op, int64_t stride, int64_t padding, int64_t dilation) {
  check(stride >= 1, op + ": stride must be >= 1, got " + to_string(stride));
  check(padding >= 0, op + ": padding must be >= 0, got " + to_string(padding));
  check(dilation >= 1, op + ": dilation must be >= 1, got " + to_string(dilation));
}

// `C` channels (of `c_name`) in `G` groups, as `g_what` says ("weight's G = 4 groups", "groups = 4").
void check_groups(const std::string& op, const char* c_name, int64_t C, int64_t G, const std::string& g_what) {
  check(G >= 1, op + ": " + g_what + ", but there must be at least 1 group");
  check(C % G == 0, op + ": " + c_name + " has C = " + to_string(C) + " channels, which " + g_what + " do not divide");
}

void check_kernel(const std::string& op, int64_t KH, int64_t KW, const std::string& k_what) {
  check(KH >= 1 && KW >= 1,
        op + ": " + k_what + " = " + to_string(KH) + " x " + to_string(KW) + ", but the kernel must be at least 1 x 1");
}

// The output size along one dimension, after checking that the dilated kernel fits in the padded input.
int64_t out_size(const std::string& op, const char* dim, int64_t in, int64_t k, int64_t stride, int64_t padding,
                 int64_t dilation) {
  const int64_t span = dilation * (k - 1) + 1;
  check(in + 2 * padding >= span, op + ": the input " + dim + " " + to_string(in) + " plus 2 * padding " +
                                      to_string(padding) + " is smaller than the dilated kernel's " + to_string(span) +
                                      " (dilation * (K - 1) + 1)");
  return (in + 2 * padding - span) / stride + 1;
}

// `name`'s output sizes, dims `dh` and `dh + 1`, are what an H x W input gives.
void check_out(const std::string& op, const char* name, const kp::Tensor& t, int64_t dh, int64_t H, int64_t W,
               int64_t KH, int64_t KW, int64_t stride, int64_t padding, int64_t dilation) {
  const int64_t H_out = out_size(op, "height", H, KH, stride, padding, dilation);
  const int64_t W_out = out_size(op, "width", W, KW, stride, padding, dilation);
  check(t.size(dh) == H_out && t.size(dh + 1) == W_out,
        op + ": " + name + " has H_out x W_out = " + to_string(t.size(dh)) + " x " + to_string(t.size(dh + 1)) +
            " (dims " + to_string(dh) + ", " + to_string(dh + 1) + "), but an input of " + to_string(H) + " x " +
            to_string(W) + " with a " + to_string(KH) + " x " + to_string(KW) + " kernel, stride " + to_string(stride) +
            ", padding " + to_string(padding) + " and dilation " + to_string(dilation) + " gives " + to_string(H_out) +
            " x " + to_string(W_out));
}

}  // namespace

kp::Tensor involution(kp::Tensor input, kp::Tensor weight, int64_t stride, int64_t padding, int64_t dilation) {
  const std::string op = "involution";
  check_pair(op, "input", input, "weight", weight);
  check_dims(op, "input", input, 4, "(N, C, H, W)");
  check_dims(op, "weight", weight, 6, "(N, G, KH, KW, H_out, W_out)");
  check_hyper(op, stride, padding, dilation);
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  const int64_t G = weight.size(1), KH = weight.size(2), KW = weight.size(3);
  check_size(op, "weight", weight, 0, "batch size", N, "input");
  check_groups(op, "input", C, G, "weight's G = " + to_string(G) + " groups (dim 1)");
  check_kernel(op, KH, KW, "weight's KH x KW (dims 2, 3)");
  check_out(op, "weight", weight, 4, H, W, KH, KW, stride, padding, dilation);
  input = kp::contiguous(input);
  weight = kp::contiguous(weight);
  kp::Tensor out = torch::stable::new_empty(input, std::vector<int64_t>{N, C, weight.size(4), weight.size(5)});
  KP_DISPATCH_FLOATING(input.scalar_type(), "involution", [&] {
    involution_fwd<scalar_t>(kp::data<const scalar_t>(input, "input"), kp::data<const scalar_t>(weight, "weight"),
                             kp::data<scalar_t>(out, "out"), N, C, H, W, G, KH, KW, stride, padding, dilation,
                             kp::stream_of(input));
  });
  return out;
}

kp::Tensor involution_grad_input(kp::Tensor grad_out, kp::Tensor weight, int64_t height, int64_t width, int64_t stride,
                                 int64_t padding, int64_t dilation) {
  const std::string op = "involution_grad_input";
  check_pair(op, "grad_out", grad_out, "weight", weight);
  check_dims(op, "grad_out", grad_out, 4, "(N, C, H_out, W_out)");
  check_dims(op, "weight", weight, 6, "(N, G, KH, KW, H_out, W_out)");
  check_hyper(op, stride, padding, dilation);
  check(height >= 0 && width >= 0,
        op + ": height and width must be >= 0, got " + to_string(height) + " and " + to_string(width));
  const int64_t N = grad_out.size(0), C = grad_out.size(1);
  const int64_t G = weight.size(1), KH = weight.size(2), KW = weight.size(3);
  check_size(op, "weight", weight, 0, "batch size", N, "grad_out");
  check_groups(op, "grad_out", C, G, "weight's G = " + to_string(G) + " groups (dim 1)");
  check_kernel(op, KH, KW, "weight's KH x KW (dims 2, 3)");
  check_out(op, "weight", weight, 4, height, width, KH, KW, stride, padding, dilation);
  check_size(op, "grad_out", grad_out, 2, "H_out", weight.size(4), "weight");
  check_size(op, "grad_out", grad_out, 3, "W_out", weight.size(5), "weight");
  grad_out = kp::contiguous(grad_out);
  weight = kp::contiguous(weight);
  kp::Tensor grad_input = torch::stable::new_empty(grad_out, std::vector<int64_t>{N, C, height, width});
  KP_DISPATCH_FLOATING(grad_out.scalar_type(), "involution_grad_input", [&] {
    involution_bwd_input<scalar_t>(kp::data<const scalar_t>(grad_out, "grad_out"),
                                   kp::data<const scalar_t>(weight, "weight"),
                                   kp::data<scalar_t>(grad_input, "grad_input"), N, C, height, width, G, KH, KW, stride,
                                   padding, dilation, kp::stream_of(grad_out));
  });
  return grad_input;
}

kp::Tensor involution_grad_weight(kp::Tensor grad_out, kp::Tensor input, int64_t groups, int64_t kernel_h,
                                  int64_t kernel_w, int64_t stride, int64_t padding, int64_t dilation) {
  const std::string op = "involution_grad_weight";
  check_pair(op, "grad_out", grad_out, "input", input);
  check_dims(op, "grad_out", grad_out, 4, "(N, C, H_out, W_out)");
  check_dims(op, "input", input, 4, "(N, C, H, W)");
  check_hyper(op, stride, padding, dilation);
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  check_size(op, "grad_out", grad_out, 0, "batch size", N, "input");
  check_size(op, "grad_out", grad_out, 1, "channels", C, "input");
  check_groups(op, "input", C, groups, "groups = " + to_string(groups));
  check_kernel(op, kernel_h, kernel_w, "kernel_h x kernel_w");
  check_out(op, "grad_out", grad_out, 2, H, W, kernel_h, kernel_w, stride, padding, dilation);
  grad_out = kp::contiguous(grad_out);
  input = kp::contiguous(input);
  kp::Tensor grad_weight = torch::stable::new_empty(
      input, std::vector<int64_t>{N, groups, kernel_h, kernel_w, grad_out.size(2), grad_out.size(3)});
  KP_DISPATCH_FLOATING(input.scalar_type(), "involution_grad_weight", [&] {
    involution_bwd_weight<scalar_t>(kp::data<const scalar_t>(grad_out, "grad_out"),
                                    kp::data<const scalar_t>(input, "input"),
                                    kp::data<scalar_t>(grad_weight, "grad_weight"), N, C, H, W, groups, kernel_h,
                                    kernel_w, stride, padding, dilation, kp::stream_of(input));
  });
  return grad_weight;
}

KP_OPS(m) {
  m.def("involution(Tensor input, Tensor weight, int stride=1, int padding=0, int dilation=1) -> Tensor",
        TORCH_BOX(&involution));
  m.def(
      "involution_grad_input(Tensor grad_out, Tensor weight, int height, int width, int stride=1, int padding=0, "
      "int dilation=1) -> Tensor",
      TORCH_BOX(&involution_grad_input));
  m.def(
      "involution_grad_weight(Tensor grad_out, Tensor input, int groups, int kernel_h, int kernel_w, int stride=1, "
      "int padding=0, int dilation=1) -> Tensor",
      TORCH_BOX(&involution_grad_weight));
}
