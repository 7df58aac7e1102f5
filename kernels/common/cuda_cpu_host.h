// cuda_cpu_host.h: the host side of CUDA's runtime API for the CPU stand-in, what a launcher or a standalone
// program calls around its launches: device memory (cudaMalloc, cudaFree, cudaMallocHost, cudaMallocManaged),
// cudaMemset and cudaMemcpy (and their Async forms, cudaMemcpyToSymbol), the device's properties and attributes,
// streams, events, and cudaFuncSetAttribute. cuda_cpu.h includes it; the source step gives a kernel file both.
//
// On the stand-in device memory is host memory: cudaMalloc is an allocation aligned to 256 bytes (CUDA's
// guarantee), every copy kind is a memmove, and a kernel may read a host pointer as a GPU could not. Streams
// and events exist so that code written for a GPU runs as written: launches are synchronous here, so an event
// records the time it is recorded at, and cudaEventElapsedTime is the CPU's time between two such points.
// The device is the GPU the GPU model names by default, an H100 SXM: cudaGetDeviceProperties and
// cudaDeviceGetAttribute answer with its numbers (sources below; kp/gpus.py's row "H100 SXM" has the same).
// A failed call returns its error and records it for cudaGetLastError, with a message naming the argument.
#pragma once

#include <cstdlib>
#include <cstring>
#include <ctime>
#include <type_traits>

#ifdef KP_CHECK
// Check mode (cuda_cpu_check.h): memory a kernel of this op call may use, by name (the runtime's export).
extern "C" KP_API void kp_check_tensor(const char* name, const void* data, size_t bytes, size_t elem);
extern "C" KP_API void kp_check_forget(const void* data);
#endif

#pragma GCC visibility push(hidden)

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

// CUDA's values (driver_types.h).
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};
enum cudaSharedCarveout {
  cudaSharedmemCarveoutDefault = -1,
  cudaSharedmemCarveoutMaxShared = 100,
  cudaSharedmemCarveoutMaxL1 = 0,
};

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrMaxBlocksPerMultiprocessor = 106,
  cudaDevAttrReservedSharedMemoryPerBlock = 111,
};

// The fields of CUDA 13's cudaDeviceProp that describe the device (the texture limits left out).
struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  int multiProcessorCount;
  int integrated;
  int canMapHostMemory;
  int concurrentKernels;
  int ECCEnabled;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int cooperativeLaunch;
  size_t sharedMemPerBlockOptin;
  int maxBlocksPerMultiProcessor;
  size_t reservedSharedMemPerBlock;
};

typedef struct CUevent_st* cudaEvent_t;
struct CUevent_st {
  long long ns;  // CLOCK_MONOTONIC when recorded; -1 before
};

namespace kp {
namespace detail {
// Records `code` as this host thread's last error, with "<CUDA's text>: <what>" as last_error_message(); returns it.
KP_API cudaError_t host_error(cudaError_t code, const char* what);

// The H100 SXM5 80GB, from the NVIDIA H100 Tensor Core GPU data sheet (132 SMs, 50 MB L2, 80 GB HBM3 on a 5120-bit
// bus, 1.98 GHz boost) and the CUDA C++ Programming Guide's "Technical Specifications per Compute Capability" for
// 9.0 (2048 threads, 32 blocks, 65536 registers and 228 KiB shared memory per SM; 227 KiB per block opted in, 48 KiB
// without; 1 KiB reserved per block); the grid and block limits are CUDA's for every compute capability here.
inline cudaDeviceProp h100_properties() {
  cudaDeviceProp p = {};
  std::strcpy(p.name, "NVIDIA H100 80GB HBM3 (CPU stand-in)");
  p.totalGlobalMem = 80ull << 30;
  p.sharedMemPerBlock = 48 << 10;
  p.regsPerBlock = 65536;
  p.warpSize = 32;
  p.memPitch = 2147483647;
  p.maxThreadsPerBlock = 1024;
  p.maxThreadsDim[0] = 1024, p.maxThreadsDim[1] = 1024, p.maxThreadsDim[2] = 64;
  p.maxGridSize[0] = 2147483647, p.maxGridSize[1] = 65535, p.maxGridSize[2] = 65535;
  p.totalConstMem = 64 << 10;
  p.major = 9, p.minor = 0;
  p.textureAlignment = 512;
  p.multiProcessorCount = 132;
  p.canMapHostMemory = 1;
  p.concurrentKernels = 1;
  p.ECCEnabled = 1;
  p.asyncEngineCount = 2;
  p.unifiedAddressing = 1;
  p.memoryBusWidth = 5120;
  p.l2CacheSize = 50 << 20;
  p.persistingL2CacheMaxSize = 0;
  p.maxThreadsPerMultiProcessor = 2048;
  p.sharedMemPerMultiprocessor = 228 << 10;
  p.regsPerMultiprocessor = 65536;
  p.managedMemory = 1;
  p.cooperativeLaunch = 1;
  p.sharedMemPerBlockOptin = 227 << 10;
  p.maxBlocksPerMultiProcessor = 32;
  p.reservedSharedMemPerBlock = 1 << 10;
  return p;
}

inline long long monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ll + t.tv_nsec;
}
}  // namespace detail
}  // namespace kp

namespace kp {
namespace detail {
// Device memory, here host memory: 256-byte aligned, as cudaMalloc's is. In check mode the allocation is registered
// like a tensor of the op call, so that an access past its end is named (`elem`: the size of what it holds).
inline cudaError_t device_malloc(void** ptr, size_t bytes, size_t elem) {
  if (!ptr) return host_error(cudaErrorInvalidValue, "cudaMalloc: devPtr is NULL");
  *ptr = nullptr;
  if (bytes == 0) return cudaSuccess;
  *ptr = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!*ptr) return host_error(cudaErrorMemoryAllocation, "cudaMalloc: no memory left");
#ifdef KP_CHECK
  kp_check_tensor("cudaMalloc'd memory", *ptr, bytes, elem);
#else
  (void)elem;
#endif
  return cudaSuccess;
}
template <class T>
constexpr size_t element_size() {
  if constexpr (std::is_void_v<T>)
    return 1;
  else
    return sizeof(T);
}
}  // namespace detail
}  // namespace kp

inline cudaError_t cudaMalloc(void** ptr, size_t bytes) { return ::kp::detail::device_malloc(ptr, bytes, 1); }
template <class T>
inline cudaError_t cudaMalloc(T** ptr, size_t bytes) {
  return ::kp::detail::device_malloc(reinterpret_cast<void**>(ptr), bytes, ::kp::detail::element_size<T>());
}
inline cudaError_t cudaMallocHost(void** ptr, size_t bytes) { return cudaMalloc(ptr, bytes); }
template <class T>
inline cudaError_t cudaMallocHost(T** ptr, size_t bytes) {
  return cudaMalloc(ptr, bytes);
}
template <class T>
inline cudaError_t cudaMallocManaged(T** ptr, size_t bytes, unsigned /*flags*/ = 1) {
  return cudaMalloc(ptr, bytes);
}
// In check mode the allocation's registration goes with it: malloc may hand its address to a smaller allocation,
// and a registration left behind would cover bytes past that one's end (cudaFreeHost, cudaFreeAsync come here).
inline cudaError_t cudaFree(void* ptr) {
#ifdef KP_CHECK
  kp_check_forget(ptr);
#endif
  std::free(ptr);
  return cudaSuccess;
}
inline cudaError_t cudaFreeHost(void* ptr) { return cudaFree(ptr); }

inline cudaError_t cudaMemset(void* ptr, int value, size_t bytes) {
  if (!ptr && bytes) return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaMemset: devPtr is NULL");
  if (bytes) std::memset(ptr, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t = nullptr) {
  return cudaMemset(ptr, value, bytes);
}

inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (static_cast<unsigned>(kind) > cudaMemcpyDefault)
    return ::kp::detail::host_error(cudaErrorInvalidMemcpyDirection, "cudaMemcpy: kind is not a cudaMemcpyKind");
  if (bytes && (!dst || !src))
    return ::kp::detail::host_error(cudaErrorInvalidValue,
                                    !dst ? "cudaMemcpy: dst is NULL" : "cudaMemcpy: src is NULL");
  if (bytes) std::memmove(dst, src, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                                   cudaStream_t = nullptr) {
  return cudaMemcpy(dst, src, bytes, kind);
}
// Pitched (2-D) memory: rows of `width` bytes, `pitch` bytes apart. cudaMallocPitch pads each row to a multiple of
// 512 bytes (the device's textureAlignment above); code must use the pitch it returns, as with CUDA's.
inline cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  if (!pitch) return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaMallocPitch: pitch is NULL");
  *pitch = (width + 511) / 512 * 512;
  return cudaMalloc(ptr, *pitch * height);
}
template <class T>
inline cudaError_t cudaMallocPitch(T** ptr, size_t* pitch, size_t width, size_t height) {
  return cudaMallocPitch(reinterpret_cast<void**>(ptr), pitch, width, height);
}
inline cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                                cudaMemcpyKind kind) {
  if (static_cast<unsigned>(kind) > cudaMemcpyDefault)
    return ::kp::detail::host_error(cudaErrorInvalidMemcpyDirection, "cudaMemcpy2D: kind is not a cudaMemcpyKind");
  if (width > dpitch || width > spitch)
    return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaMemcpy2D: width is more than a pitch");
  for (size_t row = 0; row < height; ++row) {
    const cudaError_t e =
        cudaMemcpy(static_cast<char*>(dst) + row * dpitch, static_cast<const char*>(src) + row * spitch, width, kind);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                     size_t height, cudaMemcpyKind kind, cudaStream_t = nullptr) {
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}
inline cudaError_t cudaMemset2D(void* ptr, size_t pitch, int value, size_t width, size_t height) {
  if (width > pitch) return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaMemset2D: width is more than pitch");
  for (size_t row = 0; row < height; ++row) {
    const cudaError_t e = cudaMemset(static_cast<char*>(ptr) + row * pitch, value, width);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
inline cudaError_t cudaMemset2DAsync(void* ptr, size_t pitch, int value, size_t width, size_t height,
                                     cudaStream_t = nullptr) {
  return cudaMemset2D(ptr, pitch, value, width, height);
}

// `symbol`: a __constant__ or __device__ variable, which is an ordinary global here.
template <class T>
inline cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, size_t bytes, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  if (offset + bytes > sizeof(T))
    return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaMemcpyToSymbol: offset + count is past the symbol");
  return cudaMemcpy(reinterpret_cast<char*>(&symbol) + offset, src, bytes, kind);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t bytes, size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  if (offset + bytes > sizeof(T))
    return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaMemcpyFromSymbol: offset + count is past the symbol");
  return cudaMemcpy(dst, reinterpret_cast<const char*>(&symbol) + offset, bytes, kind);
}

// One device, number 0.
inline cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaGetDeviceCount: count is NULL");
  *count = 1;
  return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* device) {
  if (!device) return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaGetDevice: device is NULL");
  *device = 0;
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int device) {
  return device == 0
             ? cudaSuccess
             : ::kp::detail::host_error(cudaErrorInvalidDevice, "cudaSetDevice: the stand-in has device 0 only");
}
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!prop) return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaGetDeviceProperties: prop is NULL");
  if (device != 0)
    return ::kp::detail::host_error(cudaErrorInvalidDevice, "cudaGetDeviceProperties: the stand-in has device 0 only");
  *prop = ::kp::detail::h100_properties();
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (!value) return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaDeviceGetAttribute: value is NULL");
  if (device != 0)
    return ::kp::detail::host_error(cudaErrorInvalidDevice, "cudaDeviceGetAttribute: the stand-in has device 0 only");
  const cudaDeviceProp p = ::kp::detail::h100_properties();
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = p.maxThreadsPerBlock;
      break;
    case cudaDevAttrMaxBlockDimX:
      *value = p.maxThreadsDim[0];
      break;
    case cudaDevAttrMaxBlockDimY:
      *value = p.maxThreadsDim[1];
      break;
    case cudaDevAttrMaxBlockDimZ:
      *value = p.maxThreadsDim[2];
      break;
    case cudaDevAttrMaxGridDimX:
      *value = p.maxGridSize[0];
      break;
    case cudaDevAttrMaxGridDimY:
      *value = p.maxGridSize[1];
      break;
    case cudaDevAttrMaxGridDimZ:
      *value = p.maxGridSize[2];
      break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = static_cast<int>(p.sharedMemPerBlock);
      break;
    case cudaDevAttrTotalConstantMemory:
      *value = static_cast<int>(p.totalConstMem);
      break;
    case cudaDevAttrWarpSize:
      *value = p.warpSize;
      break;
    case cudaDevAttrMaxRegistersPerBlock:
      *value = p.regsPerBlock;
      break;
    case cudaDevAttrClockRate:
      *value = 1980000;
      break;  // kHz: the data sheet's boost clock
    case cudaDevAttrMemoryClockRate:
      *value = 2617000;
      break;  // kHz: 3.35 TB/s, 5120 bits, double data rate
    case cudaDevAttrMultiProcessorCount:
      *value = p.multiProcessorCount;
      break;
    case cudaDevAttrGlobalMemoryBusWidth:
      *value = p.memoryBusWidth;
      break;
    case cudaDevAttrL2CacheSize:
      *value = p.l2CacheSize;
      break;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
      *value = p.maxThreadsPerMultiProcessor;
      break;
    case cudaDevAttrComputeCapabilityMajor:
      *value = p.major;
      break;
    case cudaDevAttrComputeCapabilityMinor:
      *value = p.minor;
      break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
      *value = static_cast<int>(p.sharedMemPerMultiprocessor);
      break;
    case cudaDevAttrMaxRegistersPerMultiprocessor:
      *value = p.regsPerMultiprocessor;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = static_cast<int>(p.sharedMemPerBlockOptin);
      break;
    case cudaDevAttrMaxBlocksPerMultiprocessor:
      *value = p.maxBlocksPerMultiProcessor;
      break;
    case cudaDevAttrReservedSharedMemoryPerBlock:
      *value = static_cast<int>(p.reservedSharedMemPerBlock);
      break;
    default:
      return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaDeviceGetAttribute: an attribute the stand-in lacks");
  }
  return cudaSuccess;
}
inline cudaError_t cudaDeviceReset(void) { return cudaSuccess; }

// Streams: launches and copies are synchronous, so a stream only has to exist.
inline cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  if (!stream) return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaStreamCreate: pStream is NULL");
  static char streams;  // a distinct non-null handle; never dereferenced
  *stream = reinterpret_cast<cudaStream_t>(&streams);
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned /*flags*/) {
  return cudaStreamCreate(stream);
}
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }  // all its work is done
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned = 0) { return cudaSuccess; }
inline cudaError_t cudaMallocAsync(void** ptr, size_t bytes, cudaStream_t) { return cudaMalloc(ptr, bytes); }
template <class T>
inline cudaError_t cudaMallocAsync(T** ptr, size_t bytes, cudaStream_t) {
  return cudaMalloc(ptr, bytes);
}
inline cudaError_t cudaFreeAsync(void* ptr, cudaStream_t) { return cudaFree(ptr); }

// Events: the time each is recorded at.
inline cudaError_t cudaEventCreate(cudaEvent_t* event) {
  if (!event) return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaEventCreate: event is NULL");
  *event = new CUevent_st{-1};
  return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned /*flags*/) { return cudaEventCreate(event); }
inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t = nullptr) {
  if (!event) return ::kp::detail::host_error(cudaErrorInvalidResourceHandle, "cudaEventRecord: event is NULL");
  event->ns = ::kp::detail::monotonic_ns();
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return event ? cudaSuccess
               : ::kp::detail::host_error(cudaErrorInvalidResourceHandle, "cudaEventSynchronize: event is NULL");
}
inline cudaError_t cudaEventQuery(cudaEvent_t event) { return cudaEventSynchronize(event); }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms) return ::kp::detail::host_error(cudaErrorInvalidValue, "cudaEventElapsedTime: ms is NULL");
  if (!start || !end)
    return ::kp::detail::host_error(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime: an event is NULL");
  if (start->ns < 0 || end->ns < 0)
    return ::kp::detail::host_error(cudaErrorInvalidResourceHandle,
                                    "cudaEventElapsedTime: an event was never recorded");
  *ms = static_cast<float>((end->ns - start->ns) * 1e-6);
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}

// cudaFuncSetAttribute(kernel, attr, value): the source step passes the kernel's name first (the runtime keeps
// the attribute per name); called without one (in a header included with <...>, which the source step does not
// translate), it checks and forgets.
namespace kp {
template <class F>
inline cudaError_t func_set_attribute(const char* name, F* func, cudaFuncAttribute attr, int value) {
  if (!func) return detail::host_error(cudaErrorInvalidDeviceFunction, "cudaFuncSetAttribute: func is NULL");
  return detail::set_function_attribute(name, static_cast<int>(attr), value);
}
}  // namespace kp
template <class F>
inline cudaError_t cudaFuncSetAttribute(F* func, cudaFuncAttribute attr, int value) {
  return ::kp::func_set_attribute("", func, attr, value);
}

#pragma GCC visibility pop
