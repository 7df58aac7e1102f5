"""The GPU model's counters, per `.cu` line: what a GPU's memory system would do with a kernel, without a GPU.

`profile(fn, *args, **kwargs)` runs `fn` (an op of a kernel loaded with `load_kernel(..., check=True)`, or any
callable that calls such ops) with the CPU stand-in's profiler on, and returns a Profile: `.lines`, one Line per
(kernel, file, line, memory space, access kind) with Nsight Compute's source counters (requests, sectors or
wavefronts, the ideal, active lanes); `.branches`, one Branch per line of branch conditions (warp-level executions,
active lanes, divergent executions); `.launches`, one Launch per kernel launch; `.estimate(gpu="H100")`, the
modelled time of the call on that GPU (kp.gputime); `.advice()`, the worst lines in plain words.

The counting rules (warp requests from the threads' accesses, 32-byte sectors, 32 banks of 4 bytes and their
wavefronts), with their sources, are in kernels/common/cuda_cpu_profile.h, which counts; this module reads the
counts, puts them at their `.cu` lines (addr2line) and models. Never compiles or loads a kernel itself.
"""

import ctypes
import re
import warnings

import torch

from kp.build import cpu_runtime
from kp.counts import WARP, parse
from kp.files import ROOT
from kp.gputime import LaunchWork, estimate
from kp.pictures import banks, picture
from kp.ptxas import kernel_resources
from kp.sourceview import profile_html
from kp.table import Table

DIVERGENT_SHARE = 0.05  # advice names a branch when at least this share of its warp executions diverge
# Each floating dtype's C++ type, as ptxas names a kernel's instantiations (colsum_v1<float>, poly2_fwd_kernel<__half>)
CTYPES = {torch.float32: "float", torch.float64: "double", torch.float16: "__half", torch.bfloat16: "__nv_bfloat16"}


class ProfileError(RuntimeError):
    """A profile that could not count anything: the kernels were not built in check mode, or none ran."""


def profile(fn, *args, max_blocks=0, **kwargs):
    """Run `fn(*args, **kwargs)` with the stand-in's profiler on; return its Profile. `max_blocks`: sample launches of
    more blocks than this (every k-th block runs and is counted, the counts x k; the others do not run, so the output
    is incomplete: for the model only)."""
    lib = cpu_runtime()
    lib.kp_profile_take.restype = ctypes.c_char_p
    lib.kp_profile_begin(ctypes.c_ulonglong(max_blocks))
    try:
        fn(*args, **kwargs)
    finally:
        report = (lib.kp_profile_take() or b"").decode(errors="replace")
    dtypes = [a.dtype for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor) and a.is_floating_point()]
    result = Profile(parse(report), CTYPES.get(dtypes[0]) if dtypes else None)
    if not result.launches:
        raise ProfileError(result.not_counted_message() or f"{getattr(fn, '__name__', fn)} launched no kernel")
    if result.unprofiled:
        warnings.warn(result.not_counted_message(), stacklevel=2)
    sampled = [la for la in result.launches if la.traced < la.blocks]
    if sampled:
        warnings.warn(
            f"sampled: {', '.join(f'{la.kernel} {la.traced} of {la.blocks} blocks' for la in sampled)} ran and were "
            "counted (counts scaled up); the other blocks did not run, so the output is incomplete",
            stacklevel=2,
        )
    return result


def modelled(fn, gpu="H100", max_blocks=64, flops=None):
    """`fn` (an op of a check-mode build) as the GPU model times it: a callable of fn's arguments that returns the
    modelled seconds on `gpu` (`flops(*args)` for FLOP-bound kernels), counting at most about `max_blocks` blocks per
    launch (sampled quietly: only the counts are wanted). For bench(model=...): its `.gpu` names the GPU."""

    def seconds(*args):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="sampled: ")
            counted = profile(fn, *args, max_blocks=max_blocks)
        return counted.estimate(gpu, flops=flops(*args) if flops else 0.0)

    seconds.gpu = gpu
    return seconds


class Profile:
    """Counts of one profiled call: `lines` (Line), `launches` (Launch). Data first; `table()`, `advice()` and, in
    Jupyter, a source view (kp.sourceview) show them."""

    def __init__(self, counts, ctype=None):
        # The C++ type of the call's first floating tensor: the kernels' instantiation whose ptxas figures apply.
        self.ctype = ctype
        self.lines, self.launches, self.branches = counts.lines, counts.launches, counts.branches  # kp.counts
        self.unprofiled, self.unprofiled_names = counts.unprofiled, counts.unprofiled_names
        self.worst, self.arrays, self.touches = counts.worst, counts.arrays, counts.touches  # for kp.pictures

    def picture(self, tensor_or_name, by="thread", kind=None, ax=None, shape=None):
        """Which thread (warp, block) touched which element of a tensor or `__shared__` array (kp.pictures), drawn
        in `shape` where given (e.g. an op's output, named: `p.picture("c", shape=a.shape)`)."""
        return picture(self, tensor_or_name, by, kind, ax, shape)

    def banks(self, line, ax=None):
        """The worst warp request of the shared-memory access at `line`: its 32 lanes against the 32 banks."""
        return banks(self, line, ax)

    def not_counted_message(self):
        if not self.unprofiled:
            return ""
        return (
            f"{self.unprofiled} launch(es) of kernels built without check mode ({self.unprofiled_names}) were not "
            "counted: the profiler counts the accesses check mode instruments. Load the kernel with "
            "load_kernel(name, check=True) and profile its ops"
        )

    def work(self, flops=0.0):
        """Each launch as kp.gputime's LaunchWork: DRAM moves the distinct sectors the launch's requests touched
        (the L2 keeps a sector between its uses within a launch: a broadcast operand is read from DRAM once; an
        uncoalesced load still moves every sector it touches), its shared wavefronts, registers and static shared
        memory from ptxas (32 registers where nvcc is missing), `flops` shared out by the launches' blocks."""
        total_blocks = sum(la.blocks for la in self.launches) or 1
        work = []
        for la in self.launches:
            registers, static = _resources(la.file, la.kernel, self.ctype)
            work.append(
                LaunchWork(
                    kernel=la.kernel,
                    grid_blocks=la.blocks,
                    threads_per_block=la.threads_per_block,
                    registers_per_thread=registers,
                    shared_bytes_per_block=static + la.dynamic_shared,
                    dram_read_sectors=la.distinct_read,
                    dram_write_sectors=la.distinct_written,
                    shared_wavefronts=la.wavefronts,
                    flops=flops * la.blocks / total_blocks,
                    dram_round_trips_per_warp=la.round_trips_per_warp,
                )
            )
        return work

    def estimate(self, gpu="H100", flops=0.0):
        """The modelled time in seconds of the profiled call on `gpu` (kp.gputime; `flops`: fp32 FLOPs the call does,
        which the trace does not count). `estimate_detail` gives the terms."""
        return self.estimate_detail(gpu, flops).seconds

    def estimate_detail(self, gpu="H100", flops=0.0):
        return estimate(gpu, self.work(flops))

    def table(self):
        """One row per counted line: the figures a learner reads first (where, what, how many requests and how much
        each moved against the ideal, active lanes), the kernel last; short enough to fit Lab's output area."""
        rows = [
            {
                "line": f"{ln.file.rsplit('/', 1)[-1]}:{ln.line}",
                "access": f"{ln.space} {ln.kind}",
                "requests": ln.requests,
                "per request (ideal)": f"{ln.per_request:.3g} ({ln.ideal / ln.requests:.3g})" if ln.requests else "",
                "unit": "sectors" if ln.space == "global" else "wavefronts",
                "lanes": f"{ln.active_lanes:.3g}",
                "kernel": ln.kernel,
            }
            for ln in self.lines
        ] + [
            {
                "line": f"{b.file.rsplit('/', 1)[-1]}:{b.line}",
                "access": "branch",
                "requests": b.executions,
                "per request (ideal)": f"{b.divergent} (0)",
                "unit": "diverged",
                "lanes": f"{b.active_lanes:.3g}",
                "kernel": b.kernel,
            }
            for b in self.branches
        ]
        title = "the GPU model's counters per line (a model, counted on the CPU stand-in; Nsight Compute's rules)"
        return Table(rows, title)

    def advice(self):
        """The lines worth a look, worst first, in plain words."""
        said = []
        for ln in sorted(self.lines, key=lambda ln: -ln.excess * ln.requests):
            where, verb = f"{ln.file}:{ln.line}", {"load": "read", "store": "write", "atomic": "update"}[ln.kind]
            if ln.space == "shared" and ln.worst >= 2:
                said.append(
                    f"a {ln.worst}-way bank conflict: {ln.worst_lanes} lanes {verb} bank {ln.worst_bank} at {where} "
                    f"({ln.per_request:.3g} wavefronts per request where {ln.ideal / ln.requests:.3g} would do)"
                )
            elif ln.space == "global" and ln.excess >= 1.5:
                said.append(
                    f"uncoalesced {ln.kind}s at {where}: {ln.per_request:.3g} sectors per request where "
                    f"{ln.ideal / ln.requests:.3g} would do: the lanes of a warp {verb} bytes that are not next to "
                    "each other"
                )
        for b in sorted(self.branches, key=lambda b: -b.divergent):
            if b.divergent and b.divergent >= DIVERGENT_SHARE * b.executions:
                said.append(
                    f"a divergent branch at {b.file}:{b.line}: in {b.divergent} of its {b.executions} warp executions "
                    "some lanes took it and some did not, and the warp ran both paths one after the other"
                )
        for ln in self.lines:
            if ln.active_lanes < WARP - 0.5:
                said.append(
                    f"divergence at {ln.file}:{ln.line}: {ln.active_lanes:.3g} of 32 lanes active per {ln.space} "
                    f"{ln.kind} on average"
                )
        return list(dict.fromkeys(said))

    def __repr__(self):
        kernels = ", ".join(dict.fromkeys(la.kernel for la in self.launches))
        counted = len({(x.file, x.line) for x in [*self.lines, *self.branches]})
        return f"<Profile of {len(self.launches)} launch(es) of {kernels}: {counted} lines counted (a model)>"

    def _repr_html_(self):
        return profile_html(self)


_resources_cache = {}


def _resources(file, kernel, ctype=None):
    """(registers, static shared bytes) of `kernel` as ptxas compiles it for the GPU (kp.ptxas); (32, 0) without
    nvcc or when the kernel is not found. A launch is named as its source wrote it (colsum_v1<T>): the instantiation
    of that name, or of that name with `ctype` (the profiled call's dtype, as C++: float, double, ...) for T, else
    the one whose template arguments name `ctype`, else the first of that name without template arguments.
    Instantiations differ: a double needs two registers, twice the shared memory; tile sizes, more."""
    if not file:
        return 32, 0
    if file not in _resources_cache:
        try:
            path = ROOT / file if not file.startswith("/") else file
            _resources_cache[file] = list(kernel_resources(path))
        except Exception:  # no nvcc, or it failed: the model goes on with the defaults (said in the docstring)
            _resources_cache[file] = []

    def name(row):
        return str(row.get("kernel", "")).replace(" ", "")

    rows = [row for row in _resources_cache[file] if name(row).split("<")[0].split("(")[0] == kernel.split("<")[0]]
    names_type = re.compile(rf"[<,]{re.escape(ctype)}[,>]") if ctype else None
    # linear_v7<T, 64, 64, 8, 4, 4> as launched is ptxas's linear_v7<float, 64, 64, 8, 4, 4> in a float call
    spelled = {kernel.replace(" ", ""), re.sub(r"\bT\b", ctype, kernel).replace(" ", "") if ctype else None}
    exact = [row for row in rows if name(row) in spelled]
    typed = [row for row in rows if names_type and names_type.search(name(row))]
    for row in exact or typed or rows[:1]:
        return int(row["registers"]), int(row["shared memory (bytes)"])
    return 32, 0
