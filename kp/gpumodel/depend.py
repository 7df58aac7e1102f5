"""Dependent-instruction latency (issue 31, items 2 and 4): how long one warp needs for one run of each basic block of
a kernel's SASS when every instruction waits for the registers it reads. Owns reading an instruction's operands (the
registers it writes and reads: R, P, UR, UP; a pair for `.64`, IMAD.WIDE and FP64, four for LDS.128), the latency of
each class of result, a block's critical path, and the blocks of one launch as kp.gpumodel.gputime's issue term takes
them. Never solves block runs (kp.gpumodel.cfg, through Profile.block_runs) and never models a time itself.

The latencies (kp.gpumodel.gpu_constants, each with its source), in clocks of the SM:
- fixed-latency ALU results (FFMA, FADD, IMAD, IADD3, ISETP, LOP3, MOV, ...): ALU_LATENCY_CLOCKS; the variable-latency
  ones (MUFU, conversions, FP64, S2R) are taken at the same, an assumption that understates them;
- shared loads (LDS, LDSM, ATOMS): SHARED_LOAD_CLOCKS of the GPU's compute capability; constant loads (LDC, ULDC, an
  L1 constant-cache hit): CONSTANT_LOAD_CLOCKS;
- global and local loads (LDG, LD, LDL, ATOM, ...): ready at once here. Their wait is the memory latency term's
  (kp.gpumodel.gputime's round trips), which must not be counted twice;
- stores, branches and barriers write no register: they end a chain at their own issue.

A block's critical path is what one warp alone needs per run of it, issuing in order (the CUDA C++ Programming Guide,
"Hardware Implementation": instructions "are issued in order", with no branch prediction or speculative execution)
and waiting for each register it reads: the clocks between the ends of two runs one after the other (so a loop's
carried chains count, and at a block's first run every register is taken as ready: what the block before left in
flight is not carried over). The rule it feeds (kp.gpumodel.gputime): W warps sharing a scheduler take max(W x a
block's instructions, its critical path) clocks for a run of it each (Volkov 2016, "Understanding Latency Hiding on
GPUs", PhD thesis, UC Berkeley: latency is hidden where the warps' independent instructions cover it; one warp's
in-order chain is a bound no number of warps shortens, the scheduler's one issue per clock the other). The issue
side of that max holds the block's register-bank bubbles too (kp.gpumodel.register_banks, counted for instructions
issued one a clock): max(W x (instructions + bubbles), critical path). Where the path is the longer, the warp issues
its instructions clocks apart and the banks' ports are free again by then, so the bubbles hide under the path rather
than add to it (the rule's "one a clock" is what makes them bubbles at all).

Where nvdisasm gives the compiler's control bits (kp.gpumodel.sass.Control: every listing of sm_70 on), the path is the
one the compiler scheduled, not the register rule above: since Volta the compiler resolves fixed-latency dependences
itself, in each instruction's stall count, and a variable-latency one through a dependency barrier the producer sets and
the consumer's wait mask names (Jia, Maggioni, Staiger, Scarpazza, "Dissecting the NVIDIA Volta GPU Architecture via
Microbenchmarking", 2018, 2.1: "While most instructions have fixed latency and can be statically scheduled by the
assembler, instructions involving memory and shared resources typically have variable latency [...] The hardware will
stall the later instruction until the results of the earlier one are available"; Huerta, Abaie Shoushtary, Cruz,
González, "Dissecting and Modeling the Architecture of Modern GPU Cores", MICRO 2025, section 4, read in the stored copy
kp.gpumodel.pipes cites: instructions "that depend on older variable-latency instructions have the corresponding
Dependence counters set to one in the Dependence counters mask, and are stalled until these counters reach zero"). One
warp then issues an instruction `stall` clocks after the one before (one at least: one issue per clock; two at least
after a yield, below), or when the barriers it waits for are released, whichever is later (scheduled_path). The yield
bit (kp.gpumodel.sass.Control.yield_, True where set: the bit clear, as kp.gpumodel.sass reads it) costs one warp alone
a clock: Huerta et al., section 4: Yield "is used to indicate the hardware that in the next cycle it must not issue an
instruction of the same warp. If the rest of the warps of the sub-core are not ready in the next cycle, no instruction
is issued. [...] If the Stall counter is set to a value greater than one, the warp will stall for at least one cycle, so
in this case, no matter whether Yield is set or not"; and 5.1.2: "We also tested a scenario where Yield is set and no
more warps are available [...] and we observed that the scheduler generates a bubble of one cycle". So max(1 + yield,
stall) clocks to the warp's next issue. A barrier is released the producer's latency after its issue (latency below: the
shared load's, the constant cache's, the ALU's for the others that vary, MUFU, S2R, conversions; a global load's at
once, the memory term's); a read barrier a clock after (when the producer's sources are read is not given: an assumption
that understates it). The stall counts hold what the register rule misses: a pipe that takes a warp instruction every
other clock (the compiler spaces them), a dependence across a block's edge (the last instruction's stall covers the next
block's first).
Not modelled: DEPBAR's partial waits (LDGSTS, whose latency is the memory term's), and the 45 clocks Huerta et al.
measured after a stall of 0 with the yield set (ERRBAR and the self-branch after the last EXIT, which sass leaves out).
"""

import re

from kp.gpumodel.cfg import blocks
from kp.gpumodel.gpu_constants import ALU_LATENCY_CLOCKS, CONSTANT_LOAD_CLOCKS, SHARED_LOAD_CLOCKS
from kp.gpumodel.gpus import gpu as named_gpu
from kp.gpumodel.pipes import COPIES, GLOBAL_LOADS, GLOBAL_STORES, SHARED_LOADS, SHARED_STORES
from kp.gpumodel.register_banks import stalls

# A register operand: R12, R12.64 (a pair), UR4, P0, UP1; RZ, URZ, PT and UPT (zero, true) name no register.
# Not part of a longer name: SR_TID.X, PR, B0, c[0x0][0x160] and labels hold none.
REGISTER = re.compile(r"(?<![A-Za-z0-9_.])(UR|R|UP|P)(\d+)(\.64)?")
GUARD = re.compile(r"^@!?(U?P\d+|U?PT)\s+")
SETP = re.compile(r"^U?(I|F|D|H|P)SETP|^U?PLOP3|^HSETP2")  # two predicate destinations, then sources
# The memory opcodes as kp.gpumodel.pipes lists them (the one source), with the TMA's and the cache controls beside
NO_RESULT = {*GLOBAL_STORES, *SHARED_STORES, *COPIES, "CCTL", "LDGDEPBAR", "UBLKCP", "UTMASTG"}
GLOBAL_RESULT = {*GLOBAL_LOADS, "UTMALDG"}  # their latency is the memory term's
SHARED_RESULT = set(SHARED_LOADS)
CONSTANT_RESULT = {"LDC", "ULDC"}
CARRIES = {"IADD3", "LEA", "IMAD", "IADD"}  # a carry out (a predicate) may follow the destination
WIDE = {"DADD", "DMUL", "DFMA", "DMNMX", "DSETP"}  # FP64: each register operand a pair


def _split(operands):
    """Operands at their top-level commas (a bracket holds none, but a guard-free text is all this sees)."""
    return [o.strip() for o in operands.split(",")] if operands.strip() else []


def _names(operand, width=1):
    """The registers one operand names, `width` consecutive ones from each (R4 of width 4: R4..R7), R2.64 a pair."""
    out = set()
    for kind, number, wide in REGISTER.findall(operand):
        out |= {f"{kind}{int(number) + k}" for k in range(max(width, 2 if wide else 1))}
    return out


def _destination_width(base, parts, instruction):
    """How many consecutive registers the first destination holds: a load's bytes / 4, LDSM's matrices, a pair for
    IMAD.WIDE, FP64 and a conversion to a 64-bit type, LDC.64 and CS2R (not CS2R.32)."""
    if base == "LDSM":  # LDSM.16.M88.4: four 8x8 matrices, a register each
        return next((int(p.lstrip("x")) for p in reversed(parts) if p.lstrip("x") in ("1", "2", "4")), 1)
    if instruction.space and instruction.width:
        return max(1, instruction.width // 4)
    if (
        (base in WIDE and not SETP.match(base))  # DSETP writes predicates
        or (base == "IMAD" and "WIDE" in parts)
        or (base in ("F2F", "I2F", "I2I") and parts[1:2] and parts[1] in ("F64", "S64", "U64"))
        or (base == "F2I" and ("S64" in parts or "U64" in parts))  # F2I.F64.TRUNC: F64 is the source's type
        or (base in CONSTANT_RESULT and "64" in parts)
        or (base == "CS2R" and "32" not in parts)
    ):
        return 2
    return 1


def operands(instruction):
    """(the registers an instruction writes, the registers it reads), as sets of names ("R4", "P0", "UR6")."""
    text = instruction.text.strip().rstrip(";").strip()
    reads = set()
    if guard := GUARD.match(text):
        reads |= _names(guard[1])
        text = text[guard.end() :]
    opcode, _, rest = text.partition(" ")
    parts = opcode.split(".")
    base = parts[0]
    ops = _split(rest)
    if instruction.cls in ("control", "barrier") or base in NO_RESULT or not ops:
        width = max(1, (instruction.width or 4) // 4)  # a store's data: STS.128 [R0], R4 reads R4..R7
        for op in ops:
            reads |= _names(op) if "[" in op else _names(op, width)
        return set(), reads
    if base in ("ATOM", "ATOMG", "ATOMS"):  # `ATOMG.E.ADD PT, R5, [R2.64], R7`: what comes before the address
        at = next((k for k, op in enumerate(ops) if "[" in op), len(ops))
        written = set().union(*(_names(op) for op in ops[:at])) if at else set()
        return written, reads | set().union(set(), *(_names(op) for op in ops[at:]))
    count = 2 if SETP.match(base) or base in ("VOTE", "UVOTE") else 1  # VOTE.ANY R0, PT, P0: P0 is read
    if base == "SHFL":  # SHFL.BFLY PT, R6, R15, 0x10, 0x1f: a predicate out (the lane was in range), then the value
        count = 2
    if base == "LOP3" and re.fullmatch(r"U?P(\d+|T)", ops[0]):  # LOP3.LUT P0, R6, R2, 0x3, RZ, 0xc0, !PT: both out
        count = 2
    if base.lstrip("U") in CARRIES:  # IADD3 R6, P0, P1, R2, ...; LEA R2, P0, ...: the carries out follow
        while count < len(ops) and re.fullmatch(r"U?P(\d+|T)", ops[count]):
            count += 1
    written = _names(ops[0], _destination_width(base, parts, instruction))
    for op in ops[1:count]:
        written |= _names(op)
    for k, op in enumerate(ops[count:], start=count):
        pair = base in WIDE or (base == "IMAD" and "WIDE" in parts and k == 3)  # IMAD.WIDE's addend is a pair
        # a conversion from FP64 reads a pair: F2I.F64.TRUNC (F2I names its source's type), F2F.F32.F64 (the second)
        pair |= (base == "F2I" and "F64" in parts) or (base == "F2F" and parts[2:3] == ["F64"])
        reads |= _names(op, 2 if pair and not re.fullmatch(r"!?U?P(\d+|T)", op) else 1)
    return written, reads


def latency(instruction, compute_capability):
    """Clocks after its issue until an instruction's result is ready for the next instruction that reads it (0 for a
    global or local load: the memory latency term waits for it)."""
    base = instruction.opcode.split(".")[0]
    if base in GLOBAL_RESULT:
        return 0
    if base in SHARED_RESULT:
        return SHARED_LOAD_CLOCKS[compute_capability]
    if base in CONSTANT_RESULT:
        return CONSTANT_LOAD_CLOCKS[compute_capability]
    # Fixed-latency ALU results: the Programming Guide's 4. MUFU, S2R, conversions (F2I, I2F, F2F) and FP64 also land
    # here, and through scheduled_path their figure is the release of the barrier they set: 4 for them is an
    # assumption, not a measurement (none was found for them: gpu_constants.ALU_LATENCY_CLOCKS), which understates them.
    return ALU_LATENCY_CLOCKS


def critical_path(instructions, compute_capability):
    """The clocks one warp needs per run of a basic block (its instructions in address order) run again and again, where
    only its own dependencies hold it up. A warp issues in order, one instruction per clock at most: each instruction
    issues a clock after the one before, or when the last register it reads is ready, whichever is later; its result
    is ready its latency later (a global load's at once: the memory term waits for it). Two runs are issued one after
    the other, the second reading what the first wrote (a loop's carried chains), and the clocks between their ends are
    the answer. In order, a load into a register that an earlier instruction still reads waits behind that reader
    (nvcc reuses registers: the next step's LDS into R12 cannot start before this step's FFMAs read R12). A chain of
    8 dependent FFMAs: 8 x 4 = 32; 8 independent ones: 8 (one issue each)."""
    ready, clock, ends = {}, -1, []
    for _ in range(2):
        for i in instructions:
            written, reads = operands(i)
            clock = max([clock + 1] + [ready.get(r, 0) for r in reads])
            done = clock + max(1, latency(i, compute_capability))
            for r in written:
                ready[r] = done
        ends.append(clock + 1)
    return ends[1] - ends[0]


def scheduled_path(instructions, compute_capability):
    """The clocks one warp needs per run of a basic block run again and again, as the compiler's control bits schedule
    it (see the module's docstring): each instruction issues its predecessor's stall count after it (at least a clock,
    two where the predecessor yields), or once every barrier in its wait mask is released, whichever is later; a
    barrier is released its producer's latency after the producer's issue. The clocks between the ends of two runs (a
    loop's carried waits count; at the first run nothing is pending). 8 FFMAs with stall 4 each: 32; with stall 1: 8;
    with stall 1 and the yield set: 16; an LDS (stall 1, barrier 0) and an FFMA waiting for barrier 0: 23 + 1 on every
    cc here."""
    released, clock, ends = {}, 0, []
    for _ in range(2):
        for i in instructions:
            bits = i.control_bits
            clock = max([clock] + [released.get(b, 0) for b in range(6) if bits.wait >> b & 1])
            if bits.write < 6:
                released[bits.write] = max(released.get(bits.write, 0), clock + latency(i, compute_capability))
            if bits.read < 6:
                released[bits.read] = max(released.get(bits.read, 0), clock + 1)
            clock += max(1 + bits.yield_, bits.stall)  # a yield: no issue of this warp the next clock
        ends.append(clock)
    return ends[1] - ends[0]


def dependent_blocks(counts, kernel, gpu="H100", share=1.0):
    """(warp-level runs, instructions, critical path in clocks, register-bank bubbles per run) of each basic block of
    `kernel`'s SASS for `gpu` whose runs the trace fixes (counts: a kp.gpumodel.profile.Profile; its block_runs), the
    runs x `share` (one launch's share of its kernel's blocks): what kp.gpumodel.gputime's issue term needs. The
    bubbles are kp.gpumodel.register_banks.stalls of the block's instructions, the part of the launch's bank_stalls
    that the term weighs against the path. Blocks the trace leaves open are left out (their instructions and bubbles
    are issued all the same: kp.gpumodel.compiled's issue_instructions); () without SASS. The path: scheduled_path,
    or critical_path where the listing has no control bits."""
    found = counts.kernel_sass(kernel, gpu)
    graph = None if isinstance(found, str) else blocks(found)
    if not graph:
        return ()
    at, capability = counts.block_runs(kernel, gpu), named_gpu(gpu).compute_capability
    bubbles = stalls(found)
    out = []
    for b in graph:
        runs = at.get(b.instructions[0].offset, (None, 0))[0]
        if runs:
            waited = sum(bubbles.get(i.offset, 0) for i in b.instructions)
            scheduled = all(i.control_bits for i in b.instructions)
            path = (scheduled_path if scheduled else critical_path)(b.instructions, capability)
            out.append((runs * share, len(b.instructions), path, waited))
    return tuple(out)
