// mul_add: elementwise multiply and add with torch's broadcasting (notebook 02 trains a linear model w·x + b
// with them).
//
// forward:  mul: out = w * x        add: out = x + b        (out has the broadcast shape of the two inputs)
// backward: mul: dL/dw = sum_to(dL/dout · x, w.shape)    dL/dx = sum_to(dL/dout · w, x.shape)
//           add: dL/dx = sum_to(dL/dout, x.shape)        dL/db = sum_to(dL/dout, b.shape)
//           sum_to(g, shape) sums g over the dims along which an input of that shape was broadcast: the binding
//           moves those dims first and sum_rows (below) sums the rows, with notebook 08's column sums
//           (common/colsum.cuh); add needs no kernel of its own for its backward.
// broadcasting: as torch does it (shapes aligned from the right; a dim of size 1, or a missing leading dim,
//           repeats). The inputs are never expanded or copied: the binding gives the kernels, for each dim
//           of the output, its size and each input's stride, 0 along a broadcast dim (any strides, so
//           non-contiguous inputs need no copy either), after merging dims that are contiguous in both.
//           At most kMaxDims = 8 dims remain after merging (mul_add_max_dims() tells the binding).
// shapes:   out (and dL/dout, contiguous) has the broadcast shape; any number of elements, 0 included
// dtypes:   float32 and float64 (templated on T); both inputs have the same dtype
// launch:   one thread per N output elements (a Pack: 16 bytes, 4 floats or 2 doubles), 256 threads per
//           block, for every kernel; 16-byte loads and stores where the innermost dim allows (see the kernels)
// saved for backward: mul saves w and x; add saves only the two input shapes
#include "common/colsum.cuh"
#include "common/kp.cuh"

constexpr int kMaxDims = 8;

// Output sizes and the strides of two inputs in each output dim (0 along a broadcast dim).
struct Broadcast2 {
  int ndim;
  int64_t size[kMaxDims];
  int64_t stride_a[kMaxDims];
  int64_t stride_b[kMaxDims];
};

// The offsets into a and b of output element i (output in row-major order). The loop has a fixed
// trip count and is unrolled (as PyTorch's OffsetCalculator does), so each size and stride is read
// at a known index and stays in a register. The outermost dim needs no division: what is left of i
// is its coordinate, so a single merged dim (equal contiguous shapes) costs none.
__device__ __forceinline__ void broadcast_offsets(const Broadcast2& bc, int64_t i, int64_t& off_a, int64_t& off_b) {
  off_a = 0;
  off_b = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d > 0; --d) {
    if (d >= bc.ndim) continue;
    int64_t coord = i % bc.size[d];
    i /= bc.size[d];
    off_a += coord * bc.stride_a[d];
    off_b += coord * bc.stride_b[d];
  }
  if (bc.ndim > 0) {
    off_a += i * bc.stride_a[0];
    off_b += i * bc.stride_b[0];
  }
}

// Each thread takes N consecutive output elements (a Pack: 16 bytes, 4 floats or 2 doubles). When
// `packed` (the launcher's check: the innermost dim's size is a multiple of N, each input steps through
// it with stride 1 or 0, and every pointer and outer stride keeps Packs 16-byte aligned), the N elements
// lie in one row: one offset computation, then one 16-byte load per input that steps through the row
// and one value repeated for an input broadcast along it. Otherwise the N elements go one by one.
template <typename T>
__device__ __forceinline__ Pack<T> load_row(const T* p, int64_t inner_stride) {
  if (inner_stride == 1) return load_pack(p);
  Pack<T> r;
#pragma unroll
  for (int k = 0; k < Pack<T>::N; ++k) r.v[k] = *p;  // broadcast along the row: one value
  return r;
}

template <typename T>
__global__ void mul_fwd_kernel(const T* __restrict__ w, const T* __restrict__ x, T* __restrict__ out, int64_t n,
                               Broadcast2 bc, bool packed) {
  constexpr int N = Pack<T>::N;
  int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  int64_t ow, ox;
  if (packed && i < n) {
    broadcast_offsets(bc, i, ow, ox);
    Pack<T> pw = load_row(w + ow, bc.stride_a[bc.ndim - 1]), px = load_row(x + ox, bc.stride_b[bc.ndim - 1]), po;
#pragma unroll
    for (int k = 0; k < N; ++k) po.v[k] = pw.v[k] * px.v[k];
    store_pack(out + i, po);
  } else {
    for (int64_t end = i + N < n ? i + N : n; i < end; ++i) {
      broadcast_offsets(bc, i, ow, ox);
      out[i] = w[ow] * x[ox];
    }
  }
}

// Both gradients in one pass, at the output's shape (the binding sums them down to w's and x's
// shapes); grad_w or grad_x is nullptr when that gradient is not needed.
template <typename T>
__global__ void mul_bwd_kernel(const T* __restrict__ grad_out, const T* __restrict__ w, const T* __restrict__ x,
                               T* __restrict__ grad_w, T* __restrict__ grad_x, int64_t n, Broadcast2 bc, bool packed) {
  constexpr int N = Pack<T>::N;
  int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  int64_t ow, ox;
  if (packed && i < n) {
    broadcast_offsets(bc, i, ow, ox);
    Pack<T> pg = load_pack(grad_out + i), pw = load_row(w + ow, bc.stride_a[bc.ndim - 1]),
            px = load_row(x + ox, bc.stride_b[bc.ndim - 1]), pdw, pdx;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      pdw.v[k] = pg.v[k] * px.v[k];
      pdx.v[k] = pg.v[k] * pw.v[k];
    }
    if (grad_w) store_pack(grad_w + i, pdw);
    if (grad_x) store_pack(grad_x + i, pdx);
  } else {
    for (int64_t end = i + N < n ? i + N : n; i < end; ++i) {
      broadcast_offsets(bc, i, ow, ox);
      T g = grad_out[i];
      if (grad_w) grad_w[i] = g * x[ox];
      if (grad_x) grad_x[i] = g * w[ow];
    }
  }
}

template <typename T>
__global__ void add_fwd_kernel(const T* __restrict__ x, const T* __restrict__ b, T* __restrict__ out, int64_t n,
                               Broadcast2 bc, bool packed) {
  constexpr int N = Pack<T>::N;
  int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * N;
  int64_t ox, ob;
  if (packed && i < n) {
    broadcast_offsets(bc, i, ox, ob);
    Pack<T> px = load_row(x + ox, bc.stride_a[bc.ndim - 1]), pb = load_row(b + ob, bc.stride_b[bc.ndim - 1]), po;
#pragma unroll
    for (int k = 0; k < N; ++k) po.v[k] = px.v[k] + pb.v[k];
    store_pack(out + i, po);
  } else {
    for (int64_t end = i + N < n ? i + N : n; i < end; ++i) {
      broadcast_offsets(bc, i, ox, ob);
      out[i] = x[ox] + b[ob];
    }
  }
}

int mul_add_max_dims() { return kMaxDims; }

static Broadcast2 make_broadcast(int ndim, const int64_t* size, const int64_t* stride_a, const int64_t* stride_b) {
  if (ndim < 0 || ndim > kMaxDims) {
    throw std::runtime_error("mul_add: " + std::to_string(ndim) + " dims, at most " + std::to_string(kMaxDims));
  }
  Broadcast2 bc{};
  bc.ndim = ndim;
  for (int d = 0; d < ndim; ++d) {
    bc.size[d] = size[d];
    bc.stride_a[d] = stride_a[d];
    bc.stride_b[d] = stride_b[d];
  }
  return bc;
}

// Whether an input with these strides (0 along a broadcast dim) lets a thread's N elements of a row move as
// one Pack: it is broadcast along the row (inner stride 0: one value, read alone, any alignment), or it steps
// through the row (inner stride 1) and every row of it starts 16-byte aligned.
template <typename T>
static bool input_packs(const Broadcast2& bc, const void* p, const int64_t* stride) {
  int inner = bc.ndim - 1;
  if (stride[inner] == 0) return true;
  if (stride[inner] != 1 || !kp::packs_fit(p)) return false;
  for (int d = 0; d < inner; ++d)
    if (stride[d] % Pack<T>::N != 0) return false;
  return true;
}

// Whether each thread's N output elements can move as Packs (see the kernels above): the rows hold whole
// Packs, the outputs are 16-byte aligned, and both inputs allow it.
template <typename T>
static bool rows_pack(const Broadcast2& bc, const void* a, const void* b, const void* out1, const void* out2) {
  return bc.ndim > 0 && bc.size[bc.ndim - 1] % Pack<T>::N == 0 && kp::packs_fit(out1, out2) &&
         input_packs<T>(bc, a, bc.stride_a) && input_packs<T>(bc, b, bc.stride_b);
}

// Launchers: `size`, `stride_a`, `stride_b` are host arrays of `ndim` entries (the output's dims after
// merging); `n` is the number of output elements.
template <typename T>
void mul_fwd(const T* w, const T* x, T* out, int64_t n, int ndim, const int64_t* size, const int64_t* w_stride,
             const int64_t* x_stride, cudaStream_t stream) {
  if (n == 0) return;  // a grid of zero blocks is an invalid configuration
  const int threads = 256;
  Broadcast2 bc = make_broadcast(ndim, size, w_stride, x_stride);
  bool packed = rows_pack<T>(bc, w, x, out, nullptr);
  mul_fwd_kernel<T><<<ceil_div<int64_t>(n, threads * Pack<T>::N), threads, 0, stream>>>(w, x, out, n, bc, packed);
  KP_CHECK_LAUNCH();
}

template <typename T>
void mul_bwd(const T* grad_out, const T* w, const T* x, T* grad_w, T* grad_x, int64_t n, int ndim, const int64_t* size,
             const int64_t* w_stride, const int64_t* x_stride, cudaStream_t stream) {
  if (n == 0) return;
  const int threads = 256;
  Broadcast2 bc = make_broadcast(ndim, size, w_stride, x_stride);
  bool packed = rows_pack<T>(bc, w, x, grad_w, grad_x) && kp::packs_fit(grad_out);
  mul_bwd_kernel<T><<<ceil_div<int64_t>(n, threads * Pack<T>::N), threads, 0, stream>>>(grad_out, w, x, grad_w, grad_x,
                                                                                        n, bc, packed);
  KP_CHECK_LAUNCH();
}

template <typename T>
void add_fwd(const T* x, const T* b, T* out, int64_t n, int ndim, const int64_t* size, const int64_t* x_stride,
             const int64_t* b_stride, cudaStream_t stream) {
  if (n == 0) return;
  const int threads = 256;
  Broadcast2 bc = make_broadcast(ndim, size, x_stride, b_stride);
  bool packed = rows_pack<T>(bc, x, b, out, nullptr);
  add_fwd_kernel<T><<<ceil_div<int64_t>(n, threads * Pack<T>::N), threads, 0, stream>>>(x, b, out, n, bc, packed);
  KP_CHECK_LAUNCH();
}

// Rows [blockIdx.y * rows_per_block, + rows_per_block) of the block's 32 columns of x (R, C), summed into
// sums[blockIdx.y][c].
template <typename T>
__global__ void sum_rows_kernel(const T* __restrict__ x, T* __restrict__ sums, int64_t R, int64_t C,
                                int64_t rows_per_block) {
  __shared__ T partial[32][33];
  int64_t begin = (int64_t)blockIdx.y * rows_per_block, end = begin + rows_per_block < R ? begin + rows_per_block : R;
  T v = column_sums(x, begin, end, C, partial);
  int64_t c = (int64_t)blockIdx.x * 32 + threadIdx.y;
  if (threadIdx.x == 0 && c < C) sums[blockIdx.y * C + c] = v;
}

// out (C) = the column sums of x (R, C), notebook 08's version 5: the sums of chunks of 256 rows (more past 65535
// chunks: chunk_rows) into `sums` (ceil(R / 256) x C), then the column sums of those; the same bits on every run.
template <typename T>
void sum_rows(const T* x, T* out, T* sums, int64_t R, int64_t C, cudaStream_t stream) {
  if (C == 0) return;
  const int64_t rows = chunk_rows(R), blocks = ceil_div<int64_t>(C, 32), chunks = ceil_div<int64_t>(R, rows);
  if (chunks <= 1) {  // one chunk (or none: zeros): its sums are the answer
    sum_rows_kernel<T><<<blocks, dim3(32, 32), 0, stream>>>(x, out, R, C, rows);
  } else {
    sum_rows_kernel<T><<<dim3(blocks, chunks), dim3(32, 32), 0, stream>>>(x, sums, R, C, rows);
    KP_CHECK_LAUNCH();
    sum_rows_kernel<T><<<blocks, dim3(32, 32), 0, stream>>>(sums, out, chunks, C, chunks);
  }
  KP_CHECK_LAUNCH();
}

template void mul_fwd<float>(const float*, const float*, float*, int64_t, int, const int64_t*, const int64_t*,
                             const int64_t*, cudaStream_t);
template void mul_fwd<double>(const double*, const double*, double*, int64_t, int, const int64_t*, const int64_t*,
                              const int64_t*, cudaStream_t);
template void mul_bwd<float>(const float*, const float*, const float*, float*, float*, int64_t, int, const int64_t*,
                             const int64_t*, const int64_t*, cudaStream_t);
template void mul_bwd<double>(const double*, const double*, const double*, double*, double*, int64_t, int,
                              const int64_t*, const int64_t*, const int64_t*, cudaStream_t);
template void add_fwd<float>(const float*, const float*, float*, int64_t, int, const int64_t*, const int64_t*,
                             const int64_t*, cudaStream_t);
template void add_fwd<double>(const double*, const double*, double*, int64_t, int, const int64_t*, const int64_t*,
                              const int64_t*, cudaStream_t);
template void sum_rows<float>(const float*, float*, float*, int64_t, int64_t, cudaStream_t);
template void sum_rows<double>(const double*, double*, double*, int64_t, int64_t, cudaStream_t);
