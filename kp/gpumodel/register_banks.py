"""Register-bank conflicts, counted from SASS: the issue cycles a fixed-latency instruction waits because two or three
of its source registers must be read from the same register-file bank in the same few clocks, and its `.reuse` flags
(nvdisasm prints them: `FFMA R4, R2.reuse, R6, R8`) did not serve them from the register file cache. Owns the rule and
its sources; kp.gpumodel.profile multiplies each instruction's stall by its runs and kp.gpumodel.gputime adds the sum
to the issue term. Never reads a trace and never models a time.

The rule, as the sources state it:
- Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking" (arXiv:1804.06826, 2018) and
  "Dissecting the NVidia Turing T4 GPU via Microbenchmarking" (2019): on Volta and Turing two register banks of 64-bit
  width. Not read here: known through Huerta et al., who cite both for the two banks, and a published summary.
- Huerta, Abaie Shoushtary, Cruz, Gonzalez, "Dissecting and Modeling the Architecture of Modern GPU Cores" (MICRO
  2025, doi:10.1145/3725843.3756041; measured on Turing, Ampere including the RTX A6000, and Blackwell), section 5.3:
  "the registers in each sub-core are organized in two banks"; "Each bank of the register file has one read port of
  1024 bits" (one warp register per bank per clock); "FMUL instructions with both source operands in the same bank
  create a 1-cycle bubble ... FFMA instructions with all three source operands in the same bank generate a 2-cycle
  bubble"; their best approximation: "all the fixed-latency instructions spend three cycles for reading source
  operands ... If the instruction in the Allocate stage realizes that it cannot read all its operands in the next
  three cycles, it is held in this stage ... and generates bubbles until it can reserve all ports needed to read the
  source operands in the next three cycles". Their listing 1 puts the bank at the register number's parity (R19 and
  R21 one bank, R18 and R20 the other). The register file cache (5.3.1): one entry per bank, three operand slots each;
  an operand whose reuse bit is set is kept; a later instruction of the same warp hits where "the register ID matches
  the one stored in the RFC, and the operand position in the instruction is the same"; "A cached value is unavailable
  after a read request arrives to the same bank and operand position, regardless of whether it hits". Their table 6
  (RTX A6000): MaxFlops (FFMAs without reuse) 1.45x faster with two read ports per bank, CUTLASS's SGEMM 1.02-1.10x
  with unbounded ports: what the rule costs such kernels.

What is assumed here (no source measured it): the rule on cc 8.0, 8.9 and 9.0 (the A100, Ada and Hopper lie between
the generations measured; the GPU table has cc 7.5 to 9.0, all taken to have it); a warp issuing a basic block back to
back (its bubbles are then what the scheduler loses; other warps on the sub-core read the same ports, so their bubbles
add rather than hide); each basic block (kp.gpumodel.cfg.basic_blocks, the model's one split) starting with an empty
cache and free ports; only FP32 and integer ALU
instructions (MUFU, memory, control and 64-bit instructions are fixed-latency or not in ways the sources do not give,
and neither reserve ports nor touch the cache here); an instruction's register sources at operand slots 0, 1, 2 in the
order nvdisasm prints them (predicates, constants and immediates hold a slot without a read: `c[0x0][0x160]`); RZ read
from no bank; a 64-bit pair (`R2.64`, IMAD.WIDE's addend) one read in each bank; a register at two source slots of
one instruction (FFMA R4, R2, R2, R4) two reads of its bank. That last is unknown: Huerta et al.'s measurements (5.3)
put distinct registers at the slots, and say nothing of one register at two; GPGPU-Sim's operand collector reads it
once (accel-sim/gpgpu-sim_distribution, src/gpgpu-sim/shader.cc, collector_unit_t::allocate: "remove duplicate regs
within same instr"), but that models the operand collectors Huerta et al. found modern GPUs not to have, so it is no
source for them. The count stays as the rule reads the slots until a measurement says otherwise.
"""

import functools
import re

from kp.gpumodel.cfg import basic_blocks

WINDOW = 3  # clocks in which a fixed-latency instruction reads its sources (Huerta et al. 2025, 5.3)
BANKS = 2  # per sub-core, a register's bank its number's parity (Jia et al. 2018, 2019; Huerta et al. 2025)
FIXED_LATENCY = ("fp32", "integer")  # the instruction classes (kp.gpumodel.sass.CLASSES) the rule is applied to
NOT_FIXED = {"MUFU"}  # the special-function unit's results come back at a variable latency
# A register operand with its flags: R2.reuse, -R2, |R8|; nvdisasm prints the absolute value's bars before the flags,
# |R2|.reuse and -|R2|.reuse (FSETP.GT.AND P2, PT, |R23|.reuse, R28.reuse, PT)
OPERAND = re.compile(r"^[-!~]*\|?R(\d+|Z)((?:\.\w+)*)\|?((?:\.\w+)*)$")
PREDICATE = re.compile(r"!?U?P(T|\d+)")
# Opcodes whose predicate destination comes first and is followed by a register destination (RZ where unused):
# LOP3.LUT P0, RZ, R2, 0x3, RZ, 0xc0, !PT. Not FCHK P0, R0, R3 (a predicate alone, then two sources) nor the SETPs.
PREDICATE_THEN_REGISTER = {"LOP3"}


def _split(text):
    """An instruction's opcode and operand texts: `@!P0 FFMA R4, -R2.reuse, R6, |R8|` -> ("FFMA", [...])."""
    body = re.sub(r"^@!?U?P\w+\s+", "", text.strip()).rstrip(";").strip()
    opcode, _, rest = body.partition(" ")
    return opcode, [o.strip() for o in rest.split(",")] if rest.strip() else []


def sources(text):
    """[(slot, register, reuse)] of a fixed-latency instruction's register sources: the operands after its destination
    (and after any predicate it writes: IADD3 R2, P0, ...; ISETP P0, PT, ...; LOP3.LUT P0, RZ, ... writes a predicate
    and a register), at their slot among the sources; a 64-bit pair as its two registers."""
    opcode, operands = _split(text)
    leading = bool(operands) and PREDICATE.fullmatch(operands[0]) and opcode.split(".")[0] in PREDICATE_THEN_REGISTER
    rest = operands[1:]
    while rest and PREDICATE.fullmatch(rest[0]):  # a predicate the instruction writes (IADD3 R2, P0, ...)
        rest = rest[1:]
    if leading:
        rest = rest[1:]  # the register destination after the predicates
    out = []
    for slot, operand in enumerate(rest[:3]):
        m = OPERAND.match(operand)
        if not m or m[1] == "Z":
            continue
        suffixes = (m[2] + m[3]).split(".")
        pair = "64" in suffixes or (opcode.startswith("IMAD.WIDE") and slot == 2)
        out += [(slot, int(m[1]) + k, "reuse" in suffixes) for k in range(2 if pair else 1)]
    return out


def _applies(instruction):
    return instruction.cls in FIXED_LATENCY and instruction.opcode.split(".")[0] not in NOT_FIXED


def stalls(instructions):
    """{offset: clocks} of one function's SASS (address order, kp.gpumodel.sass.Instructions): the bubbles each
    instruction's bank conflicts cost before it issues, by the sources' rule (the module's docstring), each basic block
    (kp.gpumodel.cfg.basic_blocks) from an empty cache and free ports; instructions without any left out. Computed once
    per listing (_stalls: kp.gpumodel.profile's launch total and kp.gpumodel.depend's blocks ask for the same)."""
    return dict(_stalls(tuple(instructions)))


@functools.lru_cache(maxsize=64)
def _stalls(instructions):
    out = {}
    for block in basic_blocks(instructions):
        cached, free, clock = {}, [0] * BANKS, 0  # a basic block: an empty cache, free ports
        for i in block:
            clock += 1
            if not _applies(i):
                continue
            start = read_start(sources(i.text), None, clock, cached, free)
            if start > clock:
                out[i.offset] = start - clock
            clock = start
    return out


def read_start(reads, warp, clock, cache, free):
    """The rule (the module's docstring) for one instruction that reaches the Allocate stage at `clock`: the clock from
    which it reads its sources (`reads`, as sources gives them), `clock` or later (the clocks between, bubbles: its
    sub-core issues nothing behind it). An operand whose register the cache holds for this `warp` (kp.gpumodel.subcores
    keeps a sub-core's warps in one cache; None for one warp) at its bank and slot is not read, and every read there
    replaces what the cache held (kept where its reuse bit is set). Each bank gives one read a clock, an instruction's
    reads of a bank within WINDOW clocks of its start. `free`: each bank's first free clock, updated; reads are
    reserved in order from it (an instruction starts no earlier than the one before, so a port left free before that
    is never used again: the first free clock is all there is to know). `cache`: (bank, slot) -> (warp, register),
    updated."""
    need = [0] * BANKS
    for slot, register, reuse in reads:
        bank = register % BANKS
        need[bank] += cache.get((bank, slot)) != (warp, register)
        cache[(bank, slot)] = (warp, register) if reuse else None
    start = max([clock] + [free[b] + n - WINDOW for b, n in enumerate(need) if n])
    for b, n in enumerate(need):
        if n:
            free[b] = max(start, free[b]) + n
    return start


def conflict_cycles(instructions, runs):
    """The issue clocks a kernel's warps lose to bank conflicts: each instruction's stalls (of `instructions`, the
    kernel's SASS in address order) x its warp-level runs (`runs`: [(Instruction, runs)], kp.gpumodel.compiled's
    instruction runs)."""
    bubbles = stalls(instructions)
    return sum(r * bubbles.get(i.offset, 0) for i, r in runs)
