"""A profile's counts as nvcc compiled the kernels (issue 31): the SASS of the instantiation each launch ran
(kp.gpumodel.sass), the lines counted as that SASS serves their accesses (as_compiled), the SASS
instructions each line ran (its basic blocks' runs, kp.gpumodel.runs, from the trace; kp.gpumodel.sass.executed where
they stay open) and what nvcc made of one line. CompiledCounts is
kp.gpumodel.profile.Profile's half that reads them: it needs the Profile's `launches`, `source_lines`, `branches` and
`ctype`, and its caches `_compiled` (per arch) and `_sass` (per kernel and arch), empty dicts at first. Never runs a
kernel (kp.gpumodel.sass compiles one for its SASS, cached per build key).
"""

import dataclasses
import re
from collections import defaultdict
from pathlib import Path

from kp.diagnostics import KernelBuildError
from kp.files import ROOT
from kp.gpumodel.counts import WARP
from kp.gpumodel.pipes import pipe_of
from kp.gpumodel.ptxas import demangle, file_constants, instantiation
from kp.gpumodel.runs import block_runs, slow_division
from kp.gpumodel.sass import CLASSES, SassUnavailable, arch_of, by_kernel, executed, line_runs, source_lines
from kp.gpumodel.sass import sass as sass_of
from kp.sourceview import sass_listing

REGISTER = re.compile(r"(?<![A-Z])R(\d+)(\.64)?")


def _registers(operands):
    """The general registers an instruction's operand text names (R2.64: R2 and R3)."""
    return {int(m[1]) + k for m in REGISTER.finditer(operands) for k in range(2 if m[2] else 1)}


def load_rounds(instructions):
    """The global loads of one function's SASS (address order) grouped into rounds that are in flight together: a
    load joins the open round unless an instruction since the round began named a register one of its loads writes
    (it waited for it: the warp's scoreboard holds it there), or a barrier came between. A branch does not end a round
    (a load does not wait for it: the bounds-checked taps of an unrolled stencil are in flight together). A list of
    rounds, each the list of its loads."""
    rounds, current, pending = [], [], set()
    for i in instructions:
        operands = i.text.split(None, 1)[1] if " " in i.text.strip() else ""
        if i.text.startswith("@"):  # the predicate first: `@!P0 LDG.E R4, ...`
            operands = operands.split(None, 1)[1] if " " in operands else ""
        named = _registers(operands)
        if current and (named & pending or i.cls == "barrier"):
            rounds.append(current)
            current, pending = [], set()
        if i.space == "global" and i.kind == "load":
            first = min(_registers(operands.split(",")[0]) or {-1})
            current.append(i)
            pending |= {first + k for k in range(max(1, (i.width or 4) // 4))} if first >= 0 else set()
    return rounds + ([current] if current else [])


def describe(instructions):
    """What a line's instructions show, in words: vectorised (a 64- or 128-bit access), unrolled (the same access
    instruction several times), spilled (local memory: registers that did not fit)."""
    said = []
    wide = sorted({i.opcode for i in instructions if i.width and i.width >= 8 and i.space in ("global", "shared")})
    if wide:
        widest = max(i.width for i in instructions if i.width)
        said.append(f"vectorised: {', '.join(wide)} moves {widest} bytes per lane")
    memory = [i.opcode for i in instructions if i.space in ("global", "shared")]
    repeated = sorted({op for op in memory if memory.count(op) > 1})
    if repeated:
        said.append("unrolled: " + ", ".join(f"{memory.count(op)} x {op}" for op in repeated))
    if any(i.space == "local" for i in instructions):
        said.append("spilled: local memory (LDL/STL), registers that did not fit")
    return said


def _as_width(line, width):
    """`line` counted as instructions of `width` bytes per lane would serve its accesses (width < 4, U8/U16
    instructions: the source's own accesses, one to one)."""
    source = (line.requests, line.units, line.ideal, line.worst, line.worst_bank, line.worst_lanes)
    requests, units, ideal, *worst = dict(line.widths).get(width, source) if width >= 4 else source
    lanes = round(line.lanes * requests / line.requests) if line.requests else 0
    return dataclasses.replace(line, requests=requests, units=units, ideal=ideal, lanes=lanes, worst=worst[0],
                               worst_bank=worst[1], worst_lanes=worst[2])  # fmt: skip


def as_compiled(lines, sass_at, basis):
    """The source-counted `lines` as nvcc's instructions serve them, and how often each line's SASS ran.

    `sass_at(kernel, file, line)`: the SASS instructions (kp.gpumodel.sass.Instruction) at that line of that kernel, or
    None where there is no SASS of the kernel (its lines stay counted as the source wrote them). A line's accesses of
    one space and kind are counted at the width of its SASS instructions of that space and kind; with several widths
    (a packed path and its scalar fallback, or a loop vectorised in part), the widest: accesses that fit one such
    instruction merge into it, the others stay apart as they would. Where it has none, nvcc served them with another
    line's instruction (a vectorised neighbour) or kept them in registers: they count at the widest regrouping, where
    they join the group an earlier access opened, and a line left with no request is dropped.
    Returns (lines, passes): passes {(kernel, file, line): warp-level runs of the line's SASS} for the lines with
    memory instructions (their requests over their instructions; kp.gpumodel.sass.executed takes it from there)."""
    out, passes = [], defaultdict(float)
    for ln in lines:
        ins = sass_at(ln.kernel, ln.file, ln.line)
        if ins is None or not ln.widths:
            out.append(ln)
            continue
        memory = [i for i in ins if i.space == ln.space and i.kind == ln.kind]
        width = max((i.width for i in memory), default=16)
        compiled = dataclasses.replace(_as_width(ln, width), sass=tuple(i.opcode for i in memory), basis=basis)
        if compiled.requests:
            out.append(compiled)
        if memory:  # the line's SASS ran once per request of one of its instructions of that width
            key = (ln.kernel, ln.file, ln.line)
            passes[key] = max(passes[key], compiled.requests / sum(i.width == width for i in memory))
    return out, dict(passes)


class CompiledCounts:
    """The SASS side of a Profile: per GPU, the lines as compiled, the instructions they ran, and the basis."""

    def kernel_sass(self, kernel, gpu="H100"):
        """The SASS instructions (kp.gpumodel.sass) of the instantiation of `kernel` the call ran, for `gpu`; a str
        saying why there are none (no nvcc, no nvdisasm, a kernel file that nvcc does not compile alone)."""
        arch = arch_of(gpu)
        if (kernel, arch) not in self._sass:
            file = next((la.file for la in self.launches if la.kernel == kernel and la.file), None)
            try:
                if not file:
                    raise SassUnavailable(f"no SASS: the trace does not name {kernel}'s file")
                path = ROOT / file if not file.startswith("/") else Path(file)
                every = sass_of(path, arch)
                functions = list(dict.fromkeys(i.function for i in every))
                names = dict(zip(demangle(functions), functions))
                chosen = instantiation(list(names), kernel, self.ctype, file_constants(path.read_text()))
                self._sass[(kernel, arch)] = [i for i in every if i.function == names.get(chosen)]
            except (SassUnavailable, KernelBuildError, OSError, RuntimeError) as e:
                self._sass[(kernel, arch)] = str(e).splitlines()[0] if str(e) else type(e).__name__
        return self._sass[(kernel, arch)]

    def compiled(self, gpu="H100"):
        """(lines, instructions, basis): the lines counted as `gpu`'s SASS serves their accesses
        (as_compiled), the SASS instructions each line ran (kp.gpumodel.sass.executed), and what the
        counts rest on ("SASS sm_90", or "source (<why no SASS>)")."""
        arch = arch_of(gpu)
        if arch not in self._compiled:
            by_line, missing, warps = {}, {}, {}
            for la in self.launches:
                warps[la.kernel] = warps.get(la.kernel, 0) + la.blocks * -(-la.threads_per_block // WARP)
            for kernel in warps:
                if isinstance(found := self.kernel_sass(kernel, arch), str):
                    missing[kernel] = f"{kernel}: {found}"
                for i in found if not isinstance(found, str) else ():
                    by_line.setdefault((kernel, i.file, i.line), []).append(i)
            lines, passes = as_compiled(
                self.source_lines, lambda k, f, n: None if k in missing else by_line.get((k, f, n), []), f"SASS {arch}"
            )
            instructions = executed(passes, self.branches, warps, by_line, source_lines)
            self._compiled[("runs", arch)] = line_runs(passes, self.branches, warps, by_line, source_lines)
            why = "; ".join(missing.values())
            basis = f"SASS {arch}" if not missing else f"source ({why})" if len(missing) == len(warps) else (
                f"SASS {arch}, the source for {why}"
            )  # fmt: skip
            self._compiled[arch] = (lines, instructions, basis)
            self._compiled[arch] = (lines, [self._by_blocks(x, by_line, arch) for x in instructions], basis)
        return self._compiled[arch]

    def _by_blocks(self, x, by_line, arch):
        """Instructions `x` with each of its SASS instructions at the runs of its basic block (block_runs) where the
        trace fixes them, at the line's runs (kp.gpumodel.sass.executed) where it does not, at most its block's bound;
        the line's runs: its most-run block's where all of its blocks are known (an unrolled line: the runs of the
        block that holds its copies, not one per copy)."""
        at = self.block_runs(x.kernel, arch)
        executed, known = {}, []
        for i in by_line[(x.kernel, x.file, x.line)]:
            runs, bound = at.get(i.offset, (None, float("inf")))
            executed[i.cls] = executed.get(i.cls, 0.0) + (min(x.executions, bound) if runs is None else runs)
            known.append(runs)
        runs = max(known) if known and None not in known else x.executions  # its most-run block's runs, if known
        return dataclasses.replace(
            x, executions=runs, executed=tuple((c, executed[c]) for c in CLASSES if c in executed)
        )

    def block_runs(self, kernel, gpu="H100"):
        """{offset: (runs, bound)} of `kernel`'s SASS for `gpu` (kp.gpumodel.runs.block_runs), cached; {} without
        SASS."""
        arch = arch_of(gpu)
        if ("blocks", kernel, arch) not in self._sass:
            found = self.kernel_sass(kernel, gpu)
            warps = sum(la.blocks * -(-la.threads_per_block // WARP) for la in self.launches if la.kernel == kernel)
            lines = [] if isinstance(found, str) else self.compiled(gpu)[0]
            branches = [b for b in self.branches if b.kernel == kernel]
            self._sass[("blocks", kernel, arch)] = {} if isinstance(found, str) else block_runs(
                found, [ln for ln in lines if ln.kernel == kernel], branches, warps, source_lines
            )  # fmt: skip
        return self._sass[("blocks", kernel, arch)]

    def issued(self, gpu="H100"):
        """{kernel: {class: warp instructions executed}}: `gpu`'s SASS, each line's times the runs
        kp.gpumodel.sass.executed finds for it; the data of an issue term (instructions / (SMs x schedulers x clock)),
        for kp.gpumodel.gputime."""
        return by_kernel(self.compiled(gpu)[1])

    def issue_instructions(self, gpu="H100"):
        """{kernel: warp instructions issued}, for kp.gpumodel.gputime's issue term: instruction_runs summed."""
        return {kernel: sum(runs for _, runs in found) for kernel, found in self._instruction_runs(gpu).items()}

    def pipe_instructions(self, gpu="H100"):
        """{kernel: {pipe: warp instructions}}: instruction_runs by the arithmetic pipe each opcode runs on
        (kp.gpumodel.pipes.pipe_of; instructions on none left out), for kp.gpumodel.gputime's pipe term."""
        out = {}
        for kernel, found in self._instruction_runs(gpu).items():
            pipes = out.setdefault(kernel, {})
            for i, runs in found:
                if (pipe := pipe_of(i.opcode)) and runs:
                    pipes[pipe] = pipes.get(pipe, 0.0) + runs
        return out

    def pipe_work(self, launch, gpu="H100", pipes=None):
        """{"pipes": ((pipe, warp instructions), ...)} of one launch (kp.gpumodel.gputime.LaunchWork's field): its
        kernel's pipe_instructions shared out by the launch's blocks; {} where its kernel has no SASS. `pipes`: the
        pipe_instructions(gpu) that a caller made once for all its launches (work()), made here where it is None."""
        pipes = (self.pipe_instructions(gpu) if pipes is None else pipes).get(launch.kernel)
        if not pipes:
            return {}
        share = launch.blocks / (sum(la.blocks for la in self.launches if la.kernel == launch.kernel) or 1)
        return {"pipes": tuple((p, n * share) for p, n in sorted(pipes.items()))}

    def _instruction_runs(self, gpu="H100"):
        """{kernel: [(SASS instruction, warp-level runs)]} of `gpu`'s SASS, cached. Exact where the trace fixes the
        runs of the basic blocks (block_runs): each instruction there is charged its block's runs (nvcc's 64-bit
        division slow side, slow_division, none). The instructions of blocks it leaves open fall back to a per-line
        rule: a line's SASS is taken per call site it was inlined at (Instruction.site), each site's share of the
        line's runs as the share of the runs of the site's line (kp.gpumodel.sass.line_runs); per run, a site's open
        SASS is charged in full where the trace counts the line's runs exactly (global or shared accesses, no branch),
        otherwise at the mean of its open fragments (the separate stretches of it in address order): a heuristic."""
        arch, cache = arch_of(gpu), getattr(self, "_sass", {})
        if ("instruction runs", arch) in cache:
            return cache[("instruction runs", arch)]
        out = {}
        for kernel in dict.fromkeys(la.kernel for la in self.launches):
            found = self.kernel_sass(kernel, gpu)
            if isinstance(found, str):
                continue
            at = self.block_runs(kernel, gpu)
            skipped, fragments, sites, exact, branches, opened = slow_division(found), {}, {}, set(), set(), []
            last, charged = None, []
            for i in found:
                place, group = (i.file, i.line), (i.file, i.line, i.site)
                runs, bound = at.get(i.offset, (None, float("inf")))
                if runs is not None:
                    charged.append((i, runs))
                    last = None
                    continue
                fragments[group] = fragments.get(group, 0) + (group != last)
                sites.setdefault(place, {})[i.site] = 1.0
                exact |= {place} if i.space in ("global", "shared") else set()
                branches |= {place} if i.cls == "control" else set()
                opened += [(i, bound)] if i.offset not in skipped else []
                last = group
            exact -= branches
            executions = {(x.file, x.line): x.executions for x in self.compiled(gpu)[1] if x.kernel == kernel}
            runs = getattr(self, "_compiled", {}).get(("runs", arch))  # any line's runs (filled by compiled())
            shares = {}
            for place, share in sites.items():
                if len(share) > 1 and runs:
                    share = {s: runs((kernel, *place[:1], s)) if s else 1.0 for s in share}
                weight = sum(share.values())
                shares |= {(*place, s): w / weight if weight else 1 / len(share) for s, w in share.items()}
            for i, bound in opened:
                group = (i.file, i.line, i.site)
                per_run = 1 if (i.file, i.line) in exact else 1 / fragments[group]
                charged.append((i, min(bound, executions.get((i.file, i.line), 0.0) * shares[group] * per_run)))
            out[kernel] = charged
        cache[("instruction runs", arch)] = out
        return out

    def loads_in_flight(self, kernel, gpu="H100"):
        """The global loads one warp of `kernel` has in flight together, on average over the rounds it ran
        (load_rounds on `gpu`'s SASS, each round weighted by the runs of its first load's line): 4 for a loop of four
        independent loads that nvcc unrolled, 1 for a chain of loads each at the address the one before loaded. None
        without SASS, or where no global load ran."""
        found = self.kernel_sass(kernel, gpu)
        if isinstance(found, str):
            return None
        runs = {(x.file, x.line): x.executions for x in self.compiled(gpu)[1] if x.kernel == kernel}
        loads = rounds = 0.0
        for group in load_rounds(found):
            n = runs.get((group[0].file, group[0].line), 0.0)
            loads, rounds = loads + n * len(group), rounds + n
        return loads / rounds if rounds else None

    def sass(self, line, gpu="H100"):
        """What nvcc made of `.cu` line `line` (a number, or "file.cu:N") for `gpu`: its SASS instructions as a Table,
        titled with what they show (vectorised, unrolled, spilled) and with the line's executions where counted."""
        file, number = (line.rsplit(":", 1)[0], int(line.rsplit(":", 1)[1])) if isinstance(line, str) else (None, line)
        rows, said = [], []
        for kernel in dict.fromkeys(la.kernel for la in self.launches):
            found = self.kernel_sass(kernel, gpu)
            if isinstance(found, str):
                said.append(f"{kernel}: {found}")
                continue
            rows += [(kernel, i) for i in found if i.line == number and (file is None or i.file == file)]
        runs = {(x.kernel, x.line): x.executions for x in self.compiled(gpu)[1] if x.line == number}
        return sass_listing(rows, number, arch_of(gpu), describe([i for _, i in rows]) + said, runs)
