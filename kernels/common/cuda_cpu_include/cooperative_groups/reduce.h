// <cooperative_groups/reduce.h> for the CPU stand-in, in a header that a kernel file includes: what CUDA's header gives
// is in cuda_cpu.h (the source step includes it first in every kernel file, and drops this include from the .cu
// itself).
#pragma once
#ifndef KP_CUDA_CPU_H  // in a kernel file cuda_cpu.h came first (the source step puts it there)
#include "../../cuda_cpu.h"
#endif
