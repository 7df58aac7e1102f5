"""The SM's pipes per compute capability (issue 31): which pipe each SASS opcode runs on (the per-lane arithmetic pipes
and the SM's one load/store pipe), how many results per clock per SM each gives, and the time a launch's warp
instructions hold the busiest of them on its busiest SM. Owns that table and that time only: kp.gpumodel.compiled
counts the warp instructions each pipe ran (pipe_of over the SASS at its runs), kp.gpumodel.gputime joins the pipe term
to the SM side's terms. Imports nothing.

A warp instruction is 32 results; a pipe giving R results per clock per SM, R / 4 lanes in each of the 4 sub-partitions
(one warp scheduler each), holds its sub-partition 32 / (R / 4) clocks per warp instruction: an FFMA on an A100 (64
FP32 lanes per SM, 16 per sub-partition) 2 clocks, on an H100 (128) 1 clock. A pipe of 128 results per clock per SM
keeps pace with issue (one warp instruction per clock per scheduler: kp.gpumodel.gpu_constants) and never bounds above
it; the slower ones can. Only the sub-partitions holding a warp work: with W < 4 warps resident, W / 4 of the rate
(of the LSU's three terms only its address calculation: below).

Sources. The CUDA C++ Programming Guide's table "Throughput of Native Arithmetic Instructions (Number of Results per
Clock Cycle per Multiprocessor)" (in CUDA 13 in the Best Practices Guide, 12.1.1). Read this session (2026-11-27,
through the search tool's copies of the guide in public repositories, not NVIDIA's page itself): its 7.x column (the
CUDA 10 guide) for every row used here; its 8.0 and 8.6 columns for the FP32, special-function and integer-add rows
(FP32 64 and 128, special functions 16 and 16, integer add 64 and 64). The rest of the 8.x and 9.0 cells are taken as
7.x's: an assumption (the current guide's 8.x and 9.0 columns are recalled to give the same 64 integer, 16 special
functions and conversions, 32 shuffle, but were not re-read here); FP32 and FP64 come from kp.gpumodel.gpus's
SM_LIMITS (the same table, sourced there). The rows and the opcodes put on them (NVIDIA's "CUDA Binary Utilities",
Instruction Set Reference, names them):
- "32-bit floating-point add, multiply, multiply-add": FADD, FMUL, FFMA (and their 32I forms): the FP32 pipe;
- "32-bit integer add, extended-precision add, subtract", "32-bit integer shift", "compare, minimum, maximum",
  "32-bit bitwise AND, OR, XOR": 64 on 7.5 to 9.0: the integer pipe (IADD3, IADD, LEA, ISCADD, SHF, SHL, SHR, ISETP,
  IMNMX, LOP3, LOP; and FSETP, FSET, FMNMX, the compares and min/max of floats, which the row does not restrict to
  integers): what Nsight Compute calls the ALU pipe;
- "32-bit integer multiply, multiply-add, extended-precision multiply-add": 64: the IMAD pipe (IMAD, nvcc's IMAD.MOV,
  IMAD.SHL and IMAD.WIDE included: the opcode is a multiply-add; IMUL). IMAD issues to the FP32 FMA datapath, not the
  ALU: NVIDIA's answers on its developer forum ("int-32-and-fp64-can-be-used-concurrently-in-the-volta-architecture":
  on GV100 "FMA pipe - executes FP32 instructions and IMAD", "ALU pipe - executes INT32 (not IMAD), logical
  operations..."; "separate-cuda-core-pipeline-for-fp16-and-fp32": on GA100 "FMA pipe handles IMAD, IDP, and FP32",
  on GA10x and GH100 "FMAheavy pipe handles IMAD, IDP, and FP32", "FMAlite pipe handles FP32"), so FP32 and IMAD
  instructions together get at most the FP32 row's results per clock ("FMA": FP32 + IMAD), IMAD alone at most 64 (the
  heavy half where FP32 is 128); IDP (the DP4A dot products) likewise; taken for 7.5 too (Turing's SM is Volta's in
  this);
- "32-bit floating-point reciprocal, reciprocal square root, base-2 logarithm, base 2 exponential, sine, cosine": 16:
  the special-function pipe (MUFU);
- "warp shuffle": 32: the shuffle pipe (SHFL);
- "type conversions" (8/16-bit to 32-bit, all other): 16 on 7.x: the conversion pipe (F2I, I2F, F2F, I2I);
  "type conversions from and to 64-bit types" (a .F64, .S64 or .U64 in the opcode): 16 on 7.x with a footnote this
  session's copy lacks; the older columns of the same table give these conversions the FP64 row's rate where FP64 is
  slow (4 on 5.x, 6.1 and 6.2), so they are taken at min(16, the FP64 rate): 2 on 7.5, 8.6 and 8.9, an assumption
  (the 64-bit conversion pipe);
- "population count", "count of leading zeros": 16 on 7.x: the bit-count pipe (POPC, FLO);
- "64-bit floating-point add, multiply, multiply-add": SM_LIMITS' FP64 (2 on 7.5, 8.6, 8.9; 32 on 8.0; 64 on 9.0): the
  FP64 pipe (DADD, DMUL, DFMA).
Each pipe is taken to run apart from the others (the table gives rates per row, not which rows share hardware; the
bit-count and conversion rows sharing the special-function unit would make these optimistic), except FP32 + IMAD
above, and this: on 8.6 and 8.9 each sub-partition has one datapath of 16 FP32 lanes and one of 16 lanes that does
FP32 or INT32 (NVIDIA's Ampere GA102 and Ada AD102 architecture whitepapers), so FP32 and integer instructions (IMAD
included) together get at most 128 lanes per clock per SM ("FP32 + integer pipe"). 7.5, 8.0 and 9.0 have separate
INT32 lanes (the Turing, A100 and H100 whitepapers).
The load/store pipe (Nsight Compute's Kernel Profiling Guide, its table of pipelines: "lsu - Load Store Unit. The LSU
pipeline issues load, store, atomic, and reduction instructions to the L1TEX unit for global, local, and shared memory.
It also issues special register reads (S2R), shuffles, and CTA-level arrive/wait barrier instructions to the L1TEX
unit"): its memory instructions LDG, STG, LD, ST (generic), LDL, STL, LDS, STS, LDSM, STSM, ATOM, ATOMG, ATOMS, RED,
REDG, LDGSTS (cp.async) ("LSU" here); S2R and VOTE, which pass it without a memory access ("LSU other"; VOTE: NVIDIA's
forum answer "whats-the-difference-between-mio-and-lsu-instruction-queue-in-volta-architecture", Volta to Ampere: "The
LSU executes global/local/shared loads/store/atomics and several warp level operations (e.g. VOTE, SHUFFLE)"; VOTEU,
unread, left off); SHFL (the shuffle pipe above) passes it too. Three terms, each its source's bound:
- "LSU issue": every instruction it takes, shuffles included, one warp instruction per clock per SM however many
  sub-partitions hold warps: NVIDIA's answers on its developer forum, "how-does-the-lsu-load-store-unit-execute-load-
  store-instructions-in-the-ampere-architecture": "Each cycle the MIO unit can issue 1 instruction to the LSU pipe.
  This limits the issue rate from 4 IPC per SM to 1 IPC per SM", "The LSU pipeline accepts 1 instruction per cycle";
  "understanding-instruction-dispatching-in-volta-architecture" (GV100): "LSU and TEX are shared execution units that
  are timesliced between sub-partitions", "LSU is an SM level shared execution unit";
- "LSU": the memory instructions, one every two clocks per SM however many sub-partitions hold warps (one every clock
  on 8.0 and 9.0: below); and
- "LSU address": the memory instructions, one every four clocks per sub-partition holding a warp (one busy: 1 per 4
  clocks per SM; on 7.5, 8.6 and 8.9 two or more: "LSU" binds; on 8.0 and 9.0, whose "LSU" is 1 per clock, four). Both
  measured by Huerta, Abaie Shoushtary, Cruz, González, "Dissecting and Modeling the Architecture of Modern GPU Cores",
  MICRO 2025, 5.4 and its Table 1, on "an Ampere GPU" (its Ampere boards are all GA102, 8.6: RTX 3080, 3080 Ti, 3090,
  A6000), each warp running "a sequence of independent loads or stores that always hit in the data cache or shared
  memory and use regular registers": "the global structures can receive a memory request every two cycles from any of
  the sub-cores", "the address calculation done in each sub-core has a throughput of one instruction every four cycles",
  "when four sub-cores are active, each sub-core can issue an instruction only every 8 cycles since the
  shared-structures can only process up to one instruction every two cycles" (Table 1: after five buffered, the i-th
  issues at (i - 1) + 4 with 1 or 2 sub-cores active, + 6 with 3, + 8 with 4). One table for loads and stores, global
  and shared, no width named: taken for every memory instruction alike (atomics, reductions, LDGSTS, LDSM, STSM
  unmeasured there). Its latencies (Table 2) suggest shared memory's address calculation is done "in the SM
  shared-structures, rather than in the local sub-core structures": if so, LDS and STS escape "LSU address"; no rate was
  measured for that, so it is not applied.
The forum's 1 per clock is taken as the MIO's issue to the pipe, the paper's 1 per 2 as what the structures the
sub-cores share (the data cache, shared memory) accept; the lower binds (the forum's only where shuffles, S2R or VOTE
crowd the pipe). Which chips take a memory instruction every clock, not every two: an answer on NVIDIA's developer forum
("why-the-performance-of-tf32-tensor-core-is-poor", post 15; the stored copy does not name its author), reading an
Nsight Compute report of cuBLAS's ampere_sgemm_128x32_nn on an RTX A4000: "The A4000 (GA104) based GPU has a sustained
throughput of 0.5 Load Store Unit (LSU) instructions/cycle and 1 LSU wavefront/cycle" (the peak Nsight Compute rates the
pipe by: "sm__inst_executed_pipe_lsu.avg.peak_sustained = 0.5"), and "CC 7.0 (GV100), CC 8.0 (GA100) and CC 9.0 (GH100)
can sustain 1 LSU instruction/cycle/SM". So 8.0 and 9.0 take 1 per clock ("LSU" at the MIO's rate), 8.6 1 per 2 (GA104
there, GA102 in the paper: the two agree). 7.5 (TU10x) and 8.9 (AD10x) keep 1 per 2: the answer names GV100, GA100 and
GH100 alone as sustaining 1, which puts them with GA104, an inference, not a figure read for them. This project's own
H100 measurement agrees on 9.0: linear_fwd_kernel at 4096³ (16 x 16 tiles; its sm_90 SASS has 32 LDS per 16 FFMA, 32.5M
LDS a SM) ran in 23.6 ms (bench/gpu_model.py's measured column), at least 0.69 memory instructions per clock per SM at
the boost clock (more at any lower one), where 1 per 2 needs 32.9 ms. The address calculation's 1 per 4 per
sub-partition (read for 8.6) is taken for every compute capability here, an assumption. All read 2026-11-28 through the
search tool's stored copies (the forum pages; the Guide in public repositories; the paper in
imsight-knowhow/npu-design-tutorial, paper-source/modern-gpu-cores/modern-gpu-cores.md), not the live pages. Not on the
pipe: constant-bank loads (LDC: the Guide's "adu - Address Divergence Unit ... It also provides support for constant
loads and block-level barrier instructions"), so BAR neither; ULDC and S2UR (the uniform datapath); MEMBAR, DEPBAR,
LDGDEPBAR, CCTL and Hopper's bulk copies (UBLKCP, UTMALDG, UTMASTG: the Guide's TMA pipe) and its SYNCS/ARRIVES
(unread: the "CTA-level arrive/wait barrier" may be these) are left out. Memory instructions making more than one
wavefront are held longer by the L1 data pipe, a term of kp.gpumodel.gputime; these terms charge the instructions,
which that term does not count.
Left to the issue term alone (no row of the table, or a rate of 128 or more that never outpaces issue): MOV, SEL, FSEL,
PRMT, P2R, R2P, PLOP3, SGXT, BMSK, BREV ("Multiple instructions" on 7.x), FRND, F2FP, IABS, the half-precision
instructions (HADD2, HMUL2, HFMA2: 128 or 256 results per clock), tensor-core instructions
(HMMA, IMMA: not modelled), control and barrier instructions. Uniform-datapath instructions (U-prefixed: UIADD3,
ULDC, UMOV, ...) run once per warp on the scheduler's uniform datapath, not on the lanes' pipes: no pipe.
"""

# results per clock per SM of the pipes whose rate does not come from kp.gpumodel.gpus (FP32, FP64: SM_LIMITS)
INTEGER, IMAD, SPECIAL, SHUFFLE, CONVERSION, BITCOUNT = 64, 64, 16, 32, 16, 16
EACH = {"integer": INTEGER, "IMAD": IMAD, "special-function": SPECIAL, "shuffle": SHUFFLE, "conversion": CONVERSION,
        "bit-count": BITCOUNT}  # fmt: skip
RATES = {cc: EACH for cc in ((7, 5), (8, 0), (8, 6), (8, 9), (9, 0))}  # the same on each compute capability here
# FP32 and integer lanes shared on 8.6 / 8.9: the most results per clock per SM they give together (GA102 / AD102
# whitepapers); FP32 and IMAD share the FMA datapath everywhere (at the FP32 row's rate: NVIDIA's forum answers above)
SHARED_FP32_INTEGER = {(8, 6): 128, (8, 9): 128}
# The load/store pipe, in warp instructions per clock (above): the MIO's issue to it, per SM (NVIDIA's forum answers:
# read for Volta and Ampere); the memory instructions the SM sustains: 1 per 2 on GA102 (Huerta et al. MICRO 2025,
# 5.4, Table 1) and GA104, 1 on GA100 and GH100 (the forum answer on ampere_sgemm_128x32_nn, above); 7.5 and 8.9 taken
# with GA10x; each sub-partition's address calculation (Huerta et al.: read for 8.6, assumed for the others)
LSU_ISSUE_PER_CLOCK = {cc: 1 for cc in RATES}
LSU_MEMORY_PER_CLOCK = {(7, 5): 0.5, (8, 0): 1, (8, 6): 0.5, (8, 9): 0.5, (9, 0): 1}
LSU_ADDRESS_PER_CLOCK_PER_SUB_PARTITION = {cc: 0.25 for cc in RATES}

# The memory opcodes (the first dotted part), one list for the model (kp.gpumodel.depend's result latencies,
# kp.gpumodel.issue_rules' memory queue, the LSU row below; kp.gpumodel.sass's SPACES names the same, tests/test_pipes
# checks): a register result a global (LD: generic, taken as global) or local (LDL) access brings, atomics returning
# the old value; a shared one's; stores and reductions (no register result); LDGSTS (cp.async: global to shared, no
# register result). Texture and surface instructions (TEX, TLD, SULD, SUST) are in none: no texture path is modelled
# (they issue as fixed-latency instructions, no pipe, their results ALU_LATENCY_CLOCKS on).
GLOBAL_LOADS = ("LDG", "LD", "LDL", "ATOM", "ATOMG")
SHARED_LOADS = ("LDS", "LDSM", "ATOMS")
GLOBAL_STORES = ("STG", "ST", "STL", "RED", "REDG")
SHARED_STORES = ("STS", "STSM")
COPIES = ("LDGSTS",)
PIPES = {
    "FP32": ("FADD", "FMUL", "FFMA", "FADD32I", "FMUL32I", "FFMA32I"),
    "integer": ("IADD3", "IADD", "IADD32I", "VIADD", "LEA", "ISCADD", "SHF", "SHL", "SHR", "ISETP", "IMNMX", "VIMNMX",
                "LOP3", "LOP", "LOP32I", "FSETP", "FSET", "FMNMX"),
    "IMAD": ("IMAD", "IMAD32I", "IMUL", "IMUL32I", "IDP"),
    "special-function": ("MUFU",),
    "shuffle": ("SHFL",),
    "conversion": ("F2I", "I2F", "F2F", "I2I"),
    "bit-count": ("POPC", "FLO"),
    "FP64": ("DADD", "DMUL", "DFMA"),
    "LSU": GLOBAL_LOADS + GLOBAL_STORES + SHARED_LOADS + SHARED_STORES + COPIES,
    "LSU other": ("S2R", "VOTE"),  # on the load/store pipe without a memory access: its issue term only
}  # fmt: skip
PIPE_OF = {opcode: pipe for pipe, opcodes in PIPES.items() for opcode in opcodes}


LSU_PIPES = ("LSU", "LSU other")  # counted into the load/store pipe's terms, not rated as pipes of their own
WIDE_TYPES = {"F64", "S64", "U64"}  # a conversion from or to one of these: the table's 64-bit conversion row


def pipe_of(opcode):
    """The pipe a SASS opcode ("FFMA", "IMAD.WIDE.U32", "@P0 MUFU.EX2" without its predicate, "LDG.E.128") runs on,
    or None: no row of the table (left to the issue term), or a uniform-datapath instruction (UIADD3: once per warp)."""
    base, *modifiers = opcode.split(".")
    pipe = PIPE_OF.get(base)
    return "64-bit conversion" if pipe == "conversion" and WIDE_TYPES.intersection(modifiers) else pipe


def rates(g):
    """{pipe: results per clock per SM} on GPU `g` (a kp.gpumodel.gpus.GPU): FP32 and FP64 from its SM_LIMITS row; the
    load/store pipe's three: "LSU issue" and "LSU" the whole SM's, "LSU address" its sub-partitions' together
    (pipe_clocks scales it by those busy)."""
    cc = tuple(g.compute_capability)
    if cc not in RATES:
        raise RuntimeError(f"compute capability {cc}: the pipe table covers {sorted(RATES)}")
    fp64 = g.fp64_per_clock_per_sm
    return {"FP32": g.fp32_per_clock_per_sm, "FP64": fp64, **RATES[cc], "64-bit conversion": min(CONVERSION, fp64),
            "LSU issue": 32 * LSU_ISSUE_PER_CLOCK[cc], "LSU": 32 * LSU_MEMORY_PER_CLOCK[cc],
            "LSU address": 32 * g.sub_partitions * LSU_ADDRESS_PER_CLOCK_PER_SUB_PARTITION[cc]}  # fmt: skip


def pipe_clocks(g, pipes, warps_resident):
    """{term: clocks} one SM of `g` needs for `pipes` (((pipe, warp instructions), ...), those of the blocks it runs),
    with `warps_resident` warps resident (min(4, W) of its sub-partitions work): each pipe's warp instructions x 32
    lanes / its results per clock; "FMA" (FP32 + IMAD, at the FP32 rate) where both ran; on 8.6 and 8.9 "FP32 +
    integer" too (their shared lanes); "LSU issue": every instruction the load/store pipe takes (memory, "LSU other"
    and shuffles), "LSU": its memory instructions, both at the SM's rate however few sub-partitions hold warps, and "LSU
    address": its memory instructions at the busy sub-partitions' rate. {} without pipes."""
    counts = {}
    for pipe, n in pipes:
        counts[pipe] = counts.get(pipe, 0.0) + n
    if not counts:
        return {}
    per_clock, busy = rates(g), min(g.sub_partitions, warps_resident) / g.sub_partitions
    if busy <= 0:
        raise RuntimeError(f"warps_resident={warps_resident}: at least one warp holds the pipes")
    out = {pipe: 32 * n / (per_clock[pipe] * busy) for pipe, n in counts.items() if n and pipe not in LSU_PIPES}
    memory = counts.get("LSU", 0.0)
    if taken := memory + counts.get("LSU other", 0.0) + counts.get("shuffle", 0.0):
        out["LSU issue"] = 32 * taken / per_clock["LSU issue"]
    if memory:
        out["LSU"] = 32 * memory / per_clock["LSU"]
        out["LSU address"] = 32 * memory / (per_clock["LSU address"] * busy)
    fp32, imad, integer = (counts.get(p, 0.0) for p in ("FP32", "IMAD", "integer"))
    if fp32 and imad:
        out["FMA"] = 32 * (fp32 + imad) / (per_clock["FP32"] * busy)
    shared = SHARED_FP32_INTEGER.get(tuple(g.compute_capability))
    if shared and fp32 and (integer or imad):
        out["FP32 + integer"] = 32 * (fp32 + integer + imad) / (shared * busy)
    return out


def busiest_pipe(g, pipes, warps_resident):
    """(name, seconds) of the pipe term of one SM of `g` (pipe_clocks' largest, at the boost clock): "FP32 pipe",
    "integer pipe", "FMA pipe", "FP32 + integer pipe", "LSU pipe", "LSU address pipe", "LSU issue pipe", ...; ("pipe",
    0.0) without pipes."""
    clocks = pipe_clocks(g, pipes, warps_resident)
    if not clocks:
        return "pipe", 0.0
    name = max(clocks, key=clocks.get)
    return f"{name} pipe", clocks[name] / g.clock_hz
