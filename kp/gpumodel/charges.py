"""A launch's memory charges as nvcc compiled its kernel (issue 31): the stand-in's per-launch totals (the sectors its
global loads and stores requested, the 128-byte lines its global requests touched, its shared wavefronts, its load
requests) count the accesses as the source wrote them, where nvcc merges a lane's accesses of consecutive bytes into
one wider instruction: a float4 whose members the source reads one by one (`float4 t = p4[i]; ... t.x`) is four
4-byte requests of a warp in the trace, each touching every sector of the warp's 512 bytes, and one LDG.E.128 in SASS.
The lines as compiled (kp.gpumodel.compiled.as_compiled) count what the SASS requests; this module scales a launch's
totals to them. Owns that scaling only: takes kp.gpumodel.counts' records (the source's lines, the compiled ones, a
Launch) and returns numbers for kp.gpumodel.gputime.LaunchWork; never reads SASS or a trace itself.

The rule: per kernel, a launch's total of one space and kind x (the kernel's compiled lines' units / its source lines'
units), the same share for every launch of the kernel (the lines sum over its launches; the launch totals are each
launch's). Where a kernel has no SASS its compiled lines are its source lines: the share is 1, the trace's counts.
The L1's 128-byte lines (its wavefronts) are counted per request in the trace for loads and stores together and not
per `.cu` line, so they take the share of the global sectors, loads and stores together: exact where merging keeps a
request's sectors per 128-byte line, as it does for the lanes' consecutive bytes nvcc merges (four 4-byte reads at a
16-byte stride touch the 16 sectors and 4 lines of the warp's 512 bytes, each of them; one LDG.E.128 does once).
DRAM's distinct sectors are not scaled: the same sectors are touched however the instructions group them.

Reloads (reloaded): a line as compiled counts its accesses at the width of its widest instruction, each access
once; nvcc may also re-read some of them with a narrower instruction (siboehm's kernel 5 at sm_80/86: its As row loads
are 16 LDS.128 per tile and 8 scalar LDS re-reading each row's first float, scheduled early for the first FFMAs). The
hardware serves those LDS too: where a shared line's instructions ran more often (their runs from the SASS's basic
blocks) than its compiled requests, the excess are requests the trace never saw, charged the narrower width's
wavefronts per request as the trace's regrouping at that width counts them. Which lines re-read: re_reads (all of
the line's instructions in one basic block of kp.gpumodel.cfg; kp.gpumodel.runs asks the same). Shared lines only: a
global line's paths (the linear ladder's v7: a packed one and a scalar one) take their runs from its requests
(kp.gpumodel.runs), so none of its instructions can have run more than its requests.
"""

import dataclasses

from kp.gpumodel.cfg import block_of

GLOBAL_LOAD = ("global", "load")
# (space, kinds) of each share: the trace's `sectors_read` are the global loads', `sectors_written` the global stores'
# and atomics' (cuda_cpu_profile.h, profile_block_end), its L1 lines every global request's
SHARES = {
    "read": ("global", ("load",)),
    "written": ("global", ("store", "atomic")),
    "global": ("global", ("load", "store", "atomic")),
    "shared": ("shared", ("load", "store", "atomic")),
}


def compiled_shares(source_lines, compiled_lines, kernel):
    """{"read", "written", "global", "shared": what `kernel`'s SASS requests over what its source requests} of that
    space and those kinds (SHARES): the compiled lines' units (sectors or wavefronts) over the source lines'; 1 where
    the source requested none."""

    def units(lines, space, kinds):
        return sum(ln.units for ln in lines if ln.kernel == kernel and ln.space == space and ln.kind in kinds)

    shares = {}
    for name, (space, kinds) in SHARES.items():
        source = units(source_lines, space, kinds)
        shares[name] = units(compiled_lines, space, kinds) / source if source else 1.0
    return shares


def charged(traced, share, distinct):
    """A launch's requested sectors as the SASS requests them: `traced` x `share`, never fewer than the `distinct`
    sectors the launch touched (a request touches each of its sectors at least once however the instructions group
    them). The share is one per kernel, pooled over its launches: a launch whose accesses nvcc merges less than the
    kernel's others (another shape taking a scalar path) would otherwise be charged below what it touched, and the
    hierarchy caps the L2's and DRAM's reads by the requested sectors (kp.gpumodel.caches)."""
    return max(distinct, round(traced * share))


def in_flight_sites(in_flight, launch, source_lines, compiled_lines):
    """(the global loads one warp of `launch` has in flight per round trip as the SASS issues them, the source's load
    requests that stands for): `in_flight` (kp.gpumodel.compiled's loads_in_flight), and the source's load requests per
    SASS load request of the kernel; without SASS (`in_flight` None), the trace's load sites, all taken in flight
    together (one round trip per pass over them)."""
    if in_flight is None or not launch.load_sites:
        return max(1, launch.load_sites), max(1, launch.load_sites)

    def requests(lines):
        return sum(ln.requests for ln in lines if ln.kernel == launch.kernel and (ln.space, ln.kind) == GLOBAL_LOAD)

    compiled, source = requests(compiled_lines), requests(source_lines)
    return in_flight, in_flight * (source / compiled if compiled else 1.0)


def re_reads(instructions, block):
    """Whether one line's SASS instructions of one space and kind (`instructions`, kp.gpumodel.sass.Instruction)
    re-read what its widest one requested (the module's "Reloads"): shared, of several widths, none predicated (`@P0
    LDS` issues for warps with no lane on, which request nothing), all in one basic block (`block`: {offset: basic
    block}, kp.gpumodel.cfg.block_of), so that they ran equally often (siboehm's kernel 5). In several blocks they may
    be two paths, one never run (a packed loop and its scalar copy: attention's backward). kp.gpumodel.runs leaves such
    a line out of its equations (its instructions ran more than its requests); reloaded charges the excess."""
    return (
        len({i.width for i in instructions}) > 1
        and all(i.space == "shared" for i in instructions)
        and not any(i.text.startswith("@") for i in instructions)
        and len({block[i.offset] for i in instructions}) == 1
    )


def reloaded(lines, instruction_runs, listings):
    """`lines` (kp.gpumodel.compiled.as_compiled's) with the requests and wavefronts of the narrower shared
    instructions that re-read what a line's widest instruction already requested (the module's "Reloads"): per line,
    the runs of its SASS instructions of its space and kind beyond its compiled requests, at most the narrower ones'
    runs, each charged the line's mean units per request at that width (Line.widths). A scalar fallback path beside
    a packed one adds nothing: its runs are requests the compiled line counts already (accesses the widest width
    could not merge); nor does a line that does not re-read (re_reads: a predicated instruction, whose runs count warps
    that requested nothing, or its instructions in several basic blocks, which may be two paths, one never run), nor
    one whose widest instructions alone ran more than its requests (runs not fixed by the trace).
    `instruction_runs`: {kernel: [(Instruction, warp-level runs)]}, kp.gpumodel.compiled's _instruction_runs;
    `listings`: {kernel: its whole SASS listing}, whose basic blocks re_reads asks (as kp.gpumodel.runs.block_runs
    splits them): the instruction runs leave some instructions out (the open slow-division side, a BRA rejoining it
    among them), and without them two blocks would read as one."""
    found, block = {}, {}
    for kernel, pairs in instruction_runs.items():
        block[kernel] = block_of(listings[kernel])
        for i, runs in pairs:
            if i.space == "shared" and i.width:
                found.setdefault((kernel, i.file, i.line, i.space, i.kind), []).append((i, runs))
    out = []
    for ln in lines:
        pairs = found.get((ln.kernel, ln.file, ln.line, ln.space, ln.kind), [])
        ran = [(i.width, n) for i, n in pairs] if pairs and re_reads([i for i, _ in pairs], block[ln.kernel]) else []
        widest = max((w for w, _ in ran), default=0)
        narrow = [(w, n) for w, n in ran if w < widest and n > 0]
        excess = min(sum(n for _, n in ran) - ln.requests, sum(n for _, n in narrow))
        regrouped = dict(ln.widths)
        # the widest instructions alone running more than the line's requests: runs the trace cannot have made (a
        # basic block the equations left open, charged a line's executions), not re-reads; within half a request and a
        # ten-thousandth of the requests: the solver's rounding (siboehm's kernel 5 at 4096³: 4.1 runs above 67.1M)
        slack = 0.5 + 1e-4 * ln.requests
        wide = sum(n for w, n in ran if w == widest)
        unknown = not all(w in regrouped and regrouped[w][0] for w, _ in narrow)
        if excess < slack or wide > ln.requests + slack or unknown:
            out.append(ln)
            continue
        per_request = sum(n * regrouped[w][1] / regrouped[w][0] for w, n in narrow) / sum(n for _, n in narrow)
        ideal = sum(n * regrouped[w][2] / regrouped[w][0] for w, n in narrow) / sum(n for _, n in narrow)
        out.append(dataclasses.replace(ln, requests=ln.requests + round(excess), units=ln.units + round(excess *
                                       per_request), ideal=ln.ideal + round(excess * ideal)))  # fmt: skip
    return out
