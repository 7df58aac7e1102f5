// cuda_cpu_redzones.cpp: redzones around every CPU tensor, so that a kernel of the normal stand-in build
// that writes just outside a tensor (the off-by-one every learner writes once: `c[i + 1] = ...`) fails its
// launch with a message, instead of corrupting glibc's heap and killing the process later ("free(): invalid
// next size", a Jupyter kernel that "appears to have died").
//
// How: torch's CPU allocator is replaced (c10::SetCPUAllocator, once per process, when Python loads the
// runtime: kp.build.cpu_runtime) by one that asks torch's own allocator for kRedzone more bytes on each side of
// every tensor, fills both sides with a pattern that depends on the address (so that a kernel copying one
// tensor's redzone into another's still changes it), and records where the tensor lies. The bindings name
// the tensors an op call passes to its kernels (kp::data in binding.h calls kp_guard_tensor); after each
// launch the runtime compares those tensors' redzones with the pattern (redzones_damaged). A changed byte fails
// the launch (cudaErrorIllegalAddress) with the op, the kernel, the tensor, the side and the elements written,
// and the redzone is refilled: nothing outside the tensors was touched, so the process lives on.
//
// What it does not see: a write further than kRedzone bytes away (it lands in another allocation, or faults in
// unmapped memory, which the fault handler reports), a write inside a view's storage but outside the view, and
// tensors allocated before the allocator was installed or not by torch (torch.from_numpy). Check mode
// (load_kernel(..., check=True)) sees all of these, stops before the access, and names the `.cu` line.
//
// Cost: an allocation fills 2 x kRedzone bytes and takes a lock to record itself; a launch checks the
// redzones of the tensors its op call named (bench/cpu_standin.py measures both).

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#pragma GCC visibility push(hidden)

namespace kp {
namespace detail {
namespace {

constexpr size_t kRedzone = 512;  // bytes on each side of a tensor; a multiple of torch's 64-byte alignment
constexpr size_t kMaxNamed = 32;  // tensors one op call names; the oldest are dropped past this

// The pattern's 8-byte word at `address` (8-aligned): different at every address.
inline uint64_t pattern(uintptr_t address) { return (address >> 3) * 0x9E3779B97F4A7C15ull ^ 0xA5C3F00DFACEB00Cull; }

void fill(char* begin, char* end) {
  for (char* p = begin; p < end; p += 8) {
    const uint64_t word = pattern(reinterpret_cast<uintptr_t>(p));
    memcpy(p, &word, 8);
  }
}

// Offsets (from `from`) of the first and last bytes of [from, end) that differ from the pattern; false if none.
// `begin` (<= from) is 8-aligned; `from` may not be: the bytes before it belong to the tensor.
bool changed(const char* begin, const char* from, const char* end, size_t* first, size_t* last) {
  bool any = false;
  for (const char* p = begin; p < end; p += 8) {
    uint64_t word;
    memcpy(&word, p, 8);
    const uint64_t diff = word ^ pattern(reinterpret_cast<uintptr_t>(p));
    if (!diff) continue;
    for (int k = 0; k < 8; ++k) {
      if (!((diff >> (8 * k)) & 0xff) || p + k < from) continue;
      const size_t at = size_t(p + k - from);
      if (!any) *first = at;
      *last = at;
      any = true;
    }
  }
  return any;
}

long long floor_div(long long a, long long b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

std::mutex g_lock;
std::map<uintptr_t, size_t>* g_regions = new std::map<uintptr_t, size_t>;  // data start -> bytes; never destroyed
c10::Allocator* g_torch;  // torch's own CPU allocator: ours asks it for the memory

// The rear redzone runs from the tensor's end to kRedzone bytes past its end rounded up to 64.
inline size_t rear_bytes(size_t bytes) { return (bytes + 63) / 64 * 64 - bytes + kRedzone; }

void release(void* data) {
  {
    std::lock_guard<std::mutex> lock(g_lock);
    g_regions->erase(reinterpret_cast<uintptr_t>(data));
  }
  g_torch->raw_deallocate(static_cast<char*>(data) - kRedzone);
}

struct RedzoneAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t bytes) override {
    char* base = static_cast<char*>(g_torch->raw_allocate(kRedzone + bytes + rear_bytes(bytes)));
    char* data = base + kRedzone;
    fill(base, data);
    fill(data + bytes / 8 * 8, data + bytes + rear_bytes(bytes));  // the tensor's last partial word too: unwritten
    {
      std::lock_guard<std::mutex> lock(g_lock);
      (*g_regions)[reinterpret_cast<uintptr_t>(data)] = bytes;
    }
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
};

struct Named {
  const char* name;
  const void* data;
  size_t bytes, elem;
};

// The tensors the current op call (on this host thread) passed to its kernels, as a ring.
thread_local Named t_named[kMaxNamed];
thread_local unsigned t_count;
thread_local const char* t_op;

// True if the redzone of `t`'s storage changed: writes the message and makes the redzone whole again.
bool damaged(const Named& t, const char* kernel, char* out, size_t size) {
  uintptr_t start;
  size_t bytes;
  {
    std::lock_guard<std::mutex> lock(g_lock);
    auto it = g_regions->upper_bound(reinterpret_cast<uintptr_t>(t.data));
    if (it == g_regions->begin()) return false;
    --it;
    start = it->first;
    bytes = it->second;
    if (reinterpret_cast<uintptr_t>(t.data) > start + bytes) return false;  // not a tensor with redzones
  }
  char* data = reinterpret_cast<char*>(start);
  char* end = data + bytes + rear_bytes(bytes);
  const long long elem = t.elem ? (long long)t.elem : 1;
  const long long view = (long long)(static_cast<const char*>(t.data) - data);  // where the view starts
  size_t first, last;
  const char* side;
  long long from, to;  // the elements written, as indices of the named tensor
  if (changed(data - kRedzone, data - kRedzone, data, &first, &last)) {
    side = "before the start of";
    from = floor_div((long long)first - (long long)kRedzone - view, elem);
    to = floor_div((long long)last - (long long)kRedzone - view, elem);
    fill(data - kRedzone, data);
  } else if (changed(data + bytes / 8 * 8, data + bytes, end, &first, &last)) {
    side = "past the end of";
    from = floor_div((long long)(bytes + first) - view, elem);
    to = floor_div((long long)(bytes + last) - view, elem);
    fill(data + bytes / 8 * 8, end);
  } else {
    return false;
  }
  char range[64];
  if (from == to)
    snprintf(range, sizeof range, "element [%lld]", from);
  else
    snprintf(range, sizeof range, "elements [%lld] to [%lld]", from, to);
  snprintf(out, size,
           "%s%s%skernel '%s' wrote %s '%s' (%lld elements of %lld bytes): %s. Nothing else was touched: the "
           "stand-in keeps %zu bytes free on each side of a tensor. Load the kernel with check=True to find the "
           "line: load_kernel(..., check=True)",
           t_op ? "op '" : "", t_op ? t_op : "", t_op ? "': " : "", kernel, side, t.name ? t.name : "a tensor",
           (long long)t.bytes / elem, elem, range, kRedzone);
  return true;
}

}  // namespace

// After a launch (cuda_cpu_runtime.cpp): whether a tensor its op call named has a changed redzone.
bool redzones_damaged(const char* kernel, char* out, size_t size) {
  if (!g_torch) return false;
  bool any = false;
  const unsigned n = t_count < kMaxNamed ? t_count : kMaxNamed;
  for (unsigned k = 0; k < n; ++k)  // every one is made whole; the first is named
    if (damaged(t_named[k], kernel, any ? nullptr : out, any ? 0 : size)) any = true;
  return any;
}

}  // namespace detail
}  // namespace kp

#pragma GCC visibility pop

extern "C" {

// Once per process, before the tensors to guard are made (kp.build.cpu_runtime calls it as it loads the
// runtime). Returns the redzone's size in bytes.
size_t kp_redzones_install(void) {
  using namespace kp::detail;
  static const bool installed = [] {
    g_torch = c10::GetCPUAllocator();
    c10::SetCPUAllocator(new RedzoneAllocator, /*priority=*/100);  // never deleted: its tensors may outlive all
    return true;
  }();
  (void)installed;
  return kRedzone;
}

// For bindings (binding.h): an op call starts; a tensor it passes to its kernels, by name.
void kp_guard_begin_call(const char* op) {
  kp::detail::t_op = op;
  kp::detail::t_count = 0;
}
void kp_guard_tensor(const char* name, const void* data, size_t bytes, size_t elem) {
  kp::detail::t_named[kp::detail::t_count++ % kp::detail::kMaxNamed] = {name, data, bytes, elem};
}
}
