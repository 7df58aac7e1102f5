// linear_ladder's torch side: argument checks, dtype dispatch and registration. Kernels: linear_ladder.cu.
#include "common/binding.h"

template <typename T>
void linear_ladder(const T* x, const T* w, const T* b, T* y, int64_t M, int64_t N, int64_t K, int version, int tiles,
                   cudaStream_t stream);

constexpr int64_t kVersions = 7;
constexpr int64_t kTiles = 5;  // version 7's tile configurations (linear_ladder.cu's V7_TILES)

kp::Tensor linear_ladder_op(kp::Tensor x, kp::Tensor w, kp::Tensor b, int64_t version, int64_t tiles) {
  const char* op = "linear_ladder";
  kp::check_floating(op, "x", x);
  kp::check_same_kind(op, "w", w, "x", x);
  kp::check_same_kind(op, "b", b, "x", x);
  kp::check(x.dim() == 2 && w.dim() == 2 && b.dim() == 1,
            "linear_ladder: x must be (rows, in_features), w (out_features, in_features) and b (out_features), got " +
                kp::shape_of(x) + ", " + kp::shape_of(w) + " and " + kp::shape_of(b));
  kp::check(w.size(1) == x.size(1) && b.size(0) == w.size(0),
            "linear_ladder: w " + kp::shape_of(w) + " and b " + kp::shape_of(b) + " do not fit x " + kp::shape_of(x));
  kp::check(version >= 1 && version <= kVersions,
            "linear_ladder: version must be 1 to " + std::to_string(kVersions) + ", got " + std::to_string(version));
  kp::check(tiles >= 0 && tiles < kTiles, "linear_ladder: tiles must be 0 to " + std::to_string(kTiles - 1) +
                                              " (version 7's tile configurations), got " + std::to_string(tiles));
  x = kp::contiguous(x);
  w = kp::contiguous(w);
  b = kp::contiguous(b);
  const int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  kp::Tensor y = torch::stable::new_empty(x, {M, N});
  KP_DISPATCH_FLOATING(x.scalar_type(), op, [&] {
    linear_ladder<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<const scalar_t>(w, "w"),
                            kp::data<const scalar_t>(b, "b"), kp::data<scalar_t>(y, "y"), M, N, K,
                            static_cast<int>(version), static_cast<int>(tiles), kp::stream_of(x));
  });
  return y;
}

KP_OPS(m) {
  m.def("linear_ladder(Tensor x, Tensor w, Tensor b, int version=7, int tiles=4) -> Tensor",
        TORCH_BOX(&linear_ladder_op));
}
