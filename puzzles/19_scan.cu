// Puzzle 19 · scan: out[i] = a[0] + ... + a[i] over many blocks (an inclusive scan), in three launches:
//   scan_blocks: each block scans its 256 elements into out and writes its total to sums[block];
//   scan_sums:   one block scans sums (one element per block of the first launch, at most 256 of them);
//   add_sums:    each block but the first adds sums[block - 1] to its elements of out.
// spec:   out = a.cumsum(0)
// launch: scan_blocks and add_sums ceil(size / 256) blocks of 256 threads, scan_sums 1 block of 256
#include "kp.cuh"

// hints: puzzle("scan", hint=1), then hint=2 and hint=3
__global__ void scan_blocks(const float* a, float* sums, float* out, int size) {
  // FILL ME IN (about 12 lines)
}

__global__ void scan_sums(float* sums, int blocks) {
  // FILL ME IN (about 11 lines)
}

__global__ void add_sums(const float* sums, float* out, int size) {
  // FILL ME IN (about 2 lines)
}
