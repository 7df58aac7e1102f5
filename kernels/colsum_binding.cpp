// colsum's torch side: argument checks, the buffers each version needs, dtype dispatch and registration.
// Kernels: colsum.cu.
#include "common/binding.h"

template <typename T>
void colsum(const T* x, T* out, T* partial, int64_t R, int64_t C, int version, cudaStream_t stream);
int64_t colsum_chunk_rows();  // CHUNK_ROWS of colsum.cu

kp::Tensor colsum_op(kp::Tensor x, int64_t version) {
  kp::check_floating("colsum", "x", x);
  kp::check(x.dim() == 2, "colsum: x must be a matrix (rows, columns), got shape " + kp::shape_of(x));
  kp::check(version >= 1 && version <= 5, "colsum: version must be 1 to 5, got " + std::to_string(version));
  // Versions 4 and 5 give each block CHUNK_ROWS rows, one block per chunk along gridDim.y (at most 65535 of them).
  const int64_t rows = colsum_chunk_rows();
  kp::check(version < 4 || x.size(0) <= rows * 65535,
            "colsum: versions 4 and 5 take at most " + std::to_string(rows * 65535) + " rows (65535 blocks of " +
                std::to_string(rows) + " along gridDim.y), x has " + std::to_string(x.size(0)) +
                "; mul_add's sum_to and linear's bias gradient take more");
  x = kp::contiguous(x);
  const int64_t R = x.size(0), C = x.size(1), chunks = (R + rows - 1) / rows;
  kp::Tensor out = torch::stable::new_zeros(x, {C});  // zeros: version 4 adds into it; an empty column sums to 0
  kp::Tensor partial = torch::stable::new_empty(x, {version == 5 ? chunks * C : 0});
  KP_DISPATCH_FLOATING(x.scalar_type(), "colsum", [&] {
    colsum<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<scalar_t>(out, "out"),
                     kp::data<scalar_t>(partial, "partial"), R, C, static_cast<int>(version), kp::stream_of(x));
  });
  return out;
}

KP_OPS(m) { m.def("colsum(Tensor x, int version=5) -> Tensor", TORCH_BOX(&colsum_op)); }
