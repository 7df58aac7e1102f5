"""A profile's counts as nvcc compiled the kernels (issue 31): the SASS of the instantiation each launch ran
(kp.gpumodel.sass), the lines counted as that SASS serves their accesses (kp.gpumodel.counts.as_compiled), the SASS
instructions each line ran (kp.gpumodel.sass.executed) and what nvcc made of one line. CompiledCounts is
kp.gpumodel.profile.Profile's half that reads them: it needs the Profile's `launches`, `source_lines`, `branches` and
`ctype`, and its caches `_compiled` (per arch) and `_sass` (per kernel and arch), empty dicts at first. Never runs a
kernel (kp.gpumodel.sass compiles one for its SASS, cached per build key).
"""

import re
from pathlib import Path

from kp.diagnostics import KernelBuildError
from kp.files import ROOT
from kp.gpumodel.counts import WARP, as_compiled
from kp.gpumodel.ptxas import demangle, file_constants, instantiation
from kp.gpumodel.sass import SassUnavailable, arch_of, by_kernel, describe, executed, source_lines
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
        (kp.gpumodel.counts.as_compiled), the SASS instructions each line ran (kp.gpumodel.sass.executed), and what the
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
            why = "; ".join(missing.values())
            basis = f"SASS {arch}" if not missing else f"source ({why})" if len(missing) == len(warps) else (
                f"SASS {arch}, the source for {why}"
            )  # fmt: skip
            self._compiled[arch] = (lines, instructions, basis)
        return self._compiled[arch]

    def issued(self, gpu="H100"):
        """{kernel: {class: warp instructions executed}}: `gpu`'s SASS, each line's times the runs
        kp.gpumodel.sass.executed finds for it; the data of an issue term (instructions / (SMs x schedulers x clock)),
        for kp.gpumodel.gputime."""
        return by_kernel(self.compiled(gpu)[1])

    def issue_instructions(self, gpu="H100"):
        """{kernel: warp instructions issued}, for kp.gpumodel.gputime's issue term: a line whose runs the trace counts
        exactly (one with global or shared accesses: its requests over its instructions are passes through all of them)
        and whose SASS does not branch, at its instructions x runs; any other line (a branch condition, a loop body's
        arithmetic, an inlined helper with a vector and a scalar path) at the mean of its fragments (the separate
        stretches of it in address order: an unrolled or branching line runs one per execution) x runs. A heuristic
        where issued() is an upper bound: code a branch skips is still charged, at one fragment."""
        out = {}
        for kernel in dict.fromkeys(la.kernel for la in self.launches):
            found = self.kernel_sass(kernel, gpu)
            if isinstance(found, str):
                continue
            fragments, exact, branches, last = {}, set(), set(), None
            for i in found:
                place = (i.file, i.line)
                fragments[place] = fragments.get(place, 0) + (place != last)
                exact |= {place} if i.space in ("global", "shared") else set()
                branches |= {place} if i.cls == "control" else set()
                last = place
            exact -= branches
            out[kernel] = sum(
                x.total / (1 if (x.file, x.line) in exact else fragments.get((x.file, x.line), 1))
                for x in self.compiled(gpu)[1]
                if x.kernel == kernel
            )
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
