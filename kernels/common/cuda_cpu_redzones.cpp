// cuda_cpu_redzones.cpp: what guards every CPU tensor of the normal stand-in build, so that a kernel that reads or
// writes outside a tensor fails its launch with a message naming the tensor, instead of corrupting glibc's heap
// and killing the process later ("free(): invalid next size", a Jupyter kernel that "appears to have died"), or
// silently overwriting another tensor. Two guards:
//
// - Redzones, for the near miss (the off-by-one every learner writes once: `c[i + 1] = ...`): a pattern that
//   depends on the address (so that a kernel copying one tensor's redzone into another's still changes it), at
//   least kRedzone bytes on each side of a tensor. The bindings name the tensors an op call passes to its kernels
//   (kp::data in binding.h calls kp_guard_tensor); after each launch the runtime compares those tensors'
//   redzones with the pattern (redzones_damaged). A changed byte fails the launch (cudaErrorIllegalAddress) with
//   the op, the kernel, the tensor, the side and the elements written, and the redzone is refilled: nothing
//   outside the tensors was touched, so the process lives on.
// - Guard regions, for everything farther (a whole row past the end, `if (idx > N)`, an index off by megabytes):
//   each tensor lives in a mapping of its own, its data at the end of its read-write pages (so that just over
//   kRedzone bytes past its end is already unmapped), between kGap bytes of PROT_NONE memory on each side (or the
//   tensor's own size, if larger). A read or write there faults; the runtime's fault handler abandons the block
//   and records the address and whether it was a write, and after the launch redzones_fault names the tensor
//   whose guard holds the address: side, element index and distance in bytes. The slack of the first page (up to
//   a page before the data) is redzone too. Virtual space is cheap (no page of a guard is ever committed), but
//   each mapping costs the kernel two entries of vm.max_map_count (65530 by default), three at worst: at most a
//   sixth of that many mappings are made (more tensors get redzones alone). Freed mappings are kept for reuse
//   (kCacheEntries, kCacheBytes), so that allocating a size freed before costs no system call.
//
// How: torch's CPU allocator is replaced (c10::SetCPUAllocator, once per process, when Python loads the runtime:
// kp.build.cpu_runtime). A tensor that cannot have a mapping (the budget spent, mmap failing) gets today's
// redzones alone, from torch's own allocator: the allocation never fails because of the guards.
//
// What it does not see: a read in a redzone; an access farther than the guard (more than kGap bytes, or the
// tensor's size, outside it) that lands in mapped memory; an access inside a view's storage but outside the
// view; tensors allocated before the allocator was installed or not by torch (torch.from_numpy). Check mode
// (load_kernel(..., check=True)) sees all of these, stops before the access, and names the `.cu` line.
//
// Cost (bench/cpu_standin.py measures it; README, "The CPU stand-in"): an allocation of a size freed recently
// fills its redzones (up to a page) and takes a lock; a new size costs mmap and mprotect, and the first touch of
// its pages; a launch checks the redzones of the tensors its op call named, up to a page and kRedzone bytes each.

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <mutex>

#pragma GCC visibility push(hidden)

namespace kp {
namespace detail {
namespace {

constexpr size_t kRedzone = 512;  // bytes on each side of a tensor at least; a multiple of torch's 64-byte alignment
constexpr size_t kMaxNamed = 32;  // tensors one op call names; the oldest are dropped past this
// Unmapped bytes on each side of a tensor at least (or its own size, if larger): a row past the end of any
// matrix of under 64 MiB, an index off by up to 16 M floats, faults in the tensor's own guard.
constexpr size_t kGap = size_t(64) << 20;
constexpr size_t kMaxGuarded = size_t(1) << 40;  // a larger tensor gets redzones alone
// Freed mappings kept for reuse, at most (a step of a training loop frees hundreds of tensors, and a new mapping
// costs mmap, mprotect, munmap and the first touch of its pages: 80 µs on the 2-core development VM).
constexpr size_t kCacheEntries = 1024;
constexpr size_t kCacheBytes = size_t(128) << 20;  // and their read-write bytes (still committed), at most

// The pattern's 8-byte word at `address` (8-aligned): different at every address. From one word to the next the
// product grows by kMul, so that fill and changed compute it with an addition (and the compiler vectorizes them):
// a launch checks a page of redzone per tensor.
constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull, kXor = 0xA5C3F00DFACEB00Cull;

void fill(char* begin, char* end) {
  uint64_t product = (reinterpret_cast<uintptr_t>(begin) >> 3) * kMul;
  for (char* p = begin; p < end; p += 8, product += kMul) {
    const uint64_t word = product ^ kXor;
    memcpy(p, &word, 8);
  }
}

// Offsets (from `from`) of the first and last bytes of [from, end) that differ from the pattern; false if none.
// `begin` (<= from) is 8-aligned; `from` may not be: the bytes before it belong to the tensor.
bool changed(const char* begin, const char* from, const char* end, size_t* first, size_t* last) {
  const uint64_t start = (reinterpret_cast<uintptr_t>(begin) >> 3) * kMul;
  uint64_t product = start, differ = 0;
  for (const char* p = begin; p < end; p += 8, product += kMul) {  // whether any byte differs, first
    uint64_t word;
    memcpy(&word, p, 8);
    differ |= word ^ product ^ kXor;
  }
  if (!differ) return false;
  bool any = false;
  product = start;
  for (const char* p = begin; p < end; p += 8, product += kMul) {
    uint64_t word;
    memcpy(&word, p, 8);
    const uint64_t diff = word ^ product ^ kXor;
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

// The rear redzone runs from the tensor's end to kRedzone bytes past its end rounded up to 64.
inline size_t rear_bytes(size_t bytes) { return (bytes + 63) / 64 * 64 - bytes + kRedzone; }

// A tensor's own mapping: a guard of `gap` bytes, `rw` read-write bytes (front redzone, data, rear redzone), a
// guard of `gap` bytes.
struct Mapping {
  uintptr_t lo;
  size_t gap, rw;
  size_t span() const { return gap + rw + gap; }
};

// Where a tensor lies. Its front redzone runs from `front` to its data; `lo` is 0 for a tensor without a mapping
// of its own (torch's allocator gave it kRedzone bytes on each side).
struct Region {
  size_t bytes;
  uintptr_t front;
  Mapping map;
};

std::mutex g_lock;  // guards all of the below but g_torch and g_page, which are set once
std::map<uintptr_t, Region>* g_regions = new std::map<uintptr_t, Region>;  // by data start; never destroyed
// The cache: freed mappings, oldest first, and the same by read-write bytes (each size's oldest first).
using Cached = std::list<Mapping>;
Cached* g_cache = new Cached;
std::map<size_t, std::deque<Cached::iterator>>* g_cache_by_rw = new std::map<size_t, std::deque<Cached::iterator>>;
size_t g_cache_bytes;         // their read-write bytes
size_t g_mappings, g_budget;  // mappings live or cached; at most this many (a sixth of vm.max_map_count)
c10::Allocator* g_torch;      // torch's own CPU allocator: tensors without a mapping come from it
size_t g_page;

inline size_t gap_for(size_t rw) { return std::max(kGap, rw); }

// The oldest cached mapping, out of the cache (under g_lock; the cache is not empty), for the caller to unmap.
// Not the largest: a loop that frees a large tensor and allocates it again would get a new mapping every time,
// and the first touch of each of its pages.
Mapping evict_oldest() {
  const Mapping m = g_cache->front();
  auto same = g_cache_by_rw->find(m.rw);
  same->second.pop_front();  // the oldest of its size
  if (same->second.empty()) g_cache_by_rw->erase(same);
  g_cache->pop_front();
  g_cache_bytes -= m.rw;
  return m;
}

// A mapping with `rw` read-write bytes between guards, freed earlier or new; false if none can be had.
bool map_guarded(size_t rw, Mapping* m) {
  Mapping spare = {0, 0, 0};
  {
    std::lock_guard<std::mutex> lock(g_lock);
    auto same = g_cache_by_rw->find(rw);
    if (same != g_cache_by_rw->end()) {  // the last freed first: its pages are likelier in the CPU's caches
      *m = *same->second.back();
      g_cache->erase(same->second.back());
      same->second.pop_back();
      if (same->second.empty()) g_cache_by_rw->erase(same);
      g_cache_bytes -= rw;
      return true;
    }
    if (g_mappings < g_budget) {
      ++g_mappings;
    } else if (!g_cache->empty()) {  // the budget spent: the oldest cached mapping makes room
      spare = evict_oldest();
    } else {
      return false;
    }
  }
  if (spare.lo) munmap(reinterpret_cast<void*>(spare.lo), spare.span());
  *m = {0, gap_for(rw), rw};
  void* p = mmap(nullptr, m->span(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED && mprotect(static_cast<char*>(p) + m->gap, rw, PROT_READ | PROT_WRITE) == 0) {
    m->lo = reinterpret_cast<uintptr_t>(p);
    return true;
  }
  if (p != MAP_FAILED) munmap(p, m->span());  // mprotect fails when the process is out of map entries
  std::lock_guard<std::mutex> lock(g_lock);
  --g_mappings;
  return false;
}

// A freed tensor's mapping goes to the cache; past the cache's limits, its oldest mappings are unmapped.
void unmap_guarded(Mapping m) {
  for (bool cached = false;; cached = true) {
    {
      std::lock_guard<std::mutex> lock(g_lock);
      if (!cached && m.rw <= kCacheBytes / 4) {
        (*g_cache_by_rw)[m.rw].push_back(g_cache->insert(g_cache->end(), m));
        g_cache_bytes += m.rw;
        cached = true;
      }
      if (cached) {
        if (g_cache->size() <= kCacheEntries && g_cache_bytes <= kCacheBytes) return;
        m = evict_oldest();
      }
      --g_mappings;
    }
    munmap(reinterpret_cast<void*>(m.lo), m.span());
  }
}

void release(void* data) {
  Region r;
  {
    std::lock_guard<std::mutex> lock(g_lock);
    auto it = g_regions->find(reinterpret_cast<uintptr_t>(data));
    r = it->second;
    g_regions->erase(it);
  }
  if (r.map.lo)
    unmap_guarded(r.map);
  else
    g_torch->raw_deallocate(static_cast<char*>(data) - kRedzone);
}

struct RedzoneAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t bytes) override {
    const size_t rear = rear_bytes(bytes), rw = (kRedzone + bytes + rear + g_page - 1) / g_page * g_page;
    Region r = {bytes, 0, {0, 0, 0}};
    char* data;
    if (bytes <= kMaxGuarded && map_guarded(rw, &r.map)) {
      r.front = r.map.lo + r.map.gap;  // the data ends `rear` bytes before the guard after it
      data = reinterpret_cast<char*>(r.front + rw - rear - bytes);
    } else {
      data = static_cast<char*>(g_torch->raw_allocate(kRedzone + bytes + rear)) + kRedzone;
      r.front = reinterpret_cast<uintptr_t>(data) - kRedzone;
    }
    fill(reinterpret_cast<char*>(r.front), data);
    fill(data + bytes / 8 * 8, data + bytes + rear);  // the tensor's last partial word too: unwritten
    {
      std::lock_guard<std::mutex> lock(g_lock);
      (*g_regions)[reinterpret_cast<uintptr_t>(data)] = r;
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

// The redzone the last launch of this host thread damaged: which tensor, which side, which elements.
thread_local struct {
  const Named* tensor;
  const char* side;
  long long from, to;
} t_damage;

// The storage that holds `p` (its data start and region), for a pointer into a tensor or just past its end.
bool region_of(const void* p, uintptr_t* start, Region* r) {
  std::lock_guard<std::mutex> lock(g_lock);
  auto it = g_regions->upper_bound(reinterpret_cast<uintptr_t>(p));
  if (it == g_regions->begin()) return false;
  --it;
  if (reinterpret_cast<uintptr_t>(p) > it->first + it->second.bytes) return false;  // not a tensor with redzones
  *start = it->first;
  *r = it->second;
  return true;
}

// The storage whose mapping (guards included) holds `address`; mappings do not overlap.
bool mapping_holding(uintptr_t address, uintptr_t* start, Region* r) {
  std::lock_guard<std::mutex> lock(g_lock);
  auto it = g_regions->upper_bound(address);
  const Mapping* m = it == g_regions->end() ? nullptr : &it->second.map;
  if (!m || !m->lo || address < m->lo) {  // not before the next tensor's start: past the end of the one before?
    if (it == g_regions->begin()) return false;
    m = &(--it)->second.map;
    if (!m->lo || address >= m->lo + m->span()) return false;
  }
  *start = it->first;
  *r = it->second;
  return true;
}

// True if the redzone of `t`'s storage changed: writes the message and makes the redzone whole again.
bool damaged(const Named& t, const char* kernel, char* out, size_t size) {
  uintptr_t start;
  Region r;
  if (!region_of(t.data, &start, &r)) return false;
  char* data = reinterpret_cast<char*>(start);
  char* front = reinterpret_cast<char*>(r.front);
  char* end = data + r.bytes + rear_bytes(r.bytes);
  const long long elem = t.elem ? (long long)t.elem : 1;
  size_t first[2], last[2];  // before the start, past the end: both are made whole, the first side is named
  const bool before = changed(front, front, data, &first[0], &last[0]);
  const bool past = changed(data + r.bytes / 8 * 8, data + r.bytes, end, &first[1], &last[1]);
  if (!before && !past) return false;
  if (before) fill(front, data);
  if (past) fill(data + r.bytes / 8 * 8, end);
  const char* side = before ? "before the start of" : "past the end of";
  const char* lo = before ? front + first[0] : data + r.bytes + first[1];  // the bytes written
  const char* hi = before ? front + last[0] : data + r.bytes + last[1];
  // As indices of the named tensor, which may be a view that starts inside its storage.
  const long long from = floor_div(lo - static_cast<const char*>(t.data), elem);
  const long long to = floor_div(hi - static_cast<const char*>(t.data), elem);
  if (!out) return true;
  t_damage = {&t, side, from, to};
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

// For check mode (cuda_cpu_check.h): the storage ([*begin, *end), its data) whose own mapping, guards included, holds
// `address`: an access far outside every tensor (an index that overflowed) is named against the tensor whose guard it
// lands in, not against whichever tensor lies nearest. False where no guarded mapping holds it.
bool guard_owner(uintptr_t address, uintptr_t* begin, uintptr_t* end) {
  Region r;
  if (!mapping_holding(address, begin, &r)) return false;
  *end = *begin + r.bytes;
  return true;
}

// After a launch (cuda_cpu_runtime.cpp): whether a tensor its op call named has a changed redzone.
bool redzones_damaged(const char* kernel, char* out, size_t size) {
  t_damage = {};
  if (!g_torch) return false;
  bool any = false;
  const unsigned n = t_count < kMaxNamed ? t_count : kMaxNamed;
  for (unsigned k = 0; k < n; ++k)  // every one is made whole; the first is named
    if (damaged(t_named[k], kernel, any ? nullptr : out, any ? 0 : size)) any = true;
  return any;
}

// After a launch that faulted at `address` (`write`: 1 a write, 0 a read, -1 either; `who`, `who_size` bytes:
// "kernel 'k' thread (x,y,z) block (x,y,z)"; `where`: the rest of the fault's message, the code's address): if
// the address lies in the guard of a tensor, the message that names it, its side, the element and how far.
bool redzones_fault(uintptr_t address, int write, const char* who, size_t who_size, const char* where, char* out,
                    size_t size) {
  uintptr_t start;
  Region r;
  if (!g_torch || !mapping_holding(address, &start, &r)) return false;
  const Named* t = nullptr;  // the tensor an argument of the op call names, a view of the storage maybe
  const unsigned n = t_count < kMaxNamed ? t_count : kMaxNamed;
  for (unsigned k = 0; k < n && !t; ++k) {
    uintptr_t s;
    Region named;
    if (region_of(t_named[k].data, &s, &named) && s == start) t = &t_named[k];
  }
  const uintptr_t data = t ? reinterpret_cast<uintptr_t>(t->data) : start, bytes = t ? t->bytes : r.bytes;
  const bool past = address >= data + bytes;
  const char* side = past ? "past the end of" : "before the start of";
  const char* verb = write == 1 ? "wrote" : write == 0 ? "read" : "read or wrote";
  const unsigned long long far = past ? address - (data + bytes) : data - address;
  char op[160] = "";
  if (t_op) snprintf(op, sizeof op, "op '%s': ", t_op);
  if (!t) {
    snprintf(out, size, "%s%.*s %s %llu bytes %s a tensor of %zu bytes the op did not pass by name%s", op,
             int(who_size), who, verb, far, side, r.bytes, where);
    return true;
  }
  const long long elem = t->elem ? (long long)t->elem : 1;
  char redzone[128] = "";  // what it wrote on the same side, nearer, where the redzone took it
  if (t_damage.tensor == t && !strcmp(t_damage.side, side)) {
    if (t_damage.from == t_damage.to)
      snprintf(redzone, sizeof redzone, " (and element [%lld], in its redzone)", t_damage.from);
    else
      snprintf(redzone, sizeof redzone, " (and elements [%lld] to [%lld], in its redzone)", t_damage.from, t_damage.to);
  }
  snprintf(out, size, "%s%.*s %s %s '%s' (%lld elements of %lld bytes): element [%lld], %llu bytes %s%s%s", op,
           int(who_size), who, verb, side, t->name ? t->name : "a tensor", (long long)bytes / elem, elem,
           floor_div((long long)(address - data), elem), far, past ? "past its end" : "before its start", redzone,
           where);
  return true;
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
    g_page = size_t(sysconf(_SC_PAGESIZE));
    size_t max_map_count = 65530;  // Linux's default
    if (FILE* f = fopen("/proc/sys/vm/max_map_count", "r")) {
      if (fscanf(f, "%zu", &max_map_count) != 1) max_map_count = 65530;
      fclose(f);
    }
    // A mapping takes 2 entries (its guards merge with its neighbours'), 3 at worst: the guards spend a third of
    // them, half at worst, and leave the rest to the process (its libraries, threads and malloc take hundreds).
    g_budget = max_map_count / 6;
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
