// What every binding (kernels/<op>_binding.cpp) includes: the torch side of an op.
//
// Bindings hold the torch code and kernel files hold none, so an edit of a kernel rebuilds one
// small object. This header builds on torch's stable C++ API, which compiles in ~2 s where
// torch/extension.h takes ~20 s, and gives:
//   - argument checks whose messages name the op and the argument (they reach Python as
//     RuntimeError): kp::check_floating, kp::check_same_kind, kp::check_like, kp::check_tensor;
//   - KP_DISPATCH_FLOATING: float32/float64 dispatch, with `scalar_t` set inside;
//     KP_DISPATCH_FLOATING_AND_HALF: float16 (__half) and bfloat16 (__nv_bfloat16) too;
//   - kp::stream_of: the current CUDA stream of a tensor (nullptr on the CPU stand-in);
//   - KP_OPS(m) { m.def("schema", TORCH_BOX(&fn)); }: registration under a namespace chosen by
//     the loader at load time, so that an edited kernel loads again in the same process
//     (re-registering a namespace would abort the process).
#pragma once

#ifndef KP_CPU_STANDIN
#define USE_CUDA  // declares the CUDA parts of torch's C shim (the current stream)
#endif
// The oldest torch we support (README, "Torch versions"): only its stable API is visible here, so a
// binding that compiles against newer headers also loads in torch 2.11.
#define TORCH_TARGET_VERSION (((0ULL + 2) << 56) | ((0ULL + 11) << 48))
#ifdef KP_CPU_STANDIN
#include "cuda_cpu_fp16.h"  // the stand-in's __half and __nv_bfloat16: the kernel file's types
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

// Exactly CUDA's spelling, so launcher declarations mangle as they do in the kernel file.
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

#ifdef KP_CPU_STANDIN
extern "C" void kp_set_num_threads(int n);  // the stand-in's pool, kernels/common/cuda_cpu_runtime.cpp
// The redzones around CPU tensors (kernels/common/cuda_cpu_redzones.cpp): an op call starts; a tensor it passes.
extern "C" void kp_guard_begin_call(const char* op);
extern "C" void kp_guard_tensor(const char* name, const void* data, size_t bytes, size_t elem);
#endif
#ifdef KP_CHECK  // check mode's registry of the tensors an op call passes to its kernels (cuda_cpu_check.h)
extern "C" void kp_check_begin_call(void);
extern "C" void kp_check_tensor(const char* name, const void* data, size_t bytes, size_t elem);
#endif

namespace kp {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

#ifdef KP_CPU_STANDIN
inline const char* const kBuildServes =
    "cpu tensors (the CPU stand-in build); load the kernel with target='cuda' for cuda tensors";
inline bool served(const Tensor& t) { return t.is_cpu(); }
#else
inline const char* const kBuildServes =
    "cuda tensors (the nvcc build); load the kernel with target='cpu' for cpu tensors";
inline bool served(const Tensor& t) { return t.is_cuda(); }
#endif

inline std::string device_name(const Tensor& t) {
  if (t.is_cpu()) return "cpu";
  if (t.is_cuda()) return "cuda:" + std::to_string(t.get_device_index());
  return "a device other than cpu and cuda";
}

inline std::string shape_of(const Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

inline void check(bool ok, const std::string& message) {
  if (!ok) throw std::runtime_error(message);
}

// Every op call makes these checks: they compare without building strings, which only a failure does.
inline bool same_device(const Tensor& a, const Tensor& b) {
  return a.is_cpu() == b.is_cpu() && a.is_cuda() == b.is_cuda() && a.get_device_index() == b.get_device_index();
}

inline bool same_shape(const Tensor& a, const Tensor& b) {
  auto sa = a.sizes(), sb = b.sizes();
  return sa.size() == sb.size() && std::equal(sa.begin(), sa.end(), sb.begin());
}

// `t` itself when it is contiguous (no call into torch's dispatcher), else a contiguous copy.
inline Tensor contiguous(const Tensor& t) { return t.is_contiguous() ? t : torch::stable::contiguous(t); }

// A new contiguous tensor with the shape, dtype and device of `t`. torch::stable::empty_like looks
// aten::empty_like up by name in the dispatcher on every call, which cost ~3 µs of a 1024-element op on
// the H100 machine (bench/op_overhead.py); new_empty goes to torch's C shim directly.
inline Tensor empty_like(const Tensor& t) { return torch::stable::new_empty(t, t.sizes()); }

// `t` is a defined float32/float64 tensor on a device this build serves.
// With `half`, float16 and bfloat16 too (for an op whose kernels take __half and __nv_bfloat16).
inline void check_floating(const char* op, const char* name, const Tensor& t, bool half = false) {
  check(t.defined(), std::string(op) + ": " + name + " is undefined");
  ScalarType st = t.scalar_type();
  const bool ok = st == ScalarType::Float || st == ScalarType::Double ||
                  (half && (st == ScalarType::Half || st == ScalarType::BFloat16));
  if (!ok)
    check(false, std::string(op) + ": " + name + " must be " +
                     (half ? "float32, float64, float16 or bfloat16" : "float32 or float64") + ", got " +
                     torch::headeronly::toString(st));
  if (!served(t))
    check(false, std::string(op) + ": " + name + " is on " + device_name(t) + ", but this build takes " + kBuildServes);
}

// `t` is a contiguous tensor of `dtype` on a device this build serves (an op on integer tensors, say).
inline void check_tensor(const char* op, const char* name, const Tensor& t, ScalarType dtype) {
  check(t.defined(), std::string(op) + ": " + name + " is undefined");
  if (!served(t))
    check(false, std::string(op) + ": " + name + " is on " + device_name(t) + ", but this build takes " + kBuildServes);
  if (t.scalar_type() != dtype || !t.is_contiguous())
    check(false, std::string(op) + ": " + name + " must be a contiguous " + torch::headeronly::toString(dtype) +
                     " tensor, got " + (t.is_contiguous() ? "" : "a non-contiguous ") +
                     torch::headeronly::toString(t.scalar_type()));
}

// `t` has the dtype and device of `ref`.
inline void check_same_kind(const char* op, const char* name, const Tensor& t, const char* ref_name,
                            const Tensor& ref) {
  if (t.scalar_type() != ref.scalar_type())
    check(false, std::string(op) + ": " + name + " has dtype " + torch::headeronly::toString(t.scalar_type()) +
                     " but " + ref_name + " has " + torch::headeronly::toString(ref.scalar_type()));
  if (!same_device(t, ref))
    check(false, std::string(op) + ": " + name + " is on " + device_name(t) + " but " + ref_name + " is on " +
                     device_name(ref));
}

// `t` is a float tensor with the dtype, device and shape of `ref`.
inline void check_like(const char* op, const char* name, const Tensor& t, const char* ref_name, const Tensor& ref,
                       bool half = false) {
  check_floating(op, name, t, half);
  check_same_kind(op, name, t, ref_name, ref);
  if (!same_shape(t, ref))
    check(false,
          std::string(op) + ": " + name + " has shape " + shape_of(t) + " but " + ref_name + " has " + shape_of(ref));
}

// The tensor's data as T* (const T* for an input), for a launcher: `kp::data<const scalar_t>(x, "x")`. torch's
// typed accessors know its scalar types, not CUDA's __half and __nv_bfloat16. `name` is how the stand-in names
// the tensor when a kernel writes just outside it (its redzones, checked after every launch) and how check
// mode (load_kernel(..., check=True)) names it when a kernel reads or writes outside it.
template <typename T>
inline T* data(const Tensor& t, const char* name = nullptr) {
#ifdef KP_CPU_STANDIN
  kp_guard_tensor(name, t.data_ptr(), t.numel() * sizeof(T), sizeof(T));
#endif
#ifdef KP_CHECK
  kp_check_tensor(name, t.data_ptr(), t.numel() * sizeof(T), sizeof(T));
#endif
  (void)name;
  return static_cast<T*>(t.data_ptr());
}

inline cudaStream_t stream_of(const Tensor& t) {
#ifdef KP_CPU_STANDIN
  (void)t;
  return nullptr;
#else
  void* stream = nullptr;
  check(aoti_torch_get_current_cuda_stream(t.get_device_index(), &stream) == AOTI_TORCH_SUCCESS,
        "could not get the current CUDA stream");
  return static_cast<cudaStream_t>(stream);
#endif
}

// Called by KP_DISPATCH_FLOATING before every launch, with the op's name: the stand-in's pool follows
// torch.get_num_threads(); the tensors of earlier op calls are no longer arguments (redzones, check mode).
inline void before_launch(const char* op = nullptr) {
#ifdef KP_CPU_STANDIN
  kp_set_num_threads(static_cast<int>(torch::stable::get_num_threads()));
  kp_guard_begin_call(op);
#else
  (void)op;
#endif
#ifdef KP_CHECK
  kp_check_begin_call();
#endif
}

// Ops of one binding: each `def` declares the schema and registers the boxed function for
// every backend (the checks above reject devices the build does not serve, by name).
class Ops {
 public:
  explicit Ops(const char* ns)
      : def_(new Library(Library::Kind::DEF, ns, nullptr, __FILE__, __LINE__)),
        impl_(new Library(Library::Kind::IMPL, ns, "CompositeExplicitAutograd", __FILE__, __LINE__)) {}

  Ops& def(const char* schema, void (*boxed)(StableIValue*, uint64_t, uint64_t)) {
    std::string name(schema, std::string(schema).find('('));
    def_->def(schema);
    impl_->impl(name.c_str(), boxed);
    return *this;
  }

 private:
  // Never deleted: deleting a library object unregisters its ops, and a loaded kernel version
  // stays callable until the process ends.
  using Library = torch::stable::detail::StableLibrary;
  Library* def_;
  Library* impl_;
};

}  // namespace kp

#define KP_DISPATCH_CASE(ENUM, T, ...) \
  case ::kp::ScalarType::ENUM: {       \
    using scalar_t = T;                \
    return __VA_ARGS__();              \
  }
#define KP_DISPATCH_UNSUPPORTED(TYPE, OP) \
  default:                                \
    throw std::runtime_error(std::string(OP) + ": unsupported dtype " + torch::headeronly::toString(TYPE));

#define KP_DISPATCH_FLOATING(TYPE, OP, ...)         \
  [&] {                                             \
    ::kp::before_launch(OP);                        \
    switch (TYPE) {                                 \
      KP_DISPATCH_CASE(Float, float, __VA_ARGS__)   \
      KP_DISPATCH_CASE(Double, double, __VA_ARGS__) \
      KP_DISPATCH_UNSUPPORTED(TYPE, OP)             \
    }                                               \
  }()

#define KP_DISPATCH_FLOATING_AND_HALF(TYPE, OP, ...)         \
  [&] {                                                      \
    ::kp::before_launch(OP);                                 \
    switch (TYPE) {                                          \
      KP_DISPATCH_CASE(Float, float, __VA_ARGS__)            \
      KP_DISPATCH_CASE(Double, double, __VA_ARGS__)          \
      KP_DISPATCH_CASE(Half, __half, __VA_ARGS__)            \
      KP_DISPATCH_CASE(BFloat16, __nv_bfloat16, __VA_ARGS__) \
      KP_DISPATCH_UNSUPPORTED(TYPE, OP)                      \
    }                                                        \
  }()

// KP_OPS(m) { m.def(...); } defines kp_register(ns), which the loader calls once per load with a
// fresh namespace. It returns nullptr, or the error text (exceptions must not cross into ctypes).
#define KP_OPS(m)                                                                             \
  static void kp_define_ops(::kp::Ops& m);                                                    \
  extern "C" __attribute__((visibility("default"))) const char* kp_register(const char* ns) { \
    static std::string error;                                                                 \
    try {                                                                                     \
      ::kp::Ops ops(ns);                                                                      \
      kp_define_ops(ops);                                                                     \
      return nullptr;                                                                         \
    } catch (const std::exception& e) {                                                       \
      error = e.what();                                                                       \
      return error.c_str();                                                                   \
    }                                                                                         \
  }                                                                                           \
  static void kp_define_ops(::kp::Ops& m)
