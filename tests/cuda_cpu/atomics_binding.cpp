// The torch side of tests/cuda_cpu/atomics.cu: one op runs case `which` on the bytes of out.
#include "binding.h"

void run_atomics(int64_t which, unsigned char* out);

void run_op(int64_t which, kp::Tensor out) {
  kp::check_tensor("run", "out", out, kp::ScalarType::Byte);
  kp::before_launch("run");
  run_atomics(which, kp::data<unsigned char>(out, "out"));
}

KP_OPS(m) { m.def("run(int which, Tensor(a!) out) -> ()", TORCH_BOX(&run_op)); }
