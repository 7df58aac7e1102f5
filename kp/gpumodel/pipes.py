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
(not the LSU's: below).

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
The load/store pipe ("LSU"; Nsight Compute's Kernel Profiling Guide, its table of pipelines: "lsu - Load Store Unit. The
LSU pipeline issues load, store, atomic, and reduction instructions to the L1TEX unit for global, local, and shared
memory. It also issues special register reads (S2R), shuffles, and CTA-level arrive/wait barrier instructions to the
L1TEX unit"): LDG, STG, LD, ST (generic), LDL, STL, LDS, STS, LDSM, STSM, ATOM, ATOMG, ATOMS, RED, REDG, LDGSTS
(cp.async: a global load into shared memory), S2R; SHFL (the shuffle pipe's own 32 results per clock per SM above) also
passes it and is counted with it. Its rate is one warp instruction per clock per SM, the SM's, not a sub-partition's:
NVIDIA's answers on its developer forum,
"how-does-the-lsu-load-store-unit-execute-load-store-instructions-in-the-ampere-architecture" (Ampere): "Each cycle the
MIO unit can issue 1 instruction to the LSU pipe. This limits the issue rate from 4 IPC per SM to 1 IPC per SM", "The
LSU pipeline accepts 1 instruction per cycle"; and "understanding-instruction-dispatching-in-volta-architecture"
(GV100): "In the logical SM model in the whitepaper the LDST boxes should be closer to the Tex boxes. LSU and TEX are
shared execution units that are timesliced between sub-partitions", "LSU is an SM level shared execution unit". So the
LD/ST units the architecture whitepapers draw in each sub-partition (their number differs between chips) set no rate of
their own here. Read 2026-11-28 through the search tool's stored copies (the forum pages; the Guide in public
repositories), not NVIDIA's live pages. The rate is read for Volta and Ampere (8.0 and 8.6: the answer names no chip);
taken for 7.5, 8.9 and 9.0 too, an assumption. Not on it: constant-bank loads (LDC: the Guide's "adu - Address
Divergence Unit ... It also provides support for constant loads and block-level barrier instructions"), so BAR neither;
ULDC and S2UR (the uniform datapath); MEMBAR, DEPBAR, LDGDEPBAR, CCTL and Hopper's bulk copies (UBLKCP, UTMALDG,
UTMASTG: the Guide's TMA pipe) and its SYNCS/ARRIVES (unread: the "CTA-level arrive/wait barrier" may be these) are left
out. Memory instructions making more than one wavefront are held longer by the L1 data pipe, a term of
kp.gpumodel.gputime; this pipe charges the instructions (one accepted per clock), which that term does not count.
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
# warp instructions per clock per SM of the load/store pipe, shared by the SM's sub-partitions (NVIDIA's forum answers
# above: read for Volta and Ampere, assumed for 7.5, 8.9 and 9.0)
LSU_PER_CLOCK = {cc: 1 for cc in RATES}

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
    "LSU": ("LDG", "STG", "LD", "ST", "LDL", "STL", "LDS", "STS", "LDSM", "STSM", "ATOM", "ATOMG", "ATOMS", "RED",
            "REDG", "LDGSTS", "S2R"),
}  # fmt: skip
PIPE_OF = {opcode: pipe for pipe, opcodes in PIPES.items() for opcode in opcodes}


WIDE_TYPES = {"F64", "S64", "U64"}  # a conversion from or to one of these: the table's 64-bit conversion row


def pipe_of(opcode):
    """The pipe a SASS opcode ("FFMA", "IMAD.WIDE.U32", "@P0 MUFU.EX2" without its predicate, "LDG.E.128") runs on,
    or None: no row of the table (left to the issue term), or a uniform-datapath instruction (UIADD3: once per warp)."""
    base, *modifiers = opcode.split(".")
    pipe = PIPE_OF.get(base)
    return "64-bit conversion" if pipe == "conversion" and WIDE_TYPES.intersection(modifiers) else pipe


def rates(g):
    """{pipe: results per clock per SM} on GPU `g` (a kp.gpumodel.gpus.GPU): FP32 and FP64 from its SM_LIMITS row; the
    LSU's 32 results (one warp instruction) per clock are the whole SM's, not 4 sub-partitions' shares (pipe_clocks)."""
    cc = tuple(g.compute_capability)
    if cc not in RATES:
        raise RuntimeError(f"compute capability {cc}: the pipe table covers {sorted(RATES)}")
    fp64 = g.fp64_per_clock_per_sm
    return {"FP32": g.fp32_per_clock_per_sm, "FP64": fp64, **RATES[cc], "64-bit conversion": min(CONVERSION, fp64),
            "LSU": 32 * LSU_PER_CLOCK[cc]}  # fmt: skip


def pipe_clocks(g, pipes, warps_resident):
    """{term: clocks} one SM of `g` needs for `pipes` (((pipe, warp instructions), ...), those of the blocks it runs),
    with `warps_resident` warps resident (min(4, W) of its sub-partitions work): each pipe's warp instructions x 32
    lanes / its results per clock; "FMA" (FP32 + IMAD, at the FP32 rate) where both ran; on 8.6 and 8.9 "FP32 +
    integer" too (their shared lanes); "LSU": its instructions and the shuffles together at its rate, however few
    sub-partitions hold warps (one shared unit). {} without pipes."""
    counts = {}
    for pipe, n in pipes:
        counts[pipe] = counts.get(pipe, 0.0) + n
    if not counts:
        return {}
    per_clock, busy = rates(g), min(g.sub_partitions, warps_resident) / g.sub_partitions
    if busy <= 0:
        raise RuntimeError(f"warps_resident={warps_resident}: at least one warp holds the pipes")
    out = {pipe: 32 * n / (per_clock[pipe] * busy) for pipe, n in counts.items() if n and pipe != "LSU"}
    if counts.get("LSU"):
        out["LSU"] = 32 * (counts["LSU"] + counts.get("shuffle", 0.0)) / per_clock["LSU"]
    fp32, imad, integer = (counts.get(p, 0.0) for p in ("FP32", "IMAD", "integer"))
    if fp32 and imad:
        out["FMA"] = 32 * (fp32 + imad) / (per_clock["FP32"] * busy)
    shared = SHARED_FP32_INTEGER.get(tuple(g.compute_capability))
    if shared and fp32 and (integer or imad):
        out["FP32 + integer"] = 32 * (fp32 + integer + imad) / (shared * busy)
    return out


def busiest_pipe(g, pipes, warps_resident):
    """(name, seconds) of the pipe term of one SM of `g` (pipe_clocks' largest, at the boost clock): "FP32 pipe",
    "integer pipe", "FMA pipe", "FP32 + integer pipe", "LSU pipe", ...; ("pipe", 0.0) without pipes."""
    clocks = pipe_clocks(g, pipes, warps_resident)
    if not clocks:
        return "pipe", 0.0
    name = max(clocks, key=clocks.get)
    return f"{name} pipe", clocks[name] / g.clock_hz
