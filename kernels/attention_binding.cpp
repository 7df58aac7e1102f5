// attention's torch side: argument checks, the buffers the kernels need, dtype dispatch and registration.
// Kernels: attention.cu.
//   attention(q, k, v, causal=False, version=2) -> (o, lse): softmax(q kᵀ / sqrt(d)) v for each head of q, k, v
//     (BH, N, d), by the naive version (1) or the fused flash-attention (2), and each row's log-sum-exp (BH, N)
//   attention_backward(grad_o, grad_lse, q, k, v, o, lse, causal=False) -> (grad_q, grad_k, grad_v)
#include <tuple>

#include "common/binding.h"

template <typename T>
void attention_fwd(const T* q, const T* k, const T* v, T* o, T* lse, T* s, int64_t BH, int64_t N, int d, bool causal,
                   int version, cudaStream_t stream);
template <typename T>
void attention_bwd(const T* go, const T* glse, const T* q, const T* k, const T* v, const T* o, const T* lse, T* dq,
                   T* dk, T* dv, T* dd, int64_t BH, int64_t N, int d, bool causal, cudaStream_t stream);

namespace {

constexpr int64_t MAX_HEAD_DIM = 128;  // attention.cu's per-thread arrays
constexpr int64_t MAX_HEADS = 65535;   // gridDim.y and gridDim.z's limit: the kernels take a head per grid row

// q is (BH, N, d) with N >= 1 and d within the kernels' arrays; k and v are like it.
void check_heads(const char* op, const kp::Tensor& q, const kp::Tensor& k, const kp::Tensor& v) {
  kp::check_floating(op, "q", q);
  kp::check(q.dim() == 3,
            std::string(op) + ": q must be (batch x heads, sequence, head_dim), got shape " + kp::shape_of(q));
  kp::check(q.size(1) >= 1, std::string(op) + ": q must have at least one position, got shape " + kp::shape_of(q));
  kp::check(q.size(2) >= 1 && q.size(2) <= MAX_HEAD_DIM,
            std::string(op) + ": q's head_dim must be 1 to 128, got shape " + kp::shape_of(q));
  kp::check(q.size(0) <= MAX_HEADS,
            std::string(op) + ": q has more than 65535 heads (batch x heads), got shape " + kp::shape_of(q));
  kp::check_like(op, "k", k, "q", q);
  kp::check_like(op, "v", v, "q", q);
}

}  // namespace

std::tuple<kp::Tensor, kp::Tensor> attention(kp::Tensor q, kp::Tensor k, kp::Tensor v, bool causal, int64_t version) {
  check_heads("attention", q, k, v);
  kp::check(version == 1 || version == 2, "attention: version must be 1 or 2, got " + std::to_string(version));
  q = kp::contiguous(q);
  k = kp::contiguous(k);
  v = kp::contiguous(v);
  const int64_t BH = q.size(0), N = q.size(1), d = q.size(2);
  kp::Tensor o = kp::empty_like(q), lse = torch::stable::new_empty(q, {BH, N});
  // The naive version's N x N scores per head; version 2 needs none, the point of it.
  kp::Tensor s = torch::stable::new_empty(q, {version == 1 ? BH * N * N : 0});
  KP_DISPATCH_FLOATING(q.scalar_type(), "attention", [&] {
    attention_fwd<scalar_t>(kp::data<const scalar_t>(q, "q"), kp::data<const scalar_t>(k, "k"),
                            kp::data<const scalar_t>(v, "v"), kp::data<scalar_t>(o, "o"),
                            kp::data<scalar_t>(lse, "lse"), kp::data<scalar_t>(s, "scores"), BH, N, static_cast<int>(d),
                            causal, static_cast<int>(version), kp::stream_of(q));
  });
  return {o, lse};
}

std::tuple<kp::Tensor, kp::Tensor, kp::Tensor> attention_backward(kp::Tensor grad_o, kp::Tensor grad_lse, kp::Tensor q,
                                                                  kp::Tensor k, kp::Tensor v, kp::Tensor o,
                                                                  kp::Tensor lse, bool causal) {
  const char* op = "attention_backward";
  kp::check_floating(op, "grad_o", grad_o);  // the first argument checked first: its message is the one a bad call gets
  check_heads(op, q, k, v);
  kp::check_like(op, "o", o, "q", q);
  kp::check_like(op, "grad_o", grad_o, "q", q);
  kp::check_floating(op, "lse", lse);
  kp::check_same_kind(op, "lse", lse, "q", q);
  kp::check(lse.dim() == 2 && lse.size(0) == q.size(0) && lse.size(1) == q.size(1),
            std::string(op) + ": lse has shape " + kp::shape_of(lse) + " but q has " + kp::shape_of(q) +
                ": one log-sum-exp per row");
  kp::check_like(op, "grad_lse", grad_lse, "lse", lse);
  // autograd may hand in expanded (stride-0) gradients
  grad_o = kp::contiguous(grad_o);
  grad_lse = kp::contiguous(grad_lse);
  q = kp::contiguous(q);
  k = kp::contiguous(k);
  v = kp::contiguous(v);
  o = kp::contiguous(o);
  lse = kp::contiguous(lse);
  const int64_t BH = q.size(0), N = q.size(1), d = q.size(2);
  kp::Tensor dq = kp::empty_like(q), dk = kp::empty_like(k), dv = kp::empty_like(v), dd = kp::empty_like(lse);
  KP_DISPATCH_FLOATING(q.scalar_type(), op, [&] {
    attention_bwd<scalar_t>(kp::data<const scalar_t>(grad_o, "grad_o"), kp::data<const scalar_t>(grad_lse, "grad_lse"),
                            kp::data<const scalar_t>(q, "q"), kp::data<const scalar_t>(k, "k"),
                            kp::data<const scalar_t>(v, "v"), kp::data<const scalar_t>(o, "o"),
                            kp::data<const scalar_t>(lse, "lse"), kp::data<scalar_t>(dq, "grad_q"),
                            kp::data<scalar_t>(dk, "grad_k"), kp::data<scalar_t>(dv, "grad_v"),
                            kp::data<scalar_t>(dd, "D"), BH, N, static_cast<int>(d), causal, kp::stream_of(q));
  });
  return {dq, dk, dv};
}

KP_OPS(m) {
  m.def("attention(Tensor q, Tensor k, Tensor v, bool causal=False, int version=2) -> (Tensor, Tensor)",
        TORCH_BOX(&attention));
  m.def(
      "attention_backward(Tensor grad_o, Tensor grad_lse, Tensor q, Tensor k, Tensor v, Tensor o, Tensor lse, "
      "bool causal=False) -> (Tensor, Tensor, Tensor)",
      TORCH_BOX(&attention_backward));
}
