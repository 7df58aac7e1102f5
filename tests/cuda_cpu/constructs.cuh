// A project header as published code writes one: it includes CUDA's headers itself, and a .cu includes it
// (tests/cuda_cpu/constructs.cu). On the CPU stand-in these includes find kernels/common/cuda_cpu_include/.
#pragma once
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

// The sum of a bfloat16 pair, in float.
__device__ inline float pair_sum(__nv_bfloat162 v) { return __low2float(v) + __high2float(v); }
