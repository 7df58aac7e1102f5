// Registers a packaged op's ops as torch.ops.<KP_NAMESPACE>.* as its library is loaded: by the package's
// __init__.py, by torch.ops.load_library, or by a C++ program that links it (kp.package adds this file to the
// wheel's and to CMake's build). The binding's KP_OPS defines kp_register(ns), which load_kernel calls with a
// fresh namespace for every version it loads; a packaged op has one namespace, its name, fixed at build time.
#include <cstdio>
#include <string>

#define KP_STRINGIFY_(x) #x
#define KP_STRINGIFY(x) KP_STRINGIFY_(x)

extern "C" const char* kp_register(const char* ns);  // kernels/common/binding.h, KP_OPS

namespace {

std::string g_error;  // constructed before g_registered below: one file, in order
[[maybe_unused]] const bool g_registered = [] {
  if (const char* error = kp_register(KP_STRINGIFY(KP_NAMESPACE))) {
    g_error = error;  // exceptions must not leave a static initializer: the loader would abort the process
    std::fprintf(stderr, "registering torch.ops.%s failed: %s\n", KP_STRINGIFY(KP_NAMESPACE), error);
  }
  return g_error.empty();
}();

}  // namespace

// nullptr, or why registering failed (the package's __init__.py raises ImportError with it).
extern "C" __attribute__((visibility("default"))) const char* kp_registration_error() {
  return g_error.empty() ? nullptr : g_error.c_str();
}
