// <cuda_fp16.h> for the CPU stand-in, in a header that a kernel file includes: the stand-in's half and bfloat16 types
// (the source step includes the same header for this include in the .cu itself).
#pragma once
#ifndef KP_CUDA_CPU_FP16_H
#include "../cuda_cpu_fp16.h"
#endif
