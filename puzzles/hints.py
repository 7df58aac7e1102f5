"""The puzzles' hints, three to a puzzle, each telling more than the one before: `puzzle("dot", hint=1)` a nudge (what
to look at), `hint=2` the approach (the idea, in words), `hint=3` a sketch (the steps in order, in pseudo-code: still
not the kernel). kp.puzzle reads this file beside specs.py; the puzzles' files say only where the hints are, so that
a learner who wants none reads none.
"""

HINTS = {
    "map": (
        "Every thread runs the same body; what differs between threads is threadIdx.x.",
        "There are exactly as many threads as elements: thread i takes element i.",
        "i = this thread's index in its block; out[i] = a[i] + 10",
    ),
    "zip": (
        "As map, with a second input.",
        "Thread i reads a[i] and b[i] and writes their sum to out[i].",
        "i = threadIdx.x; out[i] = a[i] + b[i]",
    ),
    "guard": (
        "Some threads have no element: what must they not do?",
        "A thread whose index is not below `size` must neither read nor write: check mode names the line if it does.",
        "i = threadIdx.x; only if i < size: out[i] = a[i] + 10",
    ),
    "map2d": (
        "The block is 2-D: threadIdx.x and threadIdx.y. Which should walk the columns?",
        "Let threadIdx.x walk the columns and threadIdx.y the rows: neighbouring lanes of a warp then touch "
        "neighbouring addresses (one request, few sectors: the goal). Guard both.",
        "c = threadIdx.x; r = threadIdx.y; if r < rows and c < cols: out[r * cols + c] = a[r * cols + c] + 10",
    ),
    "broadcast": (
        "As map2d; which index does each input need?",
        "a is indexed by the row only, b by the column only; out by both, row-major.",
        "c from .x, r from .y; guard both; out[r * cols + c] = a[r] + b[c]",
    ),
    "blocks": (
        "threadIdx.x is the index within a block; the grid has several blocks.",
        "Block b holds elements b * blockDim.x to b * blockDim.x + blockDim.x - 1; the last block is partly empty.",
        "i = blockIdx.x * blockDim.x + threadIdx.x; guard i < size; out[i] = a[i] + 10",
    ),
    "blocks2d": (
        "Blocks in two dimensions: the .x parts and the .y parts.",
        "The column comes from blockIdx.x, blockDim.x and threadIdx.x; the row from their .y twins.",
        "c = blockIdx.x * blockDim.x + threadIdx.x; r = the same in .y; guard both; out[r * cols + c] = a[...] + 10",
    ),
    "shared": (
        "A __shared__ array is one per block, seen by all of its threads.",
        "Write to shared memory, then __syncthreads() (every thread of the block waits there until all have arrived), "
        "then read. Keep the barrier outside any `if`: every thread must reach it.",
        "t = threadIdx.x, i = global index; if i < size: cache[t] = a[i]; barrier; if i < size: out[i] = cache[t] + 10",
    ),
    "pooling": (
        "Each input is needed by three threads: read it from global memory once.",
        "Stage the block's elements in shared memory, shifted by 2, and have the first two threads also load the two "
        "elements before the block (its halo; zero before the start).",
        "cache[t + 2] = a[i] (0 past the end); threads t < 2 also: cache[t] = a[i - 2] (0 before 0); barrier; "
        "out[i] = cache[t] + cache[t + 1] + cache[t + 2]",
    ),
    "dot": (
        "One value from 256: let the threads add pairs, many at once.",
        "A tree: each thread puts its product in shared memory; then, halving the active threads each step, thread t "
        "adds partial[t + half] into partial[t], with a __syncthreads() after every step (in every thread, not under "
        "the `if`). Thread 0 writes the result.",
        "partial[t] = a[t] * b[t] (0 past size); barrier; for half = 128, 64, ..., 1: if t < half: partial[t] += "
        "partial[t + half]; barrier (outside the if); thread 0: out[0] = partial[0]",
    ),
    "prefix_sum": (
        "After step k, each element holds the sum of the 2^k elements ending at it.",
        "Hillis and Steele: at step s = 1, 2, 4, ..., every thread adds the value s places to its left. Read it into a "
        "register, __syncthreads(), then write: else a thread reads what its neighbour already overwrote (a race).",
        "sums[t] = a[t] (0 past size); barrier; for step = 1, 2, 4, ... < 256: add = t >= step ? sums[t - step] : 0; "
        "barrier; sums[t] += add; barrier; then out[t] = sums[t] where t < size",
    ),
    "axis_sum": (
        "The dot puzzle, once per row.",
        "The dot puzzle's tree, once per block: block r (blockIdx.x) sums row r.",
        "partial[t] = a[r * cols + t] (0 past cols); the tree of dot; thread 0: out[r] = partial[0]",
    ),
    "histogram": (
        "Many threads add to the same bin at once.",
        "`counts[x[i]] += 1` loses updates (read, add, write: another thread's write lands in between), and check mode "
        "names the race. atomicAdd(&counts[b], 1) does the three as one.",
        "i = global index; if i < size: atomicAdd on counts[x[i]], by 1",
    ),
    "warp_sum": (
        "The 32 lanes of a warp can pass registers to each other, without shared memory.",
        "__shfl_down_sync(0xffffffff, v, k) returns lane (l + k)'s v to lane l: all 32 lanes take part (the mask says "
        "which). Halve k from 16 to 1 and lane 0 holds the sum. Lanes past the end still take part, with 0.",
        "v = a[i] (0 past size); for k = 16, 8, 4, 2, 1: v += shuffle-down of v by k; lane 0 (of a warp that has "
        "elements): out[i / 32] = v",
    ),
    "matmul": (
        "Each element of a is needed by a whole row of out: read it from global memory once per block, not per thread.",
        "For each 16-wide step of m, the block's 256 threads copy a 16 x 16 tile of a and one of b into shared memory "
        "(one element each; zeros past the edges), __syncthreads(), multiply the tiles, __syncthreads() again before "
        "the next copy. Lesson 05 shows this kernel in full.",
        "row, col of this thread; acc = 0; for m0 = 0, 16, ... < m: ta[y][x] = a[row][m0 + x], tb[y][x] = b[m0 + y]"
        "[col] (0 outside); barrier; acc += ta[y][j] * tb[j][x] for j < 16; barrier; finally out[row][col] = acc "
        "inside the matrix",
    ),
    "conv1d": (
        "Each element of a is used by `width` threads, and every thread uses all of w: load each once per block.",
        "Stage the block's 64 elements of a in shared memory, plus the width - 1 after them (the halo, loaded by the "
        "first width - 1 threads; zero past the end), and w in a small shared array; barrier; then each thread sums "
        "from shared memory.",
        "tile[t] = a[i] (0 past size); if t < width - 1: tile[64 + t] = a[i + 64] (0 past size); if t < width: "
        "weights[t] = w[t]; barrier; acc = sum over k < width of tile[t + k] * weights[k]; if i < size: out[i] = acc",
    ),
    "transpose": (
        "Reading a row-major matrix by rows is coalesced; writing its transpose by rows too needs the data to change "
        "hands between threads.",
        "Read a 32 x 32 tile by rows of a (lanes on neighbouring columns), into shared memory; barrier; write it out "
        "by rows of out, reading the tile by columns. Pad the tile to 33 columns so that a column of it spans 32 "
        "different banks. Each thread does 4 rows (32 / 8).",
        "tile[32][33]; for j = y, y + 8, y + 16, y + 24: tile[j][x] = a[r0 + j][c0 + x] (inside a); barrier; for the "
        "same j: out[c0 + j][r0 + x] = tile[x][j] (inside out)",
    ),
    "grid_sum": (
        "One atomicAdd per thread onto one address makes every thread of the grid wait its turn.",
        "Sum each block's elements in shared memory first (the dot puzzle's tree), then one thread of the block adds "
        "the block's sum to out with one atomicAdd.",
        "partial[t] = a[i] (0 past size); barrier; tree over half = 64, ..., 1 with barriers; thread 0: atomicAdd(out, "
        "partial[0])",
    ),
    "scan": (
        "A block can scan its own elements; what does block b still need from the blocks before it?",
        "Three launches: scan each block's 256 elements (puzzle 11's scan) into out and write each block's total to "
        "sums; scan sums in one block; then block b > 0 adds sums[b - 1], the total of every block before it, to its "
        "elements.",
        "scan_shared: puzzle 11's loop on s, with a barrier first. scan_blocks: s[t] = a[i] (0 past size); "
        "scan_shared(s); out[i] = s[t] inside; the last thread: sums[block] = s[t]. scan_sums: s[t] = sums[t] (0 past "
        "blocks); scan_shared(s); sums[t] = s[t]. add_sums: if block > 0 and i < size: out[i] += sums[block - 1]",
    ),
    "shared_histogram": (
        "Atomics on the same few counters from thousands of threads serialise: give each block its own counters.",
        "Each block counts in a shared-memory copy of the bins (shared atomics: cheap, block-local), then adds each "
        "bin's count to counts with one global atomic per bin.",
        "threads t < bins: mine[t] = 0; barrier; if i < size: atomicAdd(&mine[x[i]], 1); barrier; threads t < bins "
        "(with a count): atomicAdd(&counts[t], mine[t])",
    ),
    "block_sum": (
        "A warp runs one instruction for all its lanes: a branch that some lanes take and others skip runs both ways.",
        "Keep the active threads together: at each step the first `half` threads add (t < half), not every second, "
        "fourth, ... thread (t % (2 s) == 0). Whole warps then idle and no warp diverges; the lanes also read "
        "neighbouring words, so no bank conflicts. Each thread adds two elements as it loads them.",
        "partial[t] = a[i] + a[i + 128] (0 past size); barrier; for half = 64, 32, ..., 1: if t < half: partial[t] += "
        "partial[t + half]; barrier; thread 0: out[block] = partial[0]",
    ),
    "softmax": (
        "A warp per row: lane l takes columns l, l + 32, l + 64, ... (neighbouring lanes, neighbouring columns).",
        "Three sweeps of the row by the warp: the maximum (then combined across lanes with __shfl_xor_sync, so that "
        "every lane has it), the sum of exp(x - max) (combined the same way), then out = exp(x - max) / sum. "
        "Subtracting the maximum keeps exp from overflowing on large logits.",
        "m = max of row[c] over this lane's columns; for k = 16 .. 1: m = max(m, shuffle-xor of m by k); sum the same "
        "way of expf(row[c] - m); write expf(row[c] - m) / sum to each of this lane's columns",
    ),
}
