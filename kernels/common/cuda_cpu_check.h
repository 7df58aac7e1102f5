// cuda_cpu_check.h: check mode's engine, part of the CPU stand-in's runtime (cuda_cpu_runtime.cpp includes
// it once; nothing else does).
//
// A kernel file built in check mode (kp.build, check=True) is compiled with g++'s -fsanitize=thread
// instrumentation but without its runtime: every load, store and atomic of the kernel's code calls a
// __tsan_* function, and this file defines them (as the Linux kernel's KCSAN does). Each access is
// classified by its address:
//   - inside a tensor the binding registered for this op call (kp::data<T>(t, "name")): fine, and a
//     write is remembered per element (who wrote it: kernel, block, thread, code address);
//   - inside a __shared__ variable (the source step registers each one as its declaration runs, with a
//     guard array on either side) or the launch's dynamic shared memory: race and uninitialised-read
//     tracking, per byte, for the running block;
//   - in a guard array, or in the dynamic shared memory past the launch's size: out-of-bounds shared
//     access;
//   - on the running thread's stack, in the runtime's thread state, in a loaded library's data: fine;
//   - in a loaded library's thread_local data (a __shared__ variable no source step registered): fine;
//   - anything else: out-of-bounds global access, named by index within kNear bytes of a registered tensor, by
//     address past it (an overflowed 32-bit index lands gigabytes away).
// A tensor too large for per-element records (kRecordShare) has its bounds checked, not its races.
// What is not a race, as on a GPU: a plain store of the value the slot already holds (32 lanes storing one
// warp-wide result: settled after the store, settle_stores); a plain read and an atomicCAS of one element (the CAS
// loop); another block's write that a __threadfence() and an atomic ticket publish to the block that read the
// ticket after it (the last-block pattern, ticket_order; without the fence the finding says so). Threads that
// exited do not count at a barrier (Volta's rule), unless the barrier is under an `if` they skipped (kp.check).
// An out-of-bounds access abandons its block before it happens (the instrumentation call comes first),
// so nothing outside the tensors is written. Barriers and warp collectives are the runtime's own;
// their hooks below keep the happens-before that race detection needs: a __syncthreads orders every
// thread of the block, a warp collective the lanes that took part in it.
//
// Check launches run on the launching thread alone, blocks in order, so findings come out the same
// every time. Findings go to a per-host-thread report that Python takes after each op call
// (kp_check_take_report): one line per finding, fields separated by tabs:
//   severity  kind  kernel  block  thread  here  there  other_thread  text
// where here/there are code addresses (`library+0xOFFSET`) or `@LINE` (a line of the kernel file) or
// empty, and the text says {here} and {there} where Python puts `at file.cu:LINE`.

#pragma GCC visibility push(default)  // libc's dl_iterate_phdr, declared inside the runtime's hidden region
#include <link.h>
#pragma GCC visibility pop

#include <cstring>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace kp {
namespace detail {

constexpr size_t kGuardBytes = 256;   // each side of a __shared__ variable in check builds (cuda_cpu.h)
constexpr uintptr_t kNear = 1 << 20;  // how far past a tensor an access still counts as an out-of-bounds one
constexpr unsigned kMaxErrors = 5;    // findings per op call; then its launches stop
constexpr unsigned kMaxWarnings = 5;

// Who last wrote one element of a registered tensor (in the op call `call`; a record of another call is none).
struct LastWrite {
  const char* kernel;
  uintptr_t pc;
  uint3 block, thread;
  uint64_t call;
};

// The last write and a read of one element of a registered tensor, for races on global memory within a launch.
struct GlobalAccess {
  uint64_t launch;  // the check launch that made it (g_launches); a record of an earlier launch orders before all
  uint32_t block;   // CheckState::block of its block
  uint32_t epoch;   // barriers that block had passed
  uint16_t tid;
  bool atomic;
  bool cas;      // an atomicCAS (the CAS loop's plain read of the value it checks is no race with it)
  uint32_t seq;  // global writes its thread had made, this one included (ticket_order)
  uintptr_t pc;
};

struct GlobalShadow {
  GlobalAccess write, read;
};

// Per-element records, taken from and given back to a pool of buffers (recycled.take / give): they are not zeroed,
// since every record is stamped with the op call or launch that made it, and a stamp of another one reads as none.
// A fresh buffer comes from calloc (zero: none); a recycled one holds only stamps of earlier calls and launches.
// A tensor whose records would take more than a quarter of the machine's memory (kRecordShare) has none: its
// bounds are checked, its races and last writes are not (a 2 GB uint8 matrix would need 240 GB of them).
template <class T>
struct Records {
  T* at = nullptr;
  size_t count = 0;
  bool untracked = false;  // too large, or no memory for them: not tried again
};

constexpr size_t kRecordShare = 4;  // records of one kind for one tensor take at most 1/kRecordShare of the RAM

size_t record_budget() {
  static const size_t budget = size_t(sysconf(_SC_PHYS_PAGES)) * size_t(sysconf(_SC_PAGESIZE)) / kRecordShare;
  return budget;
}

void* recycled_take(size_t bytes, int pool);
bool guard_owner(uintptr_t address, uintptr_t* begin, uintptr_t* end);  // cuda_cpu_redzones.cpp
void recycled_give(void* p, size_t bytes, int pool);

struct CheckedTensor {
  uintptr_t begin, end;
  size_t elem;
  uint64_t call;   // the op call that registered it
  uint64_t since;  // this host thread's check launches when it was registered or last named again (t_launches)
  std::string name;
  Records<LastWrite> writes;     // per element, filled by check launches
  Records<GlobalShadow> shadow;  // per element, for races within a launch

  ~CheckedTensor() {  // under g_check_mutex, as the registry drops it
    recycled_give(writes.at, writes.count * sizeof(LastWrite), 0);
    recycled_give(shadow.at, shadow.count * sizeof(GlobalShadow), 1);
  }
  template <class T>
  T* records(Records<T>& r) {  // one pool per kind of record: a stamp is only read as a stamp of its own kind
    if (!r.at && !r.untracked) {
      const size_t count = (end - begin) / elem;
      if (count * sizeof(T) <= record_budget())
        r.at = static_cast<T*>(recycled_take(count * sizeof(T), std::is_same<T, GlobalShadow>::value));
      r.count = r.at ? count : 0;
      r.untracked = !r.at;
    }
    return r.at;  // nullptr: untracked
  }
};

// One access to a shared byte, for race detection.
struct Access {
  uint32_t block = 0;  // CheckState::block of the block that made it; 0: none
  uint32_t epoch;      // barriers the block had passed
  uint32_t wsync;      // warp collectives the thread had completed
  uint16_t tid;        // linear thread id
  bool atomic;
  bool cas;  // an atomicCAS
  uintptr_t pc;
};

// A plain store over another thread's plain store to shared memory, with nothing ordering them: a race unless it
// stores the value already there (32 lanes storing one warp-wide result). Settled once the store has happened
// (settle_stores): the bytes it found, against the bytes it left.
struct PendingStore {
  int var;  // index in CheckState::shared, -1: the dynamic shared memory
  size_t offset, n;
  unsigned char before[16];
  Access now, then;
};

// A global atomic read-modify-write of a block, for the last-block pattern (ticket_order): the thread's writes
// before it, its last __threadfence() before it.
struct Ticket {
  uintptr_t addr;
  uint16_t tid;
  uint32_t seq;          // the thread's global writes so far
  uint32_t epoch;        // the block's barriers so far
  uint32_t fence_seq;    // the thread's global writes at its last __threadfence()
  uint32_t fence_epoch;  // the block's epoch then; 0: no fence
};

struct ShadowByte {
  Access write, read1, read2;  // the last write; two reads since it, from different threads
};

struct SharedVar {
  uintptr_t begin, end;
  size_t elem;
  unsigned dims[4];
  int rank;
  const char* name;
  bool guard;  // a guard array: any access is out of bounds
  std::vector<ShadowByte> shadow;
};

namespace {

std::mutex g_check_mutex;  // the tensor registry (Python reads it from any thread)
std::vector<std::unique_ptr<CheckedTensor>> g_tensors;
std::atomic<uint64_t> g_calls{0};
std::atomic<uint64_t> g_launches{0};  // check launches so far: a GlobalAccess of an earlier one orders before
// Buffers of dropped registrations, per kind (under g_check_mutex). Never destroyed: the registry's destructor at
// process exit gives its buffers back here.
std::vector<std::pair<void*, size_t>>* g_recycled = new std::vector<std::pair<void*, size_t>>[2];
thread_local uint64_t t_call = 0;      // this host thread's op call
thread_local uint64_t t_launches = 0;  // this host thread's check launches so far (CheckedTensor::since)
thread_local std::string t_report;     // findings since Python last took them
thread_local unsigned t_errors = 0;    // error findings of this op call
thread_local unsigned t_warnings = 0;

}  // namespace

// A buffer for a registration's records: its first touch in a launch takes one (under the registry's lock); the
// registry gives it back as it drops the registration (already holding the lock).
void* recycled_take(size_t bytes, int pool) {
  std::lock_guard<std::mutex> lock(g_check_mutex);
  auto& free_list = g_recycled[pool];
  for (size_t k = 0; k < free_list.size(); ++k)
    if (free_list[k].second >= bytes) {
      void* p = free_list[k].first;
      free_list.erase(free_list.begin() + k);
      return p;
    }
  return calloc(bytes ? bytes : 1, 1);
}

void recycled_give(void* p, size_t bytes, int pool) {
  if (!p) return;
  auto& free_list = g_recycled[pool];
  free_list.emplace_back(p, bytes);
  if (free_list.size() > 16) {  // keep the 16 largest
    auto smallest = std::min_element(free_list.begin(), free_list.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
    free(smallest->first);
    free_list.erase(smallest);
  }
}

struct CheckState {
  const Kernel* kernel;
  uint64_t launch = 0;     // this launch's number (g_launches)
  bool profiling = false;  // the GPU model counts this launch (cuda_cpu_profile.h; read here, not from its TLS)
  // ... into this Profile (cuda_cpu_profile.h's t_profile; profile_of): a plain pointer, since g++ recomputes a
  // thread_local's address (a call under -fPIC) at every use rather than keep it in a register, and the branch hook
  // made six such calls per condition evaluated (perf, linear_ladder v7 at 4096³, 2026-11-27).
  void* profile = nullptr;
  uint3 block_dim;
  unsigned threads;
  uint32_t block = 0, epoch = 0;  // blocks run so far (the running one's number), barriers it passed
  std::vector<CheckedTensor*> tensors;
  bool tensors_known = true;  // every pointer argument lies in a registered tensor
  std::vector<SharedVar> shared;
  SharedVar dynamic = {0, 0, 1, {}, 0, nullptr, false, {}};
  uintptr_t stack_lo = 0, stack_hi = 0;  // the OS thread's stack
  uintptr_t frames_hi = 0;  // the launch's frame (check_launch_begin): the kernel's own frames lie below it
  std::vector<std::pair<uintptr_t, uintptr_t>> tls_blocks;  // libraries' thread_local data (in_thread_local_data)
  std::vector<uintptr_t> library_pages;                     // pages of libraries' data seen (in_library_data)
  bool warps_used = false;
  std::vector<PendingStore> pending;            // stores that race unless they stored the same value (settle_stores)
  uint32_t wseq[kMaxBlockThreads] = {};         // global writes of each thread of the running block
  uint32_t fence_seq[kMaxBlockThreads] = {};    // wseq at its last __threadfence()
  uint32_t fence_epoch[kMaxBlockThreads] = {};  // the epoch then (0: none yet)
  std::unordered_map<uint32_t, std::vector<Ticket>> tickets;  // per block (CheckState::block), its last few
  uint32_t wsync[kMaxBlockThreads] = {};
  uint32_t sync_with[kMaxBlockThreads][32] = {};  // wsync[t] when t last completed a collective with lane l
  std::set<std::string> seen;                     // findings already reported (by kind and code addresses)
  bool stop = false;                              // enough findings: take no more blocks
};

namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

std::string triple(uint3 v) { return format("(%u,%u,%u)", v.x, v.y, v.z); }

uint3 thread_of(const CheckState& c, unsigned tid) {
  return {tid % c.block_dim.x, tid / c.block_dim.x % c.block_dim.y, tid / c.block_dim.x / c.block_dim.y};
}

// `library+0xOFFSET` of the instruction before `pc` (a return address), or "".
std::string where(uintptr_t pc) {
  Dl_info info;
  if (!pc || !dladdr(reinterpret_cast<void*>(pc - 1), &info) || !info.dli_fname) return "";
  return format("%s+0x%zx", info.dli_fname, size_t(pc - 1 - reinterpret_cast<uintptr_t>(info.dli_fbase)));
}

unsigned running_tid(const Worker& w) {
  const uint3 t = w.st->thread_idx, b = w.st->block_dim;
  return t.x + b.x * (t.y + b.y * t.z);
}

// Records a finding once per `key` (its kind and code addresses); false if it was not new.
bool report(Worker& w, bool error, const char* kind, const std::string& key, uint3 thread, const std::string& here,
            const std::string& there, const std::string& other, const std::string& text) {
  CheckState& c = *w.check;
  if (!c.seen.insert(std::string(kind) + key).second) return false;
  if (error ? t_errors >= kMaxErrors : t_warnings >= kMaxWarnings) return false;
  (error ? t_errors : t_warnings) += 1;
  if (t_errors >= kMaxErrors) c.stop = true;
  t_report += format("%s\t%s\t%s\t%s\t%s\t", error ? "error" : "warning", kind, c.kernel->name,
                     triple(w.st->block_idx).c_str(), triple(thread).c_str());
  t_report += here + "\t" + there + "\t" + other + "\t" + text + "\n";
  return true;
}

// Abandons the running block (its remaining threads do not run): after an access that must not happen.
[[noreturn]] void skip_block(Worker& w) {
  w.st->fiber_mode = 0;
  w.running = false;
  __builtin_longjmp(w.abort_point, 1);
}

// "tile[3][5]" for byte `offset` of a shared variable.
std::string element_name(const SharedVar& v, uintptr_t offset) {
  std::string s = v.name;
  size_t index = offset / v.elem;
  if (v.rank == 0) return offset ? s + format("+%zu bytes", offset) : s;
  size_t stride = (v.end - v.begin) / v.elem;
  for (int d = 0; d < v.rank; ++d) {
    stride /= v.dims[d];
    s += format("[%zu]", index / stride);
    index %= stride;
  }
  return s;
}

std::string shape_of(const SharedVar& v) {
  std::string s;
  for (int d = 0; d < v.rank; ++d) s += format("[%u]", v.dims[d]);
  return s;
}

bool ordered(const CheckState& c, const Access& a, unsigned tid) {
  if (a.tid == tid || a.epoch != c.epoch) return true;  // the same thread, or a __syncthreads between
  return a.tid / 32 == tid / 32 && c.sync_with[a.tid][tid % 32] > a.wsync;  // a warp collective of both between
}

const char* verb(const Access& a, bool write) { return a.atomic ? "atomically updates" : write ? "writes" : "reads"; }

void race(Worker& w, const SharedVar& v, uintptr_t offset, const Access& now, bool now_write, const Access& then,
          bool then_write) {
  CheckState& c = *w.check;
  // One finding per pair of code sites, whichever came first (a loop-carried race shows both ways), and per site.
  if (c.seen.count(format("race%zx-%zx", std::min(now.pc, then.pc), std::max(now.pc, then.pc)))) return;
  const std::string element = element_name(v, offset - offset % v.elem);
  const char* past = then.atomic ? "atomically updated" : then_write ? "wrote" : "read";
  const std::string text = format(
      "shared-memory race on '%s' in block %s: thread %s %s it {here}, and thread %s %s it {there}, with no "
      "__syncthreads() (or, within a warp, __syncwarp()) between",
      element.c_str(), triple(w.st->block_idx).c_str(), triple(thread_of(c, now.tid)).c_str(), verb(now, now_write),
      triple(thread_of(c, then.tid)).c_str(), past);
  if (report(w, true, "race", format("%zx", now.pc), thread_of(c, now.tid), where(now.pc), where(then.pc),
             triple(thread_of(c, then.tid)), text))
    c.seen.insert(format("race%zx-%zx", std::min(now.pc, then.pc), std::max(now.pc, then.pc)));
}

void settle_stores(Worker& w) {
  CheckState& c = *w.check;
  std::vector<PendingStore> pending;
  pending.swap(c.pending);
  for (const PendingStore& p : pending) {
    SharedVar& v = p.var < 0 ? c.dynamic : c.shared[p.var];
    if (memcmp(reinterpret_cast<const void*>(v.begin + p.offset), p.before, p.n) != 0)
      race(w, v, p.offset, p.now, true, p.then, true);
  }
}

void shared_access(Worker& w, SharedVar& v, uintptr_t addr, size_t n, bool write, bool atomic, uintptr_t pc, bool cas) {
  CheckState& c = *w.check;
  if (!c.pending.empty()) settle_stores(w);  // the store it waits for has happened
  const unsigned tid = running_tid(w);
  const Access now = {c.block, c.epoch, c.wsync[tid], uint16_t(tid), atomic, cas, pc};
  const bool plain_read = !write && !atomic;
  const size_t first = addr - v.begin;
  for (size_t k = first; k < first + n; ++k) {
    ShadowByte& b = v.shadow[k];
    const bool written = b.write.block == c.block;
    if (written && !ordered(c, b.write, tid) && !(atomic && b.write.atomic) && !(plain_read && b.write.cas)) {
      if (write && !atomic && !b.write.atomic && n <= sizeof(PendingStore::before)) {
        PendingStore p = {&v == &c.dynamic ? -1 : int(&v - c.shared.data()), first, n, {}, now, b.write};
        memcpy(p.before, reinterpret_cast<const void*>(addr), n);
        c.pending.push_back(p);
      } else {
        race(w, v, k, now, write || atomic, b.write, true);
      }
      break;
    }
    if (write || atomic) {
      for (const Access* r : {&b.read1, &b.read2})
        if (r->block == c.block && !ordered(c, *r, tid) && !(atomic && r->atomic) && !(cas && !r->atomic)) {
          race(w, v, k, now, true, *r, false);
          break;
        }
    }
    if (!written && (!write || atomic)) {
      const std::string element = element_name(v, k - k % v.elem);
      report(w, false, "uninitialized", format("%zx", pc), thread_of(c, tid), where(pc), "", "",
             format("thread %s reads '%s' {here} before any thread of block %s wrote it: shared memory starts "
                    "undefined in every block",
                    triple(thread_of(c, tid)).c_str(), element.c_str(), triple(w.st->block_idx).c_str()));
    }
  }
  for (size_t k = first; k < first + n; ++k) {
    ShadowByte& b = v.shadow[k];
    if (write || atomic) {
      b.write = now;
      b.read1.block = b.read2.block = 0;
    } else if (b.read1.block != c.block || b.read1.tid == tid || ordered(c, b.read1, tid)) {
      b.read1 = now;
    } else {
      b.read2 = now;
    }
  }
}

[[noreturn]] void out_of_bounds_shared(Worker& w, uintptr_t addr, size_t n, bool write, uintptr_t pc) {
  CheckState& c = *w.check;
  const SharedVar* below = nullptr;  // the variable that ends nearest below addr, and that starts nearest above
  const SharedVar* above = nullptr;
  for (const SharedVar& v : c.shared) {
    if (v.guard) continue;
    if (v.end <= addr && (!below || v.end > below->end)) below = &v;
    if (v.begin > addr && (!above || v.begin < above->begin)) above = &v;
  }
  std::string text;
  const char* access = write ? "write" : "read";
  if (below && (!above || addr - below->end <= above->begin - addr)) {
    const size_t index = (addr - below->begin) / below->elem;
    text = format(
        "out-of-bounds shared-memory %s {here}: '%s%s' has %zu elements, and this %zu-byte %s is at "
        "element %zu (%zu bytes past its end)",
        access, below->name, shape_of(*below).c_str(), (below->end - below->begin) / below->elem, n, access, index,
        size_t(addr - below->end));
  } else if (above) {
    text = format("out-of-bounds shared-memory %s {here}: %zu bytes before the start of '%s%s'", access,
                  size_t(above->begin - addr), above->name, shape_of(*above).c_str());
  } else {
    text = format("out-of-bounds shared-memory %s {here}", access);
  }
  report(w, true, "shared-bounds", format("%zx", pc), thread_of(c, running_tid(w)), where(pc), "", "", text);
  skip_block(w);
}

[[noreturn]] void out_of_bounds_dynamic(Worker& w, uintptr_t addr, size_t n, bool write, uintptr_t pc) {
  CheckState& c = *w.check;
  const char* access = write ? "write" : "read";
  const size_t size = c.dynamic.end - c.dynamic.begin;
  report(w, true, "shared-bounds", format("%zx", pc), thread_of(c, running_tid(w)), where(pc), "", "",
         format("out-of-bounds shared-memory %s {here}: a %zu-byte %s at byte %zu of the dynamic shared memory%s%s, "
                "but the launch gave it %zu bytes",
                access, n, access, size_t(addr - c.dynamic.begin), c.dynamic.name ? " '" : "",
                c.dynamic.name ? (std::string(c.dynamic.name) + "'").c_str() : "", size));
  skip_block(w);
}

[[noreturn]] void out_of_bounds_global(Worker& w, const CheckedTensor& t, uintptr_t addr, size_t n, bool write,
                                       uintptr_t pc) {
  const char* access = write ? "write" : "read";
  const long long index =
      addr >= t.begin ? (long long)((addr - t.begin) / t.elem) : -(long long)((t.begin - addr + t.elem - 1) / t.elem);
  const size_t count = (t.end - t.begin) / t.elem;
  const std::string text = format(
      "%s of '%s'[%lld] {here} by thread %s: '%s' has %zu elements of %zu bytes, so [%lld] is %s; the block "
      "stopped before the %s, so nothing outside the tensor was touched",
      access, t.name.c_str(), index, triple(w.st->thread_idx).c_str(), t.name.c_str(), count, t.elem, index,
      addr >= t.end ? "past its end" : "before its start", access);
  report(w, true, "global-bounds", format("%zx", pc), thread_of(*w.check, running_tid(w)), where(pc), "", "", text);
  skip_block(w);
}

// An access far (kNear or more) from every tensor of the op call, in no library, stack or thread_local data: it
// would read or write memory of no tensor, or fault. Named against the nearest tensor, by distance.
[[noreturn]] void out_of_bounds_far(Worker& w, const CheckedTensor& t, uintptr_t addr, size_t n, bool write,
                                    uintptr_t pc) {
  const char* access = write ? "write" : "read";
  const bool past = addr >= t.end;
  const size_t bytes = past ? addr - t.end : t.begin - addr;
  const std::string text = format(
      "%zu-byte %s of address 0x%zx {here} by thread %s of block %s: outside every tensor of the op call, %zu "
      "bytes %s '%s' (the nearest; %zu elements of %zu bytes), as an index that overflowed (a 32-bit int past "
      "2^31) or a pointer that was never set makes it; the block stopped before the %s",
      n, access, size_t(addr), triple(w.st->thread_idx).c_str(), triple(w.st->block_idx).c_str(), bytes,
      past ? "past the end of" : "before the start of", t.name.c_str(), (t.end - t.begin) / t.elem, t.elem, access);
  report(w, true, "global-bounds", format("%zx", pc), thread_of(*w.check, running_tid(w)), where(pc), "", "", text);
  skip_block(w);
}

}  // namespace
}  // namespace detail
}  // namespace kp

#include "cuda_cpu_profile.h"  // the GPU model's counters: profile_access

namespace kp {
namespace detail {
namespace {

// True if `a` lies in this OS thread's block of a loaded library's thread_local data (a __shared__ array the
// source step did not register, as one in a header included with <...>: static thread_local on the stand-in). Only
// asked of an access that would otherwise be reported; the blocks found are kept for the launch.
bool in_thread_local_data(CheckState& c, uintptr_t a) {
  for (const auto& r : c.tls_blocks)
    if (a >= r.first && a < r.second) return true;
  struct Found {
    uintptr_t a;
    std::vector<std::pair<uintptr_t, uintptr_t>>* blocks;
    bool in;
  } found = {a, &c.tls_blocks, false};
  c.tls_blocks.clear();
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        Found& f = *static_cast<Found*>(data);
        if (!info->dlpi_tls_data) return 0;  // no thread_local data, or none allocated for this thread yet
        for (int k = 0; k < info->dlpi_phnum; ++k)
          if (info->dlpi_phdr[k].p_type == PT_TLS) {
            const uintptr_t begin = reinterpret_cast<uintptr_t>(info->dlpi_tls_data);
            f.blocks->emplace_back(begin, begin + info->dlpi_phdr[k].p_memsz);
            f.in |= f.a >= begin && f.a < begin + info->dlpi_phdr[k].p_memsz;
          }
        return 0;
      },
      &found);
  return found.in;
}

// True if `a` lies in a loaded library (a __device__ or __constant__ variable of the kernel file). dladdr takes a
// lock and walks the libraries: the pages it found are kept for the launch, as a kernel reads such a table often.
bool in_library_data(CheckState& c, uintptr_t a) {
  const uintptr_t page = a >> 12;
  for (uintptr_t p : c.library_pages)
    if (p == page) return true;
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(a), &info)) return false;
  if (c.library_pages.size() < 64) c.library_pages.push_back(page);
  return true;
}

bool on_own_stack(const Worker& w, const CheckState& c, uintptr_t a) {
  if (a >= c.stack_lo && a < c.stack_hi) return true;
  if (!w.st->fiber_mode) return false;
  const uintptr_t bottom = reinterpret_cast<uintptr_t>(w.stacks[w.cur]);
  return a >= bottom && a < bottom + kFiberStackBytes;
}

// Whether `a` lies in the running thread's own frames: its fiber's stack, or the OS thread's stack below the launch's
// frame. Nothing else lives there: tensors are on the heap, __shared__ variables and libraries' thread_local data in
// TLS blocks (a thread's static TLS sits at the top of its stack mapping, above every frame of the launch), dynamic
// shared memory in the Worker. So on_access answers these first, with what the search below would answer.
// `fiber_mode`: this OS thread's tls.fiber_mode (w.st is &tls; read through the caller's TLS address, it spares a
// load that waits for another).
bool in_own_frames(const Worker& w, const CheckState& c, uintptr_t a, int fiber_mode) {
  if (fiber_mode) {
    const uintptr_t bottom = reinterpret_cast<uintptr_t>(w.stacks[w.cur]);
    return a >= bottom && a < bottom + kFiberStackBytes;
  }
  // stack_lo stays 0 where pthread_getattr_np failed (a main thread without /proc): no range, not [0, frames_hi)
  return c.stack_lo != 0 && a >= c.stack_lo && a < c.frames_hi;
}

void record_write(Worker& w, CheckedTensor& t, uintptr_t addr, size_t n, uintptr_t pc) {
  LastWrite* writes = t.records(t.writes);
  if (!writes) return;
  const size_t last = std::min((addr + n - 1 - t.begin) / t.elem, t.writes.count - 1);
  for (size_t i = (addr - t.begin) / t.elem; i <= last; ++i)
    writes[i] = {w.check->kernel->name, pc, w.st->block_idx, w.st->thread_idx, t.call};
}

// Two accesses of one element of global memory in one launch, by different threads, one a write, not both atomic,
// with nothing ordering them (threads of different blocks never are, within a launch; threads of one block are by a
// __syncthreads between): a race, named at both lines. One write and one read are kept per element.
// The last-block pattern (the CUDA Programming Guide's threadfence example, llm.c's layernorm backward): a block
// writes, a thread of it takes an atomic ticket, and the block that draws the last ticket reads what the others
// wrote. `then` (another block's write) is ordered before the running thread's access when that block took a
// ticket after the write (the same thread later, or any thread after a barrier), with a __threadfence() between
// them, and this block took a ticket at the same address before the access (this thread, or any before a
// barrier). 1: ordered; -1: ordered but for the fence (the ticket without it); 0: no ticket.
// A global atomic read-modify-write of thread `tid` at `a` (after it counted in c.wseq): a ticket, for ticket_order.
void note_ticket(CheckState& c, uintptr_t a, unsigned tid) {
  std::vector<Ticket>& mine = c.tickets[c.block];
  const Ticket now = {a, uint16_t(tid), c.wseq[tid], c.epoch, c.fence_seq[tid], c.fence_epoch[tid]};
  for (Ticket& r : mine)
    if (r.addr == a && r.tid == tid) {
      r = now;
      return;
    }
  if (mine.size() >= 8) mine.erase(mine.begin());  // the latest few: a ticket comes after the block's other atomics
  mine.push_back(now);
}

int ticket_order(const CheckState& c, const GlobalAccess& then, unsigned tid) {
  const auto theirs = c.tickets.find(then.block), ours = c.tickets.find(c.block);
  if (theirs == c.tickets.end() || ours == c.tickets.end()) return 0;
  int found = 0;
  for (const Ticket& r : theirs->second) {
    const bool same = r.tid == then.tid;
    if (!(same ? r.seq > then.seq : r.epoch > then.epoch)) continue;  // taken before the write
    bool taken_here = false;
    for (const Ticket& a : ours->second) taken_here |= a.addr == r.addr && (a.tid == tid || a.epoch < c.epoch);
    if (!taken_here) continue;
    const bool fenced = r.fence_epoch && (same ? r.fence_seq >= then.seq : r.fence_epoch > then.epoch);
    if (fenced) return 1;
    found = -1;
  }
  return found;
}

void global_access(Worker& w, CheckedTensor& t, uintptr_t a, bool write, bool atomic, uintptr_t pc, bool cas) {
  CheckState& c = *w.check;
  GlobalShadow* shadow = t.records(t.shadow);
  if (!shadow) return;
  const size_t index = std::min((a - t.begin) / t.elem, t.shadow.count - 1);
  GlobalShadow& e = shadow[index];
  const unsigned tid = running_tid(w);
  if (write || atomic) ++c.wseq[tid];
  const GlobalAccess now = {c.launch, c.block, c.epoch, uint16_t(tid), atomic, cas, c.wseq[tid], pc};
  if (e.write.launch != c.launch && e.read.launch != c.launch) {  // the element's first access in this launch
    (write || atomic ? e.write : e.read) = now;
    return;
  }
  auto unordered = [&](const GlobalAccess& then) {
    return then.launch == c.launch && !(then.block == c.block && (then.tid == tid || then.epoch != c.epoch));
  };
  // An atomicCAS and a plain read of the same element are the CAS loop (a float atomic max): the read only seeds
  // the value the CAS checks.
  const bool plain_read = !write && !atomic;
  const GlobalAccess* other = nullptr;
  bool other_wrote = false;
  if (unordered(e.write) && !(atomic && e.write.atomic) && !(plain_read && e.write.cas))
    other = &e.write, other_wrote = true;
  else if ((write || atomic) && unordered(e.read) && !(atomic && e.read.atomic) && !(cas && !e.read.atomic))
    other = &e.read;
  const int ticket = other && other->block != c.block ? ticket_order(c, *other, tid) : 0;
  if (other && ticket != 1) {
    const uint3 then_thread = thread_of(c, other->tid);
    const char* past = other->atomic ? "atomically updated" : other_wrote ? "wrote" : "read";
    const char* verb = atomic ? "atomically updates" : write ? "writes" : "reads";
    const std::string other_block = other->block == c.block ? "the same block" : "another block";
    const std::string head =
        format("global-memory race on '%s'[%zu]: thread %s of block %s %s it {here}, and thread %s of %s %s it {there}",
               t.name.c_str(), index, triple(thread_of(c, tid)).c_str(), triple(w.st->block_idx).c_str(), verb,
               triple(then_thread).c_str(), other_block.c_str(), past);
    const std::string why =
        ticket == -1
            ? "; that block's atomic ticket tells this one it is done, but no __threadfence() comes between its "
              "write and its atomic, so the write need not be visible yet: put __threadfence() before the atomic "
              "(the CUDA Programming Guide's last-block pattern)"
            : format(", with nothing ordering the two (%s); use an atomic (atomicAdd), or split the work",
                     other->block == c.block ? "no __syncthreads() between"
                                             : "blocks of a launch run in no set order, and never wait for each other");
    report(w, true, "global-race", format("%zx", pc), thread_of(c, tid), where(pc), where(other->pc),
           triple(then_thread), head + why);
  }
  if (write || atomic)
    e.write = now, e.read.launch = 0;
  else if (!unordered(e.read) || e.read.tid == tid)
    e.read = now;
  if (write && atomic) note_ticket(c, a, tid);
}

// An access of a running check launch that is not the running thread's own local (on_access): checked, counted.
__attribute__((noinline)) void check_access(Worker* w, uintptr_t a, size_t n, bool write, bool atomic, uintptr_t pc,
                                            bool cas) {
  CheckState& c = *w->check;
  if (a >= reinterpret_cast<uintptr_t>(&tls) && a < reinterpret_cast<uintptr_t>(&tls + 1)) return;
  // The tensor holding the address: the first that holds all n bytes (an access past a narrow view's end but inside
  // the tensor it is a view of, both passed to this launch, is the tensor's), else the first holding its first byte.
  CheckedTensor* holder = nullptr;
  for (CheckedTensor* t : c.tensors)
    if (a >= t->begin && a < t->end) {
      if (!holder) holder = t;
      if (a + n <= t->end) {
        holder = t;
        break;
      }
    }
  if (CheckedTensor* t = holder) {
    if (a + n > t->end) out_of_bounds_global(*w, *t, t->end, n, write, pc);  // runs past the end
    if (c.profiling) {  // counted; who wrote each element, and races, are not recorded (112 bytes an element)
      profile_access(*w, profile_of(c), kGlobal, a, n, write, atomic, pc);
      hierarchy_base(profile_of(c), pc, t->begin, t->end);
      profile_touch(*w, profile_of(c), kGlobal, t->name.c_str(), t->begin, (t->end - t->begin) / t->elem, nullptr, 0,
                    (a - t->begin) / t->elem,
                    atomic  ? kAtomic
                    : write ? kStore
                            : kLoad);
    } else {
      global_access(*w, *t, a, write, atomic, pc, cas);
      if (write || atomic) record_write(*w, *t, a, n, pc);
    }
    return;
  }
  for (SharedVar& v : c.shared)
    if (a < v.end && a + n > v.begin) {
      if (v.guard || a < v.begin || a + n > v.end) out_of_bounds_shared(*w, a < v.begin ? v.begin : a, n, write, pc);
      if (c.profiling) {
        profile_access(*w, profile_of(c), kShared, a, n, write, atomic, pc);
        profile_touch(*w, profile_of(c), kShared, v.name, v.begin, (v.end - v.begin) / v.elem, v.dims, v.rank,
                      (a - v.begin) / v.elem,
                      atomic  ? kAtomic
                      : write ? kStore
                              : kLoad);
      }
      return shared_access(*w, v, a, n, write, atomic, pc, cas);
    }
  const uintptr_t dyn = reinterpret_cast<uintptr_t>(w->dynamic_smem);
  if (a + n > dyn && a < dyn + kMaxDynamicShared) {
    if (a < c.dynamic.begin || a + n > c.dynamic.end) out_of_bounds_dynamic(*w, a, n, write, pc);
    if (c.profiling) {
      profile_access(*w, profile_of(c), kShared, a, n, write, atomic, pc);
      profile_touch(*w, profile_of(c), kShared, c.dynamic.name ? c.dynamic.name : "extern __shared__", c.dynamic.begin,
                    (c.dynamic.end - c.dynamic.begin) / c.dynamic.elem, nullptr, 0,
                    (a - c.dynamic.begin) / c.dynamic.elem,
                    atomic  ? kAtomic
                    : write ? kStore
                            : kLoad);
    }
    return shared_access(*w, c.dynamic, a, n, write, atomic, pc, cas);
  }
  if (write && atomic && !c.profiling) {  // a ticket in a __device__ variable (the Programming Guide's `count`)
    const unsigned tid = running_tid(*w);
    ++c.wseq[tid];
    note_ticket(c, a, tid);
  }
  if (!c.tensors_known || on_own_stack(*w, c, a)) return;
  const CheckedTensor* near = nullptr;
  uintptr_t distance = UINTPTR_MAX, owner_begin = 0, owner_end = 0;
  const bool guarded =
      guard_owner(a, &owner_begin, &owner_end);  // in a tensor's guard: that tensor, whatever is nearer
  for (const CheckedTensor* t : c.tensors) {
    if (guarded && (t->begin < owner_begin || t->end > owner_end)) continue;
    const uintptr_t d = a >= t->end ? a - t->end : t->begin - a;
    if (d < distance) near = t, distance = d;
  }
  if (guarded && !near)  // the guard of a tensor this op call did not name: the nearest of those it named
    for (const CheckedTensor* t : c.tensors) {
      const uintptr_t d = a >= t->end ? a - t->end : t->begin - a;
      if (d < distance) near = t, distance = d;
    }
  if (!near || in_library_data(c, a) || in_thread_local_data(c, a)) return;
  if (distance < kNear) out_of_bounds_global(*w, *near, a, n, write, pc);
  out_of_bounds_far(*w, *near, a, n, write, pc);  // an index that overflowed, a pointer that was never set
}

// Every instrumented access of a check build comes here; `pc` is the kernel's return address.
// A thread's locals (a register tile's accumulators at -O1) are most accesses of a compute-bound kernel: 302 of
// linear_ladder v7's 315 million at 4096³ (2 x 2 blocks profiled, 2026-11-27). Nothing is recorded of them, so they
// return here, inline in the __tsan_* entry points, before check_access's search of the tensors and the shared arrays
// and before its prologue (a large frame, six saved registers): on_access was 22% of a profile of v7's 128 x 128
// tiles, the inlined entry points are 16% (perf). An atomic goes on, to the ticket rule.
__attribute__((always_inline)) inline void on_access(uintptr_t a, size_t n, bool write, bool atomic, uintptr_t pc,
                                                     bool cas = false) {
  const ThreadState& st = tls;
  Worker* w = st.worker;
  if (!w || !w->check || !w->running) return;
  if (!(write && atomic) && in_own_frames(*w, *w->check, a, st.fiber_mode)) return;
  check_access(w, a, n, write, atomic, pc, cas);
}

}  // namespace

// Hooks of the block scheduler (cuda_cpu_runtime.cpp), for check launches only.

bool check_stopped(const CheckState& c) { return c.stop; }

void check_block_start(Worker* w) {
  CheckState& c = *w->check;
  if (c.profiling && profile_pending()) profile_block_end(c.kernel->name);
  ++c.block;
  ++c.epoch;
  std::fill_n(c.wseq, c.threads, 0u);
  std::fill_n(c.fence_seq, c.threads, 0u);
  std::fill_n(c.fence_epoch, c.threads, 0u);
  if (c.warps_used) {
    std::fill_n(c.wsync, kMaxBlockThreads, 0u);
    std::fill_n(&c.sync_with[0][0], kMaxBlockThreads * 32, 0u);
    c.warps_used = false;
  }
}

// The running block ended (or was abandoned): its last stores are settled.
void check_block_end(Worker& w) {
  if (!w.check->pending.empty()) settle_stores(w);
}

// A __syncthreads is released. Threads of the block that exited before it do not count: since Volta a barrier
// waits for the threads that have not exited (CUDA Programming Guide, "Independent Thread Scheduling"), so an early
// `return` is fine. A barrier under an `if` that those threads skipped is not (the Guide: a barrier in conditional
// code only where the condition is the same for the whole block): a note here, which kp.check makes an error when
// the barrier's line is under an `if` of the source, and drops otherwise. Live threads that wait at another barrier
// are a deadlock (check_deadlock).
void check_barrier(Worker& w, int line) {
  CheckState& c = *w.check;
  if (!c.pending.empty()) settle_stores(w);
  ++c.epoch;
  if (c.profiling) profile_barrier();
  const unsigned exited = c.threads - w.n_live;
  if (!exited) return;
  unsigned first = 0;  // the first thread that exited: not live
  while (first < c.threads && (w.live[first / 32] >> (first % 32) & 1)) ++first;
  report(w, false, "barrier-exited", format("@%d", line), thread_of(c, first), format("@%d", line), "", "",
         format("divergent __syncthreads() {here} in block %s: %u of its %u threads reached it, %u exited without "
                "reaching it (the first: thread %s)",
                triple(w.st->block_idx).c_str(), w.n_live, c.threads, exited, triple(thread_of(c, first)).c_str()));
}

// A __threadfence() of the running thread: its global writes so far are visible to the device before its later
// ones (ticket_order).
void check_fence() {
  Worker* w = tls.worker;
  if (!w || !w->check || !w->running) return;
  CheckState& c = *w->check;
  const unsigned tid = running_tid(*w);
  c.fence_seq[tid] = c.wseq[tid];
  c.fence_epoch[tid] = c.epoch;
}

// The block is deadlocked (threads wait at different barriers or collectives): a finding, and the block ends.
[[noreturn]] void check_deadlock(Worker& w, const char* detail, int line) {
  report(w, true, "barrier", format("deadlock@%d", line), w.st->thread_idx, format("@%d", line), "", "",
         format("the threads of block %s wait at different barriers {here}%s, so none can go on (every thread "
                "of a block must reach the same __syncthreads)",
                triple(w.st->block_idx).c_str(), detail));
  skip_block(w);
}

// A warp collective completed for the lanes `group` of `warp`; `mask` named them.
void check_collective(Worker& w, unsigned warp, uint32_t group, unsigned mask, Collective kind, int line) {
  CheckState& c = *w.check;
  c.warps_used = true;
  for (uint32_t m = group; m; m &= m - 1) ++c.wsync[warp * 32 + __builtin_ctz(m)];
  for (uint32_t m = group; m; m &= m - 1) {
    const unsigned t = warp * 32 + __builtin_ctz(m);
    for (uint32_t o = group; o; o &= o - 1) c.sync_with[t][__builtin_ctz(o)] = c.wsync[t];
  }
  const unsigned exist = c.threads - warp * 32 >= 32 ? 32 : c.threads - warp * 32;
  const uint32_t missing = mask & (exist >= 32 ? ~0u : (1u << exist) - 1) & ~group;
  if (!missing) return;
  const unsigned lane = __builtin_ctz(missing), t = warp * 32 + lane;
  report(w, true, "barrier", format("mask@%d", line), thread_of(c, warp * 32 + __builtin_ctz(group)),
         format("@%d", line), "", "",
         format("%s(0x%08x) {here} in block %s: its mask names %d lanes of warp %u that exited without taking part "
                "(the first: lane %u, thread %s); every lane a mask names must reach the same call",
                collective_name(kind), mask, triple(w.st->block_idx).c_str(), __builtin_popcount(missing), warp, lane,
                triple(thread_of(c, t)).c_str()));
}

// A lane called a warp collective with a mask that does not name it (undefined in CUDA): a finding, and the block
// ends (its other lanes would wait for this one, or finish without it).
[[noreturn]] void check_mask_names_caller(Worker& w, unsigned mask, Collective kind, int line) {
  CheckState& c = *w.check;
  const unsigned tid = running_tid(w);
  report(w, true, "barrier", format("self@%d", line), thread_of(c, tid), format("@%d", line), "", "",
         format("%s(0x%08x) {here} in block %s: lane %u of warp %u (thread %s) calls it, and its mask does not name "
                "it; every lane that calls a _sync collective must be in the mask it passes",
                collective_name(kind), mask, triple(w.st->block_idx).c_str(), tid % 32, tid / 32,
                triple(thread_of(c, tid)).c_str()));
  skip_block(w);
}

bool check_branch(bool taken, const void* site, ThreadState* state) {
  Worker* w = state->worker;
  if (!w || !w->check || !w->running || !w->check->profiling) return taken;
  return profile_branch_fast(*w, profile_of(*w->check), taken, reinterpret_cast<uintptr_t>(__builtin_return_address(0)),
                             reinterpret_cast<uintptr_t>(site));
}

void check_shared(const void* var, size_t bytes, size_t elem, const unsigned* dims, int rank, const char* name,
                  const void* guard_lo, const void* guard_hi) {
  Worker* w = tls.worker;
  if (!w || !w->check) return;
  CheckState& c = *w->check;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(var);
  for (const SharedVar& v : c.shared)
    if (v.begin == begin && !v.guard) return;
  SharedVar v = {begin, begin + bytes, elem ? elem : 1, {}, rank, name, false, {}};
  std::copy_n(dims, std::min(rank, 4), v.dims);
  v.shadow.resize(bytes);
  c.shared.push_back(std::move(v));
  // A variable starts on 128 bytes (cuda_cpu.h's __shared__): the guard below it can end up to 127 bytes short of
  // it, and an index just before the variable would land in that padding, outside every guard. Each guard
  // therefore reaches the variable across such a gap.
  for (const void* g : {guard_lo, guard_hi}) {
    uintptr_t gb = reinterpret_cast<uintptr_t>(g), ge = gb + kGuardBytes;
    if (ge <= begin && begin - ge < 128) ge = begin;
    if (gb >= begin + bytes && gb - (begin + bytes) < 128) gb = begin + bytes;
    c.shared.push_back({gb, ge, 1, {}, 0, name, true, {}});
  }
  // And the padding after it, up to the next 128 bytes: no guard lies between two arrays of one declaration
  // (`__shared__ float a[33], b[33];`), and a[33] landed in that padding unseen.
  const uintptr_t end = begin + bytes, next = (end + 127) & ~uintptr_t(127);
  if (next > end) c.shared.push_back({end, next, 1, {}, 0, name, true, {}});
}

// An `extern __shared__ T name[]` is declared: its elements are named name[index] (sizeof(T) bytes each).
void check_dynamic_name(const char* name, size_t elem) {
  Worker* w = tls.worker;
  if (!w || !w->check) return;
  SharedVar& d = w->check->dynamic;
  d.name = name;
  if (elem && (d.end - d.begin) % elem == 0) {
    d.elem = elem;
    d.rank = 1;
    d.dims[0] = unsigned((d.end - d.begin) / elem);
  }
}

// Sets up this thread's check state for a launch of `kernel` on its worker `w` (w.check). One per OS
// thread, kept between launches: what a launch leaves is reset here, or lazily (the warp clocks, by
// check_block_start), so that a launch of a tiny kernel does not pay for clearing them.
void check_launch_begin(Worker& w, const Kernel& kernel, dim3 block, size_t shmem) {
  static thread_local std::unique_ptr<CheckState> state;
  if (!state) {
    state.reset(new CheckState());
    pthread_attr_t attr;  // the OS thread's stack (for the main thread, glibc reads /proc: once)
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr;
      size_t size;
      pthread_attr_getstack(&attr, &addr, &size);
      state->stack_lo = reinterpret_cast<uintptr_t>(addr);
      state->stack_hi = state->stack_lo + size;
      pthread_attr_destroy(&attr);
    }
  }
  CheckState& c = *state;
  // Below the caller's frames (the launcher's, its closure included), above those of the blocks run next.
  c.frames_hi = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  c.kernel = &kernel;
  c.launch = ++g_launches;
  ++t_launches;
  c.profiling = t_profiling;
  c.profile = t_profiling ? &t_profile : nullptr;
  c.block_dim = block;
  c.threads = block.x * block.y * block.z;
  c.tensors.clear();
  c.tensors_known = true;
  c.shared.clear();
  c.tls_blocks.clear();
  c.library_pages.clear();
  c.pending.clear();
  c.tickets.clear();
  c.seen.clear();
  c.stop = t_errors >= kMaxErrors;
  {
    std::lock_guard<std::mutex> lock(g_check_mutex);
    for (auto& t : g_tensors)
      if (t->call == t_call) c.tensors.push_back(t.get());
  }
  for (unsigned i = 0; i < kernel.n_pointers; ++i) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(kernel.pointers[i]);
    bool known = !p;
    for (const CheckedTensor* t : c.tensors) known |= p >= t->begin && p <= t->end;
    c.tensors_known &= known;
  }
  const uintptr_t dyn = reinterpret_cast<uintptr_t>(w.dynamic_smem);
  c.dynamic.begin = dyn;
  c.dynamic.end = dyn + shmem;
  c.dynamic.name = nullptr;
  c.dynamic.elem = 1;
  c.dynamic.rank = 0;
  c.dynamic.shadow.assign(shmem, ShadowByte());
  w.check = &c;
}

// The registry, for bindings and Python (the exported kp_check_* functions of cuda_cpu_runtime.cpp).

void check_begin_call() {
  t_call = ++g_calls;
  t_errors = t_warnings = 0;
}

// A tensor of this op call. A registration it overlaps is stale (its memory was freed and reused) and dropped, unless
// it is of this call and named since this thread's last launch: two views of one storage passed to one launch (a
// narrow view and the tensor it begins) are both live. Of this call alone is not enough: a standalone program never
// begins a call (t_call stays 0 for all of main()), and a binding's temporary freed between two launches leaves its
// registration behind, larger than a new one at its address would be. The oldest beyond 64 are dropped too.
void check_tensor(const char* name, const void* data, size_t bytes, size_t elem) {
  if (!data || !bytes) return;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data), end = begin + bytes;
  std::lock_guard<std::mutex> lock(g_check_mutex);
  for (auto& t : g_tensors)
    if (t->begin == begin && t->end == end && t->call == t_call) {  // the same tensor twice: live for the next launch
      t->since = t_launches;
      return;
    }
  auto stale = [&](const std::unique_ptr<CheckedTensor>& t) {
    return (t->call != t_call || t->since != t_launches) && t->begin < end && begin < t->end;
  };
  g_tensors.erase(std::remove_if(g_tensors.begin(), g_tensors.end(), stale), g_tensors.end());
  if (g_tensors.size() >= 64) g_tensors.erase(g_tensors.begin());
  g_tensors.emplace_back(new CheckedTensor{begin, end, elem ? elem : 1, t_call, t_launches, name ? name : "?", {}, {}});
}

// cudaFree (check builds): the registrations of the allocation at `data` go, so that a later launch cannot find
// the freed block's bytes through them (a smaller allocation at the same address would seem to extend past its end).
void check_forget(const void* data) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  if (!begin) return;
  std::lock_guard<std::mutex> lock(g_check_mutex);
  auto freed = [&](const std::unique_ptr<CheckedTensor>& t) { return t->begin == begin; };
  g_tensors.erase(std::remove_if(g_tensors.begin(), g_tensors.end(), freed), g_tensors.end());
}

const char* check_take_report() {
  static thread_local std::string taken;
  taken.swap(t_report);
  t_report.clear();
  return taken.c_str();
}

int check_last_write(const void* address, char* out, size_t size) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::lock_guard<std::mutex> lock(g_check_mutex);
  for (auto& t : g_tensors) {
    if (a < t->begin || a >= t->end || !t->writes.at) continue;
    const LastWrite& last = t->writes.at[(a - t->begin) / t->elem];
    if (!last.kernel || last.call != t->call) return 0;
    snprintf(out, size, "kernel '%s' block %s thread %s %s", last.kernel, triple(last.block).c_str(),
             triple(last.thread).c_str(), where(last.pc).c_str());
    return 1;
  }
  return 0;
}

// g++'s -fsanitize=object-size (check builds): an access through a pointer past the end of the object it points
// into, where the compiler knows that object (a local array, after inlining: add2_at's c[i + 1] on a Pack's
// values). Only a thread's own objects are judged here; tensors and __shared__ arrays have on_access's checks.
void on_object_size(const char* file, unsigned line, uintptr_t a, unsigned char kind) {
  Worker* w = tls.worker;
  if (!w || !w->check || !w->running || !on_own_stack(*w, *w->check, a)) return;
  const char* access = kind == 0 ? "read" : kind == 1 ? "write" : "access";
  const std::string here = format("%s:%u", file, line);
  report(*w, true, "local-bounds", here, thread_of(*w->check, running_tid(*w)), here, "", "",
         format("out-of-bounds %s {here}: past the end of the thread's own array it points into (a local variable: "
                "registers or local memory on a GPU, which no tensor check sees); the block stopped before the %s",
                access, access));
  skip_block(*w);
}

}  // namespace detail
}  // namespace kp

// ---------------------------------------------------------------------------------------------
// The instrumentation's entry points (GCC's -fsanitize=thread ABI). Exported: check builds of kernel
// files call them. Outside a check launch (a check build's binding code, host code) they only do what
// the access or atomic itself does.

#define KP_RA reinterpret_cast<uintptr_t>(__builtin_return_address(0))
#if defined(__x86_64__) && defined(__ELF__)
// A plain read or write of the caller's own frame, [rsp, rbp): the thread's own locals (a register tile at -O1, which
// -fsanitize=object-size makes addressable, so that ThreadSanitizer hooks every access to it: 302 of linear_ladder
// v7's 315 million accesses at 4096³). on_access returns for these with nothing done (in_own_frames); answered here,
// before anything else, they cost no TLS lookup (__tls_get_addr was 5% of a profile of v7's 128 x 128 tiles, perf,
// 2026-11-27) and no load. Sound because every caller is a check build, compiled with -fno-omit-frame-pointer
// (kp/build.py's CHECK_CFLAGS): rbp is the caller's frame, on the running thread's own stack (its fiber's, or the OS
// thread's below the launch), which holds no tensor and no __shared__ variable. A frame larger than a fiber's stack
// cannot be one: that bound keeps a wrong rbp from answering. Anything else goes on to the hook in C++.
// The hooks are `used`: only the asm names them, which the compiler does not read (LTO could drop them). ELF only:
// the directives (.type, .size, .pushsection) are ELF's.
#define KP_TSAN_OWN_FRAME(name)                                                                     \
  asm(".pushsection .text\n.p2align 4\n.globl " #name "\n.type " #name ", @function\n" #name        \
      ":\nendbr64\ncmp %rsp, %rdi\njb 1f\ncmp %rbp, %rdi\njae 1f\nmov %rbp, %rax\nsub %rsp, %rax\n" \
      "cmp $0x80000, %rax\njae 1f\nret\n1:\njmp " #name "_hook\n.size " #name ", .-" #name "\n.popsection\n");
#define KP_TSAN_PLAIN(n)                                                             \
  KP_TSAN_OWN_FRAME(__tsan_read##n)                                                  \
  KP_TSAN_OWN_FRAME(__tsan_write##n)                                                 \
  __attribute__((visibility("hidden"), used)) void __tsan_read##n##_hook(void* p) {  \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n, false, false, KP_RA);   \
  }                                                                                  \
  __attribute__((visibility("hidden"), used)) void __tsan_write##n##_hook(void* p) { \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n, true, false, KP_RA);    \
  }
#else
#define KP_TSAN_PLAIN(n)                                                                                          \
  void __tsan_read##n(void* p) { kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n, false, false, KP_RA); } \
  void __tsan_write##n(void* p) { kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n, true, false, KP_RA); }
#endif
#define KP_TSAN_ACCESS(n)                                                          \
  KP_TSAN_PLAIN(n)                                                                 \
  void __tsan_unaligned_read##n(void* p) {                                         \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n, false, false, KP_RA); \
  }                                                                                \
  void __tsan_unaligned_write##n(void* p) {                                        \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n, true, false, KP_RA);  \
  }                                                                                \
  void __tsan_volatile_read##n(void* p) {                                          \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n, false, false, KP_RA); \
  }                                                                                \
  void __tsan_volatile_write##n(void* p) {                                         \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n, true, false, KP_RA);  \
  }

// Atomics: the operation itself (sequentially consistent: stronger than asked, never weaker), after the check.
#define KP_TSAN_ATOMIC(n, T)                                                                               \
  T __tsan_atomic##n##_load(const volatile T* p, int) {                                                    \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n / 8, false, true, KP_RA);                      \
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);                                                           \
  }                                                                                                        \
  void __tsan_atomic##n##_store(volatile T* p, T v, int) {                                                 \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n / 8, true, true, KP_RA);                       \
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);                                                              \
  }                                                                                                        \
  KP_TSAN_RMW(n, T, exchange, __atomic_exchange_n)                                                         \
  KP_TSAN_RMW(n, T, fetch_add, __atomic_fetch_add)                                                         \
  KP_TSAN_RMW(n, T, fetch_sub, __atomic_fetch_sub)                                                         \
  KP_TSAN_RMW(n, T, fetch_and, __atomic_fetch_and)                                                         \
  KP_TSAN_RMW(n, T, fetch_or, __atomic_fetch_or)                                                           \
  KP_TSAN_RMW(n, T, fetch_xor, __atomic_fetch_xor)                                                         \
  KP_TSAN_RMW(n, T, fetch_nand, __atomic_fetch_nand)                                                       \
  int __tsan_atomic##n##_compare_exchange_strong(volatile T* p, T* expected, T desired, int, int) {        \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n / 8, true, true, KP_RA, true); /* atomicCAS */ \
    return __atomic_compare_exchange_n(p, expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);   \
  }                                                                                                        \
  int __tsan_atomic##n##_compare_exchange_weak(volatile T* p, T* expected, T desired, int, int) {          \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n / 8, true, true, KP_RA);                       \
    return __atomic_compare_exchange_n(p, expected, desired, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);    \
  }                                                                                                        \
  T __tsan_atomic##n##_compare_exchange_val(volatile T* p, T expected, T desired, int, int) {              \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n / 8, true, true, KP_RA);                       \
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);         \
    return expected;                                                                                       \
  }
#define KP_TSAN_RMW(n, T, name, builtin)                                             \
  T __tsan_atomic##n##_##name(volatile T* p, T v, int) {                             \
    kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n / 8, true, true, KP_RA); \
    return builtin(p, v, __ATOMIC_SEQ_CST);                                          \
  }

extern "C" {
__attribute__((visibility("default"))) void __tsan_init() {}
__attribute__((visibility("default"))) void __tsan_func_entry(void*) {}
__attribute__((visibility("default"))) void __tsan_func_exit() {}
__attribute__((visibility("default"))) void __tsan_vptr_update(void**, void*) {}
__attribute__((visibility("default"))) void __tsan_vptr_read(void**) {}
__attribute__((visibility("default"))) void __tsan_read_range(void* p, unsigned long n) {
  kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n, false, false, KP_RA);
}
__attribute__((visibility("default"))) void __tsan_write_range(void* p, unsigned long n) {
  kp::detail::on_access(reinterpret_cast<uintptr_t>(p), n, true, false, KP_RA);
}
__attribute__((visibility("default"))) void __tsan_atomic_thread_fence(int) {
  kp::detail::check_fence();  // __threadfence() (__threadfence_block() is a signal fence: no call)
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
__attribute__((visibility("default"))) void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
// -fsanitize=object-size's entry points (GCC's UBSan ABI: its data starts with the source location, then the
// type, log2 of the alignment and the kind of access: 0 a load, 1 a store).
struct KpUbsanTypeMismatch {
  const char* file;
  unsigned line, column;
  const void* type;
  unsigned char log_alignment, kind;
};
__attribute__((visibility("default"))) void __ubsan_handle_type_mismatch_v1(void* data, void* pointer) {
  const auto* d = static_cast<const KpUbsanTypeMismatch*>(data);
  kp::detail::on_object_size(d->file, d->line, reinterpret_cast<uintptr_t>(pointer), d->kind);
}
__attribute__((visibility("default"))) void __ubsan_handle_type_mismatch_v1_abort(void* data, void* pointer) {
  __ubsan_handle_type_mismatch_v1(data, pointer);
}
#pragma GCC visibility push(default)
KP_TSAN_ACCESS(1)
KP_TSAN_ACCESS(2)
KP_TSAN_ACCESS(4)
KP_TSAN_ACCESS(8)
KP_TSAN_ACCESS(16)
KP_TSAN_ATOMIC(8, uint8_t)
KP_TSAN_ATOMIC(16, uint16_t)
KP_TSAN_ATOMIC(32, uint32_t)
KP_TSAN_ATOMIC(64, uint64_t)
#pragma GCC visibility pop
}
#undef KP_TSAN_ACCESS
#undef KP_TSAN_PLAIN
#undef KP_TSAN_OWN_FRAME
#undef KP_TSAN_ATOMIC
#undef KP_TSAN_RMW
#undef KP_RA
