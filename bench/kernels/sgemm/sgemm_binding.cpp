// The torch side of bench/kernels/sgemm/sgemm.cu (siboehm's SGEMM kernels): argument checks and registration.
#include "common/binding.h"

void sgemm(int kernel, int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
           cudaStream_t stream);

constexpr int64_t kKernels = 10;
constexpr int64_t kWholeTile = 128;  // kernels 3 to 10 have no edge guards: their largest tile (runner.cu's A6000 ones)

// C = alpha * A·B + beta * C as siboehm's runner computes it, into a new tensor (c is left as it was).
kp::Tensor sgemm_op(kp::Tensor a, kp::Tensor b, kp::Tensor c, double alpha, double beta, int64_t kernel) {
  const char* op = "sgemm";
  kp::check_tensor(op, "a", a, kp::ScalarType::Float);
  kp::check_tensor(op, "b", b, kp::ScalarType::Float);
  kp::check_tensor(op, "c", c, kp::ScalarType::Float);
  kp::check(kp::same_device(a, b) && kp::same_device(a, c), "sgemm: a, b and c must be on one device, got " +
                                                                 kp::device_name(a) + ", " + kp::device_name(b) +
                                                                 " and " + kp::device_name(c));
  kp::check(a.dim() == 2 && b.dim() == 2 && c.dim() == 2 && b.size(0) == a.size(1) && c.size(0) == a.size(0) &&
                c.size(1) == b.size(1),
            "sgemm: a must be (M, K), b (K, N) and c (M, N), got " + kp::shape_of(a) + ", " + kp::shape_of(b) +
                " and " + kp::shape_of(c));
  kp::check(kernel >= 1 && kernel <= kKernels,
            "sgemm: kernel must be 1 to " + std::to_string(kKernels) + ", got " + std::to_string(kernel));
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  kp::check(M < (int64_t(1) << 31) / (N > K ? N : K + 1) && N < (int64_t(1) << 31) / (K + 1),
            "sgemm: the kernels index with int: M * N, M * K and K * N must stay below 2^31, got " +
                kp::shape_of(a) + " x " + kp::shape_of(b));
  kp::check(kernel <= 2 || (M % kWholeTile == 0 && N % kWholeTile == 0 && K % kWholeTile == 0),
            "sgemm: kernel " + std::to_string(kernel) + " computes whole tiles only (no edge guards, as published): M, "
            "N and K must be multiples of 128, got a " + kp::shape_of(a) + " and b " + kp::shape_of(b));
  a = kp::contiguous(a);
  b = kp::contiguous(b);
  kp::Tensor out = kp::contiguous(torch::stable::clone(c));
  if (M == 0 || N == 0) return out;
  kp::before_launch(op);
  sgemm(static_cast<int>(kernel), static_cast<int>(M), static_cast<int>(N), static_cast<int>(K),
        static_cast<float>(alpha), kp::data<const float>(a, "a"), kp::data<const float>(b, "b"),
        static_cast<float>(beta), kp::data<float>(out, "c"), kp::stream_of(a));
  return out;
}

KP_OPS(m) {
  m.def("sgemm(Tensor a, Tensor b, Tensor c, float alpha=1.0, float beta=0.0, int kernel=10) -> Tensor",
        TORCH_BOX(&sgemm_op));
}
