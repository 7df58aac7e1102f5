"""The GPU model's counts as records: what the stand-in's profiler (kernels/common/cuda_cpu_profile.h) reports, read
and put at the `.cu` lines they are about (addr2line), counted as the source wrote the accesses
(kp.gpumodel.compiled.as_compiled counts them as nvcc's instructions group them). Line (one `.cu` line's accesses of
one space and kind), Branch (one `.cu` line's branch conditions: executions, active lanes, divergent ones, loop
exits, trip counts), Launch, and for pictures Array, Touch, Worst (a shared line's worst warp request) and
BranchLanes (who took a branch, by lane). Never runs or models anything (kp.gpumodel.profile does).
"""

import contextlib
import dataclasses
import gc
import math
import re
from collections import defaultdict, namedtuple

from kp.diagnostics import code_lines
from kp.files import ROOT

WARP = 32


@dataclasses.dataclass(frozen=True)
class Line:
    """What the accesses of one `.cu` line did (one space, one kind), summed over the profiled launches."""

    kernel: str
    file: str  # relative to the project where it is in it
    line: int
    space: str  # "global" or "shared"
    kind: str  # "load", "store" or "atomic"
    requests: int  # warp-level instructions with at least one active lane
    units: int  # sectors (global) or wavefronts (shared)
    ideal: int  # the same for the same bytes contiguous and aligned (global) or conflict-free (shared)
    bytes: int  # bytes the active lanes asked for
    lanes: int  # active lanes, summed over requests
    worst: int = 0  # shared: the most wavefronts one phase of a request took (N of an N-way bank conflict)
    worst_bank: int = 0
    worst_lanes: int = 0  # lanes of that phase on that bank
    scattered: int = 0  # requests whose active lanes are not lanes 0..k-1 (a branch skipped some: divergence)
    # The same regrouped as instructions of 4, 8 and 16 bytes per lane would serve them (cuda_cpu_profile.h):
    # {width: (requests, units, ideal, worst, worst_bank, worst_lanes)}; as_compiled picks nvcc's width.
    widths: tuple = ()
    sass: tuple = ()  # as_compiled: nvcc's memory instructions of this space and kind at the line ("LDS.128", ...)
    basis: str = "source"  # "source": the source's accesses; "SASS sm_90": as nvcc compiled them for that arch
    # Of `requests`, those of narrower SASS instructions re-reading what the line's widest ones read (siboehm's kernel
    # 5 at sm_86: 8 scalar LDS beside 16 LDS.128): the trace never saw them, kp.gpumodel.charges.reloaded adds them
    # (and their wavefronts, in `units`) as the estimate charges them; kp.gpumodel.profile's views say so
    rereads: int = 0

    @property
    def sectors(self):
        return self.units if self.space == "global" else None

    @property
    def wavefronts(self):
        return self.units if self.space == "shared" else None

    @property
    def active_lanes(self):
        """Mean active lanes per request (32: no divergence)."""
        return self.lanes / self.requests if self.requests else 0.0

    @property
    def per_request(self):
        return self.units / self.requests if self.requests else 0.0

    @property
    def excess(self):
        """units / ideal: 1 is perfect; 8 is eight times the sectors (or wavefronts) the bytes need."""
        return self.units / self.ideal if self.ideal else 1.0


@dataclasses.dataclass(frozen=True)
class Branch:
    """What the branch conditions (`if`, `while`, `for`) of one `.cu` line did, summed over the profiled launches."""

    kernel: str
    file: str
    line: int
    executions: int  # warp-level executions: a warp's lanes evaluating the condition together
    lanes: int  # active lanes, summed over executions
    divergent: int  # executions whose lanes went both ways
    split: int = 0  # of those, the ones split at one lane (lanes 0..k-1 one way): a bounds guard's ragged warp
    none: int = 0  # executions where no lane took it: a loop's exits, one per time a warp entered it
    # A loop's trip counts: ((t, entries), ...), t ascending: a warp entered it `entries` times and ran it t times
    # (warp-level: an execution some lane took continues); t = LOST_TRIPS: entries past the distinct ts the trace keeps
    trips: tuple = ()

    @property
    def active_lanes(self):
        """Mean active lanes per execution (32: the whole warp evaluated it)."""
        return self.lanes / self.executions if self.executions else 0.0


@dataclasses.dataclass(frozen=True)
class Launch:
    kernel: str
    grid: tuple
    block: tuple
    dynamic_shared: int
    blocks: int
    traced: int  # blocks that ran and were counted (fewer than `blocks` when sampled)
    sectors_read: int
    sectors_written: int
    wavefronts: int
    load_requests: int
    load_sites: int
    distinct_read: int  # the distinct sectors read: what DRAM moves if the L2 keeps each between its uses
    distinct_written: int
    loading_warps: int = 0  # summed over the blocks: the warps that made a global load
    file: str = None  # the kernel's `.cu` (from its lines), for ptxas

    @property
    def threads_per_block(self):
        return math.prod(self.block)

    @property
    def round_trips_per_warp(self):
        """DRAM waits one warp makes one after another, as the trace shows them: its global load requests per
        load site (a kernel that loads, computes and stores: 1; a loop over k tiles: k), the mean over the warps that
        load (a warp that exits at once waits for nothing); over all the warps where the report does not say which."""
        if not self.load_sites:
            return 1.0
        if self.loading_warps:
            return max(1.0, self.load_requests / self.loading_warps / self.load_sites)
        warps = self.traced * -(-self.threads_per_block // WARP)
        return max(1.0, self.load_requests * self.traced / self.blocks / warps / self.load_sites)


WIDTHS = (4, 8, 16)  # the instruction widths (bytes per lane) cuda_cpu_profile.h regroups a warp's accesses into


def _add(total, counts):
    """Sums of requests, units and ideal; the worst phase (with its bank and lanes) kept."""
    total[:3] = [a + b for a, b in zip(total[:3], counts[:3])]
    if counts[3] > total[3]:
        total[3:] = counts[3:]


def _shown(file):
    return file.replace(f"{ROOT}/", "")


Array = namedtuple("Array", "id space name begin elements dims")
Touch = namedtuple("Touch", "array launch index block tid kind")
Worst = namedtuple("Worst", "kernel file line lanes size addresses")
# One warp of one block at one branch line: each lane's evaluations of the condition and the times it held (32 each)
LOST_TRIPS = 2**32 - 1  # Branch.trips's t for the entries past the distinct trip counts the trace keeps (64)
BranchLanes = namedtuple("BranchLanes", "kernel file line warp evaluated taken")


Counts = namedtuple("Counts", "lines launches unprofiled unprofiled_names worst arrays touches branches branch_lanes",
                    defaults=((),))  # fmt: skip


@contextlib.contextmanager
def collector_paused():
    """The garbage collector off, then as it was: 2^18 touch rows and 10^4 SASS instructions (no cycles) started it
    over all the process's objects, torch's included: 7% of a profile (perf, linear_ladder v7 4096³, 2026-11-27)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.enable() if enabled else None


def _touches(rows):
    """The touch rows' fields (after "touch\t") as Touches, in one pass: 2^18 rows in 0.3 s, not 1.2 (2026-11-27)."""
    ints, width = list(map(int, "\t".join(rows).split("\t"))) if rows else [], len(Touch._fields)
    if len(ints) != width * len(rows):
        raise ValueError(f"a touch row of the profile report has not {width} fields")
    return [tuple.__new__(Touch, t) for t in zip(*[iter(ints)] * width)]


def parse(report):
    """The runtime's profile report (cuda_cpu_profile.h's profile_take) as Counts, sites put at their lines (the
    caller, kp.gpumodel.profile, pauses the collector around it and the SASS: collector_paused)."""
    sites, launches, unprofiled, worst_rows, arrays = [], [], (0, ""), [], []
    branch_rows, lane_rows, trip_rows, copy_rows = [], [], [], []
    rows = report.splitlines()
    touches = _touches([row[6:] for row in rows if row.startswith("touch\t")])
    for row in rows:
        if row.startswith("touch\t"):  # most rows (2^18): not split again
            continue
        f = row.split("\t")
        if f[0] == "array":
            dims = tuple(int(d) for d in f[6].split()) if len(f) > 6 else ()
            arrays.append(Array(int(f[1]), f[2], f[3], int(f[4]), int(f[5]), dims))
        elif f[0] == "worst":
            worst_rows.append(f[1:])
        elif f[0] == "site" and len(f) in (13, 14, 32):
            sites.append(f[1:14] + ["0"] * (14 - len(f)) + f[14:])  # scattered (field 13) is 0 in older reports
        elif f[0] == "lanes" and len(f) == 68:
            lane_rows.append(f[1:])
        elif f[0] == "branch" and len(f) in (6, 7, 8):
            branch_rows.append(f[1:] + ["0"] * (8 - len(f)))
        elif f[0] == "trips" and len(f) == 5:
            trip_rows.append(f[1:])
        elif f[0] == "tripcopy" and len(f) == 4:
            copy_rows.append(f[1:])
        elif f[0] == "launch" and len(f) in (14, 15):
            g, b = (tuple(int(v) for v in f[i].split()) for i in (2, 3))
            launches.append(Launch(f[1], g, b, *(int(v) for v in f[4:])))
        elif f[0] == "unprofiled":
            unprofiled = (int(f[1]), f[2] if len(f) > 2 else "")
    by_library = defaultdict(set)
    for site in sites + worst_rows + branch_rows + trip_rows + [r[:1] + r[2:] for r in copy_rows]:
        if m := re.fullmatch(r"(/\S+?\.so)\+0x([0-9a-f]+)", site[1]):
            by_library[m[1]].add(m[2])
    placed = {}
    for library, offsets in by_library.items():
        for offset, where in code_lines(library, sorted(offsets)).items():
            placed[f"{library}+0x{offset}"] = where
    totals = defaultdict(lambda: [0] * 9)
    regrouped = defaultdict(lambda: {w: [0] * 6 for w in WIDTHS})
    for kernel, pc, space, kind, *counts in sites:
        file, line = placed.get(pc, "?:0").rsplit(":", 1)
        key = (kernel, _shown(file), int(line), space, kind)
        t = totals[key]
        requests, lanes, nbytes, units, ideal, worst, bank, worst_lanes, scattered = (int(c) for c in counts[:9])
        t[:5] = [t[0] + requests, t[1] + units, t[2] + ideal, t[3] + nbytes, t[4] + lanes]
        if worst > t[5]:
            t[5:8] = [worst, bank, worst_lanes]
        t[8] += scattered
        for k, width in enumerate(WIDTHS if len(counts) > 9 else ()):
            _add(regrouped[key][width], [int(c) for c in counts[9 + 6 * k : 15 + 6 * k]])
    lines = [
        Line(*key, *t, widths=tuple((w, tuple(v)) for w, v in regrouped[key].items()) if key in regrouped else ())
        for key, t in sorted(totals.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][3:]))
    ]
    files = {}  # a kernel's `.cu`: the file of its first line there, not a header's it includes (common/*.cuh)
    for ln in sorted(lines, key=lambda ln: not ln.file.endswith(".cu")):
        files.setdefault(ln.kernel, ln.file)
    launches = [dataclasses.replace(la, file=files.get(la.kernel)) for la in launches]
    worst = [
        Worst(kernel, _shown(file), int(line), int(lanes), int(size), [int(a) for a in addresses])
        for kernel, pc, lanes, size, *addresses in worst_rows
        for file, line in [placed.get(pc, "?:0").rsplit(":", 1)]
    ]
    branch_totals = defaultdict(lambda: [0] * 5)  # executions, lanes, divergent, split, none
    for kernel, pc, *counts in branch_rows:
        file, line = placed.get(pc, "?:0").rsplit(":", 1)
        t = branch_totals[(kernel, _shown(file), int(line))]
        for k, count in enumerate(counts):
            t[k] += int(count)
    copies = defaultdict(set)  # a condition's (kernel, first pc) -> the lines of its copies
    for kernel, pc, copy in copy_rows:
        copies[(kernel, pc)].add(placed.get(copy, "?:0"))
    by_line = defaultdict(list)  # a line's conditions, each {t: entries}: read where it has one, all its copies there
    for kernel, pc, t, entries in trip_rows:
        if copies[(kernel, pc)] == {placed.get(pc, "?:0")}:  # not a header's, inlined at two lines
            by_line[(kernel, pc)].append((int(t), int(entries)))
    trips = defaultdict(list)
    for (kernel, pc), counts in by_line.items():
        file, line = placed.get(pc, "?:0").rsplit(":", 1)
        trips[(kernel, _shown(file), int(line))].append(tuple(sorted(counts)))
    trips = {key: found[0] for key, found in trips.items() if len(found) == 1}
    branches = [
        Branch(*key, *t, trips=trips.get(key, ()))
        for key, t in sorted(branch_totals.items(), key=lambda kv: (kv[0][1], kv[0][2]))
    ]
    branch_lanes = [
        BranchLanes(kernel, _shown(file), int(line), int(warp), tuple(map(int, c[:32])), tuple(map(int, c[32:])))
        for kernel, pc, warp, *c in lane_rows
        for file, line in [placed.get(pc, "?:0").rsplit(":", 1)]
    ]
    return Counts(lines, launches, *unprofiled, worst, arrays, touches, branches, branch_lanes)


class Advice(list):
    """Profile.advice(): the sentences, worst first. Printed (or shown in IPython), one per line, or a sentence that
    there is nothing to advise."""

    def __str__(self):
        if not self:
            return (
                "no advice: the GPU model sees no uncoalesced global access, no shared-memory bank conflict, no "
                "divergent branch and no lanes left out mid-warp"
            )
        return "\n".join(f"- {said}" for said in self)

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))
