// cuda_cpu.h: CUDA's execution model on the CPU, so that a plain .cu kernel file compiles with g++
// and runs with CUDA's semantics.
//
// The source step (cuda_cpu_translate.py) force-includes this header first in a translated copy of
// each .cu file, where every launch `k<<<G, B, S, ST>>>(args)` became a call of ::kp::launch (below)
// and every `extern __shared__ T name[]` became a pointer to ::kp::dynamic_shared_memory().
// Everything else is here: qualifiers, threadIdx and friends, __shared__, barriers (with
// __syncthreads_count/_and/_or), warp shuffles, votes, matches and reductions, atomics (with
// atomicInc/Dec), bit and rounding-mode intrinsics, math, clock64, device-side assert and __trap,
// cooperative groups (the block and its tiles); half and bfloat16 are in cuda_cpu_fp16.h, which the
// source step includes for <cuda_fp16.h> and <cuda_bf16.h>; the host runtime a launcher calls (cudaMalloc,
// cudaMemcpy, device properties, events, cudaFuncSetAttribute) is in cuda_cpu_host.h, included at the end.
// A project header that includes CUDA's headers itself finds them in cuda_cpu_include/, which forwards to
// these. The runtime (cuda_cpu_runtime.cpp, libkp_cuda_cpu.so, one per process) owns the thread pool, the
// fibers and the fault handler.
//
// How it runs. A launch is checked like CUDA checks it, then its blocks are handed out in chunks to
// the pool; the launching thread works too. A block runs on one OS thread: its CUDA threads run one
// after another, in threadIdx order, as plain calls of the kernel inlined into the block loop
// below, until one of them reaches a barrier (__syncthreads) or a warp collective (__syncwarp,
// shuffles, votes). Only then does that block switch to fibers: the thread that got there keeps
// running on the OS thread's own stack, the threads after it start on fibers of their own, and
// those before it have returned and count as exited. A barrier then switches to the next runnable
// thread until every non-exited thread of the block (or every lane named by a warp mask) has
// arrived. A block that never reaches a barrier never pays for fibers. __shared__ variables are
// static thread_local: one copy per OS thread, that is one per running block.
//
// Known differences from a GPU:
//   - Threads of a block do not interleave between barriers: each runs until it reaches a barrier
//     or returns. Some races therefore stay hidden here (a missing __syncthreads can go unnoticed),
//     and warp-synchronous code without __syncwarp (legacy reductions over volatile shared memory)
//     is wrong, as it is on GPUs since Volta.
//   - A divergent __syncthreads does not hang: it completes when the threads that skip it have
//     exited, and when they wait elsewhere (at a __syncthreads on another source line, or in a
//     warp collective) the launch fails with cudaErrorLaunchFailure and a message saying who waits
//     where and on which line.
//   - Floating-point sums come out in a different order (atomics, reductions), so results differ
//     from a GPU's in the last bits.
//   - Grid-stride loops over few blocks are slow: each CUDA thread walks the whole array with a
//     large stride before the next one starts. Launch one thread per element where possible.
//   - __activemask() returns the lanes of the warp that have not exited, not those of the current
//     branch.
//   - Launches are synchronous; streams are accepted and ignored. Device memory (cudaMalloc) is host
//     memory, and a kernel may read a host pointer, as on a GPU it may not.
//   - cudaFuncSetAttribute's opt-in to more than 48 KiB of dynamic shared memory holds per kernel name:
//     all instantiations of a template share it (on a GPU each has its own). Called from code the source
//     step did not translate (a header included with <...>), it is checked and then forgotten.
//   - The device answers as an H100 SXM (cudaGetDeviceProperties, cudaDeviceGetAttribute), whatever the
//     GPU the model is asked about.
//   - Faults fail the launch, and the process goes on: a read or write of unmapped memory
//     (cudaErrorIllegalAddress), a stack overflow, integer division by zero, device-side assert
//     (cudaErrorAssert) and __trap() (cudaErrorLaunchFailure) name the kernel, thread, block and
//     .cu line (kernel libraries have line tables, -g1). On a GPU such an error ends the CUDA
//     context: every later launch of the process fails. Here later launches work.
//   - Not detected in the normal build: an access that lands in mapped memory (just past a tensor,
//     in another tensor, past a __shared__ array), which reads or writes whatever is there, as on a
//     GPU without compute-sanitizer; races and reads of uninitialised memory; static __shared__
//     beyond CUDA's 48 KiB per block. Check mode (KP_CHECK, cuda_cpu_check.h) detects the first
//     two, out-of-bounds shared accesses and divergent barriers, at the .cu line. Integer division
//     by zero is detected here; a GPU goes on with an unspecified value.
//   - The fast intrinsics (__expf, __sinf, __fdividef, ...) are the accurate functions here; a
//     GPU's are approximate and differ in the last bits. clock64() counts the CPU's time-stamp
//     ticks, and clock() is the C library's (process CPU time), not GPU cycles.
//   - Half and bfloat16 (cuda_cpu_fp16.h): + - * / and fma round as a GPU's do (through float, to
//     nearest even); hsqrt, hexp and the other math functions are correctly rounded through float,
//     where a GPU's use approximate float functions and may differ in the last place.
//   - Stacks: a CUDA thread that runs on a fiber has 512 KiB (CUDA's most local memory per thread),
//     reserved and committed only where touched. The first thread of a block that reaches a
//     barrier, and every thread of a block that never does, runs on its OS thread's own stack
//     (usually 8 MiB), so it can use more than CUDA allows without an error.
//
// Costs (x86-64, one core): a barrier-free block costs ~0.3 ns per CUDA thread over a plain loop;
// each arrival at a barrier is a fiber switch, ~15 ns, and at a shuffle or vote ~25 ns.
//
// Kernel files are built with -fvisibility=hidden (or -fno-semantic-interposition): otherwise g++
// may not inline non-template __device__ functions inside a shared library.
#pragma once
#define KP_CUDA_CPU_H

#include <math.h>  // the float overloads (sqrt(float), ...) in the global namespace, as in CUDA

#include <cassert>  // then assert is redefined below, for kernels
#include <cfenv>    // the rounding-mode intrinsics
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>  // printf in kernels, as in CUDA
#include <cstdlib>
#include <cstring>  // memcpy, memset in kernels, as in CUDA
#include <ctime>    // clock() in kernels
#include <limits>
#include <type_traits>

// Declared here, defined by the runtime library: exported whatever the visibility flags.
#define KP_API __attribute__((visibility("default")))

// ---------------------------------------------------------------------------------------------
// Qualifiers. `__noinline__` is not defined here: libstdc++'s <memory> writes
// `__attribute__((__noinline__))`, which such a macro would break; the source step rewrites it.

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ __attribute__((always_inline)) inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// On 128 bytes, as a GPU's shared window starts: banks are counted from host addresses (cuda_cpu_profile.h), so an
// array's first word is then bank 0 in every run. A thread_local's own alignment left that to where the heap put
// the thread's copy, and the bank that advice names changed from run to run (the conflicts did not).
#define __shared__ static thread_local __attribute__((aligned(128)))

// ---------------------------------------------------------------------------------------------
// Types, with CUDA's names, layouts, error codes and texts.

struct uint3 {
  unsigned x, y, z;
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return {x, y, z}; }
};

struct __align__(8) float2 {
  float x, y;
};
struct float3 {
  float x, y, z;
};
struct __align__(16) float4 {
  float x, y, z, w;
};
struct __align__(8) int2 {
  int x, y;
};
struct int3 {
  int x, y, z;
};
struct __align__(16) int4 {
  int x, y, z, w;
};
struct __align__(8) uint2 {
  unsigned x, y;
};
struct __align__(16) uint4 {
  unsigned x, y, z, w;
};
struct __align__(16) double2 {
  double x, y;
};

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,             // "invalid argument"
  cudaErrorMemoryAllocation = 2,         // "out of memory"
  cudaErrorInvalidConfiguration = 9,     // "invalid configuration argument"
  cudaErrorInvalidMemcpyDirection = 21,  // "invalid copy direction for memcpy"
  cudaErrorInvalidDeviceFunction = 98,   // "invalid device function"
  cudaErrorInvalidDevice = 101,          // "invalid device ordinal"
  cudaErrorInvalidResourceHandle = 400,  // "invalid resource handle"
  cudaErrorNotReady = 600,               // "device not ready"
  cudaErrorIllegalAddress = 700,         // "an illegal memory access was encountered"
  cudaErrorAssert = 710,                 // "device-side assert triggered"
  cudaErrorIllegalInstruction = 715,     // "an illegal instruction was encountered"
  cudaErrorLaunchFailure = 719,          // "unspecified launch failure"
};
typedef enum cudaError cudaError_t;
typedef struct CUstream_st* cudaStream_t;

// Every function this header defines is hidden in the kernel library that includes it, whatever
// the visibility flags: calls bind inside the library (CUDA's names too, even when a CUDA build of
// torch has put libcudart's in the global scope), and nothing is exported.
#pragma GCC visibility push(hidden)

inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float3 make_float3(float x, float y, float z) { return {x, y, z}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int3 make_int3(int x, int y, int z) { return {x, y, z}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline double2 make_double2(double x, double y) { return {x, y}; }

// ---------------------------------------------------------------------------------------------
// Errors: per host thread, as in CUDA.

namespace kp {
namespace detail {
KP_API cudaError_t last_error(bool clear);  // this host thread's
}  // namespace detail

// The text of this host thread's last error, more detailed than cudaGetErrorString: it names the
// kernel, its configuration and what was wrong. Not cleared by cudaGetLastError; "" before any.
KP_API const char* last_error_message();
// Throws std::runtime_error("<file>:<line>: kernel launch failed: " + last_error_message()): KP_CHECK_LAUNCH
// (kp.cuh) after a failed launch.
[[noreturn]] KP_API void throw_launch_failure(const char* file, int line);
}  // namespace kp

extern "C" {
// The last error of this host thread, then cudaSuccess.
inline cudaError_t cudaGetLastError(void) { return ::kp::detail::last_error(true); }
// The same, without clearing it.
inline cudaError_t cudaPeekAtLastError(void) { return ::kp::detail::last_error(false); }
// cudaSuccess: launches are synchronous here, and their errors are recorded when they return.
inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

inline const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInvalidMemcpyDirection:
      return "invalid copy direction for memcpy";
    case cudaErrorInvalidDeviceFunction:
      return "invalid device function";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorNotReady:
      return "device not ready";
    case cudaErrorIllegalAddress:
      return "an illegal memory access was encountered";
    case cudaErrorAssert:
      return "device-side assert triggered";
    case cudaErrorIllegalInstruction:
      return "an illegal instruction was encountered";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure";
  }
  return "unrecognized error code";
}

inline const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorInvalidConfiguration:
      return "cudaErrorInvalidConfiguration";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidMemcpyDirection:
      return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorInvalidDeviceFunction:
      return "cudaErrorInvalidDeviceFunction";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle:
      return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady:
      return "cudaErrorNotReady";
    case cudaErrorIllegalAddress:
      return "cudaErrorIllegalAddress";
    case cudaErrorAssert:
      return "cudaErrorAssert";
    case cudaErrorIllegalInstruction:
      return "cudaErrorIllegalInstruction";
    case cudaErrorLaunchFailure:
      return "cudaErrorLaunchFailure";
  }
  return "cudaErrorUnknown";
}
}

// ---------------------------------------------------------------------------------------------
// The interface to the runtime.

namespace kp {
namespace detail {

struct Worker;  // an OS thread's block scheduler and fiber stacks, owned by the runtime

// What the code of a running block reads, one per OS thread. Plain data and `__thread` (rather than
// thread_local) so that access is a bare TLS address, with no initialisation wrapper calls.
struct ThreadState {
  uint3 thread_idx, block_idx, block_dim, grid_dim;
  void* dynamic_smem;  // this OS thread's dynamic shared memory, 227 KiB (an H100's most per block, opted in)
  Worker* worker;
  int fiber_mode;  // nonzero while the running block runs on fibers
};
extern KP_API __thread ThreadState tls;

// The address of this OS thread's tls. `const` (like glibc's __errno_location) lets g++ compute it
// once per function rather than once per use: a global-dynamic TLS address is otherwise recomputed,
// with a call, for every CUDA thread of the block loop. Sound because a block, fibers included,
// never leaves the OS thread it started on.
__attribute__((const, noinline)) inline ThreadState* state() { return &tls; }

// One launch, as the runtime sees it: two entry points instantiated for the kernel, and the
// closure (kernel and arguments) they run.
struct Kernel {
  const char* name;
  void (*run_blocks)(const void* body, uint64_t begin, uint64_t end);  // blocks [begin, end)
  void (*run_thread)(const void* body);                                // the CUDA thread that tls.thread_idx names
  const void* body;
  bool checked;                 // built in check mode (KP_CHECK): the runtime checks every access
  const void* const* pointers;  // check mode: the launch's pointer arguments (nullptr for the others)
  unsigned n_pointers;
};

// The warp collectives, for warp_collective() and its messages.
enum class Collective : uint8_t {
  syncwarp,
  shfl,
  shfl_up,
  shfl_down,
  shfl_xor,
  all,
  any,
  ballot,
  match_any,
  match_all,
  reduce_add,
  reduce_min,
  reduce_max,
  reduce_and,
  reduce_or,
  reduce_xor,
};

KP_API void launch(const Kernel& kernel, dim3 grid, dim3 block, size_t shmem);
KP_API void finish_fiber_block(Worker* w);  // the thread on the OS thread's stack returned
KP_API void syncthreads(Worker* w, int line);
KP_API int syncthreads_vote(Worker* w, int predicate, int line, int op);  // op: 0 count, 1 and, 2 or
KP_API uint64_t warp_collective(Worker* w, Collective kind, unsigned mask, uint64_t value, int arg, int width,
                                int line);
KP_API unsigned active_mask(Worker* w);
// Fails the running launch with `code`: "<what> in kernel 'k' thread (x,y,z) block (x,y,z), at file:line".
// Outside a kernel (host code of a .cu), prints "file:line: what" and aborts, as the host's assert does.
[[noreturn]] KP_API void device_fault(cudaError_t code, const char* what, const char* file, int line);
// Check mode (cuda_cpu_check.h): a block starts; a __shared__ variable (with a guard array on either side)
// or the name of the dynamic shared memory is declared.
KP_API void check_block_start(Worker* w);
KP_API void check_shared(const void* var, size_t bytes, size_t elem, const unsigned* dims, int rank, const char* name,
                         const void* guard_lo, const void* guard_hi);
KP_API void check_dynamic_name(const char* name, size_t elem);
// Check mode: a branch condition of device code (the source step wraps each `if`, `while` and `for` condition in
// KP_BRANCH); while profiling, the GPU model counts its lanes (cuda_cpu_profile.h). Returns `taken`. `site`: the
// condition's own variable (branch_site), which names it whatever copy of its call runs. `state`: this OS thread's
// tls, which the kernel has at hand (state()), so that the hook makes no TLS lookup of its own: it runs for every
// evaluation of every condition (460 million in linear_ladder v7's 128 x 128 tiles at 4096³, 2 x 2 blocks).
KP_API bool check_branch(bool taken, const void* site, ThreadState* state);
// One per KP_BRANCH in a translation unit (__COUNTER__; static: not shared with another unit's). g++ copies a call
// where it rotates or unrolls a loop, and each copy has its own return address: counted apart, the copies would split
// each entry of a loop between them, and its trip counts with it.
template <int>
static char branch_site = 0;  // not const: g++ may give equal constants one address

// Runs the blocks [begin, end) of a launch, each block's CUDA threads as plain calls of `body`,
// which g++ inlines here. When a thread reaches a barrier the runtime moves the block to fibers and
// sets fiber_mode; the thread then returns here and the runtime finishes the block.
template <class Body>
void run_blocks(const void* body_ptr, uint64_t begin, uint64_t end) {
  const Body body = *static_cast<const Body*>(body_ptr);  // a local copy: arguments in registers
  ThreadState& st = *state();
  const uint3 grid = st.grid_dim, block = st.block_dim;
  uint3 b = {unsigned(begin % grid.x), unsigned(begin / grid.x % grid.y), unsigned(begin / grid.x / grid.y)};
  for (uint64_t i = begin; i < end; ++i) {
    st.block_idx = b;
#ifdef KP_CHECK
    check_block_start(st.worker);
#endif
    for (unsigned z = 0; z < block.z; ++z) {
      st.thread_idx.z = z;
      for (unsigned y = 0; y < block.y; ++y) {
        st.thread_idx.y = y;
        for (unsigned x = 0; x < block.x; ++x) {
          st.thread_idx.x = x;
          body();
          if (__builtin_expect(st.fiber_mode, 0)) {
            finish_fiber_block(st.worker);
            goto next_block;
          }
        }
      }
    }
  next_block:
    if (++b.x == grid.x) {
      b.x = 0;
      if (++b.y == grid.y) b.y = 0, ++b.z;
    }
  }
}

// Runs one CUDA thread on a fiber.
template <class Body>
void run_thread(const void* body_ptr) {
  (*static_cast<const Body*>(body_ptr))();
}

template <class T>
inline const void* pointer_or_null(T* p) {
  return p;
}
template <class T>
inline const void* pointer_or_null(const T&) {
  return nullptr;
}

template <class T>
inline uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8, "warp shuffles move values of at most 8 bytes");
  uint64_t bits = 0;
  __builtin_memcpy(&bits, &v, sizeof(T));
  return bits;
}

template <class T>
inline T from_bits(uint64_t bits) {
  T v;
  __builtin_memcpy(&v, &bits, sizeof(T));
  return v;
}

}  // namespace detail

// The launch `kern<<<grid, block, shmem, stream>>>(args...)`, as the source step writes it:
// launch("kern", grid, block, shmem, stream, [](auto... a) { kern(a...); }, args...). Synchronous.
// A bad configuration launches nothing and is recorded for cudaGetLastError().
template <class F, class... A>
inline void launch(const char* name, dim3 grid, dim3 block, size_t shmem, cudaStream_t /*stream*/, F thread_fn,
                   A... args) {
  auto body = [thread_fn, args...] { thread_fn(args...); };
  using Body = decltype(body);
#ifdef KP_CHECK
  const void* pointers[] = {nullptr, detail::pointer_or_null(args)...};
  const detail::Kernel kernel = {
      name, &detail::run_blocks<Body>, &detail::run_thread<Body>, &body, true, pointers + 1, sizeof...(A)};
#else
  const detail::Kernel kernel = {name, &detail::run_blocks<Body>, &detail::run_thread<Body>, &body, false, nullptr, 0};
#endif
  detail::launch(kernel, grid, block, shmem);
}

namespace detail {
// A null pointer constant given as a launch argument (`NULL`, `0`; the source step writes zero_literal{}): it
// becomes the kernel parameter's zero, a null pointer for a pointer, as nvcc converts the literal to the parameter's
// type. Through the launch's `auto` parameters NULL alone would arrive as a `long`, which no pointer takes.
struct zero_literal {
  template <class T>
  constexpr operator T() const {
    return T();
  }
};
// cudaFuncSetAttribute's effect, kept by the runtime per kernel name (all instantiations of a template share it):
// attr 8 (cudaFuncAttributeMaxDynamicSharedMemorySize) lets the kernel's launches have up to `value` bytes of
// dynamic shared memory; attr 9 (the carve-out) is recorded and has no effect. Errors as CUDA's.
KP_API cudaError_t set_function_attribute(const char* kernel, int attr, int value);
}  // namespace detail

// The running block's dynamic shared memory (the size given at launch: at most 48 KiB, or up to 227 KiB for a kernel
// whose cudaFuncAttributeMaxDynamicSharedMemorySize allows it).
inline void* dynamic_shared_memory() { return detail::state()->dynamic_smem; }
// The same, for `extern __shared__ T name[]` (the source step passes the name and sizeof(T), which check mode uses to
// name an element: name[index]).
inline void* dynamic_shared_memory(const char* name, size_t elem) {
#ifdef KP_CHECK
  detail::check_dynamic_name(name, elem);
#else
  (void)name, (void)elem;
#endif
  return detail::state()->dynamic_smem;
}

#define KP_BRANCH(condition)                                                                        \
  ::kp::detail::check_branch(static_cast<bool>(condition), &::kp::detail::branch_site<__COUNTER__>, \
                             ::kp::detail::state())

#ifdef KP_CHECK
// Check mode: the source step follows every __shared__ declaration with this call, and surrounds the
// variable with two guard arrays of 256 bytes (whichever order g++ lays them out in, one lies between
// any two variables), so that an index past the variable lands in a guard.
template <class T>
inline void check_shared(T& var, const char* name, const char (&guard_lo)[256], const char (&guard_hi)[256]) {
  unsigned dims[4] = {};
  int rank = 0;
  if constexpr (std::rank_v<T> > 0) dims[rank++] = std::extent_v<T, 0>;
  if constexpr (std::rank_v<T> > 1) dims[rank++] = std::extent_v<T, 1>;
  if constexpr (std::rank_v<T> > 2) dims[rank++] = std::extent_v<T, 2>;
  if constexpr (std::rank_v<T> > 3) dims[rank++] = std::extent_v<T, 3>;
  detail::check_shared(&var, sizeof(T), sizeof(std::remove_all_extents_t<T>), dims, rank, name, guard_lo, guard_hi);
}

namespace detail {
// A file-scope __shared__ variable, of the .cu or of a header it includes (a header is translated apart from the
// .cu, so no kernel's source step knows of it): the source step follows its declaration with one of these, which
// adds its registration to the library's list as the library loads, and starts every kernel with
// check_file_shared(), which runs the list for the running thread's copy of each variable. The list is per
// library: these are hidden symbols (kernel files are built with -fvisibility=hidden).
struct file_shared {
  void (*add)();
  file_shared* next;
  explicit file_shared(void (*registration)()) : add(registration), next(first()) { first() = this; }
  static file_shared*& first() {
    static file_shared* head = nullptr;
    return head;
  }
};
inline void check_file_shared() {
  for (file_shared* s = file_shared::first(); s; s = s->next) s->add();
}
}  // namespace detail
#endif

}  // namespace kp

// ---------------------------------------------------------------------------------------------
// Built-in variables.

#define threadIdx (static_cast<const ::uint3&>(::kp::detail::state()->thread_idx))
#define blockIdx (static_cast<const ::uint3&>(::kp::detail::state()->block_idx))
#define blockDim (static_cast<const ::uint3&>(::kp::detail::state()->block_dim))
#define gridDim (static_cast<const ::uint3&>(::kp::detail::state()->grid_dim))
constexpr int warpSize = 32;

// ---------------------------------------------------------------------------------------------
// Barriers, shuffles and votes. `line` defaults to the caller's line, for deadlock messages; two
// __syncthreads on different lines are different barriers.

inline void __syncthreads(int line = __builtin_LINE()) {
  ::kp::detail::syncthreads(::kp::detail::state()->worker, line);
}

inline void __syncwarp(unsigned mask = 0xffffffffu, int line = __builtin_LINE()) {
  ::kp::detail::warp_collective(::kp::detail::state()->worker, ::kp::detail::Collective::syncwarp, mask, 0, 0, warpSize,
                                line);
}

#define KP_SHUFFLE(name, kind, Arg)                                                                        \
  template <class T>                                                                                       \
  inline T name(unsigned mask, T var, Arg arg, int width = warpSize, int line = __builtin_LINE()) {        \
    return ::kp::detail::from_bits<T>(                                                                     \
        ::kp::detail::warp_collective(::kp::detail::state()->worker, ::kp::detail::Collective::kind, mask, \
                                      ::kp::detail::to_bits(var), static_cast<int>(arg), width, line));    \
  }
KP_SHUFFLE(__shfl_sync, shfl, int)                 // the value of lane `arg` (modulo width)
KP_SHUFFLE(__shfl_up_sync, shfl_up, unsigned)      // of lane - arg, own value below the segment start
KP_SHUFFLE(__shfl_down_sync, shfl_down, unsigned)  // of lane + arg, own value past the segment end
KP_SHUFFLE(__shfl_xor_sync, shfl_xor, int)         // of lane ^ arg, own value from a later segment
#undef KP_SHUFFLE

inline unsigned __ballot_sync(unsigned mask, int predicate, int line = __builtin_LINE()) {
  return static_cast<unsigned>(::kp::detail::warp_collective(
      ::kp::detail::state()->worker, ::kp::detail::Collective::ballot, mask, predicate != 0, 0, warpSize, line));
}
inline int __all_sync(unsigned mask, int predicate, int line = __builtin_LINE()) {
  return static_cast<int>(::kp::detail::warp_collective(::kp::detail::state()->worker, ::kp::detail::Collective::all,
                                                        mask, predicate != 0, 0, warpSize, line));
}
inline int __any_sync(unsigned mask, int predicate, int line = __builtin_LINE()) {
  return static_cast<int>(::kp::detail::warp_collective(::kp::detail::state()->worker, ::kp::detail::Collective::any,
                                                        mask, predicate != 0, 0, warpSize, line));
}
// Barriers that also count (or and, or or) a predicate over the block's threads, as CUDA's do.
inline int __syncthreads_count(int predicate, int line = __builtin_LINE()) {
  return ::kp::detail::syncthreads_vote(::kp::detail::state()->worker, predicate, line, 0);
}
inline int __syncthreads_and(int predicate, int line = __builtin_LINE()) {
  return ::kp::detail::syncthreads_vote(::kp::detail::state()->worker, predicate, line, 1);
}
inline int __syncthreads_or(int predicate, int line = __builtin_LINE()) {
  return ::kp::detail::syncthreads_vote(::kp::detail::state()->worker, predicate, line, 2);
}

// __match_any_sync: the lanes of `mask` whose value equals this lane's; __match_all_sync: `mask` if all
// are equal (and *pred = 1), else 0.
template <class T>
inline unsigned __match_any_sync(unsigned mask, T value, int line = __builtin_LINE()) {
  return static_cast<unsigned>(::kp::detail::warp_collective(::kp::detail::state()->worker,
                                                             ::kp::detail::Collective::match_any, mask,
                                                             ::kp::detail::to_bits(value), 0, warpSize, line));
}
template <class T>
inline unsigned __match_all_sync(unsigned mask, T value, int* pred, int line = __builtin_LINE()) {
  const unsigned all = static_cast<unsigned>(
      ::kp::detail::warp_collective(::kp::detail::state()->worker, ::kp::detail::Collective::match_all, mask,
                                    ::kp::detail::to_bits(value), 0, warpSize, line));
  *pred = all != 0;
  return all;
}

// __reduce_<op>_sync over the 32-bit values of the lanes of `mask` (min and max signed for int).
#define KP_REDUCE(name, kind, T)                                                                                       \
  inline T name(unsigned mask, T value, int line = __builtin_LINE()) {                                                 \
    return static_cast<T>(::kp::detail::warp_collective(::kp::detail::state()->worker, ::kp::detail::Collective::kind, \
                                                        mask, static_cast<uint32_t>(value), static_cast<T>(-1) < 0,    \
                                                        warpSize, line));                                              \
  }
KP_REDUCE(__reduce_add_sync, reduce_add, unsigned)
KP_REDUCE(__reduce_add_sync, reduce_add, int)
KP_REDUCE(__reduce_min_sync, reduce_min, unsigned)
KP_REDUCE(__reduce_min_sync, reduce_min, int)
KP_REDUCE(__reduce_max_sync, reduce_max, unsigned)
KP_REDUCE(__reduce_max_sync, reduce_max, int)
KP_REDUCE(__reduce_and_sync, reduce_and, unsigned)
KP_REDUCE(__reduce_or_sync, reduce_or, unsigned)
KP_REDUCE(__reduce_xor_sync, reduce_xor, unsigned)
#undef KP_REDUCE

inline unsigned __activemask() { return ::kp::detail::active_mask(::kp::detail::state()->worker); }

// Device-side assert and __trap(): the launch fails (cudaErrorAssert, cudaErrorLaunchFailure) with the
// kernel, thread, block and line, and the process goes on. NDEBUG turns assert off, as in CUDA.
inline void __trap(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::kp::detail::device_fault(cudaErrorLaunchFailure, "__trap()", file, line);
}
#undef assert
#ifdef NDEBUG
#define assert(e) static_cast<void>(0)
#else
#define assert(e)                 \
  (static_cast<bool>(e) ? void(0) \
                        : ::kp::detail::device_fault(cudaErrorAssert, "assert(" #e ") failed", __FILE__, __LINE__))
#endif

// Cycle counters: the CPU's time-stamp counter (x86-64) or a steady clock in ns, increasing per OS thread.
inline long long clock64() {
#if defined(__x86_64__)
  return static_cast<long long>(__builtin_ia32_rdtsc());
#else
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ll + t.tv_nsec;
#endif
}
// clock() is the C library's (process CPU time): it increases too, with a coarser step than a GPU's.

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

// ---------------------------------------------------------------------------------------------
// Bit intrinsics.

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz(static_cast<unsigned>(x)) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll(static_cast<unsigned long long>(x)) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline float __int_as_float(int x) { return ::kp::detail::from_bits<float>(static_cast<unsigned>(x)); }
inline float __uint_as_float(unsigned x) { return ::kp::detail::from_bits<float>(x); }
// Integer intrinsics: 24-bit and high-half multiplies, absolute differences, averages, dot products.
inline int __mul24(int x, int y) { return static_cast<int>(1ll * (x << 8 >> 8) * (y << 8 >> 8)); }
inline unsigned __umul24(unsigned x, unsigned y) { return (x & 0xffffffu) * (y & 0xffffffu); }
inline int __mulhi(int x, int y) { return static_cast<int>(static_cast<long long>(x) * y >> 32); }
inline unsigned __umulhi(unsigned x, unsigned y) {
  return static_cast<unsigned>(static_cast<unsigned long long>(x) * y >> 32);
}
inline long long __mul64hi(long long x, long long y) {
  return static_cast<long long>(static_cast<__int128>(x) * y >> 64);
}
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return static_cast<unsigned long long>(static_cast<unsigned __int128>(x) * y >> 64);
}
inline unsigned __sad(int x, int y, unsigned z) { return static_cast<unsigned>(x > y ? 0ll + x - y : 0ll + y - x) + z; }
inline unsigned __usad(unsigned x, unsigned y, unsigned z) { return (x > y ? x - y : y - x) + z; }
inline int __hadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y) >> 1); }
inline int __rhadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1); }
inline unsigned __uhadd(unsigned x, unsigned y) { return static_cast<unsigned>((0ull + x + y) >> 1); }
inline unsigned __urhadd(unsigned x, unsigned y) { return static_cast<unsigned>((0ull + x + y + 1) >> 1); }
// The sum of the four products of x's and y's bytes (signed or unsigned), plus z.
inline int __dp4a(int x, int y, int z) {
  for (int i = 0; i < 32; i += 8) z += static_cast<signed char>(x >> i) * static_cast<signed char>(y >> i);
  return z;
}
inline unsigned __dp4a(unsigned x, unsigned y, unsigned z) {
  for (int i = 0; i < 32; i += 8) z += (x >> i & 0xffu) * (y >> i & 0xffu);
  return z;
}
inline int __double2hiint(double x) { return static_cast<int>(::kp::detail::to_bits(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(::kp::detail::to_bits(x)); }
inline double __hiloint2double(int hi, int lo) {
  return ::kp::detail::from_bits<double>(static_cast<uint64_t>(static_cast<unsigned>(hi)) << 32 |
                                         static_cast<unsigned>(lo));
}
inline void __nanosleep(unsigned) {}  // nothing to wait for: threads do not run at the same time

inline unsigned __brev(unsigned x) {
  x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
  x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
  x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32 |
         __brev(static_cast<unsigned>(x >> 32));
}
// Byte i of the result is byte (s >> 4i) & 7 of the 8 bytes y:x (x bytes 0-3, y bytes 4-7).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long bytes = static_cast<unsigned long long>(y) << 32 | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>(bytes >> (8 * ((s >> (4 * i)) & 7)) & 0xff) << (8 * i);
  return r;
}
// The 64 bits hi:lo shifted by `shift` & 31 (the _lc and _rc forms: by min(shift, 32)); the high word after a
// left shift, the low word after a right shift.
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>((static_cast<unsigned long long>(hi) << 32 | lo) << (shift & 31) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>((static_cast<unsigned long long>(hi) << 32 | lo) << (shift < 32 ? shift : 32) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>((static_cast<unsigned long long>(hi) << 32 | lo) >> (shift & 31));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned shift) {
  return static_cast<unsigned>((static_cast<unsigned long long>(hi) << 32 | lo) >> (shift < 32 ? shift : 32));
}
inline int __float_as_int(float x) { return static_cast<int>(::kp::detail::to_bits(x)); }
inline unsigned __float_as_uint(float x) { return static_cast<unsigned>(::kp::detail::to_bits(x)); }
inline double __longlong_as_double(long long x) { return ::kp::detail::from_bits<double>(x); }
inline long long __double_as_longlong(double x) { return static_cast<long long>(::kp::detail::to_bits(x)); }

// ---------------------------------------------------------------------------------------------
// Atomics: real ones, since blocks run in parallel on OS threads. Relaxed, as CUDA's are.
// Each CUDA atomic is one access, however the host does it: a GPU runs it as one atomic instruction
// (Nsight Compute: one request of l1tex__t_requests_pipe_lsu_mem_global_op_atom per warp; the Kernel
// Profiling Guide's "Memory Tables"), and check mode and the GPU model count it so. The host does max,
// min, inc, dec and the floating-point ones as a read and then a compare-and-swap until it sticks; in
// check builds that first read is an atomic update that adds nothing (the one access the checker sees,
// at the kernel's line) and the compare-and-swap is compiled without instrumentation (out of line: g++
// does not inline a function without it into one with it).
namespace kp {
namespace detail {
#ifdef KP_CHECK
template <class Bits>
inline Bits atomic_first_read(Bits* p) {
  return __atomic_fetch_add(p, Bits(0), __ATOMIC_RELAXED);
}
#define KP_UNSEEN __attribute__((noinline, no_sanitize_thread))
#else
template <class Bits>
inline Bits atomic_first_read(Bits* p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
#define KP_UNSEEN
#endif
// One try: *p = desired if *p is still `*old`; else `*old` becomes what *p holds.
template <class Bits>
KP_UNSEEN inline bool atomic_swap(Bits* p, Bits* old, Bits desired) {
  return __atomic_compare_exchange_n(p, old, desired, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
#undef KP_UNSEEN
// *p = next(*p) atomically, for a value of any type of 2, 4 or 8 bytes (its bits as an unsigned
// integer of that size); returns the old value. `next` returning its argument stores nothing more.
template <class T, class F>
inline T atomic_update(T* p, F next) {
  using Bits = typename std::conditional<sizeof(T) == 2, uint16_t,
                                         typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type>::type;
  static_assert(sizeof(T) == sizeof(Bits), "atomics of 2, 4 or 8 bytes");
  Bits* bits = reinterpret_cast<Bits*>(p);
  Bits old = atomic_first_read(bits);
  for (;;) {
    const T now = from_bits<T>(old), then = next(now);
    const Bits want = static_cast<Bits>(to_bits(then));
    if (want == old || atomic_swap(bits, &old, want)) return now;
  }
}
}  // namespace detail
}  // namespace kp

#define KP_ATOMIC_INT(T)                                                                           \
  inline T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }             \
  inline T atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }             \
  inline T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }           \
  inline T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }             \
  inline T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }               \
  inline T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }             \
  inline T atomicCAS(T* p, T expected, T desired) {                                                \
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
    return expected; /* the old value, whether or not it was swapped */                            \
  }                                                                                                \
  inline T atomicMax(T* p, T v) {                                                                  \
    return ::kp::detail::atomic_update(p, [v](T old) { return old < v ? v : old; });               \
  }                                                                                                \
  inline T atomicMin(T* p, T v) {                                                                  \
    return ::kp::detail::atomic_update(p, [v](T old) { return v < old ? v : old; });               \
  }
KP_ATOMIC_INT(int)
KP_ATOMIC_INT(unsigned)
KP_ATOMIC_INT(unsigned long long)
#undef KP_ATOMIC_INT

// atomicInc: old >= limit ? 0 : old + 1; atomicDec: old == 0 || old > limit ? limit : old - 1. Both return old.
inline unsigned atomicInc(unsigned* p, unsigned limit) {
  return ::kp::detail::atomic_update(p, [limit](unsigned old) { return old >= limit ? 0 : old + 1; });
}
inline unsigned atomicDec(unsigned* p, unsigned limit) {
  return ::kp::detail::atomic_update(p, [limit](unsigned old) { return old == 0 || old > limit ? limit : old - 1; });
}

// Floating-point atomics (half and bfloat16: cuda_cpu_fp16.h).
inline float atomicAdd(float* p, float v) {
  return ::kp::detail::atomic_update(p, [v](float old) { return old + v; });
}
inline double atomicAdd(double* p, double v) {
  return ::kp::detail::atomic_update(p, [v](double old) { return old + v; });
}
inline float atomicExch(float* p, float v) {
  return __uint_as_float(atomicExch(reinterpret_cast<unsigned*>(p), __float_as_uint(v)));
}

// ---------------------------------------------------------------------------------------------
// Math. The standard functions come from <cmath>/<math.h>; the fast device intrinsics are the
// plain functions (glibc declares some __-names as C functions, hence extern "C" and noexcept).

extern "C" {
inline float __expf(float x) noexcept { return expf(x); }
inline float __exp10f(float x) noexcept { return exp10f(x); }
inline float __logf(float x) noexcept { return logf(x); }
inline float __log2f(float x) noexcept { return log2f(x); }
inline float __log10f(float x) noexcept { return log10f(x); }
inline float __powf(float x, float y) noexcept { return powf(x, y); }
inline float __sinf(float x) noexcept { return sinf(x); }
inline float __cosf(float x) noexcept { return cosf(x); }
inline float __tanf(float x) noexcept { return tanf(x); }
}
inline float __fdividef(float x, float y) { return x / y; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }

// Rounding-mode intrinsics: _rn to nearest even, _rz toward zero, _ru up, _rd down, as the GPU rounds
// each one (the host's rounding mode is set around the operation and restored). Float-to-integer
// conversions saturate, and NaN gives 0, as PTX's cvt does.
namespace kp {
namespace detail {
template <class T, class F>
inline T with_rounding(int mode, F op) {
  const int saved = fegetround();
  fesetround(mode);
  volatile T result = op();  // computed before the mode is restored
  fesetround(saved);
  return result;
}
template <class I, class F>
inline I to_integer(F x, int mode) {
  if (x != x) return 0;
  const F r = with_rounding<F>(mode, [&] {
    volatile F v = x;
    return nearbyint(v);
  });
  if (r <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (r >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}
}  // namespace detail
}  // namespace kp
#define KP_ROUNDED(suffix, mode)                                                                           \
  inline float __fadd_##suffix(float a, float b) {                                                         \
    volatile float x = a, y = b;                                                                           \
    return ::kp::detail::with_rounding<float>(mode, [&] { return x + y; });                                \
  }                                                                                                        \
  inline float __fsub_##suffix(float a, float b) {                                                         \
    volatile float x = a, y = b;                                                                           \
    return ::kp::detail::with_rounding<float>(mode, [&] { return x - y; });                                \
  }                                                                                                        \
  inline float __fmul_##suffix(float a, float b) {                                                         \
    volatile float x = a, y = b;                                                                           \
    return ::kp::detail::with_rounding<float>(mode, [&] { return x * y; });                                \
  }                                                                                                        \
  inline float __fdiv_##suffix(float a, float b) {                                                         \
    volatile float x = a, y = b;                                                                           \
    return ::kp::detail::with_rounding<float>(mode, [&] { return x / y; });                                \
  }                                                                                                        \
  inline float __frcp_##suffix(float a) { return __fdiv_##suffix(1.0f, a); }                               \
  inline float __fsqrt_##suffix(float a) {                                                                 \
    volatile float x = a;                                                                                  \
    return ::kp::detail::with_rounding<float>(mode, [&] { return sqrtf(x); });                             \
  }                                                                                                        \
  inline float __fmaf_##suffix(float a, float b, float c) {                                                \
    volatile float x = a, y = b, z = c;                                                                    \
    return ::kp::detail::with_rounding<float>(mode, [&] { return fmaf(x, y, z); });                        \
  }                                                                                                        \
  inline double __dadd_##suffix(double a, double b) {                                                      \
    volatile double x = a, y = b;                                                                          \
    return ::kp::detail::with_rounding<double>(mode, [&] { return x + y; });                               \
  }                                                                                                        \
  inline double __dsub_##suffix(double a, double b) {                                                      \
    volatile double x = a, y = b;                                                                          \
    return ::kp::detail::with_rounding<double>(mode, [&] { return x - y; });                               \
  }                                                                                                        \
  inline double __dmul_##suffix(double a, double b) {                                                      \
    volatile double x = a, y = b;                                                                          \
    return ::kp::detail::with_rounding<double>(mode, [&] { return x * y; });                               \
  }                                                                                                        \
  inline double __ddiv_##suffix(double a, double b) {                                                      \
    volatile double x = a, y = b;                                                                          \
    return ::kp::detail::with_rounding<double>(mode, [&] { return x / y; });                               \
  }                                                                                                        \
  inline double __drcp_##suffix(double a) { return __ddiv_##suffix(1.0, a); }                              \
  inline double __dsqrt_##suffix(double a) {                                                               \
    volatile double x = a;                                                                                 \
    return ::kp::detail::with_rounding<double>(mode, [&] { return sqrt(x); });                             \
  }                                                                                                        \
  inline double __fma_##suffix(double a, double b, double c) {                                             \
    volatile double x = a, y = b, z = c;                                                                   \
    return ::kp::detail::with_rounding<double>(mode, [&] { return fma(x, y, z); });                        \
  }                                                                                                        \
  inline int __float2int_##suffix(float x) { return ::kp::detail::to_integer<int>(x, mode); }              \
  inline unsigned __float2uint_##suffix(float x) { return ::kp::detail::to_integer<unsigned>(x, mode); }   \
  inline long long __float2ll_##suffix(float x) { return ::kp::detail::to_integer<long long>(x, mode); }   \
  inline unsigned long long __float2ull_##suffix(float x) {                                                \
    return ::kp::detail::to_integer<unsigned long long>(x, mode);                                          \
  }                                                                                                        \
  inline int __double2int_##suffix(double x) { return ::kp::detail::to_integer<int>(x, mode); }            \
  inline unsigned __double2uint_##suffix(double x) { return ::kp::detail::to_integer<unsigned>(x, mode); } \
  inline long long __double2ll_##suffix(double x) { return ::kp::detail::to_integer<long long>(x, mode); } \
  inline unsigned long long __double2ull_##suffix(double x) {                                              \
    return ::kp::detail::to_integer<unsigned long long>(x, mode);                                          \
  }                                                                                                        \
  inline float __double2float_##suffix(double a) {                                                         \
    volatile double x = a;                                                                                 \
    return ::kp::detail::with_rounding<float>(mode, [&] { return static_cast<float>(x); });                \
  }                                                                                                        \
  inline float __int2float_##suffix(int a) {                                                               \
    volatile int x = a;                                                                                    \
    return ::kp::detail::with_rounding<float>(mode, [&] { return static_cast<float>(x); });                \
  }                                                                                                        \
  inline float __uint2float_##suffix(unsigned a) {                                                         \
    volatile unsigned x = a;                                                                               \
    return ::kp::detail::with_rounding<float>(mode, [&] { return static_cast<float>(x); });                \
  }                                                                                                        \
  inline float __ll2float_##suffix(long long a) {                                                          \
    volatile long long x = a;                                                                              \
    return ::kp::detail::with_rounding<float>(mode, [&] { return static_cast<float>(x); });                \
  }                                                                                                        \
  inline double __ll2double_##suffix(long long a) {                                                        \
    volatile long long x = a;                                                                              \
    return ::kp::detail::with_rounding<double>(mode, [&] { return static_cast<double>(x); });              \
  }
KP_ROUNDED(rn, FE_TONEAREST)
KP_ROUNDED(rz, FE_TOWARDZERO)
KP_ROUNDED(ru, FE_UPWARD)
KP_ROUNDED(rd, FE_DOWNWARD)
#undef KP_ROUNDED
inline double __int2double_rn(int x) { return x; }
inline double __uint2double_rn(unsigned x) { return x; }

template <class T>
inline T __ldg(const T* p) {
  return *p;
}
// Loads and stores with cache hints: the hints mean nothing on a CPU.
#define KP_LOAD(name)         \
  template <class T>          \
  inline T name(const T* p) { \
    return *p;                \
  }
KP_LOAD(__ldca)
KP_LOAD(__ldcg)
KP_LOAD(__ldcs)
KP_LOAD(__ldlu)
KP_LOAD(__ldcv)
#undef KP_LOAD
#define KP_STORE(name)              \
  template <class T>                \
  inline void name(T* p, T value) { \
    *p = value;                     \
  }
KP_STORE(__stwb)
KP_STORE(__stcg)
KP_STORE(__stcs)
KP_STORE(__stwt)
#undef KP_STORE

// CUDA's global min and max, for the argument types CUDA has them for. Mixed signedness compares
// as unsigned; the floating-point ones are fmax and fmin (a NaN loses), as in CUDA.
namespace kp {
namespace detail {
template <class T>
inline T max_of(T a, T b) {
  return a > b ? a : b;
}
template <class T>
inline T min_of(T a, T b) {
  return a < b ? a : b;
}
}  // namespace detail
}  // namespace kp
#define KP_INTEGER_MINMAX(R, A, B)                                 \
  inline R max(A a, B b) { return ::kp::detail::max_of<R>(a, b); } \
  inline R min(A a, B b) { return ::kp::detail::min_of<R>(a, b); }
KP_INTEGER_MINMAX(int, int, int)
KP_INTEGER_MINMAX(unsigned, unsigned, unsigned)
KP_INTEGER_MINMAX(unsigned, int, unsigned)
KP_INTEGER_MINMAX(unsigned, unsigned, int)
KP_INTEGER_MINMAX(long, long, long)
KP_INTEGER_MINMAX(unsigned long, unsigned long, unsigned long)
KP_INTEGER_MINMAX(long long, long long, long long)
KP_INTEGER_MINMAX(unsigned long long, unsigned long long, unsigned long long)
KP_INTEGER_MINMAX(unsigned long long, long long, unsigned long long)
KP_INTEGER_MINMAX(unsigned long long, unsigned long long, long long)
#undef KP_INTEGER_MINMAX
inline float max(float a, float b) { return fmaxf(a, b); }
inline float min(float a, float b) { return fminf(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double max(double a, float b) { return fmax(a, b); }
inline double min(double a, float b) { return fmin(a, b); }

// ---------------------------------------------------------------------------------------------
// Cooperative groups (<cooperative_groups.h>, <cooperative_groups/reduce.h>): the block and its
// tiles of 1 to 32 threads, on the barriers and warp collectives above. Grid groups are refused by
// the source step. Member functions take the caller's line, for deadlock messages.

namespace cooperative_groups {

class thread_block {
 public:
  void sync(int line = __builtin_LINE()) const { __syncthreads(line); }
  unsigned long long thread_rank() const { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
  unsigned long long size() const { return num_threads(); }
  unsigned long long num_threads() const { return 1ull * blockDim.x * blockDim.y * blockDim.z; }
  dim3 group_index() const { return blockIdx; }
  dim3 thread_index() const { return threadIdx; }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};

inline thread_block this_thread_block() { return {}; }
inline void sync(const thread_block& block, int line = __builtin_LINE()) { block.sync(line); }

template <unsigned Size>
class thread_block_tile {
  static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0, "a tile has 1, 2, 4, 8, 16 or 32 threads");
  static unsigned linear() { return static_cast<unsigned>(thread_block().thread_rank()); }

 public:
  static constexpr unsigned size() { return Size; }
  static constexpr unsigned num_threads() { return Size; }
  unsigned thread_rank() const { return linear() % Size; }
  unsigned meta_group_rank() const { return linear() / Size; }
  unsigned meta_group_size() const { return static_cast<unsigned>((thread_block().num_threads() + Size - 1) / Size); }
  // The lanes of this tile in its warp.
  unsigned mask() const { return Size == 32 ? ~0u : ((1u << Size) - 1) << (linear() % 32 / Size * Size); }
  void sync(int line = __builtin_LINE()) const { __syncwarp(mask(), line); }
  template <class T>
  T shfl(T v, int src, int line = __builtin_LINE()) const {
    return __shfl_sync(mask(), v, src, Size, line);
  }
  template <class T>
  T shfl_up(T v, unsigned delta, int line = __builtin_LINE()) const {
    return __shfl_up_sync(mask(), v, delta, Size, line);
  }
  template <class T>
  T shfl_down(T v, unsigned delta, int line = __builtin_LINE()) const {
    return __shfl_down_sync(mask(), v, delta, Size, line);
  }
  template <class T>
  T shfl_xor(T v, int lane_mask, int line = __builtin_LINE()) const {
    return __shfl_xor_sync(mask(), v, lane_mask, Size, line);
  }
  int any(int predicate, int line = __builtin_LINE()) const { return __any_sync(mask(), predicate, line); }
  int all(int predicate, int line = __builtin_LINE()) const { return __all_sync(mask(), predicate, line); }
  // Bit i: the tile's thread of rank i.
  unsigned ballot(int predicate, int line = __builtin_LINE()) const {
    return __ballot_sync(mask(), predicate, line) >> (linear() % 32 / Size * Size) &
           (Size == 32 ? ~0u : (1u << Size) - 1);
  }
};

template <unsigned Size>
thread_block_tile<Size> tiled_partition(const thread_block&) {
  return {};
}

// cooperative_groups/reduce.h: every thread of the tile gets the result (summed in another order than
// a GPU's: float sums can differ in the last bits).
template <class T>
struct plus {
  T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct less {
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <class T>
struct greater {
  T operator()(T a, T b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(T a, T b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(T a, T b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(T a, T b) const { return a ^ b; }
};

template <unsigned Size, class T, class Op>
T reduce(const thread_block_tile<Size>& tile, T value, Op op) {
  for (unsigned offset = Size / 2; offset > 0; offset /= 2) value = op(value, tile.shfl_xor(value, offset));
  return value;
}

}  // namespace cooperative_groups

#pragma GCC visibility pop

#include "cuda_cpu_host.h"  // the host runtime: memory, copies, device properties, events, function attributes
