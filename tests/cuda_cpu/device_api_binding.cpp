// The torch side of tests/cuda_cpu/device_api.cu: one op per kernel, on int32/float32 tensors (unsigned
// values travel as int32 bits, long long as int64).
#include "binding.h"

using kp::ScalarType;
using kp::Tensor;

void vote_barrier(const int* pred, int* out, int threads);
void bits(const unsigned* x, const unsigned* y, const unsigned* s, unsigned* out, int n);
void inc_dec(unsigned* counters, unsigned limit, int blocks, int threads);
void clock_ticks(long long* out, int threads);
void match_reduce(const int* keys, unsigned* out);
void groups(const float* x, float* sums, float* next, unsigned* ballots, int n);
void rounding(const float* a, const float* b, const float* c, float* out, int* ints, int n);
void integer(const int* x, const int* y, int* out, int n);
void half_arithmetic(const float* a, const float* b, const float* c, int* out, float* pairs, int n);

Tensor vote_barrier_op(Tensor pred) {
  kp::check_tensor("vote_barrier", "pred", pred, ScalarType::Int);
  Tensor out = torch::stable::new_zeros(pred, {pred.numel(), 4});
  kp::before_launch("vote_barrier");
  vote_barrier(kp::data<int>(pred, "pred"), kp::data<int>(out, "out"), pred.numel());
  return out;
}

Tensor bits_op(Tensor x, Tensor y, Tensor s) {
  kp::check_tensor("bits", "x", x, ScalarType::Int);
  kp::check_tensor("bits", "y", y, ScalarType::Int);
  kp::check_tensor("bits", "s", s, ScalarType::Int);
  Tensor out = torch::stable::new_zeros(x, {x.numel(), 8});
  kp::before_launch("bits");
  bits(kp::data<unsigned>(x, "x"), kp::data<unsigned>(y, "y"), kp::data<unsigned>(s, "s"),
       kp::data<unsigned>(out, "out"), x.numel());
  return out;
}

Tensor inc_dec_op(Tensor counters, int64_t limit, int64_t blocks, int64_t threads) {
  kp::check_tensor("inc_dec", "counters", counters, ScalarType::Int);
  kp::before_launch("inc_dec");
  inc_dec(kp::data<unsigned>(counters, "counters"), unsigned(limit), blocks, threads);
  return counters;
}

Tensor clock_op(Tensor like, int64_t threads) {
  Tensor out = torch::stable::new_zeros(like, {threads}, ScalarType::Long);
  kp::before_launch("clock");
  clock_ticks(kp::data<long long>(out, "out"), threads);
  return out;
}

Tensor match_reduce_op(Tensor keys) {
  kp::check_tensor("match_reduce", "keys", keys, ScalarType::Int);
  kp::check(keys.numel() == 32, "match_reduce: one warp of keys");
  Tensor out = torch::stable::new_zeros(keys, {32, 10});
  kp::before_launch("match_reduce");
  match_reduce(kp::data<int>(keys, "keys"), kp::data<unsigned>(out, "out"));
  return out;
}

std::tuple<Tensor, Tensor, Tensor> groups_op(Tensor x) {
  kp::check_tensor("groups", "x", x, ScalarType::Float);
  const int64_t n = x.numel();
  Tensor sums = torch::stable::new_zeros(x, {(n + 127) / 128});
  Tensor next = torch::stable::new_zeros(x, {n});
  Tensor ballots = torch::stable::new_zeros(x, {n}, ScalarType::Int);
  kp::before_launch("groups");
  groups(kp::data<float>(x, "x"), kp::data<float>(sums, "sums"), kp::data<float>(next, "next"),
         kp::data<unsigned>(ballots, "ballots"), n);
  return {sums, next, ballots};
}

std::tuple<Tensor, Tensor> rounding_op(Tensor a, Tensor b, Tensor c) {
  kp::check_tensor("rounding", "a", a, ScalarType::Float);
  kp::check_tensor("rounding", "b", b, ScalarType::Float);
  kp::check_tensor("rounding", "c", c, ScalarType::Float);
  Tensor out = torch::stable::new_zeros(a, {a.numel(), 16});
  Tensor ints = torch::stable::new_zeros(a, {a.numel(), 4}, ScalarType::Int);
  kp::before_launch("rounding");
  rounding(kp::data<float>(a, "a"), kp::data<float>(b, "b"), kp::data<float>(c, "c"), kp::data<float>(out, "out"),
           kp::data<int>(ints, "ints"), a.numel());
  return {out, ints};
}

Tensor integer_op(Tensor x, Tensor y) {
  kp::check_tensor("integer", "x", x, ScalarType::Int);
  kp::check_tensor("integer", "y", y, ScalarType::Int);
  Tensor out = torch::stable::new_zeros(x, {x.numel(), 14});
  kp::before_launch("integer");
  integer(kp::data<int>(x, "x"), kp::data<int>(y, "y"), kp::data<int>(out, "out"), x.numel());
  return out;
}

std::tuple<Tensor, Tensor> half_op(Tensor a, Tensor b, Tensor c) {
  kp::check_tensor("half", "a", a, ScalarType::Float);
  kp::check_tensor("half", "b", b, ScalarType::Float);
  kp::check_tensor("half", "c", c, ScalarType::Float);
  Tensor out = torch::stable::new_zeros(a, {a.numel(), 18}, ScalarType::Int);
  Tensor pairs = torch::stable::new_zeros(a, {a.numel(), 2});
  kp::before_launch("half");
  half_arithmetic(kp::data<float>(a, "a"), kp::data<float>(b, "b"), kp::data<float>(c, "c"), kp::data<int>(out, "out"),
                  kp::data<float>(pairs, "pairs"), a.numel());
  return {out, pairs};
}

KP_OPS(m) {
  m.def("vote_barrier(Tensor pred) -> Tensor", TORCH_BOX(&vote_barrier_op));
  m.def("bits(Tensor x, Tensor y, Tensor s) -> Tensor", TORCH_BOX(&bits_op));
  m.def("inc_dec(Tensor(a!) counters, int limit, int blocks, int threads) -> Tensor(a!)", TORCH_BOX(&inc_dec_op));
  m.def("clock(Tensor like, int threads) -> Tensor", TORCH_BOX(&clock_op));
  m.def("match_reduce(Tensor keys) -> Tensor", TORCH_BOX(&match_reduce_op));
  m.def("groups(Tensor x) -> (Tensor, Tensor, Tensor)", TORCH_BOX(&groups_op));
  m.def("half(Tensor a, Tensor b, Tensor c) -> (Tensor, Tensor)", TORCH_BOX(&half_op));
  m.def("integer(Tensor x, Tensor y) -> Tensor", TORCH_BOX(&integer_op));
  m.def("rounding(Tensor a, Tensor b, Tensor c) -> (Tensor, Tensor)", TORCH_BOX(&rounding_op));
}
