// Register tiling of a matrix product C = A·B, shared by linear_ladder.cu (version 7) and linear.cu (its products
// past a size): per step along k, a block stages a BK-deep tile of each operand in shared memory, and each of its
// threads multiplies a TM x TN fragment of C in registers. Only __device__ functions: the `__shared__` tiles are
// declared by the calling kernel in its `.cu` file (each kernel sizes its own) and handed in as pointers to rows of
// BD + TILE_PAD elements.
//
// P = Pack<T>::N, the elements of one 16-byte Pack (4 floats, 2 doubles).
// - A tile is tile[k][d]: BK rows along k, each of BD values along C's rows (A's tile) or columns (B's tile), so
//   that a step of the multiply reads one row of each tile.
// - TILE_PAD extra elements per row keep every row 16-byte aligned (Pack reads) and put rows k and k + P 16 banks
//   apart: a warp's transposed stores (16 values of d at two values of k) hit 32 different banks.
// - A thread's fragment is TM / P groups of P consecutive rows of C, BM / (TM / P) rows apart, times TN / P groups of
//   P consecutive columns, BN / (TN / P) apart: each group is one Pack read from a tile row, and the BN / TN threads
//   along a row of the block (16 in every configuration here) read neighbouring Packs (no bank conflict) and store
//   neighbouring Packs of C.
// Every loop has a fixed count and guards its edges inside (no `break`: nvcc kept such a store loop's fragment on
// the stack once).
#pragma once

#include "kp.cuh"

constexpr int TILE_PAD = 4;

// A loop of a fixed count, unrolled (nvcc does so anyway): on the CPU stand-in too (a macro, spelled per compiler:
// the source step rewrites `#pragma unroll` lines, not `_Pragma` in a macro), so that the GPU model sees a load per
// Pack as the GPU runs it, not one load instruction run several times (which it would count as DRAM round trips one
// after another).
#ifdef KP_CPU_STANDIN
#define TILES_UNROLL _Pragma("GCC unroll 16")
#else
#define TILES_UNROLL _Pragma("unroll")
#endif

// One BK x BD tile of an operand into tile[k][d], zeros past its edges: element (d, k) of the operand (D x K) is
// A[d * ld + k] where ALONG_K (k contiguous: each thread loads P values of k and stores them transposed; two
// neighbouring threads read 32 bytes of one row, a warp 16 rows), else A[k * ld + d] (d contiguous: a warp reads a
// row of P x 32 values of d and stores them as they are). 16-byte Packs where `packed` (A 16-byte aligned and ld a
// multiple of P) and the Pack lies inside the operand, element by element elsewhere. All THREADS threads call it.
template <typename T, int BD, int BK, int THREADS, bool ALONG_K>
__device__ __forceinline__ void load_tile(const T* __restrict__ A, int64_t ld, int64_t D, int64_t K, int64_t d0,
                                          int64_t k0, bool packed, T (*tile)[BD + TILE_PAD]) {
  constexpr int P = Pack<T>::N, PACKS = BD * BK / P, ROUNDS = (PACKS + THREADS - 1) / THREADS;
  static_assert(BK % (2 * P) == 0 && BD % 16 == 0, "a tile is whole 32-byte pieces of k and 16 values of d");
  TILES_UNROLL for (int round = 0; round < ROUNDS; ++round) {
    const int l = threadIdx.x + round * THREADS;  // this thread's Pack of the tile
    const bool inside = PACKS % THREADS == 0 || l < PACKS;
    if constexpr (ALONG_K) {
      const int dd = l / 2 % BD, kk = l / (2 * BD) * 2 * P + l % 2 * P;
      const int64_t d = d0 + dd, k = k0 + kk;
      if (inside && packed && d < D && k + P <= K) {
        const Pack<T> p = load_pack(A + d * ld + k);
        for (int e = 0; e < P; ++e) tile[kk + e][dd] = p.v[e];
      } else if (inside) {
        for (int e = 0; e < P; ++e) tile[kk + e][dd] = d < D && k + e < K ? A[d * ld + k + e] : T(0);
      }
    } else {
      const int dd = l % (BD / P) * P, kk = l / (BD / P);
      const int64_t d = d0 + dd, k = k0 + kk;
      if (inside && packed && k < K && d + P <= D) {
        store_pack(&tile[kk][dd], load_pack(A + k * ld + d));
      } else if (inside) {
        Pack<T> p;
        for (int e = 0; e < P; ++e) p.v[e] = k < K && d + e < D ? A[k * ld + d + e] : T(0);
        store_pack(&tile[kk][dd], p);
      }
    }
  }
}

// acc += this thread's fragment of As·Bs over the BK steps of one pair of tiles: per step, TM / P + TN / P Pack reads
// into registers, then TM x TN multiply-adds. (tr, tc): the thread's place among the block's BM / TM x BN / TN.
template <typename T, int BM, int BN, int BK, int TM, int TN>
__device__ __forceinline__ void multiply_fragments(const T (*As)[BM + TILE_PAD], const T (*Bs)[BN + TILE_PAD], int tr,
                                                   int tc, T (&acc)[TM][TN]) {
  constexpr int P = Pack<T>::N;
  static_assert(TM % P == 0 && TN % P == 0, "a fragment is whole Packs");
  for (int kk = 0; kk < BK; ++kk) {
    T a[TM], b[TN];
    for (int g = 0; g < TM / P; ++g) {
      const Pack<T> p = load_pack(&As[kk][g * (BM / TM * P) + tr * P]);
      for (int e = 0; e < P; ++e) a[g * P + e] = p.v[e];
    }
    for (int g = 0; g < TN / P; ++g) {
      const Pack<T> p = load_pack(&Bs[kk][g * (BN / TN * P) + tc * P]);
      for (int e = 0; e < P; ++e) b[g * P + e] = p.v[e];
    }
    for (int i = 0; i < TM; ++i)
      for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
  }
}

// The fragment (+ bias[column] where bias is not null) into C (rows x cols, contiguous), whose block starts at row0,
// col0; nothing past C's edges. 16-byte Packs where `packed` (C and bias 16-byte aligned, cols a multiple of P) and
// the Pack lies inside C, element by element elsewhere.
template <typename T, int BM, int BN, int TM, int TN>
__device__ __forceinline__ void store_fragment(const T (&acc)[TM][TN], const T* __restrict__ bias, T* __restrict__ C,
                                               int64_t rows, int64_t cols, int64_t row0, int64_t col0, int tr, int tc,
                                               bool packed) {
  constexpr int P = Pack<T>::N;
  T add[TN] = {};  // bias at the fragment's columns
  for (int g = 0; g < TN / P; ++g) {
    const int64_t col = col0 + g * (BN / TN * P) + tc * P;
    if (bias && packed && col + P <= cols) {
      const Pack<T> p = load_pack(bias + col);
      for (int e = 0; e < P; ++e) add[g * P + e] = p.v[e];
    } else if (bias) {
      for (int e = 0; e < P; ++e) add[g * P + e] = col + e < cols ? bias[col + e] : T(0);
    }
  }
  for (int i = 0; i < TM; ++i) {
    const int64_t row = row0 + i / P * (BM / TM * P) + tr * P + i % P;
    for (int g = 0; g < TN / P; ++g) {
      const int64_t col = col0 + g * (BN / TN * P) + tc * P;
      if (row < rows && packed && col + P <= cols) {
        Pack<T> v;
        for (int e = 0; e < P; ++e) v.v[e] = acc[i][g * P + e] + add[g * P + e];
        // C's row seen as Packs (16-byte aligned where `packed`), the Pack at col / P: one STG.E.128. Written as
        // C + row * cols + col, the same address, nvcc 13.0 split this Pack into P scalar stores (STG.E; already in
        // its PTX) wherever col had no constant part (g = 0), alignas(16) or not (a float4 split the same).
        store_pack(reinterpret_cast<Pack<T>*>(C + row * cols)[col / P].v, v);
      } else if (row < rows) {
        for (int e = 0; e < P; ++e)
          if (col + e < cols) C[row * cols + col + e] = acc[i][g * P + e] + add[g * P + e];
      }
    }
  }
}
