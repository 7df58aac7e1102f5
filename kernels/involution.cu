// involution: a spatial filter generated per pixel and shared by the channels of a group
// (Li et al., CVPR 2021). Convolution shares one filter across pixels and varies it
// across channels; involution does the opposite.
//
// forward:  out[n, c, h, w] = sum_{kh, kw} weight[n, g, kh, kw, h, w] * input[n, c, y, x]
//           y = h*stride - padding + kh*dilation, x = w*stride - padding + kw*dilation,
//           g = c / (C/G); terms with (y, x) outside the input are zero (zero padding)
// backward: dL/dinput[n, c, y, x] = sum over (kh, kw, h, w) with h*stride - padding + kh*dilation = y
//                                   and w*stride - padding + kw*dilation = x of
//                                   weight[n, g, kh, kw, h, w] * dL/dout[n, c, h, w]
//           dL/dweight[n, g, kh, kw, h, w] = sum_{c in group g} dL/dout[n, c, h, w] * input[n, c, y, x]
// shapes:   input (N, C, H, W); weight (N, G, KH, KW, H_out, W_out) with C % G == 0 and
//           H_out = (H + 2*padding - dilation*(KH-1) - 1) / stride + 1 (W_out likewise); out and
//           dL/dout (N, C, H_out, W_out); all contiguous (the binding checks the shapes and makes them so)
// dtypes:   float32 and float64 (templated on T)
// launch:   256 threads per block, every element of a result written by one thread, no atomics:
//           involution_fwd_kernel        one thread per out element (N*C*H_out*W_out)
//           involution_bwd_input_kernel  one per dL/dinput element (N*C*H*W), gathering the
//                                        (kh, h, kw, w) whose tap reads its pixel
//           involution_bwd_weight_kernel one per (n, g, h, w) (N*G*H_out*W_out), writing the KH*KW
//                                        taps of its kernel, each a sum over the C/G channels of group g
// saved for backward: weight (for dL/dinput) and input (for dL/dweight), each only when that
//           gradient is asked for; the input's H and W
#include "common/kp.cuh"

// The geometry of one call, passed by value to every kernel.
struct InvolutionShape {
  int64_t N, C, H, W;  // input
  int64_t G, KH, KW;   // groups and kernel size
  int64_t H_out, W_out;
  int64_t stride, padding, dilation;
};

template <typename T>
__global__ void involution_fwd_kernel(const T* __restrict__ input, const T* __restrict__ weight, T* __restrict__ out,
                                      InvolutionShape s) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= s.N * s.C * s.H_out * s.W_out) return;
  const int64_t w = i % s.W_out, h = i / s.W_out % s.H_out;
  const int64_t c = i / (s.W_out * s.H_out) % s.C, n = i / (s.W_out * s.H_out * s.C);
  const int64_t g = c / (s.C / s.G), plane = s.H_out * s.W_out;  // stride between (kh, kw) planes of weight
  const T* in = input + (n * s.C + c) * s.H * s.W;
  const T* wt = weight + (n * s.G + g) * s.KH * s.KW * plane + h * s.W_out + w;
  T acc = 0;
  for (int64_t kh = 0; kh < s.KH; ++kh) {
    const int64_t y = h * s.stride - s.padding + kh * s.dilation;
    if (y < 0 || y >= s.H) continue;
    for (int64_t kw = 0; kw < s.KW; ++kw) {
      const int64_t x = w * s.stride - s.padding + kw * s.dilation;
      if (x >= 0 && x < s.W) acc += wt[(kh * s.KW + kw) * plane] * in[y * s.W + x];
    }
  }
  out[i] = acc;
}

template <typename T>
__global__ void involution_bwd_input_kernel(const T* __restrict__ grad_out, const T* __restrict__ weight,
                                            T* __restrict__ grad_input, InvolutionShape s) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= s.N * s.C * s.H * s.W) return;
  const int64_t x = i % s.W, y = i / s.W % s.H;
  const int64_t c = i / (s.W * s.H) % s.C, n = i / (s.W * s.H * s.C);
  const int64_t g = c / (s.C / s.G), plane = s.H_out * s.W_out;
  const T* go = grad_out + (n * s.C + c) * plane;
  const T* wt = weight + (n * s.G + g) * s.KH * s.KW * plane;
  T acc = 0;
  for (int64_t kh = 0; kh < s.KH; ++kh) {
    int64_t h = y + s.padding - kh * s.dilation;  // = h_out * stride for the output row whose tap kh reads y
    if (h < 0) break;                             // and smaller for every later kh
    if (s.stride > 1) {
      if (h % s.stride != 0) continue;
      h /= s.stride;
    }
    if (h >= s.H_out) continue;
    for (int64_t kw = 0; kw < s.KW; ++kw) {
      int64_t w = x + s.padding - kw * s.dilation;
      if (w < 0) break;
      if (s.stride > 1) {
        if (w % s.stride != 0) continue;
        w /= s.stride;
      }
      if (w >= s.W_out) continue;
      acc += wt[(kh * s.KW + kw) * plane + h * s.W_out + w] * go[h * s.W_out + w];
    }
  }
  grad_input[i] = acc;
}

template <typename T>
__global__ void involution_bwd_weight_kernel(const T* __restrict__ grad_out, const T* __restrict__ input,
                                             T* __restrict__ grad_weight, InvolutionShape s) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= s.N * s.G * s.H_out * s.W_out) return;
  const int64_t w = i % s.W_out, h = i / s.W_out % s.H_out;
  const int64_t ng = i / (s.W_out * s.H_out);  // n * G + g
  const int64_t n = ng / s.G, g = ng % s.G, group_channels = s.C / s.G, plane = s.H_out * s.W_out;
  const T* go = grad_out + (n * s.C + g * group_channels) * plane + h * s.W_out + w;  // channel stride: plane
  const T* in = input + (n * s.C + g * group_channels) * s.H * s.W;                   // channel stride: H * W
  T* gw = grad_weight + ng * s.KH * s.KW * plane + h * s.W_out + w;
  for (int64_t kh = 0; kh < s.KH; ++kh) {
    const int64_t y = h * s.stride - s.padding + kh * s.dilation;
    for (int64_t kw = 0; kw < s.KW; ++kw) {
      const int64_t x = w * s.stride - s.padding + kw * s.dilation;
      T acc = 0;
      if (y >= 0 && y < s.H && x >= 0 && x < s.W) {
        for (int64_t c = 0; c < group_channels; ++c) acc += go[c * plane] * in[(c * s.H + y) * s.W + x];
      }
      gw[(kh * s.KW + kw) * plane] = acc;
    }
  }
}

// Launchers: raw pointers and sizes, checked by the binding (kernels/involution_binding.cpp).

static InvolutionShape make_shape(int64_t N, int64_t C, int64_t H, int64_t W, int64_t G, int64_t KH, int64_t KW,
                                  int64_t stride, int64_t padding, int64_t dilation) {
  return {N,
          C,
          H,
          W,
          G,
          KH,
          KW,
          (H + 2 * padding - dilation * (KH - 1) - 1) / stride + 1,
          (W + 2 * padding - dilation * (KW - 1) - 1) / stride + 1,
          stride,
          padding,
          dilation};
}

static const int kThreads = 256;

template <typename T>
void involution_fwd(const T* input, const T* weight, T* out, int64_t N, int64_t C, int64_t H, int64_t W, int64_t G,
                    int64_t KH, int64_t KW, int64_t stride, int64_t padding, int64_t dilation, cudaStream_t stream) {
  InvolutionShape s = make_shape(N, C, H, W, G, KH, KW, stride, padding, dilation);
  const int64_t n = N * C * s.H_out * s.W_out;
  if (n == 0) return;  // a grid of zero blocks is an invalid configuration
  involution_fwd_kernel<T><<<ceil_div<int64_t>(n, kThreads), kThreads, 0, stream>>>(input, weight, out, s);
  KP_CHECK_LAUNCH();
}

template <typename T>
void involution_bwd_input(const T* grad_out, const T* weight, T* grad_input, int64_t N, int64_t C, int64_t H, int64_t W,
                          int64_t G, int64_t KH, int64_t KW, int64_t stride, int64_t padding, int64_t dilation,
                          cudaStream_t stream) {
  InvolutionShape s = make_shape(N, C, H, W, G, KH, KW, stride, padding, dilation);
  const int64_t n = N * C * H * W;
  if (n == 0) return;
  involution_bwd_input_kernel<T>
      <<<ceil_div<int64_t>(n, kThreads), kThreads, 0, stream>>>(grad_out, weight, grad_input, s);
  KP_CHECK_LAUNCH();
}

template <typename T>
void involution_bwd_weight(const T* grad_out, const T* input, T* grad_weight, int64_t N, int64_t C, int64_t H,
                           int64_t W, int64_t G, int64_t KH, int64_t KW, int64_t stride, int64_t padding,
                           int64_t dilation, cudaStream_t stream) {
  InvolutionShape s = make_shape(N, C, H, W, G, KH, KW, stride, padding, dilation);
  const int64_t n = N * G * s.H_out * s.W_out;
  if (n == 0) return;
  involution_bwd_weight_kernel<T>
      <<<ceil_div<int64_t>(n, kThreads), kThreads, 0, stream>>>(grad_out, input, grad_weight, s);
  KP_CHECK_LAUNCH();
}

template void involution_fwd<float>(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t,
                                    int64_t, int64_t, int64_t, int64_t, int64_t, cudaStream_t);
template void involution_fwd<double>(const double*, const double*, double*, int64_t, int64_t, int64_t, int64_t, int64_t,
                                     int64_t, int64_t, int64_t, int64_t, int64_t, cudaStream_t);
template void involution_bwd_input<float>(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t,
                                          int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, cudaStream_t);
template void involution_bwd_input<double>(const double*, const double*, double*, int64_t, int64_t, int64_t, int64_t,
                                           int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, cudaStream_t);
template void involution_bwd_weight<float>(const float*, const float*, float*, int64_t, int64_t, int64_t, int64_t,
                                           int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, cudaStream_t);
template void involution_bwd_weight<double>(const double*, const double*, double*, int64_t, int64_t, int64_t, int64_t,
                                            int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, cudaStream_t);
