// Puzzle 19 · scan: out[i] = a[0] + ... + a[i] over many blocks (an inclusive scan), in three launches:
//   scan_blocks: each block scans its 256 elements into out and writes its total to sums[block];
//   scan_sums:   one block scans sums (one element per block of the first launch, at most 256 of them);
//   add_sums:    each block but the first adds sums[block - 1] to its elements of out.
// The first two scan in shared memory alike: scan_shared, called by every thread of the block, can serve both.
// spec:   out = a.cumsum(0)
// launch: scan_blocks and add_sums ceil(size / 256) blocks of 256 threads, scan_sums 1 block of 256
#include "kp.cuh"

// hints: puzzle("scan", hint=1), then hint=2 and hint=3
// s[0 .. blockDim.x - 1] becomes its inclusive scan, in place (after a barrier: every thread of the block calls it).
__device__ void scan_shared(float* s) {
  // FILL ME IN (about 8 lines)
}

__global__ void scan_blocks(const float* a, float* sums, float* out, int size) {
  // FILL ME IN (about 6 lines)
}

__global__ void scan_sums(float* sums, int blocks) {
  // FILL ME IN (about 5 lines)
}

__global__ void add_sums(const float* sums, float* out, int size) {
  // FILL ME IN (about 2 lines)
}
