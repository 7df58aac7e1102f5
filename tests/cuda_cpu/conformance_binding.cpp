// The torch side of tests/cuda_cpu/conformance.cu: one op per conformance kernel.
#include "binding.h"

using kp::ScalarType;
using kp::Tensor;

template <typename T>
void tiled_matmul(const T* A, const T* B, T* C, int M, int K, int N);
template <typename T>
void block_sum(const T* x, T* out, int n, bool dynamic);
template <typename T>
void warp_sum(const T* x, T* out, int n);
template <typename T>
void first_warp_sum(const T* x, T* out, int blocks);
template <typename T>
void warp_scan(const T* x, T* out, int n);
template <typename T>
void atomic_sum(const T* x, T* total, int n);
template <typename T>
void grid_stride(const T* x, T* y, int n, T scale, int blocks);
void votes(const float* x, long long* out, int n);
void histogram(const int* values, int* counts, int n, int bins);
void atomic_minmax(const int* x, int* out, int n);
void index3d(long long* out, int gx, int gy, int gz, int bx, int by, int bz);
void launch_empty(int gx, int gy, int gz, int bx, int by, int bz, size_t shmem);
void deadlock(int* out);
void rotate(const float* x, float* out, int blocks);
void math(const float* x, float* out, int n);
void last_error_codes(int* codes);

static Tensor input(const char* op, Tensor x) {
  kp::check_floating(op, "x", x);
  return torch::stable::contiguous(x);
}

Tensor tiled_matmul_op(Tensor A, Tensor B) {
  A = input("tiled_matmul", A);
  B = input("tiled_matmul", B);
  kp::check(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "tiled_matmul: shapes do not match");
  Tensor C = torch::stable::new_empty(A, {A.size(0), B.size(1)});
  KP_DISPATCH_FLOATING(A.scalar_type(), "tiled_matmul", [&] {
    tiled_matmul<scalar_t>(kp::data<const scalar_t>(A, "A"), kp::data<const scalar_t>(B, "B"),
                           kp::data<scalar_t>(C, "C"), A.size(0), A.size(1), B.size(1));
  });
  return C;
}

Tensor block_sum_op(Tensor x, bool dynamic) {
  x = input("block_sum", x);
  int n = x.numel();
  Tensor out = torch::stable::new_empty(x, {(n + 255) / 256});
  KP_DISPATCH_FLOATING(x.scalar_type(), "block_sum", [&] {
    block_sum<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<scalar_t>(out, "out"), n, dynamic);
  });
  return out;
}

Tensor warp_sum_op(Tensor x) {
  x = input("warp_sum", x);
  int n = x.numel();
  Tensor out = torch::stable::new_empty(x, {(n + 127) / 128 * 4});
  KP_DISPATCH_FLOATING(x.scalar_type(), "warp_sum", [&] {
    warp_sum<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<scalar_t>(out, "out"), n);
  });
  return out;
}

Tensor first_warp_sum_op(Tensor x) {
  x = input("first_warp_sum", x);
  kp::check(x.numel() % 32 == 0, "first_warp_sum: x needs a multiple of 32 elements");
  Tensor out = torch::stable::new_empty(x, {x.numel()});
  KP_DISPATCH_FLOATING(x.scalar_type(), "first_warp_sum", [&] {
    first_warp_sum<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<scalar_t>(out, "out"), x.numel() / 32);
  });
  return out;
}

Tensor warp_scan_op(Tensor x) {
  x = input("warp_scan", x);
  Tensor out = torch::stable::empty_like(x);
  KP_DISPATCH_FLOATING(x.scalar_type(), "warp_scan", [&] {
    warp_scan<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<scalar_t>(out, "out"), x.numel());
  });
  return out;
}

Tensor votes_op(Tensor x) {
  x = input("votes", x);
  kp::check(x.scalar_type() == ScalarType::Float && x.numel() % 64 == 0, "votes: x: float32, a multiple of 64");
  Tensor out = torch::stable::new_zeros(x, {x.numel() / 32, 5}, ScalarType::Long);
  kp::before_launch("votes");
  votes(kp::data<const float>(x, "x"), reinterpret_cast<long long*>(kp::data<int64_t>(out, "out")), x.numel());
  return out;
}

Tensor histogram_op(Tensor values, int64_t bins) {
  kp::check_tensor("histogram", "values", values, ScalarType::Int);
  Tensor counts = torch::stable::new_zeros(values, {bins});
  kp::before_launch("histogram");
  histogram(kp::data<const int32_t>(values, "values"), kp::data<int32_t>(counts, "counts"), values.numel(), bins);
  return counts;
}

Tensor atomic_sum_op(Tensor x) {
  x = input("atomic_sum", x);
  Tensor total = torch::stable::new_zeros(x, {1});
  KP_DISPATCH_FLOATING(x.scalar_type(), "atomic_sum", [&] {
    atomic_sum<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<scalar_t>(total, "total"), x.numel());
  });
  return total;
}

Tensor atomic_minmax_op(Tensor x) {
  kp::check_tensor("atomic_minmax", "x", x, ScalarType::Int);
  Tensor out = torch::stable::new_zeros(x, {5});
  int* o = kp::data<int32_t>(out, "out");
  o[0] = -2147483647 - 1;  // the identities of max and min
  o[1] = 2147483647;
  kp::before_launch("atomic_minmax");
  atomic_minmax(kp::data<const int32_t>(x, "x"), kp::data<int32_t>(out, "out"), x.numel());
  return out;
}

Tensor index3d_op(Tensor like, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by, int64_t bz) {
  Tensor out = torch::stable::new_zeros(like, {gz * bz, gy * by, gx * bx}, ScalarType::Long);
  kp::before_launch("index3d");
  index3d(reinterpret_cast<long long*>(kp::data<int64_t>(out, "out")), gx, gy, gz, bx, by, bz);
  return out;
}

Tensor grid_stride_op(Tensor x, double scale, int64_t blocks) {
  x = input("grid_stride", x);
  Tensor y = torch::stable::empty_like(x);
  KP_DISPATCH_FLOATING(x.scalar_type(), "grid_stride", [&] {
    grid_stride<scalar_t>(kp::data<const scalar_t>(x, "x"), kp::data<scalar_t>(y, "y"), x.numel(), scalar_t(scale),
                          blocks);
  });
  return y;
}

void launch_empty_op(int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by, int64_t bz, int64_t shmem) {
  kp::before_launch("launch_empty");
  launch_empty(gx, gy, gz, bx, by, bz, shmem);
}

Tensor deadlock_op(Tensor out) {
  kp::check_tensor("deadlock", "out", out, ScalarType::Int);
  kp::before_launch("deadlock");
  deadlock(kp::data<int32_t>(out, "out"));
  return out;
}

Tensor rotate_op(Tensor x) {
  x = input("rotate", x);
  kp::check(x.scalar_type() == ScalarType::Float && x.numel() % 256 == 0, "rotate: x: float32, a multiple of 256");
  Tensor out = torch::stable::new_empty(x, {x.numel(), 2});
  kp::before_launch("rotate");
  rotate(kp::data<const float>(x, "x"), kp::data<float>(out, "out"), x.numel() / 256);
  return out;
}

Tensor math_op(Tensor x) {
  x = input("math", x);
  kp::check(x.scalar_type() == ScalarType::Float, "math: x must be float32");
  Tensor out = torch::stable::new_empty(x, {x.numel(), 8});
  kp::before_launch("math");
  math(kp::data<const float>(x, "x"), kp::data<float>(out, "out"), x.numel());
  return out;
}

Tensor last_error_codes_op(Tensor like) {
  Tensor codes = torch::stable::new_zeros(like, {4}, ScalarType::Int);
  kp::before_launch("last_error_codes");
  last_error_codes(kp::data<int32_t>(codes, "codes"));
  return codes;
}

KP_OPS(m) {
  m.def("tiled_matmul(Tensor A, Tensor B) -> Tensor", TORCH_BOX(&tiled_matmul_op));
  m.def("block_sum(Tensor x, bool dynamic) -> Tensor", TORCH_BOX(&block_sum_op));
  m.def("warp_sum(Tensor x) -> Tensor", TORCH_BOX(&warp_sum_op));
  m.def("first_warp_sum(Tensor x) -> Tensor", TORCH_BOX(&first_warp_sum_op));
  m.def("warp_scan(Tensor x) -> Tensor", TORCH_BOX(&warp_scan_op));
  m.def("votes(Tensor x) -> Tensor", TORCH_BOX(&votes_op));
  m.def("histogram(Tensor values, int bins) -> Tensor", TORCH_BOX(&histogram_op));
  m.def("atomic_sum(Tensor x) -> Tensor", TORCH_BOX(&atomic_sum_op));
  m.def("atomic_minmax(Tensor x) -> Tensor", TORCH_BOX(&atomic_minmax_op));
  m.def("index3d(Tensor like, int gx, int gy, int gz, int bx, int by, int bz) -> Tensor", TORCH_BOX(&index3d_op));
  m.def("grid_stride(Tensor x, float scale, int blocks) -> Tensor", TORCH_BOX(&grid_stride_op));
  m.def("launch_empty(int gx, int gy, int gz, int bx, int by, int bz, int shmem) -> ()", TORCH_BOX(&launch_empty_op));
  m.def("deadlock(Tensor out) -> Tensor", TORCH_BOX(&deadlock_op));
  m.def("rotate(Tensor x) -> Tensor", TORCH_BOX(&rotate_op));
  m.def("math(Tensor x) -> Tensor", TORCH_BOX(&math_op));
  m.def("last_error_codes(Tensor like) -> Tensor", TORCH_BOX(&last_error_codes_op));
}
