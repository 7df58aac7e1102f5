// mul_add's torch side: argument checks, broadcasting (the output's shape and each input's strides), the sum of
// broadcast gradients down to each input's shape (sum_rows in mul_add.cu: notebook 08's column sums), dtype dispatch
// and registration. Kernels: mul_add.cu.
#include <algorithm>
#include <vector>

#include "common/binding.h"

template <typename T>
void mul_fwd(const T* w, const T* x, T* out, int64_t n, int ndim, const int64_t* size, const int64_t* w_stride,
             const int64_t* x_stride, cudaStream_t stream);
template <typename T>
void mul_bwd(const T* grad_out, const T* w, const T* x, T* grad_w, T* grad_x, int64_t n, int ndim, const int64_t* size,
             const int64_t* w_stride, const int64_t* x_stride, cudaStream_t stream);
template <typename T>
void sum_rows(const T* x, T* out, T* sums, int64_t R, int64_t C, cudaStream_t stream);
template <typename T>
void add_fwd(const T* x, const T* b, T* out, int64_t n, int ndim, const int64_t* size, const int64_t* x_stride,
             const int64_t* b_stride, cudaStream_t stream);
int mul_add_max_dims();

namespace {

using Shape = std::vector<int64_t>;
using torch::headeronly::IntHeaderOnlyArrayRef;

std::string shape_str(IntHeaderOnlyArrayRef s) {
  std::string out = "[";
  for (size_t d = 0; d < s.size(); ++d) out += (d ? ", " : "") + std::to_string(s[d]);
  return out + "]";
}

// `t` is a float tensor with the dtype and device of `ref`; its shape may differ (it broadcasts).
void check_compatible(const char* op, const char* name, const kp::Tensor& t, const char* ref_name,
                      const kp::Tensor& ref) {
  kp::check_floating(op, name, t);
  kp::check_same_kind(op, name, t, ref_name, ref);
}

// The shape that a and b broadcast to, as torch computes it: aligned from the right, size 1 repeats.
Shape broadcast_shape(const char* op, const char* a_name, const kp::Tensor& a, const char* b_name,
                      const kp::Tensor& b) {
  int64_t nd = std::max(a.dim(), b.dim());
  Shape out(nd);
  for (int64_t d = 0; d < nd; ++d) {
    int64_t da = d - (nd - a.dim()), db = d - (nd - b.dim());
    int64_t sa = da >= 0 ? a.size(da) : 1, sb = db >= 0 ? b.size(db) : 1;
    kp::check(sa == sb || sa == 1 || sb == 1,
              std::string(op) + ": " + a_name + " has shape " + kp::shape_of(a) + " and " + b_name + " has " +
                  kp::shape_of(b) + ", which do not broadcast (sizes " + std::to_string(sa) + " and " +
                  std::to_string(sb) + " at dim " + std::to_string(d) + " of the result)");
    out[d] = sa == 1 ? sb : sa;
  }
  return out;
}

// The strides of `t` read as a tensor of shape `out`: 0 along every dim that `t` is broadcast along.
Shape broadcast_strides(const kp::Tensor& t, const Shape& out) {
  Shape stride(out.size(), 0);
  int64_t lead = static_cast<int64_t>(out.size()) - t.dim();
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1) stride[lead + d] = t.stride(d);
  return stride;
}

// What the kernels get: the output's dims with size-1 dims dropped and neighbours merged where both
// inputs step through them as through one dim (equal contiguous shapes become one dim).
struct Layout {
  Shape size, stride_a, stride_b;
};

Layout broadcast_layout(const char* op, const char* a_name, const kp::Tensor& a, const char* b_name,
                        const kp::Tensor& b, const Shape& out) {
  Shape sa = broadcast_strides(a, out), sb = broadcast_strides(b, out);
  Layout l;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    if (!l.size.empty() && l.stride_a.back() == sa[d] * out[d] && l.stride_b.back() == sb[d] * out[d]) {
      l.size.back() *= out[d];
      l.stride_a.back() = sa[d];
      l.stride_b.back() = sb[d];
    } else {
      l.size.push_back(out[d]);
      l.stride_a.push_back(sa[d]);
      l.stride_b.push_back(sb[d]);
    }
  }
  kp::check(static_cast<int64_t>(l.size.size()) <= mul_add_max_dims(),
            std::string(op) + ": " + a_name + " " + kp::shape_of(a) + " and " + b_name + " " + kp::shape_of(b) +
                " broadcast to " + std::to_string(l.size.size()) +
                " dims that do not merge, but the kernels take at most " + std::to_string(mul_add_max_dims()));
  return l;
}

// `g` (of a broadcast shape) summed over the dims along which an input of shape `shape` was broadcast: those dims
// moved first (a copy, unless they are first already), the rest flattened, and the rows summed by sum_rows.
kp::Tensor sum_to_shape(kp::Tensor g, IntHeaderOnlyArrayRef shape) {
  int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  Shape reduced, kept;
  int64_t R = 1, C = 1;
  for (int64_t d = 0; d < g.dim(); ++d) {
    const bool summed = d < lead || (shape[d - lead] == 1 && g.size(d) != 1);
    (summed ? reduced : kept).push_back(d);
    (summed ? R : C) *= g.size(d);
  }
  if (reduced.empty()) return torch::stable::reshape(g, shape);
  Shape order = reduced;
  order.insert(order.end(), kept.begin(), kept.end());
  bool in_order = true;
  for (size_t i = 0; i < order.size(); ++i) in_order = in_order && order[i] == static_cast<int64_t>(i);
  g = kp::contiguous(in_order ? g : torch::stable::permute(g, IntHeaderOnlyArrayRef(order)));
  kp::Tensor out = torch::stable::new_empty(g, {C});
  kp::Tensor sums = torch::stable::new_empty(g, {R > 256 ? (R + 255) / 256 * C : 0});
  KP_DISPATCH_FLOATING(g.scalar_type(), "sum_to", [&] {
    sum_rows<scalar_t>(kp::data<const scalar_t>(g, "grad"), kp::data<scalar_t>(out, "out"),
                       kp::data<scalar_t>(sums, "sums"), R, C, kp::stream_of(g));
  });
  return torch::stable::reshape(out, shape);
}

}  // namespace

kp::Tensor mul(kp::Tensor w, kp::Tensor x) {
  kp::check_floating("mul", "w", w);
  check_compatible("mul", "x", x, "w", w);
  Shape shape = broadcast_shape("mul", "w", w, "x", x);
  Layout l = broadcast_layout("mul", "w", w, "x", x, shape);
  kp::Tensor out = torch::stable::new_empty(w, IntHeaderOnlyArrayRef(shape));
  KP_DISPATCH_FLOATING(w.scalar_type(), "mul", [&] {
    mul_fwd<scalar_t>(kp::data<const scalar_t>(w, "w"), kp::data<const scalar_t>(x, "x"),
                      kp::data<scalar_t>(out, "out"), out.numel(), static_cast<int>(l.size.size()), l.size.data(),
                      l.stride_a.data(), l.stride_b.data(), kp::stream_of(w));
  });
  return out;
}

// Both gradients of mul, each summed down to its input's shape; an undefined tensor (None in Python)
// for a gradient that is not needed.
std::tuple<kp::Tensor, kp::Tensor> mul_backward(kp::Tensor grad_out, kp::Tensor w, kp::Tensor x, bool need_w,
                                                bool need_x) {
  kp::check_floating("mul_backward", "w", w);
  check_compatible("mul_backward", "x", x, "w", w);
  check_compatible("mul_backward", "grad_out", grad_out, "w", w);
  Shape shape = broadcast_shape("mul_backward", "w", w, "x", x);
  kp::check(kp::shape_of(grad_out) == shape_str(IntHeaderOnlyArrayRef(shape)),
            "mul_backward: grad_out has shape " + kp::shape_of(grad_out) + " but w and x broadcast to " +
                shape_str(IntHeaderOnlyArrayRef(shape)));
  Layout l = broadcast_layout("mul_backward", "w", w, "x", x, shape);
  grad_out = kp::contiguous(grad_out);  // autograd may hand in an expanded (stride-0) gradient
  kp::Tensor grad_w, grad_x;            // undefined unless needed
  if (need_w) grad_w = torch::stable::new_empty(w, IntHeaderOnlyArrayRef(shape));
  if (need_x) grad_x = torch::stable::new_empty(w, IntHeaderOnlyArrayRef(shape));
  if (need_w || need_x) {
    KP_DISPATCH_FLOATING(w.scalar_type(), "mul_backward", [&] {
      mul_bwd<scalar_t>(kp::data<const scalar_t>(grad_out, "grad_out"), kp::data<const scalar_t>(w, "w"),
                        kp::data<const scalar_t>(x, "x"), need_w ? kp::data<scalar_t>(grad_w, "grad_w") : nullptr,
                        need_x ? kp::data<scalar_t>(grad_x, "grad_x") : nullptr, grad_out.numel(),
                        static_cast<int>(l.size.size()), l.size.data(), l.stride_a.data(), l.stride_b.data(),
                        kp::stream_of(w));
    });
  }
  if (need_w) grad_w = sum_to_shape(grad_w, w.sizes());
  if (need_x) grad_x = sum_to_shape(grad_x, x.sizes());
  return {grad_w, grad_x};
}

kp::Tensor add(kp::Tensor x, kp::Tensor b) {
  kp::check_floating("add", "x", x);
  check_compatible("add", "b", b, "x", x);
  Shape shape = broadcast_shape("add", "x", x, "b", b);
  Layout l = broadcast_layout("add", "x", x, "b", b, shape);
  kp::Tensor out = torch::stable::new_empty(x, IntHeaderOnlyArrayRef(shape));
  KP_DISPATCH_FLOATING(x.scalar_type(), "add", [&] {
    add_fwd<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<const scalar_t>(b, "b"),
                      kp::data<scalar_t>(out, "out"), out.numel(), static_cast<int>(l.size.size()), l.size.data(),
                      l.stride_a.data(), l.stride_b.data(), kp::stream_of(x));
  });
  return out;
}

// add's backward (the gradient passes through, then is summed down to each input's shape), and the
// reduction step of mul's.
kp::Tensor sum_to(kp::Tensor grad, IntHeaderOnlyArrayRef shape) {
  kp::check_floating("sum_to", "grad", grad);
  int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  bool ok = lead >= 0;
  for (size_t j = 0; ok && j < shape.size(); ++j) ok = shape[j] == 1 || shape[j] == grad.size(lead + j);
  kp::check(ok, "sum_to: shape " + shape_str(shape) + " does not broadcast to grad's shape " + kp::shape_of(grad));
  // A new contiguous tensor, as the schema promises, even when nothing is summed (reshape would alias grad).
  kp::Tensor out = torch::stable::new_empty(grad, shape);
  torch::stable::copy_(out, sum_to_shape(grad, shape));
  return out;
}

KP_OPS(m) {
  m.def("mul(Tensor w, Tensor x) -> Tensor", TORCH_BOX(&mul));
  m.def("mul_backward(Tensor grad_out, Tensor w, Tensor x, bool need_w, bool need_x) -> (Tensor, Tensor)",
        TORCH_BOX(&mul_backward));
  m.def("add(Tensor x, Tensor b) -> Tensor", TORCH_BOX(&add));
  m.def("sum_to(Tensor grad, int[] shape) -> Tensor", TORCH_BOX(&sum_to));
}
