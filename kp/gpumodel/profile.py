"""The GPU model's counters, per `.cu` line: what a GPU's memory system would do with a kernel, without a GPU.

`profile(fn, *args, **kwargs)` runs `fn` (an op of a kernel loaded with `load_kernel(..., check=True)`, or any
callable that calls such ops) with the CPU stand-in's profiler on, and returns a Profile: `.lines`, one Line per
(kernel, file, line, memory space, access kind) with Nsight Compute's source counters (requests, sectors or
wavefronts, the ideal, active lanes); `.branches`, one Branch per line of branch conditions (warp-level executions,
active lanes, divergent executions; `.branch_lanes` and `.branch_picture(line)`: which lanes of one block took it);
`.launches`, one Launch per kernel launch; `.estimate(gpu="H100")`, the modelled time of the call on that GPU
(kp.gpumodel.gputime); `.advice()`, the worst lines in plain words.

The counting rules (warp requests from the threads' accesses, 32-byte sectors, 32 banks of 4 bytes and their
wavefronts), with their sources, are in kernels/common/cuda_cpu_profile.h, which counts; this module reads the
counts, puts them at their `.cu` lines (addr2line), counts them as nvcc's SASS for the GPU serves them
(kp.gpumodel.sass: `.lines` are the H100's, `.charged_lines(gpu)` another GPU's, both with the requests of the narrower
instructions nvcc re-reads a line with, which the estimate charges and the trace does not see, `.compiled(gpu)`
without them; `.table(gpu)` and `.advice(gpu)` show them; `.instructions`, the SASS instructions each line ran;
`.sass(line)`, what nvcc made of a line) and models. Without nvcc or nvdisasm the lines stay counted as the
source wrote the accesses, and `.basis` says so. Never loads a kernel itself (kp.gpumodel.sass compiles one for its
SASS, cached).
"""

import ctypes
import dataclasses
import warnings

import torch

from kp.build import cpu_runtime
from kp.gpumodel.caches import parse_sharing
from kp.gpumodel.charges import charged, compiled_shares, in_flight_sites, reloaded
from kp.gpumodel.compiled import CompiledCounts
from kp.gpumodel.counts import Advice, collector_paused, parse
from kp.gpumodel.depend import dependent_blocks
from kp.gpumodel.gpus import gpu as named_gpu
from kp.gpumodel.gputime import LaunchWork, estimate
from kp.gpumodel.local import local_work
from kp.gpumodel.ptxas import launch_resources
from kp.gpumodel.register_banks import conflict_cycles
from kp.gpumodel.sass import arch_of
from kp.gpumodel.schedule import memory_instructions, scheduled_blocks
from kp.pictures import banks, branch_lanes, picture
from kp.sourceview import instruction_advice, line_advice, line_table, profile_html

# Each floating dtype's C++ type, as ptxas names a kernel's instantiations (colsum_v1<float>, poly2_fwd_kernel<__half>)
CTYPES = {torch.float32: "float", torch.float64: "double", torch.float16: "__half", torch.bfloat16: "__nv_bfloat16"}


class ProfileError(RuntimeError):
    """A profile that could not count anything: the kernels were not built in check mode, or none ran."""


def profile(fn, *args, max_blocks=0, **kwargs):
    """Run `fn(*args, **kwargs)` with the stand-in's profiler on; return its Profile. `max_blocks`: sample launches of
    more blocks than about this (a product grid of blocks spread over every grid dimension, at least two along each
    of more than one block, runs and is counted, each block's counts x the blocks it stands for; the others do not
    run, so the output is incomplete: for the model only). A sample is what was asked for, so it is no warning: the
    Profile says so (`.sampled`, and its repr)."""
    lib = cpu_runtime()
    lib.kp_profile_take.restype = ctypes.c_char_p
    lib.kp_profile_begin(ctypes.c_ulonglong(max_blocks))
    try:
        fn(*args, **kwargs)
    finally:
        report = (lib.kp_profile_take() or b"").decode(errors="replace")
    dtypes = [a.dtype for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor) and a.is_floating_point()]
    with collector_paused():  # the report's rows and the SASS's instructions: many objects, no cycles
        counts = parse(report)
        result = Profile(counts, CTYPES.get(dtypes[0]) if dtypes else None, parse_sharing(report, counts.launches))
    if not result.launches:
        raise ProfileError(
            result.not_counted_message()
            or f"{getattr(fn, '__name__', fn)} launched no kernel (a call that profiles inside takes the counts for "
            "itself: for a puzzle, puzzle(name, profile=True) shows them and returns them as .profile)"
        )
    if result.unprofiled:
        warnings.warn(result.not_counted_message(), stacklevel=2)
    return result


def modelled(fn, gpu="H100", max_blocks=64, flops=None):
    """`fn` (an op of a check-mode build) as the GPU model times it: a callable of fn's arguments that returns the
    modelled seconds on `gpu` (`flops(*args)` for FLOP-bound kernels), counting at most about `max_blocks` blocks per
    launch (sampled quietly: only the counts are wanted). For bench(model=...): its `.gpu` names the GPU."""

    def seconds(*args):
        counted = profile(fn, *args, max_blocks=max_blocks)
        return counted.estimate(gpu, flops=flops(*args) if flops else 0.0)

    seconds.gpu = gpu
    return seconds


class Profile(CompiledCounts):
    """Counts of one profiled call: `lines` (Line), `launches` (Launch). Data first; `table()`, `advice()` and, in
    Jupyter, a source view (kp.sourceview) show them."""

    def __init__(self, counts, ctype=None, sharing=None):
        # Per launch, the memory hierarchy's inputs (kp.gpumodel.caches.Sharing; None: DRAM takes the distinct sectors)
        self.sharing = sharing or [None] * len(counts.launches)
        # The C++ type of the call's first floating tensor: the kernels' instantiation whose ptxas figures apply.
        self.ctype = ctype
        self.source_lines, self.launches, self.branches = counts.lines, counts.launches, counts.branches  # counts
        self.unprofiled, self.unprofiled_names = counts.unprofiled, counts.unprofiled_names
        self.worst, self.arrays, self.touches = counts.worst, counts.arrays, counts.touches  # for kp.pictures
        self.branch_lanes = counts.branch_lanes  # kp.pictures too
        self._compiled, self._sass = {}, {}
        # As the H100's SASS serves the accesses (the source's accesses where there is no SASS: `basis` says which),
        # with what nvcc re-reads by narrower instructions (charged_lines): the figures the estimate charges
        _, self.instructions, self.basis = self.compiled("H100")
        self.lines = self.charged_lines("H100")

    def charged_lines(self, gpu="H100"):
        """The lines as `gpu`'s SASS serves their accesses (compiled) with the requests and wavefronts of the
        narrower instructions nvcc re-reads them with (kp.gpumodel.charges.reloaded; _with_rereads): what work()
        charges, so that a kernel's shared lines sum to its launches' wavefronts and the views (table, advice, the
        source view) show the figures the estimate adds up. Cached per arch."""
        key = ("charged", arch_of(gpu))
        if key not in self._compiled:
            lines, widths, ran = self.compiled(gpu)[0], {}, self._instruction_runs(gpu)
            for kernel, pairs in ran.items():
                for i, runs in pairs:  # the widths each line's instructions ran at
                    widths.setdefault((kernel, i.file, i.line, i.space, i.kind), set()).update(
                        [i.width] if runs else []
                    )
            self._compiled[key] = [
                new if new.requests == old.requests else _with_rereads(old, new, widths[_key(old)])
                for old, new in zip(lines, reloaded(lines, ran, {k: self.kernel_sass(k, gpu) for k in ran}))
            ]
        return self._compiled[key]

    @property
    def sampled(self):
        """What a sample left out, in words ("" when every block ran): the counts are scaled up, the output of the
        profiled call is incomplete (the skipped blocks did not run)."""
        sampled = [la for la in self.launches if la.traced < la.blocks]
        if not sampled:
            return ""
        return (
            f"sampled: {', '.join(f'{la.kernel} {la.traced} of {la.blocks} blocks' for la in sampled)} ran and were "
            "counted (counts scaled up); the other blocks did not run, so the call's output is incomplete"
        )

    def picture(self, tensor_or_name, by="thread", kind=None, ax=None, shape=None):
        """Which thread (warp, block) touched which element of a tensor or `__shared__` array (kp.pictures), drawn
        in `shape` where given (e.g. an op's output, named: `p.picture("c", shape=a.shape)`)."""
        return picture(self, tensor_or_name, by, kind, ax, shape)

    def banks(self, line, ax=None):
        """The worst warp request of the shared-memory access at `line`: its 32 lanes against the 32 banks."""
        return banks(self, line, ax)

    def branch_picture(self, line, kernel=None, ax=None, title=None):
        """Which lanes of which warps of one block took the branch at `line`, and how often (kp.pictures)."""
        return branch_lanes(self, line, kernel, ax, title)

    def not_counted_message(self):
        if not self.unprofiled:
            return ""
        return (
            f"{self.unprofiled} launch(es) of kernels built without check mode ({self.unprofiled_names}) were not "
            "counted: the profiler counts the accesses check mode instruments. Load the kernel with "
            "load_kernel(name, check=True) and profile its ops"
        )

    def work(self, flops=0.0, gpu="H100"):
        """Each launch as kp.gpumodel.gputime's LaunchWork: its memory hierarchy's inputs (kp.gpumodel.caches: which
        sectors the sampled blocks share, each block's L1 misses, the global requests' 128-byte lines, the barriers),
        the distinct sectors it touched (what DRAM moves where those inputs are missing), the sectors its global loads
        and stores requested, its global requests' 128-byte lines and its shared wavefronts as `gpu`'s SASS requests
        them (kp.gpumodel.charges: the launch's totals x its kernel's compiled lines, with what nvcc re-reads by
        narrower instructions, over its source lines), the warp instructions it executed (its blocks' share of its
        kernel's SASS as executed; each basic block's runs and critical path, kp.gpumodel.depend), the issue clocks its
        register-bank conflicts cost (kp.gpumodel.register_banks), the round trips its slowest warp waits (its loads
        over those in flight together), registers and static shared memory from ptxas for `gpu`'s arch and the
        instantiation launched (32 registers where nvcc is missing), `flops` shared out by the launches' blocks."""
        total_blocks = sum(la.blocks for la in self.launches) or 1
        issued, pipes = self.issue_instructions(gpu), self.pipe_instructions(gpu)
        kernel_blocks, runs = {}, self._instruction_runs(gpu)
        compiled_lines = self.charged_lines(gpu)  # with what nvcc re-reads by narrower instructions
        for la in self.launches:
            kernel_blocks[la.kernel] = kernel_blocks.get(la.kernel, 0) + la.blocks
        banked = {k: conflict_cycles(self.kernel_sass(k, gpu), found) for k, found in runs.items()}
        work = []
        for la, sharing in zip(self.launches, self.sharing):
            registers, static = launch_resources(la.file, la.kernel, self.ctype, arch_of(gpu))
            # The trace's totals count the source's accesses; charge what the SASS requests (kp.gpumodel.charges)
            share = compiled_shares(self.source_lines, compiled_lines, la.kernel)
            in_flight, sites = in_flight_sites(self.loads_in_flight(la.kernel, gpu), la, self.source_lines,
                                               compiled_lines)  # fmt: skip
            hierarchy = (
                {}
                if sharing is None
                else dict(
                    sharing=sharing,
                    requested_read_sectors=charged(la.sectors_read, share["read"], la.distinct_read),
                    load_sites=in_flight,
                    l1_wavefronts=round(sharing.l1_wavefronts * share["global"]),
                    barriers=sharing.barriers,
                )
            )
            if sharing is not None and sharing.slowest_requests and la.load_sites:
                # A block frees its place when its last warp exits: its slowest warp's round trips, not the mean
                slowest = sharing.slowest_requests / la.blocks / sites
                hierarchy["dram_round_trips_per_warp"] = max(1.0, slowest)
            work.append(
                LaunchWork(
                    kernel=la.kernel,
                    grid_blocks=la.blocks,
                    threads_per_block=la.threads_per_block,
                    registers_per_thread=registers,
                    shared_bytes_per_block=static + la.dynamic_shared,
                    dram_read_sectors=la.distinct_read,
                    dram_write_sectors=la.distinct_written,
                    shared_wavefronts=round(la.wavefronts * share["shared"]),
                    flops=flops * la.blocks / total_blocks,
                    issued=issued.get(la.kernel, 0.0) * la.blocks / kernel_blocks[la.kernel],
                    bank_stalls=banked.get(la.kernel, 0.0) * la.blocks / kernel_blocks[la.kernel],
                    dependent_blocks=dependent_blocks(self, la.kernel, gpu, la.blocks / kernel_blocks[la.kernel]),
                    scheduled=scheduled_blocks(self, la.kernel, gpu, la.blocks / kernel_blocks[la.kernel]),
                    memory_instructions=memory_instructions(self, la.kernel, gpu, la.blocks / kernel_blocks[la.kernel]),
                    compute_capability=tuple(named_gpu(gpu).compute_capability),
                    written_sectors=charged(la.sectors_written, share["written"], la.distinct_written),
                    **(
                        {"dram_round_trips_per_warp": max(1.0, la.round_trips_per_warp * la.load_sites / sites)}
                        | hierarchy
                        | {**local_work(self, la, gpu), **self.pipe_work(la, gpu, pipes)}
                    ),
                )
            )
        return work

    def estimate(self, gpu="H100", flops=0.0):
        """The modelled time in seconds of the profiled call on `gpu` (kp.gpumodel.gputime; `flops`: fp32 FLOPs the call
        does, which the trace does not count). `estimate_detail` gives the terms."""
        return self.estimate_detail(gpu, flops).seconds

    def estimate_detail(self, gpu="H100", flops=0.0):
        return estimate(gpu, self.work(flops, gpu))

    def table(self, gpu="H100"):
        """One row per counted line as `gpu`'s SASS serves it (charged_lines: with nvcc's re-reads, which the table
        says where there are any) and per line of branches (kp.sourceview.line_table)."""
        return line_table(self.charged_lines(gpu), self.branches, _counted_as(self.compiled(gpu)[2]))

    def advice(self, gpu="H100"):
        """The lines worth a look, worst first, in plain words: an Advice (a list; printed, a sentence per line, or
        that there is nothing to say). The lines as `gpu`'s SASS serves them (charged_lines): a line's figures include
        what nvcc re-reads with narrower instructions, and its sentence says so."""
        said = line_advice(self.charged_lines(gpu), self.branches)
        found = [self.kernel_sass(kernel, gpu) for kernel in dict.fromkeys(la.kernel for la in self.launches)]
        local = [i for sass in found if not isinstance(sass, str) for i in sass if i.space == "local"]
        said += instruction_advice(self.compiled(gpu)[1], local, hotspot=bool(said or local))
        return Advice(dict.fromkeys(said))

    def __repr__(self):
        kernels = ", ".join(dict.fromkeys(la.kernel for la in self.launches))
        counted = len({(x.file, x.line) for x in [*self.lines, *self.branches]})
        head = f"<Profile of {len(self.launches)} launch(es) of {kernels}"
        sampled = f"; {self.sampled}" if self.sampled else ""
        return f"{head}: {counted} lines counted (a model; {_counted_as(self.basis)}){sampled}>"

    def _repr_html_(self):
        return profile_html(self)


def _counted_as(basis):
    """A `basis` (kp.gpumodel.compiled: "SASS sm_90", "source (why)") in words, for a view's title."""
    if basis.startswith("SASS"):
        return f"the accesses as nvcc compiled them, {basis}"
    return f"counted as the source wrote it: {basis[len('source (') : -1]}"


def _key(line):
    return line.kernel, line.file, line.line, line.space, line.kind


def _with_rereads(compiled, charged, widths):
    """`charged` (reloaded's `compiled` line) as the views show it: `rereads`, the requests reloaded added; its active
    lanes per request as `compiled`'s (kp.gpumodel.compiled._as_width's rule: a regrouping keeps the mean); its worst
    request the worst at the `widths` its instructions ran at (kernel 5's scalar re-reads conflict 2-way where its
    LDS.128 do not), of the regroupings reloaded charged them by (Line.widths). Of equally bad ones, the lowest bank
    (cuda_cpu_profile.h's "the lowest bank of the most words"), then the first: the compiled line's."""
    regrouped = dict(compiled.widths)
    worst = min(
        [(compiled.worst, compiled.worst_bank, compiled.worst_lanes)]
        + [regrouped[w][3:] for w in widths if w in regrouped],
        key=lambda found: (-found[0], found[1]),
    )
    return dataclasses.replace(
        charged,
        rereads=charged.requests - compiled.requests,
        lanes=round(compiled.lanes * charged.requests / compiled.requests),
        worst=worst[0],
        worst_bank=worst[1],
        worst_lanes=worst[2],
    )
