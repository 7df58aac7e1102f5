"""What nvcc compiled, line by line, without a GPU: a kernel file's SASS (the machine code a GPU runs) for a named
GPU's architecture, each instruction put at its `.cu` line (nvcc -lineinfo, then nvdisasm), classed (FP32, integer,
memory, control, barrier, other) and, for a memory instruction, its space, kind and width (LDS.128: shared, load, 16
bytes per lane). Cached per build key under build/ext/cuda/sass (profiling twice compiles once; nothing of it runs on
the edit -> reload path). Owns finding nvdisasm (the toolkit's, or PyPI's nvidia-cuda-nvdisasm), and Instructions:
the SASS each line ran, from how often the trace says the line ran (executed). Never counts a trace (kp.gpumodel.counts)
or models a time (kp.gpumodel.gputime); the GPU model (kp.gpumodel.profile) combines the two.
"""

import contextlib
import dataclasses
import importlib.util
import json
import os
import re
import shutil
import subprocess
from collections import namedtuple
from pathlib import Path

from kp.build import project_headers, resolve_kernel
from kp.diagnostics import KernelBuildError
from kp.files import BUILD_ROOT, COMMON, KERNELS, ROOT, content_key, write_if_changed
from kp.gpumodel.gpus import gpu as named_gpu
from kp.toolchain import ToolchainError, require_nvcc

CLASSES = ("fp32", "integer", "memory", "control", "barrier", "other")
# Opcodes by class (the first dotted part of a SASS opcode; NVIDIA's "CUDA Binary Utilities", Instruction Set
# Reference, lists them per architecture: Turing to Hopper here). Uniform-datapath forms (UIADD3, ...) are integer.
FP32 = {"FADD", "FMUL", "FFMA", "FMNMX", "FSET", "FSETP", "FSEL", "FCHK", "FRND", "FSWZADD", "MUFU", "FMUL32I",
        "FADD32I", "FFMA32I"}  # fmt: skip
INTEGER = {"IADD3", "IADD", "IMAD", "IMUL", "ISCADD", "LEA", "LOP3", "LOP", "SHF", "SHL", "SHR", "ISETP", "IABS",
           "IMNMX", "POPC", "FLO", "BREV", "PRMT", "SEL", "MOV", "SGXT", "BMSK", "IDP", "IMAD32I", "IADD32I", "LOP32I",
           "MOV32I", "PLOP3", "P2R", "R2P", "VIADD", "VIMNMX", "IMNMX3", "VABSDIFF"}  # fmt: skip
MEMORY = {"LDG", "STG", "LDS", "STS", "LD", "ST", "LDL", "STL", "ATOM", "ATOMG", "ATOMS", "RED", "REDG", "LDGSTS",
          "LDSM", "STSM", "LDC", "ULDC", "LDGDEPBAR", "UBLKCP", "UTMALDG", "UTMASTG", "CCTL"}  # fmt: skip
CONTROL = {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "WARPSYNC", "BREAK", "KILL", "BPT",
           "YIELD", "BMOV", "ACQBULK"}  # fmt: skip
BARRIER = {"BAR", "MEMBAR", "DEPBAR", "ERRBAR", "ARRIVES", "SYNCS", "WARPGROUP"}
# A memory opcode's space and kind; LD/ST/ATOM are generic (a pointer of any space: global here, as kernels use them).
SPACES = {"LDG": ("global", "load"), "LD": ("global", "load"), "LDGSTS": ("global", "load"),
          "STG": ("global", "store"), "ST": ("global", "store"), "ATOM": ("global", "atomic"),
          "ATOMG": ("global", "atomic"), "RED": ("global", "atomic"), "REDG": ("global", "atomic"),
          "LDS": ("shared", "load"), "LDSM": ("shared", "load"),
          "STS": ("shared", "store"), "STSM": ("shared", "store"),
          "ATOMS": ("shared", "atomic"), "LDL": ("local", "load"), "STL": ("local", "store")}  # fmt: skip
WIDTH_SUFFIX = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "64": 8, "128": 16}  # loads and stores: LDG.E.64
WIDTH_SUFFIX |= {"F64": 8, "U64": 8, "S64": 8, "F16": 2, "BF16": 2, "F16x2": 4}  # atomics: REDG.E.ADD.F64

# site: the kernel-level `.cu` line the code was inlined at (its own line if not inlined); routine: the subroutine
# (a CALL target such as nvcc's `$__internal_5_$__cuda_sm20_div_s64`) the instruction is in, "" in the kernel's body;
# labels: the branch targets (`.L_x_3`) before it, space-separated (kp.gpumodel.cfg's leaders); control_bits: a Control.
Instruction = namedtuple(
    "Instruction", "function offset file line text opcode cls space kind width site routine labels control_bits",
    defaults=(None, "", "", None),
)  # fmt: skip
# The compiler's bits for the scheduler, sm_70 on: bits 41-61 of the second 64-bit word (Jia, Maggioni, Staiger and
# Scarpazza, "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", 2018, 2.1; CuAssembler's
# decodeCtrlCodes): stall, clocks before the warp's next issue; yield (its bit 0, as CuAssembler reads it); the barrier
# (0-5, 7: none) a variable-latency result (write) or its sources' read (read) releases; wait, a mask; reuse, per slot.
Control = namedtuple("Control", "stall yield_ write read wait reuse")
HIGH_WORD = re.compile(r"^\s*/\*\s*0x([0-9a-f]{16})\s*\*/\s*$")  # nvdisasm -hex: the second word, on a line of its own
INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LOCATION = re.compile(r'File "([^"]+)", line (\d+)')
FUNCTION = re.compile(r"^\s*\.section\s+\.text\.(\S+?),")


class SassUnavailable(RuntimeError):
    """No SASS here: nvcc or nvdisasm is missing (the GPU model then counts the source's accesses, and says so)."""


def arch_of(gpu="H100"):
    """nvcc's `sm_XX` for a GPU of kp.gpumodel.gpus by name ("H100" -> sm_90, "A100" -> sm_80), or an `sm_XX` as is."""
    if isinstance(gpu, str) and re.fullmatch(r"sm_\d+a?", gpu):
        return gpu
    return "sm_{}{}".format(*named_gpu(gpu).compute_capability)


def nvdisasm():
    """The path of nvdisasm: the CUDA toolkit's, else one on PATH, else PyPI's nvidia-cuda-nvdisasm wheel's; None."""
    with contextlib.suppress(ToolchainError):
        home = Path(require_nvcc()) / "bin" / "nvdisasm"
        if home.is_file():
            return str(home)
    if found := shutil.which("nvdisasm"):
        return found
    spec = importlib.util.find_spec("nvidia")  # the wheels' namespace package: nvidia/cu13/bin/nvdisasm
    for root in (spec.submodule_search_locations or []) if spec else []:
        for candidate in sorted(Path(root).glob("*/bin/nvdisasm"), reverse=True):
            return str(candidate)
    return None


def classify(opcode):
    """An opcode's class (one of CLASSES) and, for a global, shared or local access, (space, kind, width in bytes)."""
    parts = opcode.split(".")
    base = parts[0]
    if base in MEMORY:
        space, kind = SPACES.get(base, (None, None))
        width = next((WIDTH_SUFFIX[p] for p in parts[1:] if p in WIDTH_SUFFIX), 4)
        return "memory", space, kind, width if space else None
    cls = (
        "fp32" if base in FP32 else
        "integer" if base in INTEGER or (base.startswith("U") and base[1:] in INTEGER) else
        "control" if base in CONTROL else
        "barrier" if base in BARRIER else "other"
    )  # fmt: skip
    return cls, None, None, None


def parse_sass(text):
    """nvdisasm -gi (-hex) output -> Instructions, each at the `.cu` line its line information names: for code inlined
    from a header, the kernel file's line it was inlined at (as kp.gpumodel.counts places the stand-in's code); with
    -hex, each with its control bits. The padding after a function's end (NOPs, and the branch to itself after the
    last EXIT) is left out: no warp runs it."""
    out, function, place, pending, chain, label, site, routine = [], None, ("?", 0), True, [], None, None, ""
    labels, last = [], None
    for line in text.splitlines():
        if (m := HIGH_WORD.match(line)) and last is not None:
            c = int(m[1], 16) >> 41
            bits = Control(c & 0xF, not c >> 4 & 1, c >> 5 & 7, c >> 8 & 7, c >> 11 & 0x3F, c >> 17 & 0xF)
            out[last], last = out[last]._replace(control_bits=bits), None
        if m := FUNCTION.match(line):
            function, place, chain, routine, labels = m[1], ("?", 0), [], "", []
        elif "//##" in line and (found := LOCATION.findall(line)):
            chain = chain if pending else []  # a location after instructions starts a new chain
            chain += [(f, int(n)) for f, n in found]
            cu = [c for c in chain if c[0].endswith(".cu")] or chain
            place, site, pending = (cu[0][0].replace(f"{ROOT}/", ""), cu[0][1]), cu[-1][1], True
        elif m := re.match(r"^(\.L_x_\d+|\$\S+):", line.strip()):
            label, routine = m[1], m[1] if m[1].startswith("$") else routine
            labels += [m[1]] if m[1].startswith(".L") else []
        elif function and (m := INSTRUCTION.match(line)):
            pending, target, label = False, label, None
            body = re.sub(r"^@!?U?P\w+\s+", "", m[2]).strip()  # without its predicate (`@!P0`), if any
            opcode = body.split()[0]
            if opcode == "NOP" or (opcode == "BRA" and target and f"`({target})" in body):
                last = None
                continue
            classed = classify(opcode)
            out.append(Instruction(function, int(m[1], 16), *place, m[2].strip(), opcode, *classed, site, routine,
                                   " ".join(labels)))  # fmt: skip
            labels, last = [], len(out) - 1
    return out


def sass(name_or_path, gpu="H100"):
    """The SASS of every kernel in a `.cu` file, compiled with nvcc for `gpu`'s architecture (a name of kp.gpumodel.gpus
    or an sm_XX) with line information: a list of Instructions. Compiles the kernel file alone (no binding, no torch:
    about a second) the first time, then reads the cache. SassUnavailable if nvcc or nvdisasm is missing, or fails
    (the failure is cached too: a kernel file nvcc does not compile alone is not compiled again until it changes)."""
    # A kernel file needs no binding here (a puzzle's file has none): nvcc compiles its kernels alone.
    found = Path(name_or_path)
    cu = found.resolve() if found.suffix == ".cu" and found.is_file() else resolve_kernel(name_or_path)[0]
    arch = arch_of(gpu)
    try:
        home = require_nvcc()
    except ToolchainError as e:
        raise SassUnavailable(f"no SASS: {e}") from None
    tool = nvdisasm()
    if tool is None:
        raise SassUnavailable("no SASS: nvdisasm was not found (pip install nvidia-cuda-nvdisasm, or a CUDA toolkit)")
    includes = [COMMON, KERNELS, cu.parent]
    inputs = sorted({cu, *project_headers(cu, includes)})
    cache = BUILD_ROOT / "cuda" / "sass" / f"{cu.stem}-{content_key((arch, home, tool, 'sass5'), inputs)}.json"
    with contextlib.suppress(OSError, ValueError):
        rows = json.loads(cache.read_text())
        if isinstance(rows, dict):  # a failure, kept so that each profile does not pay nvcc's time again
            raise SassUnavailable(rows["error"])
        return [Instruction(*row[:6], *classify(row[5]), *row[10:13], row[13] and Control(*row[13])) for row in rows]
    cache.parent.mkdir(parents=True, exist_ok=True)
    cubin = cache.with_suffix(f".cubin.tmp{os.getpid()}")
    cmd = [str(Path(home) / "bin" / "nvcc"), "-cubin", "-O2", "-lineinfo", f"-arch={arch}"]
    cmd += [f"-I{d}" for d in includes] + [str(cu), "-o", str(cubin)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
        listing = done.returncode or subprocess.run([tool, "-gi", "-hex", "-c", cubin], capture_output=True, text=True)
    finally:
        cubin.unlink(missing_ok=True)
    if done.returncode or listing.returncode:
        error = KernelBuildError.from_log(done.stdout + done.stderr, [cu]) if done.returncode else listing.stderr
        why = str(error).strip().splitlines()[0] if str(error).strip() else "no message"
        error = f"no SASS: {'nvcc' if done.returncode else 'nvdisasm'} failed on {cu.name} for {arch}: {why}"
        write_if_changed(cache, json.dumps({"error": error}))
        raise SassUnavailable(error)
    instructions = parse_sass(listing.stdout)
    write_if_changed(cache, json.dumps([list(i) for i in instructions]))
    return instructions


@dataclasses.dataclass(frozen=True)
class Instructions:
    """The SASS instructions one `.cu` line ran, warp-level, summed over the profiled launches: the line's
    instructions of each class once through (`static`), times the warp-level runs of the line's SASS."""

    kernel: str
    file: str
    line: int
    executions: float  # warp-level runs of the line's SASS (see executed for how they are known)
    static: tuple  # ((class, instructions at the line once through), ...)
    executed: tuple  # ((class, warp instructions executed), ...)

    def __getattr__(self, name):
        if name in CLASSES:
            return dict(self.executed).get(name, 0.0)
        raise AttributeError(name)

    @property
    def total(self):
        return sum(n for _, n in self.executed)


def source_lines(file):
    """A `.cu` file's lines (relative to the project or absolute); [] where it cannot be read."""
    try:
        return (ROOT / file if not str(file).startswith("/") else Path(file)).read_text().splitlines()
    except OSError:
        return []


LOOP = re.compile(r"^\s*(?:\}\s*)?(?:for|while)\s*\(|^\s*do\b")


def _enclosing_loop(source, line):
    """The line of the loop whose body `line` is in (by indentation, as the project's clang-format lays code out),
    or None (the kernel's top level)."""
    level = len(source[line - 1]) - len(source[line - 1].lstrip())
    for at in range(line - 1, 0, -1):
        text = source[at - 1]
        indent = len(text) - len(text.lstrip())
        if not text.strip() or text.lstrip().startswith(("#", "//")) or indent >= level:
            continue
        if LOOP.match(text):
            return at
        if indent == 0:
            return None
        level = indent
    return None


def line_runs(passes, branches, warps, by_line, source_of):
    """runs((kernel, file, line)): the warp-level runs of a line, as executed() counts them (any line: a call site
    with no SASS of its own too). A line's runs: `passes` where it has memory instructions
    (kp.gpumodel.compiled.as_compiled: its requests over its instructions, exact); a line with a branch condition whose
    SASS branches, or that is no loop (an `if`), once per evaluation (Branch.executions); a loop nvcc unrolled (no
    branch left), once per entry (the enclosing loop's runs of its body, or its own exits); any other line as
    often as the body of the loop it is in runs, or once per warp outside loops (an upper bound past an early
    return); a loop whose condition the trace never saw evaluated, none (the stand-in records every condition it
    evaluates: the loop was never reached, nor its body). A loop nvcc unrolled only in part counts its body once per
    iteration: that many times too many.

    passes: {(kernel, file, line): runs}; branches: kp.gpumodel.counts.Branch records; warps: {kernel: warps launched};
    by_line: {(kernel, file, line): [Instruction]}; source_of(file): the file's lines (a list of str)."""
    branch = {(b.kernel, b.file, b.line): b for b in branches}

    def branches_in(key):
        return any(i.cls == "control" and i.opcode.startswith("BRA") for i in by_line.get(key, ()))

    def runs(key, depth=0):
        kernel, file, line = key
        source = source_of(file)
        is_loop = 0 < line <= len(source) and LOOP.match(source[line - 1])
        if key in passes:
            return passes[key]
        if key in branch and (branches_in(key) or not is_loop):
            return float(branch[key].executions)
        if is_loop and key not in branch and any(b.kernel == kernel for b in branches):
            return 0.0
        outer = _enclosing_loop(source, line) if 0 < line <= len(source) and depth < 16 else None
        if outer is not None:
            return body_runs((kernel, file, outer), depth + 1)
        if key in branch:  # an unrolled loop at the top level: its exits are its entries
            return float(branch[key].none)
        return float(warps.get(kernel, 0))

    def body_runs(loop, depth):
        if loop in branch and branches_in(loop):
            return float(branch[loop].executions - branch[loop].none)
        return runs(loop, depth)

    return runs


def executed(passes, branches, warps, by_line, source_of):
    """The Instructions each line of SASS ran, at its runs (line_runs, which takes the same arguments)."""
    runs, out = line_runs(passes, branches, warps, by_line, source_of), []
    for key in sorted(by_line, key=lambda k: k[1:]):
        static = tuple((c, n) for c in CLASSES if (n := sum(i.cls == c for i in by_line[key])))
        out.append(Instructions(*key, (n := runs(key)), static, tuple((c, k * n) for c, k in static)))
    return out


def by_kernel(instructions):
    """{kernel: {class: warp instructions executed}}: Instructions summed per kernel."""
    totals = {}
    for ins in instructions:
        kernel = totals.setdefault(ins.kernel, {})
        for cls, n in ins.executed:
            kernel[cls] = kernel.get(cls, 0.0) + n
    return totals
