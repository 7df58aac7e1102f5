// cuda_cpu_runtime.cpp: the runtime of the CPU stand-in for CUDA (cuda_cpu.h). It owns the thread
// pool that runs the blocks of a launch, the fibers that run the CUDA threads of a block once one
// of them reaches a barrier, the barriers and warp collectives themselves, deadlock detection, and
// CUDA's per-thread error state.
//
// Built once per process, and every kernel library links against it, so that one pool and one set
// of fiber stacks serve all the kernel libraries (and edited versions of them) a process loads:
//   g++ -std=c++17 -O2 -fPIC -shared -pthread cuda_cpu_runtime.cpp cuda_cpu_redzones.cpp -I<torch's include>
//       -L<torch's lib> -lc10 -o libkp_cuda_cpu.so
// For Python (ctypes): kp_get_num_threads, kp_set_num_threads, kp_pool_os_threads. Built with
// cuda_cpu_redzones.cpp (the redzones around CPU tensors, which need torch's c10 headers and library).
//
// In order: errors, contexts (the fiber switch), the block scheduler (fibers, barriers, warp
// collectives, deadlocks), faults (signals, device assert, __trap), launches and the pool (with the
// host runtime's function attributes, cuda_cpu_host.h), the exported functions.

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cuda_cpu.h"

// Internal unless declared KP_API in cuda_cpu.h; the functions for Python follow the pop below.
#pragma GCC visibility push(hidden)

namespace kp {
namespace detail {

__thread ThreadState tls;

constexpr unsigned kMaxBlockThreads = 1024;      // CUDA's limit
constexpr size_t kDefaultDynamicShared = 49152;  // CUDA's limit without opting in (cudaFuncSetAttribute)
constexpr size_t kMaxDynamicShared = 232448;     // opted in: an H100's sharedMemPerBlockOptin, 227 KiB (the CUDA
                                                 // C++ Programming Guide's limit per block for compute capability 9.0)
constexpr size_t kFiberStackBytes = 512 << 10;   // per fiber (CUDA's most local memory per thread), plus a guard
                                                 // page below it; reserved, and committed only where touched
constexpr size_t kSignalStackBytes = 64 << 10;   // per OS thread that runs blocks, for the fault handler

// ---------------------------------------------------------------------------------------------
// Errors: like CUDA's, one last error per host thread.

namespace {

thread_local cudaError_t t_last_error = cudaSuccess;
thread_local char t_last_message[1024];  // "<CUDA's text>: <what happened>"

__attribute__((format(printf, 2, 3))) void record_error(cudaError_t code, const char* format, ...) {
  t_last_error = code;
  const int len = snprintf(t_last_message, sizeof t_last_message, "%s: ", cudaGetErrorString(code));
  va_list args;
  va_start(args, format);
  vsnprintf(t_last_message + len, sizeof t_last_message - len, format, args);
  va_end(args);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Contexts: a suspended CUDA thread. On x86-64 a hand-written switch stores the stack pointer,
// frame pointer and resume address and lets the compiler save whatever else is live (a few ns);
// elsewhere ucontext (~200 ns: it saves the signal mask with a system call). The floating-point
// control words are not switched: kernels do not change rounding modes.

extern "C" void kp_fiber_main(Worker* w);  // runs one CUDA thread on a fresh fiber; never returns

#if defined(__x86_64__)

struct Context {
  void* sp;  // its stack pointer
  void* pc;  // where it resumes
  void* bp;  // its rbp
};

extern "C" void kp_fiber_start();

namespace {

asm(R"(
  .text
  .globl kp_fiber_start
  .hidden kp_fiber_start
  .type kp_fiber_start, @function
  .p2align 4
kp_fiber_start:              # first resume of a fiber: its Worker* is at the top of its stack
  .cfi_startproc
  .cfi_undefined rip         # the bottom of the fiber's stack, for debuggers
  movq (%rsp), %rdi
  call kp_fiber_main
  ud2
  .cfi_endproc
  .size kp_fiber_start, .-kp_fiber_start
)");

#if defined(__AVX512F__)  // registers g++ allocates only when AVX-512 is enabled
#define KP_AVX512_CLOBBERS                                                                                      \
  , "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", \
      "xmm28", "xmm29", "xmm30", "xmm31", "k1", "k2", "k3", "k4", "k5", "k6", "k7"
#else
#define KP_AVX512_CLOBBERS
#endif

// Saves the running context in `save` and resumes `load`. Inline assembly that clobbers every
// register the compiler may allocate, so that the compiler saves only what is live; rbp, which
// cannot be declared clobbered, goes in the Context. Nothing is written to the stack, and every
// suspended context resumes at the same label, so the indirect jump predicts well.
__attribute__((always_inline)) inline void context_switch(Context* save, Context* load) {
  void* sp = load->sp;
  void* pc = load->pc;
  void* bp = load->bp;
  asm volatile(
      "movq %%rsp, 0(%[save])\n\t"
      "leaq 1f(%%rip), %%rax\n\t"
      "movq %%rax, 8(%[save])\n\t"
      "movq %%rbp, 16(%[save])\n\t"
      "movq %[sp], %%rsp\n\t"
      "movq %[bp], %%rbp\n\t"
      "jmpq *%[pc]\n"
      "1:"
      : [save] "+D"(save), [sp] "+S"(sp), [pc] "+d"(pc), [bp] "+c"(bp)
      :
      : "rax", "rbx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "memory", "cc", "xmm0", "xmm1", "xmm2",
        "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
        "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)" KP_AVX512_CLOBBERS);
}

// Fetches the top of a suspended context's stack into the cache.
inline void prefetch_context(const Context& c) {
  __builtin_prefetch(c.sp);
  __builtin_prefetch(static_cast<char*>(c.sp) + 64);
}

// Prepares `c` so that switching to it calls kp_fiber_main(w) on the stack [stack, stack + size).
void context_start(Context* c, char* stack, size_t size, Worker* w) {
  void** top = reinterpret_cast<void**>(stack + size);  // 16-byte aligned: stacks are pages
  top[-2] = w;  // kp_fiber_start starts with rsp 16-byte aligned, as before a call
  c->sp = top - 2;
  c->pc = reinterpret_cast<void*>(&kp_fiber_start);
  c->bp = nullptr;
}

#else

struct Context {
  ucontext_t uc;
};

namespace {

void context_switch(Context* save, Context* load) { swapcontext(&save->uc, &load->uc); }

inline void prefetch_context(const Context&) {}

void fiber_start_ucontext();  // kp_fiber_main of this OS thread's worker

void context_start(Context* c, char* stack, size_t size, Worker*) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = stack;
  c->uc.uc_stack.ss_size = size;
  c->uc.uc_link = nullptr;
  makecontext(&c->uc, fiber_start_ucontext, 0);
}

#endif

}  // namespace

// ---------------------------------------------------------------------------------------------
// The block scheduler. Each OS thread that runs blocks has a Worker. A block starts in plain mode
// (the loop of cuda_cpu.h calls the kernel once per CUDA thread); the first barrier or warp
// collective moves it to fibers (enter_fibers). From then on exactly one CUDA thread of the block
// runs at a time; a thread that waits at a barrier hands over to the next ready thread, and when
// every live thread waits, either they all wait at the same __syncthreads and are released, or the
// block is deadlocked and abandoned: a jump back to the worker's loop (__builtin_longjmp), with no
// destructors run and nothing allocated per launch.
//
// Releasing a __syncthreads touches no thread: it advances the barrier epoch, and a thread that
// waits in an earlier epoch than the current one counts as ready.

enum Status : uint8_t { kNew, kReady, kWaitBlock, kWaitWarp, kExited };  // kNew: not started yet

// One CUDA thread of the running block (in fiber mode), indexed by linear thread id. One cache
// line on x86-64: a barrier touches the slot of every thread it switches to.
struct alignas(64) Slot {
  Context ctx;
  uint32_t idx;         // its threadIdx, packed: x | y << 11 | z << 22
  uint16_t next, prev;  // the circular list of live threads, in id order
  Status status;
  uint8_t epoch;           // __syncthreads: the barrier epoch it waits in
  Collective kind;         // what it waits in (kWaitWarp)
  uint8_t width;           // shuffle: segment width
  int line;                // the source line it waits at
  unsigned mask;           // warp collective: the lanes taking part, its own included
  int arg;                 // shuffle: source lane, delta or lane mask
  uint64_t value, result;  // shuffle value or vote predicate; what the collective returns to it
};
#if defined(__x86_64__)
static_assert(sizeof(Slot) == 64, "a Slot is one cache line");
#endif

struct Launch;
struct CheckState;  // check mode (cuda_cpu_check.h)

struct Worker {
  ThreadState* st;  // this OS thread's tls
  Launch* launch = nullptr;
  CheckState* check = nullptr;  // the running launch's, if it is a check launch
  void* abort_point[5];         // __builtin_setjmp buffer: where an abandoned block returns to
  bool running = false;         // abort_point is set: blocks of `launch` run on this OS thread
  Context home;                 // the OS thread's stack while fibers finish a block
  // The running block, while st->fiber_mode:
  unsigned cur, head;  // the running thread; the lowest live thread
  unsigned n_live, n_wait, n_block_wait;
  uint8_t epoch;                   // of the __syncthreads that threads arrive at now
  unsigned votes[2], voters[2];    // __syncthreads_count/and/or: per epoch parity, true predicates and arrivals
  int barrier_line;                // where the first thread waiting in __syncthreads waits
  bool barrier_mismatch;           // some wait in __syncthreads on another line
  uint32_t live[32], waiting[32];  // per warp: lanes not exited; lanes in a warp collective
  Slot slots[kMaxBlockThreads];
  char* stacks[kMaxBlockThreads] = {};  // fiber stacks, mapped on first use, kept for later launches
  alignas(128) char dynamic_smem[kMaxDynamicShared];

  explicit Worker(ThreadState* state) : st(state) {}
  ~Worker() {
    for (char* stack : stacks)
      if (stack) munmap(stack - page_size(), page_size() + kFiberStackBytes);
  }
  static size_t page_size() {
    static const size_t size = sysconf(_SC_PAGESIZE);
    return size;
  }
};

// What all the workers of one launch share.
struct Launch {
  Kernel kernel;
  uint3 grid, block;
  uint64_t blocks;
  uint64_t chunk = 1;  // blocks taken at a time
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  cudaError_t code = cudaErrorLaunchFailure;  // how it failed, and what failed,
  char message[1024];                         // written by the first worker that failed

  Launch(const Kernel& k, dim3 g, dim3 b) : kernel(k), grid(g), block(b), blocks(uint64_t(g.x) * g.y * g.z) {}
};

// Check mode's hooks in the scheduler (cuda_cpu_check.h).
void check_barrier(Worker& w, int line);
void check_block_end(Worker& w);
[[noreturn]] void check_deadlock(Worker& w, const char* detail, int line);
void check_collective(Worker& w, unsigned warp, uint32_t group, unsigned mask, Collective kind, int line);
[[noreturn]] void check_mask_names_caller(Worker& w, unsigned mask, Collective kind, int line);

namespace {

thread_local std::unique_ptr<Worker> t_worker;

void ensure_signal_stack();

Worker& this_worker() {
  if (!t_worker) {
    t_worker.reset(new Worker(&tls));
    ensure_signal_stack();
  }
  return *t_worker;
}

#if !defined(__x86_64__)
void fiber_start_ucontext() { kp_fiber_main(t_worker.get()); }
#endif

unsigned linear_id(uint3 t, uint3 b) { return t.x + b.x * (t.y + b.y * t.z); }

// Lanes [lo, hi) of a warp.
uint32_t lanes(unsigned lo, unsigned hi) { return (hi >= 32 ? ~0u : (1u << hi) - 1) & ~((1u << lo) - 1); }

// Records why the running block cannot go on ("<what> in kernel 'k' block (x,y,z)<detail>", or with
// `thread` "<what> in kernel 'k' thread (x,y,z) block (x,y,z)<detail>") and abandons it: the worker
// stops taking blocks and the launch reports `code`. Also called from the fault handler.
[[noreturn]] void abandon_block(Worker& w, const char* what, const char* detail = "", bool thread = false,
                                cudaError_t code = cudaErrorLaunchFailure) {
  Launch& launch = *w.launch;
  const uint3 b = w.st->block_idx, t = w.st->thread_idx;
  if (!launch.failed.exchange(true)) {
    char who[64] = "";
    if (thread) snprintf(who, sizeof who, " thread (%u,%u,%u)", t.x, t.y, t.z);
    launch.code = code;
    snprintf(launch.message, sizeof launch.message, "%s in kernel '%s'%s block (%u,%u,%u)%s", what, launch.kernel.name,
             who, b.x, b.y, b.z, detail);
  }
  w.st->fiber_mode = 0;
  w.running = false;
  __builtin_longjmp(w.abort_point, 1);
}

char* fiber_stack(Worker& w, unsigned id) {
  if (!w.stacks[id]) {
    const size_t guard = Worker::page_size();
    void* p = mmap(nullptr, guard + kFiberStackBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED) abandon_block(w, "no memory for a fiber stack");
    mprotect(p, guard, PROT_NONE);  // an overflow faults instead of corrupting a neighbour
    w.stacks[id] = static_cast<char*>(p) + guard;
  }
  return w.stacks[id];
}

// Moves the running block to fibers. Called on the OS thread's stack by the first CUDA thread to
// reach a barrier: the threads before it have returned (exited), those after it have not started.
void enter_fibers(Worker& w) {
  ThreadState& st = *w.st;
  const uint3 b = st.block_dim;
  const unsigned n = b.x * b.y * b.z, first = linear_id(st.thread_idx, b);
  std::fill_n(w.live, 32, 0u);
  std::fill_n(w.waiting, 32, 0u);
  uint3 idx = st.thread_idx;
  for (unsigned i = first; i < n; ++i) {
    Slot& s = w.slots[i];
    s.idx = idx.x | idx.y << 11 | idx.z << 22;
    s.status = kNew;
    s.next = i + 1 < n ? i + 1 : first;
    s.prev = i > first ? i - 1 : n - 1;
    w.live[i / 32] |= 1u << (i % 32);
    if (++idx.x == b.x) {
      idx.x = 0;
      if (++idx.y == b.y) idx.y = 0, ++idx.z;
    }
  }
  w.slots[first].status = kReady;  // it runs on the OS thread's stack
  w.cur = w.head = first;
  w.n_live = n - first;
  w.n_wait = w.n_block_wait = 0;
  w.barrier_mismatch = false;
  w.votes[w.epoch & 1] = w.voters[w.epoch & 1] = 0;
  st.fiber_mode = 1;
}

const char* collective_name(Collective kind) {
  static const char* const names[] = {
      "__syncwarp",        "__shfl_sync",       "__shfl_up_sync",    "__shfl_down_sync",
      "__shfl_xor_sync",   "__all_sync",        "__any_sync",        "__ballot_sync",
      "__match_any_sync",  "__match_all_sync",  "__reduce_add_sync", "__reduce_min_sync",
      "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync",  "__reduce_xor_sync"};
  return names[static_cast<int>(kind)];
}

// Every live thread waits and they cannot all go on: say who waits where, e.g.
// "deadlock in kernel 'k' block (1,0,0): 16 threads wait in __syncwarp (line 3), 240 in
// __syncthreads (line 5)", and abandon the block.
[[noreturn]] void deadlock(Worker& w) {
  struct Group {
    const char* where;
    int line;
    unsigned count;
  } groups[8];
  unsigned n_groups = 0, others = 0;
  for (unsigned i = w.head, k = 0; k < w.n_live; ++k, i = w.slots[i].next) {
    const Slot& s = w.slots[i];
    const char* where = s.status == kWaitBlock ? "__syncthreads" : collective_name(s.kind);
    Group* g = groups;
    while (g < groups + n_groups && (g->where != where || g->line != s.line)) ++g;
    if (g < groups + n_groups)
      ++g->count;
    else if (n_groups < 8)
      groups[n_groups++] = {where, s.line, 1};
    else
      ++others;
  }
  char detail[512];
  size_t len = 0;
  for (unsigned g = 0; g < n_groups && len < sizeof detail; ++g) {
    const char* who = g ? "" : groups[g].count == 1 ? " thread waits" : " threads wait";
    len += snprintf(detail + len, sizeof detail - len, "%s%u%s in %s (line %d)", g ? ", " : ": ", groups[g].count, who,
                    groups[g].where, groups[g].line);
  }
  if (others && len < sizeof detail) snprintf(detail + len, sizeof detail - len, ", %u elsewhere", others);
  if (w.check) check_deadlock(w, detail, groups[0].line);
  abandon_block(w, "deadlock", detail);
}

// Gives thread `id` a fresh fiber that starts the kernel.
__attribute__((noinline)) void start_fiber(Worker& w, unsigned id) {
  context_start(&w.slots[id].ctx, fiber_stack(w, id), kFiberStackBytes, &w);
}

bool runnable(const Worker& w, const Slot& s) {
  return s.status <= kReady || (s.status == kWaitBlock && s.epoch != w.epoch);
}

// Runs thread `id`, saving the running context in `save`; returns when something switches back.
// Inlined into every barrier: this and suspend() are the path each arrival takes.
__attribute__((always_inline)) inline void switch_to(Worker& w, unsigned id, Context* save) {
  Slot& s = w.slots[id];
  w.cur = id;
  w.st->thread_idx = {s.idx & 2047, s.idx >> 11 & 2047, s.idx >> 22};
  if (__builtin_expect(s.status == kNew, 0)) start_fiber(w, id);
  s.status = kReady;
  // Threads mostly run in id order and a block's slots and stacks outgrow L1: fetch the slot two
  // threads on, and the saved registers of the next one (whose slot the last switch fetched).
  __builtin_prefetch(&w.slots[(id + 2) % kMaxBlockThreads]);
  prefetch_context(w.slots[(id + 1) % kMaxBlockThreads].ctx);
  context_switch(save, &s.ctx);
}

// Every live thread waits: if all wait at the same __syncthreads, release them and return the
// first; otherwise the block is deadlocked.
unsigned release_barrier(Worker& w) {
  if (w.n_block_wait != w.n_live || w.barrier_mismatch) deadlock(w);
  if (__builtin_expect(w.check != nullptr, 0)) check_barrier(w, w.barrier_line);
  ++w.epoch;
  w.votes[w.epoch & 1] = w.voters[w.epoch & 1] = 0;  // the next barrier's; this one's stay for its threads
  w.n_wait = w.n_block_wait = 0;
  w.barrier_mismatch = false;
  return w.head;
}

// The first ready thread from `id` on, in list order. There is one: not every live thread waits.
inline unsigned next_ready(const Worker& w, unsigned id) {
  while (!runnable(w, w.slots[id])) id = w.slots[id].next;
  return id;
}

// The running thread has started to wait: run the next thread that can run.
__attribute__((always_inline)) inline void suspend(Worker& w) {
  const unsigned me = w.cur;
  const unsigned next = w.n_wait == w.n_live ? release_barrier(w) : next_ready(w, w.slots[me].next);
  if (next != me) switch_to(w, next, &w.slots[me].ctx);
}

// The lane whose value `lane` receives from a shuffle, or -1 for its own value, as CUDA defines it.
int source_lane(Collective kind, unsigned lane, int arg, unsigned w) {
  const unsigned start = lane & ~(w - 1), offset = lane - start, a = arg;
  switch (kind) {
    case Collective::shfl:
      return start + (a & (w - 1));
    case Collective::shfl_up:
      return offset >= a ? int(lane - a) : -1;
    case Collective::shfl_down:
      return uint64_t(offset) + a < w ? int(lane + a) : -1;
    case Collective::shfl_xor:  // earlier segments may be read, later ones not
      return (lane ^ a) < start + w ? int(lane ^ a) : -1;
    default:
      return -1;
  }
}

// __reduce_*_sync over the values of the lanes in `group`, 32-bit, signed when `is_signed`.
uint64_t reduce(Collective kind, const Slot* lane, uint32_t group, int is_signed) {
  uint32_t acc = uint32_t(lane[__builtin_ctz(group)].value);
  for (uint32_t m = group & (group - 1); m; m &= m - 1) {
    const uint32_t v = uint32_t(lane[__builtin_ctz(m)].value);
    switch (kind) {
      case Collective::reduce_add:
        acc += v;
        break;
      case Collective::reduce_min:
        acc = is_signed ? uint32_t(std::min(int32_t(acc), int32_t(v))) : std::min(acc, v);
        break;
      case Collective::reduce_max:
        acc = is_signed ? uint32_t(std::max(int32_t(acc), int32_t(v))) : std::max(acc, v);
        break;
      case Collective::reduce_and:
        acc &= v;
        break;
      case Collective::reduce_or:
        acc |= v;
        break;
      default:
        acc ^= v;
    }
  }
  return acc;
}

// Completes the warp collective with `mask` and `kind` in warp `warp` if every live lane of the
// mask waits in it: computes each lane's result and makes the lanes ready.
bool try_complete(Worker& w, unsigned warp, unsigned mask, Collective kind) {
  const uint32_t group = mask & w.live[warp];
  if (group & ~w.waiting[warp]) return false;
  Slot* lane = &w.slots[warp * 32];
  uint32_t votes = 0;
  for (uint32_t m = group; m; m &= m - 1) {
    const Slot& s = lane[__builtin_ctz(m)];
    if (s.mask != mask || s.kind != kind) return false;
    if (s.value) votes |= m & -m;
  }
  for (uint32_t m = group; m; m &= m - 1) {
    const unsigned l = __builtin_ctz(m);
    Slot& s = lane[l];
    switch (kind) {
      case Collective::syncwarp:
        s.result = 0;
        break;
      case Collective::all:
        s.result = votes == group;
        break;
      case Collective::any:
        s.result = votes != 0;
        break;
      case Collective::ballot:
        s.result = votes;
        break;
      case Collective::match_any:
      case Collective::match_all: {
        uint32_t same = 0;
        for (uint32_t o = group; o; o &= o - 1)
          if (lane[__builtin_ctz(o)].value == s.value) same |= o & -o;
        s.result = kind == Collective::match_any ? same : (same == group ? group : 0);
        break;
      }
      case Collective::reduce_add:
      case Collective::reduce_min:
      case Collective::reduce_max:
      case Collective::reduce_and:
      case Collective::reduce_or:
      case Collective::reduce_xor:
        s.result = reduce(kind, lane, group, s.arg);
        break;
      default: {
        const int src = source_lane(kind, l, s.arg, s.width);
        s.result = src >= 0 && (group >> src & 1) ? lane[src].value : s.value;
      }
    }
    s.status = kReady;
  }
  if (__builtin_expect(w.check != nullptr, 0))
    check_collective(w, warp, group, mask, kind, lane[__builtin_ctz(group)].line);
  w.waiting[warp] &= ~group;
  w.n_wait -= __builtin_popcount(group);
  return true;
}

// A lane of `warp` exited: a collective may have waited for it alone.
void retry_warp(Worker& w, unsigned warp) {
  for (uint32_t m = w.waiting[warp]; m; m &= m - 1) {
    const unsigned l = __builtin_ctz(m);
    if (w.waiting[warp] >> l & 1) try_complete(w, warp, w.slots[warp * 32 + l].mask, w.slots[warp * 32 + l].kind);
  }
}

// The running thread returned from the kernel. Runs the next thread, saving the running context in
// `save` (never resumed for a fiber; `home` for the thread on the OS thread's stack, resumed once
// the block is done). Returns only on the OS thread's stack, once every thread has exited.
void exit_thread(Worker& w, Context* save) {
  const unsigned me = w.cur, after = w.slots[me].next, warp = me / 32;
  Slot& s = w.slots[me];
  s.status = kExited;
  w.slots[s.prev].next = after;
  w.slots[after].prev = s.prev;
  if (w.head == me) w.head = after;
  --w.n_live;
  w.live[warp] &= ~(1u << (me % 32));
  if (w.waiting[warp]) retry_warp(w, warp);
  if (w.n_live == 0) {
    if (save != &w.home) context_switch(save, &w.home);
    return;
  }
  switch_to(w, w.n_wait == w.n_live ? release_barrier(w) : next_ready(w, after), save);
}

}  // namespace

extern "C" __attribute__((used)) void kp_fiber_main(Worker* w) {
  w->launch->kernel.run_thread(w->launch->kernel.body);
  exit_thread(*w, &w->slots[w->cur].ctx);
  __builtin_unreachable();
}

void finish_fiber_block(Worker* w) {
  exit_thread(*w, &w->home);
  w->st->fiber_mode = 0;
}

int syncthreads_vote(Worker* w, int predicate, int line, int op) {
  if (!w->st->fiber_mode) enter_fibers(*w);
  const unsigned parity = w->epoch & 1;
  w->votes[parity] += predicate != 0;
  ++w->voters[parity];
  syncthreads(w, line);
  const unsigned votes = w->votes[parity], voters = w->voters[parity];
  return op == 0 ? int(votes) : op == 1 ? votes == voters : votes != 0;  // count, and, or
}

void syncthreads(Worker* w, int line) {
  if (!w->st->fiber_mode) enter_fibers(*w);
  Slot& s = w->slots[w->cur];
  s.status = kWaitBlock;
  s.epoch = w->epoch;
  s.line = line;
  if (w->n_block_wait++ == 0)
    w->barrier_line = line;
  else if (line != w->barrier_line)
    w->barrier_mismatch = true;
  ++w->n_wait;
  suspend(*w);
}

uint64_t warp_collective(Worker* w, Collective kind, unsigned mask, uint64_t value, int arg, int width, int line) {
  if (!w->st->fiber_mode) enter_fibers(*w);
  const unsigned me = w->cur, warp = me / 32, bit = 1u << (me % 32);
  if (w->check && !(mask & bit)) check_mask_names_caller(*w, mask, kind, line);
  Slot& s = w->slots[me];
  s.status = kWaitWarp;
  s.kind = kind;
  s.mask = mask | bit;
  s.value = value;
  s.arg = arg;
  s.width = width >= 1 && width <= 32 && !(width & (width - 1)) ? width : 32;  // else undefined in CUDA
  s.line = line;
  w->waiting[warp] |= bit;
  ++w->n_wait;
  if (!try_complete(*w, warp, s.mask, kind)) suspend(*w);
  return s.result;
}

unsigned active_mask(Worker* w) {
  const ThreadState& st = *w->st;
  const uint3 b = st.block_dim;
  const unsigned id = linear_id(st.thread_idx, b), warp = id / 32;
  if (st.fiber_mode) return w->live[warp];
  // Plain mode: the threads before this one have exited, those after it have not started.
  return lanes(id % 32, std::min(b.x * b.y * b.z - warp * 32, 32u));
}

// ---------------------------------------------------------------------------------------------
// Faults. A kernel that faults fails its launch, as on a GPU, instead of killing the process: a
// handler for SIGSEGV, SIGBUS, SIGFPE and SIGILL (installed once, on its own stack per OS thread, so
// that a thread that overflowed its stack can still run it) abandons the block through the same
// jump as a deadlock when the fault happened while this OS thread ran blocks; any other fault goes
// to the handler installed before ours (Python's faulthandler, or the default: the process dies).
// Device-side assert and __trap() abandon the block the same way, without a signal. The message
// names the kernel, thread and block, and the code's address as `library+0xOFFSET` for kp.load to
// turn into a .cu line. A read or write that faults in the guard region around a tensor
// (cuda_cpu_redzones.cpp) is named after the launch by the tensor, the side, the element and the
// distance (fault_in_guard), from the address and the access this handler records in the message.

namespace {

struct sigaction g_previous[NSIG];  // the handlers ours replaced
constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

// Where the faulting instruction is, as ", at <library>+0x<offset>" ("" if unknown).
void code_address(const void* pc, char* out, size_t size) {
  Dl_info info;
  out[0] = 0;
  if (pc && dladdr(pc, &info) && info.dli_fname)
    snprintf(out, size, ", at %s+0x%zx", info.dli_fname,
             size_t(static_cast<const char*>(pc) - static_cast<const char*>(info.dli_fbase)));
}

// True if `addr`, which faulted, is past the end of the running CUDA thread's stack: below its fiber's
// stack (kernels are built with -fstack-clash-protection, so a large frame touches the guard page
// first), or near the stack pointer of the OS thread's own stack, which runs the block's first thread.
bool stack_overflow(const Worker& w, uintptr_t addr, uintptr_t sp, bool* on_fiber) {
  const char* stack = w.st->fiber_mode ? w.stacks[w.cur] : nullptr;
  const uintptr_t bottom = reinterpret_cast<uintptr_t>(stack), slack = 1 << 20;
  *on_fiber = stack && sp < bottom + kFiberStackBytes && sp + slack >= bottom;
  if (*on_fiber) return addr < bottom && addr + slack >= bottom;
  return addr + (64 << 10) >= sp && addr < sp + (64 << 10);
}

void forward_signal(int sig, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous[sig];
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction) previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
  } else {
    signal(sig, SIG_DFL);  // the faulting instruction runs again, and the default action ends the process
  }
}

void on_fault(int sig, siginfo_t* info, void* context) {
  Worker* w = tls.worker;
  if (!w || !w->running || !w->launch) return forward_signal(sig, info, context);
  const ucontext_t* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  const void* pc = reinterpret_cast<const void*>(uc->uc_mcontext.gregs[REG_RIP]);
  const uintptr_t sp = uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
  const void* pc = reinterpret_cast<const void*>(uc->uc_mcontext.pc);
  const uintptr_t sp = uc->uc_mcontext.sp;
#else
  const void* pc = nullptr;
  const uintptr_t sp = 0;
  (void)uc;
#endif
  const uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  char where[512], what[160], detail[640];
  code_address(pc, where, sizeof where);
  bool on_fiber = false;
  if (sig == SIGSEGV && stack_overflow(*w, addr, sp, &on_fiber)) {
    size_t bytes = kFiberStackBytes;
    pthread_attr_t attr;
    if (!on_fiber && pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstacksize(&attr, &bytes);
      pthread_attr_destroy(&attr);
    }
    snprintf(detail, sizeof detail, ": the CPU stand-in gives each thread %zu KiB%s%s", bytes >> 10,
             on_fiber ? "" : " (its OS thread's stack: it ran before the block's first barrier)", where);
    abandon_block(*w, "stack overflow", detail, true);
  }
  switch (sig) {
    case SIGFPE:  // the location first: the note is about the whole message
      snprintf(detail, sizeof detail, "%s (a GPU does not trap here: it goes on with an unspecified value)", where);
      abandon_block(*w, "integer division by zero", detail, true);
    case SIGILL:
      abandon_block(*w, "an illegal instruction", where, true, cudaErrorIllegalInstruction);
    default: {  // SIGSEGV, SIGBUS: memory that is not mapped (or not as the access needs it)
      // fault_in_guard reads the address and the access back from this message, after the launch.
      const char* access = "a read or write";
#if defined(__x86_64__)
      const greg_t trap = uc->uc_mcontext.gregs[REG_TRAPNO];
      if (trap == 14)  // a page fault: bit 1 of its error code is set for a write
        access = uc->uc_mcontext.gregs[REG_ERR] & 2 ? "a write" : "a read";
      if (trap == 13 && !info->si_addr) {  // no address to report: say why (tensors lie high, near 2^47)
        snprintf(what, sizeof what,
                 "a general protection fault (an address beyond the 128 TiB of user space, "
                 "or a misaligned vector access)");
        abandon_block(*w, what, where, true, cudaErrorIllegalAddress);
      }
#endif
      snprintf(what, sizeof what, "%s of address %p", access, info->si_addr);
      abandon_block(*w, what, where, true, cudaErrorIllegalAddress);
    }
  }
}

// Once per process.
void install_fault_handler() {
  struct sigaction action = {};
  action.sa_sigaction = on_fault;
  // SA_NODEFER: the handler leaves by a jump, not by returning, so the signal must not stay blocked.
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  for (int sig : kFaultSignals) sigaction(sig, &action, &g_previous[sig]);
}

// Once per OS thread that runs blocks, unless it has one already (Python's faulthandler makes one).
void ensure_signal_stack() {
  stack_t current;
  if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;
  void* p = mmap(nullptr, kSignalStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  stack_t stack = {};
  stack.ss_sp = p;
  stack.ss_size = kSignalStackBytes;
  sigaltstack(&stack, nullptr);
}

}  // namespace

bool redzones_fault(uintptr_t address, int write, const char* who, size_t who_size, const char* where, char* out,
                    size_t size);  // cuda_cpu_redzones.cpp

// After a launch: a fault's message from on_fault ("a write of address 0x... in kernel 'k' thread (x,y,z) block
// (x,y,z), at ...") as the tensor whose guard holds the address names it (its side, the element, how far); false
// if the address is in no tensor's guard, and the message stays as it is.
bool fault_in_guard(const char* message, char* out, size_t size) {
  static const struct {
    const char* prefix;
    int write;
  } kAccesses[] = {{"a write of address 0x", 1}, {"a read of address 0x", 0}, {"a read or write of address 0x", -1}};
  for (const auto& access : kAccesses) {
    const size_t n = strlen(access.prefix);
    if (strncmp(message, access.prefix, n)) continue;
    char* after;
    const uintptr_t address = strtoull(message + n, &after, 16);
    if (strncmp(after, " in ", 4)) return false;
    const char* who = after + 4;  // "kernel 'k' thread (x,y,z) block (x,y,z)", then the code's address
    const char* block = nullptr;
    for (const char* p = strstr(who, " block ("); p; p = strstr(p + 1, " block (")) block = p;
    const char* end = block ? strchr(block, ')') : nullptr;
    return end && redzones_fault(address, access.write, who, size_t(end + 1 - who), end + 1, out, size);
  }
  return false;
}

void device_fault(cudaError_t code, const char* what, const char* file, int line) {
  Worker* w = tls.worker;
  if (!w || !w->running || !w->launch) {  // not in a kernel: as the host does it
    fprintf(stderr, "%s:%d: %s\n", file, line, what);
    abort();
  }
  char detail[640];
  snprintf(detail, sizeof detail, ", at %s:%d", file, line);
  abandon_block(*w, what, detail, true, code);
}

}  // namespace detail
}  // namespace kp

#include "cuda_cpu_check.h"  // check mode: the instrumentation's entry points and the findings

namespace kp {
namespace detail {
namespace {

// ---------------------------------------------------------------------------------------------
// Launches and the pool.

}  // namespace
bool redzones_damaged(const char* kernel, char* out, size_t size);  // cuda_cpu_redzones.cpp
namespace {

// Runs blocks [begin, end) of the worker's launch; false if a block was abandoned.
__attribute__((noinline)) bool run_blocks_guarded(Worker& w, uint64_t begin, uint64_t end) {
  if (__builtin_setjmp(w.abort_point)) return false;
  w.running = true;
  w.launch->kernel.run_blocks(w.launch->kernel.body, begin, end);
  w.running = false;
  return true;
}

// This OS thread's share of a launch: chunks of blocks until none are left or a block failed.
void work_on(Launch& launch) {
  Worker& w = this_worker();
  ThreadState& st = *w.st;
  st.grid_dim = launch.grid;
  st.block_dim = launch.block;
  st.dynamic_smem = w.dynamic_smem;
  st.worker = &w;
  st.fiber_mode = 0;
  w.launch = &launch;
  while (!launch.failed.load(std::memory_order_relaxed)) {
    const uint64_t begin = launch.next.fetch_add(launch.chunk, std::memory_order_relaxed);
    if (begin >= launch.blocks) break;
    if (w.check && profile_skips(begin)) continue;  // a block the profile's sampling leaves out
    // A check launch goes on after a block it abandoned (a finding), until it has enough findings.
    const bool whole = run_blocks_guarded(w, begin, std::min(begin + launch.chunk, launch.blocks));
    if (w.check) check_block_end(w);  // one block a chunk
    if (!whole && !w.check) break;
    if (w.check && check_stopped(*w.check)) break;
  }
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The process's pool: `size` workers, the launching thread included, so size - 1 OS threads help.
// Threads are created when a launch first needs them and never end; after a shrink the extra ones
// sleep. A launch publishes a job (generation, number of helpers); helpers join it through `entry`,
// which the launching thread closes when it runs out of blocks, so that it waits only for helpers
// that are actually working, never for one that is still waking up.
class Pool {
 public:
  std::mutex busy;  // held by the host thread whose launch the pool runs
  std::atomic<int> size{static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))};
  std::atomic<int> os_threads{0};

  void run(Launch& launch, unsigned workers) {
    const unsigned helpers = workers - 1;
    for (; os_threads < int(helpers); ++os_threads)
      std::thread(&Pool::thread_main, this, unsigned(os_threads), job_.load()).detach();
    launch.chunk = std::max<uint64_t>(1, launch.blocks / (uint64_t(workers) * 16));
    current_ = &launch;
    ++generation_;
    entry_.store((generation_ & kGenerationMask) << kEntryShift, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_.store(generation_ << 16 | helpers, std::memory_order_release);
      if (sleepers_) wake_.notify_all();
    }
    work_on(launch);
    entry_.fetch_or(kClosed, std::memory_order_acq_rel);
    for (int spins = 0; entry_.load(std::memory_order_acquire) & kInside; ++spins) {
      if (spins < 1000)
        cpu_relax();
      else
        std::this_thread::yield();
    }
  }

 private:
  static constexpr uint64_t kInside = (1ull << 23) - 1;  // entry: helpers inside the launch
  static constexpr uint64_t kClosed = 1ull << 23;        // entry: no more helpers may join
  static constexpr int kEntryShift = 24;                 // entry: the generation above
  static constexpr uint64_t kGenerationMask = (1ull << 40) - 1;

  void thread_main(unsigned index, uint64_t seen) {
    for (bool worked = false;;) {
      seen = wait_for_job(seen, worked);
      worked = index < (seen & 0xffff);
      if (worked) help(seen >> 16);
    }
  }

  // Waits for a job other than `seen`. A thread that just worked spins a little first: launches
  // tend to come in bursts, and waking a sleeping thread costs tens of microseconds.
  uint64_t wait_for_job(uint64_t seen, bool spin) {
    using clock = std::chrono::steady_clock;
    for (const auto until = clock::now() + std::chrono::microseconds(50); spin && clock::now() < until;) {
      const uint64_t job = job_.load(std::memory_order_acquire);
      if (job != seen) return job;
      for (int i = 0; i < 16; ++i) cpu_relax();
    }
    std::unique_lock<std::mutex> lock(mutex_);
    ++sleepers_;
    wake_.wait(lock, [&] { return job_.load(std::memory_order_acquire) != seen; });
    --sleepers_;
    return job_.load(std::memory_order_acquire);
  }

  void help(uint64_t generation) {
    const uint64_t open = (generation & kGenerationMask) << kEntryShift;
    uint64_t entry = entry_.load(std::memory_order_acquire);
    do {
      if ((entry & ~kInside) != open) return;  // a later launch, or this one is closed
    } while (!entry_.compare_exchange_weak(entry, entry + 1, std::memory_order_acq_rel));
    work_on(*current_);  // valid: the launching thread waits for us
    entry_.fetch_sub(1, std::memory_order_release);
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  int sleepers_ = 0;
  std::atomic<uint64_t> job_{0};    // generation << 16 | helpers wanted
  std::atomic<uint64_t> entry_{0};  // generation << 24 | closed | helpers inside
  Launch* current_ = nullptr;
  uint64_t generation_ = 0;
};

Pool* g_pool;

Pool& pool() {
  static const bool ready = [] {
    g_pool = new Pool;  // never deleted: detached threads use it until the process exits
    install_fault_handler();
    // A forked child has none of the parent's threads: it starts with a fresh pool.
    pthread_atfork(nullptr, nullptr, [] { g_pool = new Pool; });
    // The pool's threads run this library's code until the process exits: keep it loaded even if
    // every kernel library that brought it in is unloaded.
    Dl_info self;
    if (dladdr(reinterpret_cast<void*>(&record_error), &self) && self.dli_fname)
      dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    return true;
  }();
  (void)ready;
  return *g_pool;
}

// ---------------------------------------------------------------------------------------------
// The host runtime's part here (cuda_cpu_host.h): function attributes, per kernel name (what a launch knows of its
// kernel: "ns::k<float, 4>" is "k"), for all kernel libraries of the process.

struct FunctionAttributes {
  size_t max_dynamic_shared = kDefaultDynamicShared;
  int carveout = -1;  // recorded, no effect: the stand-in has no L1 to split
};
std::mutex g_attributes_mutex;
std::vector<std::pair<std::string, FunctionAttributes>> g_attributes;

std::string kernel_base_name(const char* name) {
  std::string s(name);
  s = s.substr(0, s.find('<'));
  const size_t colon = s.rfind("::");
  s = colon == std::string::npos ? s : s.substr(colon + 2);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

FunctionAttributes* attributes_of(const std::string& base) {
  for (auto& [name, attributes] : g_attributes)
    if (name == base) return &attributes;
  return nullptr;
}

size_t max_dynamic_shared(const char* kernel) {
  std::lock_guard<std::mutex> lock(g_attributes_mutex);
  if (g_attributes.empty()) return kDefaultDynamicShared;
  const FunctionAttributes* a = attributes_of(kernel_base_name(kernel));
  return a ? a->max_dynamic_shared : kDefaultDynamicShared;
}

// Checks a launch configuration as CUDA does; records the error if it is invalid.
bool valid_configuration(const Kernel& kernel, dim3 g, dim3 b, size_t shmem) {
  cudaError_t code = cudaErrorInvalidConfiguration;
  const char* reason = nullptr;
  if (!g.x || !g.y || !g.z)
    reason = "a grid dimension is 0";
  else if (!b.x || !b.y || !b.z)
    reason = "a block dimension is 0";
  else if (uint64_t(b.x) * b.y * b.z > kMaxBlockThreads)
    reason = "at most 1024 threads per block";
  else if (b.z > 64)
    reason = "blockDim.z is at most 64";
  else if (g.x > 2147483647u)
    reason = "gridDim.x is at most 2147483647";
  else if (g.y > 65535 || g.z > 65535)
    reason = "gridDim.y and gridDim.z are at most 65535";
  else if (shmem > kDefaultDynamicShared && shmem > max_dynamic_shared(kernel.name)) {  // no lock below 48 KiB
    code = cudaErrorInvalidValue;
    reason = max_dynamic_shared(kernel.name) == kDefaultDynamicShared
                 ? "at most 49152 bytes of dynamic shared memory per block, unless cudaFuncSetAttribute("
                   "kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) allows more (up to 232448)"
                 : "more dynamic shared memory than its cudaFuncAttributeMaxDynamicSharedMemorySize allows";
  }
  if (!reason) return true;
  char smem[64] = "";
  if (shmem) snprintf(smem, sizeof smem, " with %zu bytes of dynamic shared memory", shmem);
  record_error(code, "kernel '%s' launched with grid (%u,%u,%u) and block (%u,%u,%u)%s: %s", kernel.name, g.x, g.y, g.z,
               b.x, b.y, b.z, smem, reason);
  return false;
}

}  // namespace

// After a launch: a write just outside a tensor its op call named (cuda_cpu_redzones.cpp) fails it, unless it
// failed already; either way the redzones are whole again. A fault in a tensor's guard is named by the tensor.
void finish(Launch& launch) {
  char outside[640], guard[1024];
  const bool damaged = redzones_damaged(launch.kernel.name, outside, sizeof outside);
  if (launch.failed && launch.code == cudaErrorIllegalAddress && fault_in_guard(launch.message, guard, sizeof guard))
    record_error(launch.code, "%s", guard);
  else if (launch.failed)
    record_error(launch.code, "%s", launch.message);
  else if (damaged)
    record_error(cudaErrorIllegalAddress, "%s", outside);
}

void launch(const Kernel& kernel, dim3 grid, dim3 block, size_t shmem) {
  if (!valid_configuration(kernel, grid, block, shmem)) return;
  Launch launch(kernel, grid, block);
  if (kernel.checked) {  // on this thread alone, a block at a time, in order: findings come out the same each time
    pool();              // the fault handler
    Worker& w = this_worker();
    check_launch_begin(w, kernel, block, shmem);
    if (profiling()) profile_launch_begin(kernel, grid, block, shmem, launch.blocks);
    launch.chunk = 1;
    work_on(launch);
    if (profiling()) profile_launch_end(kernel);
    w.check = nullptr;
    finish(launch);
    return;
  }
  profile_unchecked(kernel);
  Pool& p = pool();
  const unsigned workers = unsigned(std::min<uint64_t>(p.size.load(std::memory_order_relaxed), launch.blocks));
  // Another host thread's launch holds the pool: this one runs on its own thread alone.
  std::unique_lock<std::mutex> pool_lock;
  if (workers > 1) pool_lock = std::unique_lock<std::mutex>(p.busy, std::try_to_lock);
  if (pool_lock.owns_lock()) {
    p.run(launch, workers);
  } else {
    launch.chunk = launch.blocks;
    work_on(launch);
  }
  finish(launch);
}

cudaError_t last_error(bool clear) {
  const cudaError_t error = t_last_error;
  if (clear) t_last_error = cudaSuccess;
  return error;
}

cudaError_t host_error(cudaError_t code, const char* what) {
  record_error(code, "%s", what);
  return code;
}

cudaError_t set_function_attribute(const char* kernel, int attr, int value) {
  if (attr != 8 && attr != 9)
    return host_error(cudaErrorInvalidValue, "cudaFuncSetAttribute: an attribute the stand-in lacks");
  if (attr == 8 && (value < 0 || size_t(value) > kMaxDynamicShared))
    return host_error(cudaErrorInvalidValue,
                      "cudaFuncSetAttribute: cudaFuncAttributeMaxDynamicSharedMemorySize is at most 232448 bytes");
  if (attr == 9 && (value < -1 || value > 100))
    return host_error(cudaErrorInvalidValue,
                      "cudaFuncSetAttribute: cudaFuncAttributePreferredSharedMemoryCarveout is -1 or 0 to 100");
  if (!kernel || !*kernel) return cudaSuccess;  // a call the source step did not see: nothing to key it by
  std::lock_guard<std::mutex> lock(g_attributes_mutex);
  const std::string base = kernel_base_name(kernel);
  FunctionAttributes* a = attributes_of(base);
  if (!a) a = &g_attributes.emplace_back(base, FunctionAttributes()).second;
  if (attr == 8)
    a->max_dynamic_shared = std::max<size_t>(value, kDefaultDynamicShared);
  else
    a->carveout = value;
  return cudaSuccess;
}

}  // namespace detail

const char* last_error_message() { return detail::t_last_message; }

void throw_launch_failure(const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) +
                           ": kernel launch failed: " + detail::t_last_message);
}

}  // namespace kp

#pragma GCC visibility pop

// ---------------------------------------------------------------------------------------------
// Exported for Python: the pool's size.

extern "C" {

// Workers of the pool, the calling thread included (torch.get_num_threads() is the natural value).
int kp_get_num_threads(void) { return kp::detail::pool().size; }

void kp_set_num_threads(int n) { kp::detail::pool().size = std::clamp(n, 1, 1024); }

// OS threads the pool has created so far: reloading kernel libraries must not add any.
int kp_pool_os_threads(void) { return kp::detail::pool().os_threads; }

// Check mode, for bindings (binding.h): an op call starts; a tensor it passes to kernels, by name.
void kp_check_begin_call(void) { kp::detail::check_begin_call(); }
void kp_check_tensor(const char* name, const void* data, size_t bytes, size_t elem) {
  kp::detail::check_tensor(name, data, bytes, elem);
}
// Check mode, for cudaFree (cuda_cpu_host.h): the allocation at `data` is no longer memory a kernel may use.
void kp_check_forget(const void* data) { kp::detail::check_forget(data); }

// Check mode, for Python (kp.check): the findings of this host thread since the last call, one per line
// (cuda_cpu_check.h), then none; who last wrote the element at `address` of a registered tensor, as
// "kernel 'k' block (x,y,z) thread (x,y,z) <library>+0x<offset>" (0: nobody in a check launch).
const char* kp_check_take_report(void) { return kp::detail::check_take_report(); }

// The GPU model's counters (cuda_cpu_profile.h), for Python (kp.profile): check launches of this host thread are
// counted from now on (at most about `max_blocks` blocks per launch run, sampled; 0: all); the counts so far,
// and profiling stops.
void kp_profile_begin(unsigned long long max_blocks) { kp::detail::profile_begin(max_blocks); }
const char* kp_profile_take(void) {
  static thread_local std::string taken;
  taken = kp::detail::profile_take();
  return taken.c_str();
}
int kp_check_last_write(const void* address, char* out, size_t size) {
  return kp::detail::check_last_write(address, out, size);
}
}
