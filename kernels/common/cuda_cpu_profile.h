// cuda_cpu_profile.h: what a GPU's memory system would do with a kernel's accesses, counted as Nsight Compute
// counts them, from check mode's trace (cuda_cpu_check.h calls profile_access for every global and shared
// access of a check launch). Part of the stand-in's runtime: cuda_cpu_runtime.cpp includes it once.
//
// Warp requests. A GPU executes an instruction for the active lanes of a warp at once; the stand-in runs the
// threads of a block one after another. So the accesses are grouped back into warp-level instructions: lane l
// of warp w executing the access site `pc` (one load or store instruction of the kernel's machine code) for the
// n-th time joins the request (block, w, pc, n). Lanes that do not take part (a branch, `if (i < n)`) are the
// inactive lanes of that request. A block's requests are counted when the block ends.
//
// Rules (Volta to Hopper; sources: Nsight Compute's Kernel Profiling Guide, "Memory Tables" and the metrics
// l1tex__t_requests/sectors_pipe_lsu_mem_global_op_{ld,st,atom} and l1tex__data_pipe_lsu_wavefronts_mem_shared;
// the CUDA C++ Programming Guide, "Compute Capability 7.x/8.x/9.x: Global Memory / Shared Memory"):
//   - global: a request touches the distinct 32-byte sectors its active lanes' bytes fall in (a float per lane,
//     consecutive: 4 sectors; stride 2: 8; stride >= 8 floats: 32; all lanes on one float: 1). The ideal is
//     the same bytes contiguous and aligned, each once: ceil(distinct addresses x bytes per lane / 32) sectors.
//   - shared: 32 banks of 4 bytes, bank = (address / 4) % 32. A wavefront serves at most one 4-byte word per
//     bank; lanes reading the same word share it (a broadcast). Accesses of 8 bytes per lane are served in two
//     phases of 16 lanes, of 16 bytes in four phases of 8 lanes; a phase takes as many wavefronts as its most
//     used bank has distinct words (at least one). The ideal is one wavefront per 128 bytes of active lanes.
//     An N-way bank conflict: a phase of N wavefronts. A wavefront returns at most 128 bytes, one register a lane:
//     a load of 8 or 16 bytes whose lanes pair up, lanes n and n^1 (or n and n^2) on one address wherever both are
//     active, packs two lanes' registers in one and is served in phases of twice the lanes (one of 32, two of 16;
//     its ideal: one wavefront per 256 bytes of active lanes); every lane on one address is such a load. Phases are
//     not merged otherwise, where one repeats another's addresses (lanes 16-31 on lanes 0-15's float4s: four
//     phases). Source: NVIDIA's answer in "Unexpected shared memory bank conflict" (NVIDIA Developer Forums, 2019,
//     forums.developer.nvidia.com/t/unexpected-shared-memory-bank-conflict/77228/2) to an LDS.128 at byte offset
//     tid % 4 * 16 (lane t on lane t % 4's float4) profiled at 4 requests per instruction where 2 were expected:
//     "On CC 7.0 - 7.5 devices shared memory loads with uniform addresses can increase bandwidth if ... Thread
//     pairs (Tn and Tn^1) have the same addresses for all active threads ..., or Thread pairs (Tn and Tn^2) ...
//     (Note these encompass the case where all active threads have the same address). The return bandwidth of L1
//     and shared memory is 128 bytes/cycle == 1 register/cycle. The uniform access can achieve 2x the performance
//     by packing the return registers. In the case above the rules are not met so LDS.128 requires 4 requests per
//     instruction as it returns 4 registers. If the guidelines are met the requests/instruction should reduce from
//     4 to 2." An LDS.64 returns 2 registers: 2 wavefronts, 1 packed (the answer's rule is for loads; its example
//     an LDS.128). A lane whose partner is inactive keeps the rule ("for all active threads"). On 8.x, Yinghan Li's
//     ampere_sgemm.cu (github.com/Yinghan-Li/YHs_Sample, cuda/gemm) maps a warp's lanes "'z' thread map to avoid
//     LDS.128 shared memory broadcast limitation" (lanes n and n^1 on one B float4, n and n^2 on one A float4); no
//     source was found for 9.0, counted alike. Stores keep their phases (the answer is about loads). That phases
//     repeating others' addresses are not merged is this model's reading: the answer's example repeats across all
//     four phases and takes 4, which merging would not have changed (4 registers returned), and no source
//     measured a case where it would.
//   - atomics count as their space's accesses of their size: one per atomic, however the host does it (a
//     compare-and-swap loop for the floating-point ones: cuda_cpu.h's atomics show check mode one access).
//   - branches (check builds wrap each `if`, `while` and `for` condition of device code: cuda_cpu_translate.py): the
//     lanes of warp w evaluating a condition at `pc` for the n-th time are one executed branch instruction (block,
//     w, pc, n); its active lanes are those lanes, and it is *divergent* when some of them take it and some do not
//     (Nsight Compute's smsp__sass_branch_targets_threads_divergent: the branch's lanes go to more than one
//     target). Short-circuit operands (`&&`, `||`) and `?:` inside a condition are not separate branches here.
//   - as nvcc compiles it (read by kp.sass against the SASS at each line): nvcc merges a lane's scalar accesses of
//     consecutive bytes into one wider instruction (four floats of a float4's members, or of an unrolled loop, into
//     one LDS.128 / LDG.E.128) and splits none. So each warp's requests are also regrouped, in the order its first
//     lane made them, as instructions of 4, 8 and 16 bytes per lane would group them: a request joins an open group
//     of the same space, kind and active lanes when every lane's bytes fall, not yet taken, in the aligned chunk of
//     that width its group began in (a wider access is split into chunks). A group is one request, counted at the
//     site of its first access; its sectors and wavefronts follow the rules above with the instruction's width
//     (a 128-bit shared load: four phases of 8 lanes, two of 16 where its lanes pair up). Python picks, per line, the
//     width of nvcc's instruction.
// Local memory (a thread's stack) and accesses outside registered tensors and __shared__ variables are not
// counted. A launch of many blocks may be sampled: a product grid of blocks spread over every grid dimension runs
// and is counted, each block's counts multiplied by the blocks it stands for (see Hierarchy, below), and the skipped
// blocks do not run at all (the op's output is then incomplete; Python says so).

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace kp {
namespace detail {

enum Space : uint8_t { kGlobal = 0, kShared = 1 };
enum AccessKind : uint8_t { kLoad = 0, kStore = 1, kAtomic = 2 };

namespace {

struct Request {
  uint32_t lanes = 0;  // active lanes
  uint8_t size = 0;    // bytes per lane
  uint32_t seq = 0;    // the access's place in its first lane's order of accesses (program order, for regrouping)
  Space space;
  AccessKind kind;
  uintptr_t addr[32];
};

struct RequestKey {
  uintptr_t pc;
  uint32_t warp, n;
  bool operator==(const RequestKey& o) const { return pc == o.pc && warp == o.warp && n == o.n; }
};

struct RequestHash {
  size_t operator()(const RequestKey& k) const {
    return (k.pc * 0x9E3779B97F4A7C15ull) ^ (uint64_t(k.warp) << 32 | k.n);
  }
};

// The requests an access site leads when a warp's accesses are regrouped as instructions of one width (see above).
constexpr unsigned kWidths[3] = {4, 8, 16};
struct WidthStats {
  uint64_t requests = 0, units = 0, ideal = 0;
  uint32_t worst = 0, worst_bank = 0, worst_lanes = 0;
};

// What one access site of one kernel did over a profile (summed over its requests).
struct SiteStats {
  WidthStats widths[3];
  uint64_t requests = 0, lanes = 0, bytes = 0, units = 0, ideal = 0;  // units: sectors (global), wavefronts (shared)
  // Requests whose active lanes are not lanes 0..k-1 of their warp: lanes skipped by a branch (divergence), where a
  // prefix is the end of the threads' range (`if (i < n)` in the last warp, a block of 48 threads), or one lane.
  uint64_t scattered = 0;
  uint32_t worst = 0;        // shared: the most wavefronts one phase took (the N of an N-way conflict)
  uint32_t worst_bank = 0;   // ... at this bank
  uint32_t worst_lanes = 0;  // ... with this many lanes on it
  Request worst_request;     // shared: that request (its lanes and addresses), for the picture of lanes and banks
};

// An array the profile saw touched (a registered tensor, a __shared__ variable, the dynamic shared memory), and one
// touch of one of its elements (for pictures: which block and thread touched what). At most kMaxTouches are kept.
constexpr size_t kMaxTouches = 1 << 18;

struct Array {
  std::string name;
  Space space;
  uintptr_t begin;
  uint64_t elements;
  std::string dims;  // "4 8" for a [4][8] __shared__ array; "" for a tensor (Python knows its shape)
};

struct Touch {
  uint32_t array, launch, block, tid;
  uint64_t index;
  uint8_t kind;
};

struct Branch {
  uint32_t lanes = 0, taken = 0;  // lanes that evaluated the condition; those for which it held
};

// What the branch hook's common case reads of a branch's row (see profile_branch_fast): the KP_BRANCH site its pc is
// a copy of, and per warp the thread counted for that site's trips (TripSite::lane; -1: not known to this row yet,
// the hook's full path then looks it up). A copy of the TripSite's, kept beside the row so that the common case reads
// it without going through the TripSite's pointer. Zero site: not a branch's row, or not evaluated in this block.
struct BranchRow {
  uintptr_t site = 0;
  int32_t counted[kMaxBlockThreads / 32];
};

struct BranchStats {
  uint64_t executions = 0, lanes = 0, divergent = 0;  // warp-level executions, their active lanes, the divergent ones
  // Divergent executions split at one lane (lanes below it one way, the rest the other): the bounds guard of a ragged
  // last warp (`if (i < n)`), or a tree's `if (t < half)`. Still Nsight Compute's divergence; advice leaves them out.
  uint64_t split = 0;
  uint64_t none = 0;  // executions where no lane took it (a loop's exits: one per time a warp entered the loop)
  // For a picture of who took it (kp.pictures.branch_lanes): per warp of one block, the first one counted of the
  // first launch that reached the branch (launch index + 1 in lanes_launch), each lane's evaluations [0, 32) and the
  // times the condition held [32, 64). One block: the pattern of lanes repeats from block to block.
  size_t lanes_launch = 0;
  std::map<uint32_t, std::array<uint32_t, 64>> by_lane;
};

struct SiteKey {
  const char* kernel;
  uintptr_t pc;
  Space space;
  AccessKind kind;
  bool operator<(const SiteKey& o) const {
    return std::tie(kernel, pc, space, kind) < std::tie(o.kernel, o.pc, o.space, o.kind);
  }
};

struct LaunchRecord {
  const char* kernel;
  uint3 grid, block;
  size_t shmem;
  uint64_t blocks, traced;  // blocks in the grid; blocks that ran and were counted
  uint64_t ended = 0;       // blocks counted so far (profile_block_end): the first one's branches are kept by lane
  // Its totals (multiplied by the sampling stride): sectors loaded, sectors stored or updated atomically, shared
  // wavefronts, global load requests, and the distinct global load sites they came from.
  uint64_t sectors_read = 0, sectors_written = 0, wavefronts = 0, load_requests = 0;
  std::set<uintptr_t> load_sites;
  // Summed over the blocks (x the stride): the warps that made a global load (a warp that exits at once waits for
  // nothing, and must not thin out the round trips of those that do).
  uint64_t loading_warps = 0;
  // The distinct sectors it read and wrote (of the blocks counted): what DRAM moves when the L2 keeps every sector
  // between its first and its last use in the launch.
  std::unordered_set<uintptr_t> distinct_read, distinct_written;
};

// A condition's trip counts: per entry of a loop, the times it held before it failed (a loop entered, run t times,
// left). nvcc unrolls a loop by U into a body of U copies and a remainder, which run sum(t / U) and sum(t % U): the
// totals of BranchStats do not give them (kp.gpumodel.runs). Counted per condition of the source (KP_BRANCH's site,
// cuda_cpu.h), not per pc: g++ copies a loop's condition where it rotates or unrolls the loop, and the copies would
// split each entry's evaluations between them. Warp-level, from one lane per warp (the first to evaluate it in the
// block): the others agree with it where the condition is warp-uniform, the only case Python reads them in.
struct TripSite {                            // the running block's
  uintptr_t site = 0;                        // KP_BRANCH's site
  int32_t lane[kMaxBlockThreads / 32];       // per warp: the thread counted (-1: none yet)
  uint32_t run[kMaxBlockThreads / 32] = {};  // per warp: the times it held since it last failed
  std::vector<uintptr_t> pcs;                // the pcs it was evaluated at
  std::map<uint32_t, uint64_t> trips;        // {t: entries}
  TripSite() { std::fill_n(lane, kMaxBlockThreads / 32, -1); }
};
struct TripStats {
  std::set<uintptr_t> pcs;             // its copies' pcs (Python reads it only where they are one `.cu` line)
  std::map<uint32_t, uint64_t> trips;  // {t: entries} (x the sampling stride); kLostTrips: past kMaxTrips distinct t
};

struct Profile {
  uint64_t max_blocks = 0;  // 0: every block; else at most about this many blocks per launch run (sampled)
  uint64_t every = 1;       // the running block's weight: the blocks it stands for (sampling by strata)
  // The running block:
  // (pc, thread) -> times it executed pc so far: each pc (an access site or a branch) has a row of kMaxBlockThreads
  // counters. One small map of the block's few hundred sites at most, not one entry per (site, thread): that map's
  // lookups were an eighth of a profile's time (perf, the linear ladder's v7 at 4096³, 2026-11-27).
  std::unordered_map<uintptr_t, uint32_t> sites_run;  // pc -> its row in `executions`, `requests`, `taken_bits`, ...
  std::vector<uint32_t> executions;
  uintptr_t last_pc = 0;  // the row of the pc looked up last (a thread's loop runs one site many times in a row)
  uint32_t last_row = 0;
  // The rows of the pcs looked up lately, by a hash of the pc: a loop's condition and its accesses take turns, so
  // last_pc alone missed most lookups, and the map's were a tenth of a profile (perf, linear_ladder v7 at 4096³).
  std::array<std::pair<uintptr_t, uint32_t>, 64> recent{};
  std::vector<uint32_t> accesses;  // per thread: its accesses so far (their program order)
  // Its warp requests: the n-th of warp w at a pc is [n] of the row (pc's row in `executions`)
  // x kWarps + w. Vectors, not hash maps of (pc, warp, n): a block of the linear ladder makes 10^5 of them, and the
  // maps' lookups were a fifth of a profile's time (perf, 2026-11-27).
  std::vector<std::vector<Request>> requests;
  // Branch evaluations, as bits: thread t's n-th evaluation of the condition at a pc held when bit n % 64 of its word
  // n / 64 is set. The word being filled is [row x kMaxBlockThreads + t] of `taken_bits`; the full ones are in the
  // row's warp's `taken_words` (row x kWarps + warp), word k of lane l at [k x 32 + l]. A block's end turns them back
  // into warp-level executions (lanes: those that evaluated it n times or more; taken: their bits n). A bit, not a
  // Branch of 8 bytes read and written by every lane of a warp: that was a fifth of the branch hook (perf, 2026-11-28).
  std::vector<uint64_t> taken_bits;
  std::vector<std::vector<uint64_t>> taken_words;
  std::vector<BranchRow> branch_rows;                  // per row
  std::unordered_map<uintptr_t, TripSite> trip_block;  // KP_BRANCH's site -> its trips in the running block
  // Per row: the trips of the condition whose copy its pc is (null: not a branch's row, or not looked up yet). A pc
  // is one call of check_branch, with one site: so a branch finds its row and its site in one lookup, not two (the
  // site's own lookup was most of the branch hook's, nested loops' conditions taking turns; 2026-11-27).
  std::vector<TripSite*> row_trips;
  // Since the profile began:
  std::map<SiteKey, SiteStats> sites;
  std::map<std::pair<const char*, uintptr_t>, BranchStats> branch_sites;  // (kernel, pc)
  std::map<std::pair<const char*, uintptr_t>, TripStats> trip_sites;      // (kernel, KP_BRANCH's site)
  std::vector<LaunchRecord> launches;
  uint64_t unprofiled = 0;  // launches of kernels built without check mode while profiling
  std::string unprofiled_names;
  std::vector<Array> arrays;
  std::map<std::pair<uintptr_t, std::string>, uint32_t> array_ids;  // (begin, name) -> index in arrays
  std::vector<Touch> touches;
  uint64_t touches_dropped = 0;
  // The tensor [begin, end) each global access site touched last in launch `launch` (a LaunchRecord's number, from
  // 1), by a hash of the pc: hierarchy_base's common case, the tensor already listed, is then a compare, not a hash
  // map's update and a scan of the launch's tensors on every access (t_site_tensor keeps every site's).
  struct SiteSeen {
    uintptr_t pc = 0, begin = 0, end = 0;
    uint64_t launch = 0;
  };
  std::array<SiteSeen, 64> site_seen{};
};

thread_local Profile t_profile;
// The profile a check launch counts into (CheckState::profile: t_profile, while profiling).
Profile& profile_of(const CheckState& c) { return *static_cast<Profile*>(c.profile); }

// Whether t_profile counts: a plain flag, since reading t_profile itself (a thread_local with a constructor) costs a
// call on every access of every check launch.
thread_local bool t_profiling = false;

// The distinct 32-byte sectors of a global request (each also put in `all`, unless it is null).
uint32_t sectors_of(const Request& r, uint32_t* ideal, std::unordered_set<uintptr_t>* all) {
  uintptr_t seen[64];
  uint32_t n = 0;
  for (uint32_t m = r.lanes; m; m &= m - 1) {
    const uintptr_t a = r.addr[__builtin_ctz(m)];
    for (uintptr_t s = a >> 5; s <= (a + r.size - 1) >> 5; ++s) {
      bool dup = false;
      for (uint32_t k = 0; k < n && !dup; ++k) dup = seen[k] == s;
      if (!dup && n < 64) {
        seen[n++] = s;
        if (all) all->insert(s);
      }
    }
  }
  uint32_t distinct = 0;  // lanes with an address no lower lane has: the bytes asked for, each once
  for (uint32_t m = r.lanes; m; m &= m - 1) {
    const unsigned lane = __builtin_ctz(m);
    bool dup = false;
    for (uint32_t o = r.lanes & ((1u << lane) - 1); o && !dup; o &= o - 1)
      dup = r.addr[__builtin_ctz(o)] == r.addr[lane];
    distinct += !dup;
  }
  *ideal = (distinct * r.size + 31) / 32;
  return n;
}

// Whether every pair of active lanes l and l ^ `other` reads one address (a lane whose partner is inactive passes).
bool paired(const Request& r, unsigned other) {
  for (uint32_t m = r.lanes; m; m &= m - 1) {
    const unsigned l = __builtin_ctz(m), o = l ^ other;
    if (r.lanes >> o & 1 && r.addr[o] != r.addr[l]) return false;
  }
  return true;
}

// The wavefronts of a shared request: its phases (32, 16 or 8 lanes), each as many as its busiest bank has words.
// `width`: the instruction's bytes per lane, which set its phases (0: the access's own size). A load of 8 or 16 bytes
// whose lanes pair up (n and n^1, or n and n^2, on one address) packs its return registers: phases of twice the lanes.
uint32_t wavefronts_of(const Request& r, uint32_t* ideal, uint32_t* worst, uint32_t* worst_bank, uint32_t* worst_lanes,
                       unsigned width = 0) {
  const unsigned bytes = width ? width : r.size;
  const bool packed = bytes > 4 && r.kind == kLoad && (paired(r, 1) || paired(r, 2));
  const unsigned per_phase = (bytes <= 4 ? 32 : bytes <= 8 ? 16 : 8) * (packed ? 2 : 1);
  uint32_t total = 0;
  *worst = 0;
  for (unsigned first = 0; first < 32; first += per_phase) {
    const uint32_t phase = r.lanes & (per_phase == 32 ? ~0u : ((1u << per_phase) - 1) << first);
    if (!phase) continue;
    uintptr_t words[32][32];  // per bank: its distinct words (a lane reads at most one word of a bank: 32 at most)
    uint32_t count[32], lanes[32];
    uint32_t used = 0;  // the banks the phase touches: only theirs are cleared and searched (a block's end runs this
                        // four times per shared request, a twentieth of a profile of linear_ladder v7, 2026-11-27)
    for (uint32_t m = phase; m; m &= m - 1) {
      const uintptr_t a = r.addr[__builtin_ctz(m)];
      for (uintptr_t word = a >> 2; word <= (a + r.size - 1) >> 2; ++word) {
        const unsigned bank = word % 32;
        if (!(used >> bank & 1)) used |= 1u << bank, count[bank] = lanes[bank] = 0;
        bool dup = false;
        for (uint32_t k = 0; k < count[bank] && !dup; ++k) dup = words[bank][k] == word;
        ++lanes[bank];
        if (!dup) words[bank][count[bank]++] = word;
      }
    }
    uint32_t most = 1, bank_of_most = 0;  // the lowest bank of the most words (0 where none has two)
    for (uint32_t m = used; m; m &= m - 1)
      if (count[__builtin_ctz(m)] > most) most = count[__builtin_ctz(m)], bank_of_most = __builtin_ctz(m);
    total += most;
    if (most > *worst)
      *worst = most, *worst_bank = bank_of_most, *worst_lanes = used >> bank_of_most & 1 ? lanes[bank_of_most] : 0;
  }
  const unsigned served = packed ? 256 : 128;  // bytes of active lanes a wavefront returns at most
  *ideal = (__builtin_popcount(r.lanes) * r.size + served - 1) / served;
  return total;
}

// What a block's end counted for one request (sectors_of or wavefronts_of, at the request's own width).
struct Counted {
  uint32_t units = 0, ideal = 0, worst = 0, bank = 0, lanes = 0;
  SiteStats* site = nullptr;  // its site's stats (a std::map's node: it stays where it is while others are added)
};

// One request of a regrouping: the accesses of one warp that one instruction of `width` bytes per lane serves.
struct Group {
  uintptr_t pc;
  Space space;
  AccessKind kind;
  uint32_t lanes, born;  // active lanes; the index of the request that opened it
  uintptr_t base[32];    // per lane: the aligned chunk its bytes fall in
  uint32_t covered[32];  // per lane: the chunk's bytes taken (bit b: byte b)
  SiteStats* site;       // p.sites' entry of (kernel, pc, space, kind): its opening request's
  // The request that opened it, while no other has joined (else null), and what the block's end counted for it.
  const Request* alone = nullptr;
  const Counted* alone_counted = nullptr;
};

// Bounds on the search, not figures of a GPU: nvcc merges accesses that are close together in one basic block, so
// a group stays open for the next kGroupWindow requests of its warp, and at most kOpenGroups at once (the oldest is
// counted first). Bounds of 256 groups and 4096 requests changed no count of the linear ladder's seven versions or
// of colsum (2026-11-27); they only cost time.
constexpr size_t kOpenGroups = 16;
constexpr uint32_t kGroupWindow = 64;

// A group counted: as one request of its width at its first access's site.
void count_group(Profile& p, unsigned wi, const Group& g) {
  Request r;
  r.lanes = g.lanes, r.space = g.space, r.kind = g.kind;
  unsigned hi_max = 0;
  for (uint32_t m = g.lanes; m; m &= m - 1) {
    const unsigned l = __builtin_ctz(m), lo = __builtin_ctz(g.covered[l]), hi = 32 - __builtin_clz(g.covered[l]);
    r.addr[l] = g.base[l] + lo;
    hi_max = hi_max > hi - lo ? hi_max : hi - lo;
  }
  r.size = uint8_t(hi_max ? hi_max : 1);  // the bytes a lane's group spans (the same for every lane in practice)
  uint32_t units, ideal, worst = 0, bank = 0, lanes = 0;
  if (g.alone && g.alone->size == kWidths[wi]) {
    // One request alone at its own width: r is that request (its lanes, addresses and size), and the block's end
    // counted it already, with the same phases (width == size). A third of the groups of linear_ladder v7's block
    // ends are so (every 4-byte access at width 4); counting them again was a fifth of the block-end work.
    const Counted& c = *g.alone_counted;
    units = c.units, ideal = c.ideal, worst = c.worst, bank = c.bank, lanes = c.lanes;
  } else {
    units = r.space == kGlobal ? sectors_of(r, &ideal, nullptr)
                               : wavefronts_of(r, &ideal, &worst, &bank, &lanes, kWidths[wi]);
  }
  WidthStats& s = g.site->widths[wi];  // p.sites[{kernel, g.pc, g.space, g.kind}], found once by the block's end
  s.requests += p.every;
  s.units += uint64_t(units) * p.every;
  s.ideal += uint64_t(ideal) * p.every;
  if (worst > s.worst) s.worst = worst, s.worst_bank = bank, s.worst_lanes = lanes;
}

// One warp's requests (in its program order) regrouped as instructions of kWidths[wi] bytes per lane.
// `reqs`: (pc, request, what the block's end counted for it).
void regroup(Profile& p, unsigned wi, const std::vector<std::tuple<uintptr_t, const Request*, const Counted*>>& reqs) {
  const unsigned width = kWidths[wi];
  // A chunk's first byte and a byte's place in it by masks, not divisions (kWidths are powers of two): the divisions
  // by a width not known at compile time were two fifths of linear_ladder v4's block ends (perf, 2026-11-28).
  static_assert(kWidths[0] == 4 && kWidths[1] == 8 && kWidths[2] == 16, "widths are powers of two");
  const uintptr_t low = width - 1;
  std::vector<Group> open;
  for (uint32_t at = 0; at < reqs.size(); ++at) {
    const auto& [pc, r, counted] = reqs[at];
    for (size_t k = 0; k < open.size();)  // too old to be merged with what comes now
      if (at - open[k].born >= kGroupWindow)
        count_group(p, wi, open[k]), open.erase(open.begin() + k);
      else
        ++k;
    const unsigned first = __builtin_ctz(r->lanes);
    // Accesses wider than the width, or across a chunk's edge, are served alone, in chunks of the width.
    bool fits = r->size <= width;
    for (uint32_t m = r->lanes; m && fits; m &= m - 1) {
      const uintptr_t a = r->addr[__builtin_ctz(m)];
      fits = (a & ~low) == ((a + r->size - 1) & ~low);
    }
    if (!fits) {
      for (unsigned off = 0; off < r->size; off += width) {
        Group g{pc, r->space, r->kind, r->lanes, at, {}, {}, counted->site};
        const unsigned n = r->size - off < width ? r->size - off : width;
        for (uint32_t m = r->lanes; m; m &= m - 1) {
          const unsigned l = __builtin_ctz(m);
          g.base[l] = r->addr[l] + off, g.covered[l] = n >= 32 ? ~0u : (1u << n) - 1;
        }
        count_group(p, wi, g);
      }
      continue;
    }
    const uint32_t bits = r->size >= 32 ? ~0u : (1u << r->size) - 1;
    Group* into = nullptr;
    for (Group& g : open) {
      if (g.space != r->space || g.kind != r->kind || g.lanes != r->lanes) continue;
      bool joins = g.base[first] == (r->addr[first] & ~low);
      for (uint32_t m = r->lanes; m && joins; m &= m - 1) {
        const unsigned l = __builtin_ctz(m);
        const uintptr_t a = r->addr[l];
        joins = g.base[l] == (a & ~low) && !(g.covered[l] & bits << (a & low));
      }
      if (joins) {
        into = &g;
        g.alone = nullptr, g.alone_counted = nullptr;
        break;
      }
    }
    if (!into) {
      if (open.size() >= kOpenGroups) count_group(p, wi, open.front()), open.erase(open.begin());
      open.push_back(Group{pc, r->space, r->kind, r->lanes, at, {}, {}, counted->site, r, counted});
      into = &open.back();
      for (uint32_t m = r->lanes; m; m &= m - 1) into->base[__builtin_ctz(m)] = r->addr[__builtin_ctz(m)] & ~low;
    }
    for (uint32_t m = r->lanes; m; m &= m - 1) {
      const unsigned l = __builtin_ctz(m);
      into->covered[l] |= bits << (r->addr[l] & low);
    }
  }
  for (const Group& g : open) count_group(p, wi, g);
}

// ---- The memory hierarchy's inputs (kp/memory.py models L1, L2 and DRAM from them; separate from the counts above).
// Sampling by strata: a launch of more than max_blocks blocks runs a product grid of samples, n[d] values along each
// grid dimension d (at least two along each dimension of more than one block, so that the sharing of data between
// blocks along that dimension shows). Dimension d's G blocks are cut into n[d] strata of consecutive coordinates;
// one coordinate of each runs and stands for its stratum (stratum_samples): its counts are multiplied by the blocks it
// stands for (the product of its strata's sizes), so every total is the whole grid's, whatever the grid's shape.
// Each global sector the sampled blocks touch keeps the coordinates of its first block and the dimensions along
// which another sampled block touched it too ("shared along x"); kp/memory.py turns those classes into the distinct
// sectors of the blocks an L2 holds together (a wave), which is what DRAM moves. Each sector keeps its tensor too, and
// the report gives each tensor's classes and its own sectors: sharing that no two sampled blocks show (a weight the
// channels of a group read, sampled once per group) makes a tensor's classes add up to more sectors than the tensor
// has, and kp/gpumodel/caches.py takes the excess as reads the L2 serves.
constexpr uint8_t kNoTensor = 255;  // a sector outside the tensors known (their first 255 in a launch)

struct Sharer {
  uint32_t at[3];
  uint8_t along = 0;           // bit d: a block at another coordinate d touched this sector too
  uint8_t tensor = kNoTensor;  // its tensor: an index into Hierarchy::tensors
};

struct Hierarchy {
  uint64_t grid[3] = {1, 1, 1};
  uint32_t n[3] = {1, 1, 1};     // samples along each dimension
  std::vector<uint64_t> at[3];   // along each dimension, each stratum's sampled coordinate (stratum_samples)
  uint64_t l1_wavefronts = 0;    // global requests' distinct 128-byte lines (the L1's tag lookups), x weights
  uint64_t l2_read_sectors = 0;  // each block's distinct global sectors read (its L1 misses), x weights
  uint64_t barriers = 0;         // __syncthreads released, x weights
  uint64_t slowest = 0;          // per block, the global load requests of its warp that made the most, x weights
  std::unordered_map<uintptr_t, Sharer> reads, writes;
  std::vector<std::pair<uintptr_t, uintptr_t>> tensors;  // the global tensors the sampled blocks touched: [begin, end)
};

// Per access site, the tensor it touched last, [begin, end). Its beginning mod 256 places the 128-byte lines: a GPU
// allocation begins on a 256-byte boundary (cudaMalloc), a CPU tensor here on 64 only, so the lines are counted from
// the tensor's beginning, as the GPU has them.
// `index`: the tensor's in the Hierarchy of launch `launch` (its number, from 1), where the site touched it: found once
// per launch, since the sites outlive a launch and its list of tensors does not.
struct SiteTensor {
  uintptr_t begin = 0, end = 0;
  uint64_t launch = 0;
  uint8_t index = kNoTensor;
};
thread_local std::unordered_map<uintptr_t, SiteTensor> t_site_tensor;

thread_local std::vector<Hierarchy> t_hierarchy;  // one per LaunchRecord, in step with t_profile.launches
thread_local uint64_t t_block = 0;                // the running (sampled) block's linear index
thread_local uint64_t t_weight = 1;               // ... and how many blocks it stands for

// Stratum i of n over G coordinates begins here.
uint64_t stratum_begin(uint64_t i, uint64_t n, uint64_t G) { return i * G / n; }

// The coordinates that stand for the n strata of G: a diagonal through the strata (Subramani's diagonal systematic
// sampling, 2000; see Azeem, PLoS ONE 17(3), 2022). From 4 samples on the strata go in pairs, both of a pair the same
// place into their strata; pair t (under 4 samples, stratum t) takes the coordinate t places below its middle (the
// lower middle where its size is even), wrapping round within the stratum, one place further down after each full turn
// (t / size). Why not every stratum's middle: a 1-D grid over a flattened tensor repeats its blocks' work with a period
// of the blocks per row or plane (P; the first and last of each meet the halo or padding), and where P divides the
// strata's size every middle falls on the same phase of it, so one kind of block stood for all (involution's
// grad_weight: 4 blocks a plane, its top-row block at every middle for 2 to 8 samples, an inner one at 16: 11.5%
// apart). Stepping one place a pair puts the samples on consecutive phases: every phase alike once there are two
// samples per phase. Downwards from the lower middle the first phases fall in one half of the period, none the mirror
// image of another (phases p and P - 1 - p do the same work where a row's two ends are alike), so half a period stands
// for a symmetric one. Why pairs: blocks on one phase often read the same data (involution's forward: the channels of a
// group read one weight at the same pixels), and a sector counts as shared only where two sampled blocks touched it
// (kp/gpumodel/caches.py); one sample a phase counted every channel's weight reads as its own (34.8 us at 64 samples of
// 1024 blocks, where every block traced gives 25.0; pairs give 25.0). Under 4 samples, pairs would leave a single
// phase. The extra step after a full turn reaches phases a turn alone would miss where the strata are smaller than P.
// Downwards, too, two strata's coordinates are hardly ever neighbours; a coordinate next to the previous stratum's
// moves up one (only a stratum of one block is left next to another): a halo two sampled neighbours share would be
// taken as shared along the whole dimension.
// Two samples along a short dimension are mirrored about its middle instead (the second at G - 1 - the first): a
// diagonal's two places sit on average one block below the middle, which on a trend along the dimension (a causal
// attention's row block i walks i + 1 key tiles) moves a sum by up to 2 / (G + 1) of it: 28 of the 36 tiles of 8 row
// blocks (attention v2 at 2 to 8 samples: 170 us against 210 from 16 on). Mirrored places are exact on a linear trend,
// but on a period whose two ends are alike they fall on like blocks (both edges or both inner ones), so only where the
// trend's error could pass 5% (G < 39) does the mirror win; from 4 samples on, the pairs' places are symmetric enough.
constexpr uint64_t kMirrorBelow = 39;

std::vector<uint64_t> stratum_samples(uint64_t n, uint64_t G) {
  std::vector<uint64_t> at(n);
  for (uint64_t j = 0; j < n; ++j) {
    const uint64_t lo = stratum_begin(j, n, G), size = stratum_begin(j + 1, n, G) - lo;
    const uint64_t step = n >= 4 ? j / 2 : j;
    uint64_t offset = ((size - 1) / 2 + size - (step + step / size) % size) % size;
    if (j > 0 && offset == 0 && size > 1 && at[j - 1] + 1 == lo) offset = 1;
    at[j] = n == 2 && j == 1 && G < kMirrorBelow ? G - 1 - at[0] : lo + offset;
  }
  return at;
}

// Whether coordinate c of G (n strata) is its stratum's sample (at: stratum_samples); *size: the stratum's size.
bool sampled_coordinate(uint64_t c, uint64_t n, uint64_t G, const std::vector<uint64_t>& at, uint64_t* size) {
  uint64_t i = c * n / G;
  while (i > 0 && stratum_begin(i, n, G) > c) --i;
  while (i + 1 < n && stratum_begin(i + 1, n, G) <= c) ++i;
  *size = stratum_begin(i + 1, n, G) - stratum_begin(i, n, G);
  return c == at[i];
}

// Samples per dimension for at most about max_blocks blocks: two along each dimension of more than one block (one
// block in all where max_blocks is 1), then two more (a pair, or the one block left) along the dimension with the most
// blocks per sample while the product stays within max_blocks. Why a pair at a time: from 4 samples on the strata go in
// pairs (stratum_samples), and an odd count leaves one stratum without its partner. Causal
// attention's 8 row blocks under 16 heads (row block i walks i + 1 key tiles): one sample at a time, max_blocks 16 gave
// 3 x 5, rows 0, 2 and 7 weighing 2, 3 and 3 (35 of the 36 key tiles' work; 248 us modelled, 210 with every block
// traced); a pair at a time gives 4 x 4, rows 0, 2, 5 and 7 (mirrored about the grid's centre) weighing 2: all 36 (220
// us). The product stays within max_blocks (or the two a dimension); it may trace a few more blocks than one at a time
// did where that stopped on odd counts (2-D and 3-D grids only: at most 32 for 27 over grids of up to 256 x 64 x 16
// and max_blocks 2 to 64), and fewer where max_blocks is odd.
void choose_samples(Hierarchy& h, uint64_t max_blocks) {
  uint64_t product = 1;
  for (int d = 0; d < 3; ++d)
    h.n[d] = uint32_t(std::min<uint64_t>(h.grid[d], max_blocks > 1 ? 2 : 1)), product *= h.n[d];
  if (!max_blocks || h.grid[0] * h.grid[1] * h.grid[2] <= max_blocks) {
    for (int d = 0; d < 3; ++d) h.n[d] = uint32_t(h.grid[d]);
    return;
  }
  for (;;) {
    int best = -1;
    uint32_t grown[3];
    for (int d = 0; d < 3; ++d) {
      grown[d] = uint32_t(std::min<uint64_t>(h.grid[d], h.n[d] + 2));
      if (h.n[d] < h.grid[d] && product / h.n[d] * grown[d] <= max_blocks &&
          (best < 0 || h.grid[d] * h.n[best] > h.grid[best] * h.n[d]))
        best = d;
    }
    if (best < 0) return;
    product = product / h.n[best] * grown[best];
    h.n[best] = grown[best];
  }
}

void block_coordinates(const Hierarchy& h, uint64_t index, uint64_t at[3]) {
  at[0] = index % h.grid[0];
  at[1] = index / h.grid[0] % h.grid[1];
  at[2] = index / (h.grid[0] * h.grid[1]);
}

// The index in h.tensors of the tensor [begin, end) (added where new), or, where begin == end, of the one holding it.
// A tensor is its range, not its beginning: a narrow view and the tensor it begins are two tensors of one launch.
uint8_t tensor_index(Hierarchy& h, uintptr_t begin, uintptr_t end) {
  for (size_t k = 0; k < h.tensors.size(); ++k)
    if (begin == end ? begin >= h.tensors[k].first && begin < h.tensors[k].second
                     : h.tensors[k].first == begin && h.tensors[k].second == end)
      return uint8_t(k);
  if (begin == end || h.tensors.size() >= kNoTensor) return kNoTensor;
  h.tensors.emplace_back(begin, end);
  return uint8_t(h.tensors.size() - 1);
}

// One global request of the running block: its 128-byte lines, and its sectors into the launch's sharing classes
// (with their tensor) and into the block's own set (the block's L1 keeps what it read: a sector read again by the
// block is an L1 hit).
void hierarchy_request(uintptr_t pc, const Request& r, std::unordered_set<uintptr_t>& block_reads) {
  Hierarchy& h = t_hierarchy.back();
  uintptr_t lines[64];
  uint32_t n = 0;
  uint64_t at[3];
  block_coordinates(h, t_block, at);
  auto& sharers = r.kind == kLoad ? h.reads : h.writes;
  const auto found = t_site_tensor.find(pc);
  const SiteTensor site = found == t_site_tensor.end() ? SiteTensor{} : found->second;
  const uintptr_t offset = site.begin & 255;
  const uint8_t tensor = site.launch == t_profile.launches.size() ? site.index
                         : site.begin < site.end                  ? tensor_index(h, site.begin, site.end)
                                                                  : kNoTensor;
  for (uint32_t m = r.lanes; m; m &= m - 1) {
    const uintptr_t a = r.addr[__builtin_ctz(m)];
    // a site whose last tensor is another (a pointer chosen per lane at run time): the tensor holding `a`
    const uint8_t owner = a >= site.begin && a < site.end ? tensor : tensor_index(h, a, a);
    for (uintptr_t line = (a - offset) >> 7; line <= (a - offset + r.size - 1) >> 7; ++line) {
      bool dup = false;
      for (uint32_t k = 0; k < n && !dup; ++k) dup = lines[k] == line;
      if (!dup && n < 64) lines[n++] = line;
    }
    for (uintptr_t s = a >> 5; s <= (a + r.size - 1) >> 5; ++s) {
      if (r.kind == kLoad) block_reads.insert(s);
      auto [it, fresh] = sharers.try_emplace(s);
      Sharer& sh = it->second;
      if (fresh) {
        for (int d = 0; d < 3; ++d) sh.at[d] = uint32_t(at[d]);
        sh.tensor = owner;
      } else {
        for (int d = 0; d < 3; ++d) sh.along |= uint8_t(sh.at[d] != uint32_t(at[d])) << d;
      }
    }
  }
  h.l1_wavefronts += uint64_t(n) * t_weight;
}

constexpr unsigned kWarps = kMaxBlockThreads / 32;
constexpr size_t kMaxTrips = 64;              // distinct trip counts kept per condition (TripStats)
constexpr uint32_t kLostTrips = 0xffffffffu;  // the entries past them

// The running block's requests that some lane made, each with its (pc, warp, n).
template <typename T>
std::vector<std::pair<RequestKey, const T*>> made(const Profile& p, const std::vector<std::vector<T>>& rows) {
  std::vector<std::pair<RequestKey, const T*>> out;
  for (const auto& [pc, row] : p.sites_run)
    for (uint32_t warp = 0; warp < kWarps; ++warp) {
      const std::vector<T>& v = rows[size_t(row) * kWarps + warp];
      for (uint32_t n = 0; n < v.size(); ++n)
        if (v[n].lanes) out.push_back({RequestKey{pc, warp, n}, &v[n]});
    }
  return out;
}

// A 32 x 32 matrix of bits transposed in place: bit j of a[i] goes to bit i of a[j] (lanes' words of taken bits in,
// one mask of lanes per execution out). Halves swapped, then quarters, ..., Hacker's Delight's transpose32 (7-3).
void transpose32(uint32_t a[32]) {
  constexpr uint32_t kKeep[5] = {0x0000ffff, 0x00ff00ff, 0x0f0f0f0f, 0x33333333, 0x55555555};
  for (unsigned s = 16, level = 0; s; s >>= 1, ++level)
    for (unsigned i = 0; i < 32; ++i)
      if (!(i & s)) {
        const uint32_t t = ((a[i] >> s) ^ a[i + s]) & kKeep[level];
        a[i + s] ^= t;
        a[i] ^= t << s;
      }
}

// One warp's branch executions at a pc, for BranchStats::by_lane: each distinct (lanes, taken) with the times it came
// (a loop's condition has two or three), added lane by lane once at the end, not for every execution.
struct LaneTally {
  uint32_t lanes[8], taken[8], times[8];
  unsigned n = 0;
  std::array<uint32_t, 64> spilled{};  // past 8 kinds (a data-dependent condition): added lane by lane at once
  void add(const Branch& b) {
    for (unsigned k = 0; k < n; ++k)
      if (lanes[k] == b.lanes && taken[k] == b.taken) {
        ++times[k];
        return;
      }
    if (n < 8) {
      lanes[n] = b.lanes, taken[n] = b.taken, times[n++] = 1;
      return;
    }
    for (int l = 0; l < 32; ++l) spilled[l] += b.lanes >> l & 1, spilled[32 + l] += b.taken >> l & 1;
  }
  void flush(std::array<uint32_t, 64>& per_lane) const {
    for (int l = 0; l < 64; ++l) per_lane[l] += spilled[l];
    for (unsigned k = 0; k < n; ++k)
      for (int l = 0; l < 32; ++l)
        per_lane[l] += (lanes[k] >> l & 1) * times[k], per_lane[32 + l] += (taken[k] >> l & 1) * times[k];
  }
};

// The running block ended (or the launch did): its requests are counted, multiplied by the sampling stride.
void profile_block_end(const char* kernel) {
  Profile& p = t_profile;
  const auto requests = made(p, p.requests);
  LaunchRecord& launch = p.launches.back();
  std::unordered_set<uint32_t> loading;           // the warps of this block that made a global load
  std::unordered_set<uintptr_t> block_reads;      // the memory hierarchy's: this block's distinct sectors read
  std::vector<Counted> counted(requests.size());  // by the index in requests: what regroup reuses
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& [key, at] = requests[i];
    const Request& r = *at;
    if (r.space == kGlobal && !t_hierarchy.empty()) hierarchy_request(key.pc, r, block_reads);
    SiteStats& s = p.sites[SiteKey{kernel, key.pc, r.space, r.kind}];
    uint32_t ideal, worst = 0, bank = 0, lanes = 0;
    auto& distinct = r.kind == kLoad ? launch.distinct_read : launch.distinct_written;
    const uint32_t units =
        r.space == kGlobal ? sectors_of(r, &ideal, &distinct) : wavefronts_of(r, &ideal, &worst, &bank, &lanes);
    if (r.space == kShared) {
      launch.wavefronts += uint64_t(units) * p.every;
    } else if (r.kind == kLoad) {
      launch.sectors_read += uint64_t(units) * p.every;
      launch.load_requests += p.every;
      launch.load_sites.insert(key.pc);
      loading.insert(key.warp);
    } else {
      launch.sectors_written += uint64_t(units) * p.every;
    }
    s.requests += p.every;
    if (r.lanes & (r.lanes + 1)) s.scattered += p.every;  // not of the form 0..01..1
    s.lanes += uint64_t(__builtin_popcount(r.lanes)) * p.every;
    s.bytes += uint64_t(__builtin_popcount(r.lanes)) * r.size * p.every;
    s.units += uint64_t(units) * p.every;
    s.ideal += uint64_t(ideal) * p.every;
    if (worst > s.worst) s.worst = worst, s.worst_bank = bank, s.worst_lanes = lanes, s.worst_request = r;
    counted[i] = Counted{units, ideal, worst, bank, lanes, &s};
  }
  launch.loading_warps += loading.size() * p.every;
  // Regrouped as nvcc's instructions of each width would group them, warp by warp, in program order.
  std::map<uint32_t, std::vector<std::tuple<uint32_t, uintptr_t, const Request*, const Counted*>>> by_warp;
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& [key, r] = requests[i];
    by_warp[key.warp].emplace_back(r->seq, key.pc, r, &counted[i]);
  }
  std::vector<std::tuple<uintptr_t, const Request*, const Counted*>> ordered;
  for (auto& [warp, reqs] : by_warp) {
    std::sort(reqs.begin(), reqs.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    ordered.clear();
    for (const auto& [seq, pc, r, c] : reqs) ordered.emplace_back(pc, r, c);
    for (unsigned wi = 0; wi < 3; ++wi) regroup(p, wi, ordered);
  }
  if (!t_hierarchy.empty()) {
    t_hierarchy.back().l2_read_sectors += block_reads.size() * t_weight;
    // A block's resources free when its last warp exits: its slowest warp's round trips set its time.
    std::unordered_map<uint32_t, uint32_t> per_warp;
    uint32_t most = 0;
    for (const auto& [key, r] : requests)
      if (r->space == kGlobal && r->kind == kLoad) most = std::max(most, ++per_warp[key.warp]);
    t_hierarchy.back().slowest += uint64_t(most) * t_weight;
  }
  const bool first_block = launch.ended++ == 0;
  // Branch executions, row by row (a block of linear_ladder v7 at 4096³ makes 3.6 million: one list of them all, as
  // for the requests, and a map lookup for each were a twentieth of a profile, 2026-11-27), each warp's decoded from
  // its lanes' bits 64 executions at a time. Summed per row, then multiplied by the block's weight: the same totals.
  for (const auto& [pc, row] : p.sites_run) {
    if (!p.branch_rows[row].site) continue;  // an access site's row
    BranchStats* s = nullptr;
    bool by_lane = false;  // this row's executions go into the picture of who took it (see BranchStats)
    uint64_t executions = 0, lanes = 0, divergent = 0, split = 0, none = 0;
    for (uint32_t warp = 0; warp < kWarps; ++warp) {
      const size_t first = size_t(row) * kMaxBlockThreads + warp * 32;
      const uint32_t* evaluated = &p.executions[first];    // per lane: its evaluations
      std::array<std::pair<uint32_t, uint32_t>, 32> ends;  // (evaluations, lane), fewest first: where lanes drop out
      for (uint32_t l = 0; l < 32; ++l) ends[l] = {evaluated[l], l};
      std::sort(ends.begin(), ends.end());
      const uint32_t most = ends[31].first;
      if (!most) continue;
      LaneTally tally;
      const std::vector<uint64_t>& full = p.taken_words[size_t(row) * kWarps + warp];
      uint32_t active = ~0u;  // the lanes that evaluated it more than n times
      unsigned gone = 0;      // ends[0, gone) have dropped out
      for (uint32_t k = 0; k * 64 < most; ++k) {
        uint32_t lo[32], hi[32];  // bits [0, 32) and [32, 64) of the lanes' words k, then transposed: per execution
        for (uint32_t l = 0; l < 32; ++l) {
          const uint32_t words = evaluated[l] / 64;
          const uint64_t word = k < words ? full[size_t(k) * 32 + l] : k == words ? p.taken_bits[first + l] : 0;
          lo[l] = uint32_t(word), hi[l] = uint32_t(word >> 32);
        }
        transpose32(lo), transpose32(hi);
        for (uint32_t j = 0; j < 64 && k * 64 + j < most; ++j) {
          const uint32_t n = k * 64 + j;
          while (gone < 32 && ends[gone].first <= n) active &= ~(1u << ends[gone++].second);
          const Branch b{active, j < 32 ? lo[j] : hi[j - 32]};
          if (!s) {
            s = &p.branch_sites[{kernel, pc}];
            by_lane = first_block && (!s->lanes_launch || s->lanes_launch == p.launches.size());
            if (by_lane) s->lanes_launch = p.launches.size();
          }
          if (by_lane) tally.add(b);
          ++executions;
          lanes += __builtin_popcount(b.lanes);
          if (b.taken && b.taken != b.lanes) {
            ++divergent;
            const uint32_t other = b.lanes & ~b.taken;
            const auto highest = [](uint32_t m) { return 31 - __builtin_clz(m); };
            split += highest(b.taken) < __builtin_ctz(other) || highest(other) < __builtin_ctz(b.taken);
          }
          none += !b.taken;
        }
      }
      if (by_lane && tally.n) tally.flush(s->by_lane.try_emplace(warp).first->second);
    }
    if (!s) continue;
    s->executions += executions * p.every;
    s->lanes += lanes * p.every;
    s->divergent += divergent * p.every;
    s->split += split * p.every;
    s->none += none * p.every;
  }
  for (auto& [site, block] : p.trip_block) {
    TripStats& s = p.trip_sites[{kernel, site}];
    for (uint32_t run : block.run)
      if (run) ++block.trips[run];  // an entry the block's end cut short
    // Not kept apart: a `break` evaluates no condition, so the trips of an entry it left run on into the loop's next
    // entry in that warp (break after 2, then 3 trips: one entry of 5): not told apart yet. kp.gpumodel.runs keeps a
    // trip count's equation only where it makes the block equations disagree no more than they did without it.
    for (const auto& [t, entries] : block.trips) {
      const bool kept = s.trips.size() < kMaxTrips || s.trips.count(t);
      s.trips[kept ? t : kLostTrips] += entries * p.every;
    }
    s.pcs.insert(block.pcs.begin(), block.pcs.end());
  }
  p.trip_block.clear();
  p.row_trips.clear();
  // Emptied, not freed: the next block's rows reuse their memory (the branch rows of a block of linear_ladder v7 at
  // 4096³ are 29 MB, and faulting their pages in again for every block was a thirtieth of a profile, 2026-11-27).
  for (std::vector<Request>& row : p.requests) row.clear();
  for (std::vector<uint64_t>& row : p.taken_words) row.clear();
  p.sites_run.clear();
  p.executions.clear();
  p.taken_bits.clear();
  p.branch_rows.clear();
  p.last_pc = 0;
  p.recent.fill({0, 0});
  p.accesses.clear();
}

// Whether the running block has requests or branches still to count.
bool profile_pending() { return !t_profile.sites_run.empty(); }

// One touch of element `index` of the array (begin, name), for pictures. Called on every counted access: once
// kMaxTouches are kept it only counts the drop, so the array's name and dims (a string per access) are made only
// while touches are kept (they cost a tenth of a profile's time when made on every access, 2026-11-27).
void profile_touch(Worker& w, Profile& p, Space space, const char* name, uintptr_t begin, uint64_t elements,
                   const unsigned* dims, int rank, uint64_t index, AccessKind kind) {
  if (p.touches.size() >= kMaxTouches) {
    ++p.touches_dropped;
    return;
  }
  auto found = p.array_ids.find({begin, name});
  uint32_t id;
  if (found == p.array_ids.end()) {
    id = uint32_t(p.arrays.size());
    std::string shape;  // "4 8" for a [4][8] __shared__ array
    for (int d = 0; d < rank; ++d) shape += format(d ? " %u" : "%u", dims[d]);
    p.arrays.push_back({name, space, begin, elements, shape});
    p.array_ids[{begin, name}] = id;
  } else {
    id = found->second;
  }
  const uint3 b = w.st->block_idx, g = w.st->grid_dim;
  p.touches.push_back(
      {id, uint32_t(p.launches.size() - 1), b.x + g.x * (b.y + g.y * b.z), running_tid(w), index, uint8_t(kind)});
}

// The row of `pc` in the running block, made on its first run: not in `recent` (out of line: the hooks' fast paths
// stay small, with few registers to save).
__attribute__((noinline)) uint32_t row_looked_up(Profile& p, uintptr_t pc) {
  std::pair<uintptr_t, uint32_t>& recent = p.recent[(pc * 0x9E3779B97F4A7C15ull) >> 58];
  auto [it, fresh] = p.sites_run.try_emplace(pc, uint32_t(p.sites_run.size()));
  if (fresh) {
    p.executions.resize(p.executions.size() + kMaxBlockThreads);
    p.taken_bits.resize(p.executions.size());
    const size_t rows = p.sites_run.size() * kWarps;  // p.requests and p.taken_words keep an earlier block's rows
    if (p.requests.size() < rows) p.requests.resize(rows), p.taken_words.resize(rows);
    p.row_trips.push_back(nullptr);
    p.branch_rows.emplace_back();
  }
  recent = {pc, it->second};
  return it->second;
}

// The row of `pc` in the running block (sets last_pc and last_row).
inline uint32_t row_of(Profile& p, uintptr_t pc) {
  if (pc != p.last_pc || !pc) {
    const std::pair<uintptr_t, uint32_t>& recent = p.recent[(pc * 0x9E3779B97F4A7C15ull) >> 58];
    p.last_row = recent.first == pc && pc ? recent.second : row_looked_up(p, pc);
    p.last_pc = pc;
  }
  return p.last_row;
}

// The times thread `tid` of the running block ran `pc` before, counted up.
uint32_t executed_before(Profile& p, uintptr_t pc, unsigned tid) {
  return p.executions[size_t(row_of(p, pc)) * kMaxBlockThreads + tid]++;
}

// Room for the n-th request in a row of requests (out of line, as row_looked_up).
template <typename T>
__attribute__((noinline)) void grow(std::vector<T>& row, uint32_t n) {
  row.resize(n + 1);
}

void profile_access(Worker& w, Profile& p, Space space, uintptr_t a, size_t n, bool write, bool atomic, uintptr_t pc) {
  const unsigned tid = running_tid(w);
  const uint32_t nth = executed_before(p, pc, tid);
  if (p.accesses.size() <= tid) p.accesses.resize(tid + 1);
  const uint32_t seq = p.accesses[tid]++;
  std::vector<Request>& row = p.requests[size_t(p.last_row) * kWarps + tid / 32];
  if (row.size() <= nth) grow(row, nth);
  Request& r = row[nth];
  if (!r.lanes) {
    r.seq = seq;
    r.size = uint8_t(n > 255 ? 255 : n);
    r.space = space;
    r.kind = atomic ? kAtomic : write ? kStore : kLoad;
  }
  r.lanes |= 1u << (tid % 32);
  r.addr[tid % 32] = a;
}

// hierarchy_base where the site's tensor is not the one it had in p.site_seen (out of line: the hook stays small).
__attribute__((noinline)) void hierarchy_base_new(Profile& p, uintptr_t pc, uintptr_t begin, uintptr_t end) {
  const uint64_t launch = p.launches.size();
  const uint8_t index = t_hierarchy.empty() ? kNoTensor : tensor_index(t_hierarchy.back(), begin, end);
  t_site_tensor[pc] = SiteTensor{begin, end, launch, index};
  p.site_seen[(pc * 0x9E3779B97F4A7C15ull) >> 58] = Profile::SiteSeen{pc, begin, end, launch};
}

// A global access at `pc` touched the tensor [begin, end) (its 128-byte lines and its sectors: see t_site_tensor);
// the launch lists it, so that a lane of a site whose last tensor is another one finds its own (hierarchy_request).
// Every profiled global access comes here: the common case, the site's tensor as at its last access in this launch, is
// one compare (p.site_seen); t_site_tensor then already holds it.
inline void hierarchy_base(Profile& p, uintptr_t pc, uintptr_t begin, uintptr_t end) {
  const Profile::SiteSeen& seen = p.site_seen[(pc * 0x9E3779B97F4A7C15ull) >> 58];
  if (seen.pc != pc || seen.begin != begin || seen.end != end || seen.launch != p.launches.size())
    hierarchy_base_new(p, pc, begin, end);
}

// The counted lane of a warp evaluated a copy (at `pc`) of the condition `trips` is of: its pc is listed, its run
// goes on, or the entry it ran is counted (out of line: one evaluation in 32 comes here).
__attribute__((noinline)) void trip_step(TripSite& trips, unsigned warp, uintptr_t pc, bool taken) {
  if (std::find(trips.pcs.begin(), trips.pcs.end(), pc) == trips.pcs.end()) trips.pcs.push_back(pc);
  uint32_t& run = trips.run[warp];
  if (taken) {
    ++run;
  } else {
    ++trips.trips[run];
    run = 0;
  }
}

// The trips of KP_BRANCH's `site`, remembered for row `at` (out of line: once per row and block).
__attribute__((noinline)) TripSite* trips_of(Profile& p, uint32_t at, uintptr_t site) {
  TripSite& trips = p.trip_block[site];
  trips.site = site;
  return p.row_trips[at] = &trips;
}

// Thread `tid` of the running block evaluated the branch condition of row `at`: its bit is set, and its word, once
// full, joins the row's full words (see Profile::taken_bits).
void record_taken(Profile& p, uint32_t at, unsigned tid, bool taken) {
  const size_t slot = size_t(at) * kMaxBlockThreads + tid;
  const uint32_t n = p.executions[slot]++;
  uint64_t& bits = p.taken_bits[slot];
  bits |= uint64_t(taken) << (n % 64);
  if (n % 64 == 63) {
    std::vector<uint64_t>& full = p.taken_words[size_t(at) * kWarps + tid / 32];
    const size_t index = size_t(n / 64) * 32 + tid % 32;
    if (full.size() <= index) full.resize(index - tid % 32 + 32);
    full[index] = bits;
    bits = 0;
  }
}

// Lane `tid % 32` of the running block evaluated the branch condition at `pc`, a copy of KP_BRANCH's `site`.
// Every evaluation of every condition comes here or to profile_branch_fast (460 million in linear_ladder v7's
// 128 x 128 tiles at 4096³, 2 x 2 blocks).
inline void profile_branch(Worker& w, Profile& p, bool taken, uintptr_t pc, uintptr_t site) {
  const unsigned tid = running_tid(w), warp = tid / 32;
  const uint32_t at = row_of(p, pc);
  TripSite* trips = p.row_trips[at];
  if (!trips || trips->site != site) trips = trips_of(p, at, site);
  int32_t& lane = trips->lane[warp];
  if (lane < 0) lane = int32_t(tid);
  if (lane == int32_t(tid)) trip_step(*trips, warp, pc, taken);
  BranchRow& row = p.branch_rows[at];
  if (row.site != site) row.site = site, std::fill_n(row.counted, kWarps, -1);  // the counted lanes of another site
  row.counted[warp] = lane;
  record_taken(p, at, tid, taken);
}

// profile_branch out of line: for what profile_branch_fast leaves to it.
__attribute__((noinline)) bool profile_branch_slow(Worker& w, Profile& p, bool taken, uintptr_t pc, uintptr_t site) {
  profile_branch(w, p, taken, pc, site);
  return taken;
}

// profile_branch's common case with no call in it (a row in `recent`, its site known, a lane not counted for trips,
// a word not filled by this bit), so that check_branch saves no registers for it (its pushes and pops were a tenth of
// the hook, perf, 2026-11-27); anything else goes to profile_branch_slow (a tail call), before anything is changed.
// Returns `taken`.
inline bool profile_branch_fast(Worker& w, Profile& p, bool taken, uintptr_t pc, uintptr_t site) {
  unsigned tid = running_tid(w);
  asm("" : "+r"(tid));  // computed here: g++ otherwise loads its five inputs first and runs out of scratch registers
  const unsigned warp = tid / 32;
  uint32_t at = p.last_row;
  if (pc != p.last_pc || !pc) {
    const std::pair<uintptr_t, uint32_t>& recent = p.recent[(pc * 0x9E3779B97F4A7C15ull) >> 58];
    if (recent.first != pc || !pc) return profile_branch_slow(w, p, taken, pc, site);
    at = recent.second;
  }
  const BranchRow& row = p.branch_rows[at];
  if (row.site != site) return profile_branch_slow(w, p, taken, pc, site);
  const int32_t lane = row.counted[warp];
  if (lane < 0 || lane == int32_t(tid)) return profile_branch_slow(w, p, taken, pc, site);
  const size_t slot = size_t(at) * kMaxBlockThreads + tid;
  uint32_t& n = p.executions[slot];
  if (n % 64 == 63) return profile_branch_slow(w, p, taken, pc, site);  // its word is full after this bit
  p.last_pc = pc, p.last_row = at;
  p.taken_bits[slot] |= uint64_t(taken) << (n++ % 64);
  return taken;
}

}  // namespace

// Hooks of the runtime (cuda_cpu_runtime.cpp), for check launches.

bool profiling() { return t_profiling; }

// A check launch begins: whether blocks are sampled.
void profile_launch_begin(const Kernel& kernel, dim3 grid, dim3 block, size_t shmem, uint64_t blocks) {
  Profile& p = t_profile;
  Hierarchy h;  // sampling by strata (see Hierarchy)
  h.grid[0] = grid.x, h.grid[1] = grid.y, h.grid[2] = grid.z;
  choose_samples(h, p.max_blocks);
  for (int d = 0; d < 3; ++d) h.at[d] = stratum_samples(h.n[d], h.grid[d]);
  t_hierarchy.push_back(std::move(h));
  p.every = t_weight = 1;
  LaunchRecord record;
  record.kernel = kernel.name;
  record.grid = grid;
  record.block = block;
  record.shmem = shmem;
  record.blocks = blocks;
  const Hierarchy& sampled = t_hierarchy.back();
  record.traced = uint64_t(sampled.n[0]) * sampled.n[1] * sampled.n[2];
  p.launches.push_back(std::move(record));
}

// Whether block `index` of the running check launch is skipped (sampling by strata: see Hierarchy). A block that
// runs is counted with its weight: the previous block's requests are counted first, with theirs.
bool profile_skips(uint64_t index) {
  if (!t_profiling || t_hierarchy.empty()) return false;
  const Hierarchy& h = t_hierarchy.back();
  uint64_t at[3], weight = 1, size;
  block_coordinates(h, index, at);
  for (int d = 0; d < 3; ++d) {
    if (!sampled_coordinate(at[d], h.n[d], h.grid[d], h.at[d], &size)) return true;
    weight *= size;
  }
  if (profile_pending()) profile_block_end(t_profile.launches.back().kernel);
  t_block = index;
  t_profile.every = t_weight = weight;
  return false;
}

// A __syncthreads of the running block was released (cuda_cpu_check.h): barrier-separated phases (kp/gputime.py).
void profile_barrier() {
  if (t_profiling && !t_hierarchy.empty()) t_hierarchy.back().barriers += t_weight;
}

void profile_launch_end(const Kernel& kernel) {
  if (profile_pending()) profile_block_end(kernel.name);
}

// A launch of a kernel built without check mode, while profiling: its accesses cannot be counted.
void profile_unchecked(const Kernel& kernel) {
  if (!t_profiling) return;
  Profile& p = t_profile;
  if (p.unprofiled++ < 8) p.unprofiled_names += std::string(p.unprofiled_names.empty() ? "" : ", ") + kernel.name;
}

// For Python (kp_profile_begin / kp_profile_take in cuda_cpu_runtime.cpp).
void profile_begin(uint64_t max_blocks) {
  t_profile = Profile();
  t_profiling = true;
  t_profile.max_blocks = max_blocks;
  t_hierarchy.clear();
  t_site_tensor.clear();
}

// One launch's memory hierarchy inputs, a line: hierarchy  launch  nx ny nz  l1_wavefronts  l2_read_sectors
// barriers  slowest (per block, its most loading warp's global load requests, summed over the blocks)  then, for reads
// and for writes, the sectors per sampled owner of each sharing class (along = 0 .. 7: the dimensions along which the
// class's sectors are shared; its owners: the sampled points of the other dimensions). Then a line per tensor:
// hierarchy_tensor  launch  its sectors  its reads' and writes' classes, as above.
std::string hierarchy_row(size_t launch, const Hierarchy& h) {
  std::string out = format("hierarchy\t%zu\t%u %u %u\t%llu\t%llu\t%llu\t%llu", launch, h.n[0], h.n[1], h.n[2],
                           (unsigned long long)h.l1_wavefronts, (unsigned long long)h.l2_read_sectors,
                           (unsigned long long)h.barriers, (unsigned long long)h.slowest);
  const size_t tensors = h.tensors.size();
  std::vector<std::string> rows(tensors);
  for (size_t k = 0; k < tensors; ++k) {
    const auto [begin, end] = h.tensors[k];
    rows[k] = format("hierarchy_tensor\t%zu\t%llu", launch, (unsigned long long)((end - 1) / 32 - begin / 32 + 1));
  }
  auto classes = [&](const uint64_t* count) {
    std::string text = "\t";
    for (int along = 0; along < 8; ++along) {
      double owners = 1;  // the sampled points of the dimensions the class is not shared along
      for (int d = 0; d < 3; ++d)
        if (!(along >> d & 1)) owners *= h.n[d];
      text += format(along ? " %.9g" : "%.9g", count[along] / owners);
    }
    return text;
  };
  for (const auto* sharers : {&h.reads, &h.writes}) {
    std::vector<uint64_t> count(8 * (tensors + 1));  // all, then each tensor's
    for (const auto& [sector, sh] : *sharers) {
      ++count[sh.along];
      if (sh.tensor != kNoTensor) ++count[8 * (sh.tensor + 1) + sh.along];
    }
    out += classes(count.data());
    for (size_t k = 0; k < tensors; ++k) rows[k] += classes(count.data() + 8 * (k + 1));
  }
  out += "\n";
  for (const std::string& row : rows) out += row + "\n";
  return out;
}

// The profile as text, and profiling stops. Lines, fields separated by tabs:
//   site  kernel  pc(library+0xOFFSET)  space  kind  requests  lanes  bytes  units  ideal  worst  worst_bank
//   worst_lanes
//         scattered, then for each width of kWidths (4, 8, 16 bytes): requests  units  ideal  worst  worst_bank
//         worst_lanes
//   launch  kernel  gx gy gz  bx by bz  shmem  blocks  traced  sectors_read  sectors_written  wavefronts
//           load_requests  load_sites  distinct_read  distinct_written (the distinct ones x the sampling stride)
//           loading_warps
//   branch  kernel  pc  executions  lanes  divergent  split  none
//   lanes  kernel  pc  warp  evaluated0 .. evaluated31  taken0 .. taken31  (one block's, per warp: see BranchStats)
//   trips  kernel  pc  t  entries  (TripStats: pc, its lowest copy's; t = 4294967295: entries past kMaxTrips ts)
//   tripcopy  kernel  pc  copy  (each pc the condition of `trips ... pc` was evaluated at)
//   unprofiled  count  names
//   worst  kernel  pc  lanes  size  addr0 .. addr31   (a shared site's worst request)
//   array  id  space  name  begin  elements  dims
//   touch  array  launch  index  block  thread  kind  (at most kMaxTouches; then "dropped  count")
std::string profile_take() {
  Profile& p = t_profile;
  std::string out;
  static const char* spaces[] = {"global", "shared"};
  static const char* kinds[] = {"load", "store", "atomic"};
  for (const auto& [key, s] : p.sites) {
    out += format("site\t%s\t%s\t%s\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%u\t%u\t%u\t%llu", key.kernel,
                  where(key.pc).c_str(), spaces[key.space], kinds[key.kind], (unsigned long long)s.requests,
                  (unsigned long long)s.lanes, (unsigned long long)s.bytes, (unsigned long long)s.units,
                  (unsigned long long)s.ideal, s.worst, s.worst_bank, s.worst_lanes, (unsigned long long)s.scattered);
    for (const WidthStats& w : s.widths)
      out += format("\t%llu\t%llu\t%llu\t%u\t%u\t%u", (unsigned long long)w.requests, (unsigned long long)w.units,
                    (unsigned long long)w.ideal, w.worst, w.worst_bank, w.worst_lanes);
    out += "\n";
  }
  for (const LaunchRecord& l : p.launches)
    out += format("launch\t%s\t%u %u %u\t%u %u %u\t%zu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%zu\t%llu\t%llu\t%llu\n",
                  l.kernel, l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z, l.shmem,
                  (unsigned long long)l.blocks, (unsigned long long)l.traced, (unsigned long long)l.sectors_read,
                  (unsigned long long)l.sectors_written, (unsigned long long)l.wavefronts,
                  (unsigned long long)l.load_requests, l.load_sites.size(),
                  (unsigned long long)(l.distinct_read.size() * ((l.blocks + l.traced - 1) / l.traced)),
                  (unsigned long long)(l.distinct_written.size() * ((l.blocks + l.traced - 1) / l.traced)),
                  (unsigned long long)l.loading_warps);
  for (const auto& [key, b] : p.branch_sites)
    out += format("branch\t%s\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\n", key.first, where(key.second).c_str(),
                  (unsigned long long)b.executions, (unsigned long long)b.lanes, (unsigned long long)b.divergent,
                  (unsigned long long)b.split, (unsigned long long)b.none);
  for (const auto& [key, b] : p.branch_sites)
    for (const auto& [warp, per_lane] : b.by_lane) {
      out += format("lanes\t%s\t%s\t%u", key.first, where(key.second).c_str(), warp);
      for (uint32_t count : per_lane) out += format("\t%u", count);
      out += "\n";
    }
  for (const auto& [key, s] : p.trip_sites) {
    const std::string first = where(*s.pcs.begin());
    for (const auto& [t, entries] : s.trips)
      out += format("trips\t%s\t%s\t%u\t%llu\n", key.first, first.c_str(), t, (unsigned long long)entries);
    for (uintptr_t pc : s.pcs) out += format("tripcopy\t%s\t%s\t%s\n", key.first, first.c_str(), where(pc).c_str());
  }
  if (p.unprofiled)
    out += format("unprofiled\t%llu\t%s\n", (unsigned long long)p.unprofiled, p.unprofiled_names.c_str());
  for (const auto& [key, s] : p.sites) {
    if (key.space != kShared || !s.worst_request.lanes) continue;
    const Request& r = s.worst_request;
    out += format("worst\t%s\t%s\t%u\t%u", key.kernel, where(key.pc).c_str(), r.lanes, unsigned(r.size));
    for (int l = 0; l < 32; ++l) out += format("\t%llu", (unsigned long long)(r.lanes >> l & 1 ? r.addr[l] : 0));
    out += "\n";
  }
  for (size_t k = 0; k < p.arrays.size(); ++k) {
    const Array& a = p.arrays[k];
    out += format("array\t%zu\t%s\t%s\t%llu\t%llu\t%s\n", k, a.space == kGlobal ? "global" : "shared", a.name.c_str(),
                  (unsigned long long)a.begin, (unsigned long long)a.elements, a.dims.c_str());
  }
  for (const Touch& t : p.touches)
    out += format("touch\t%u\t%u\t%llu\t%u\t%u\t%u\n", t.array, t.launch, (unsigned long long)t.index, t.block, t.tid,
                  unsigned(t.kind));
  if (p.touches_dropped) out += format("dropped\t%llu\n", (unsigned long long)p.touches_dropped);
  for (size_t k = 0; k < t_hierarchy.size(); ++k) out += hierarchy_row(k, t_hierarchy[k]);
  t_hierarchy.clear();
  t_profile = Profile();
  t_profiling = false;
  return out;
}

}  // namespace detail
}  // namespace kp
