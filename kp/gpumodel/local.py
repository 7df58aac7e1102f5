"""Local memory as nvcc compiled it (issue 31): a launch's LDL/STL traffic and each thread's stack, for the GPU
model's local-memory term (kp.gpumodel.gputime). Per-thread arrays that registers cannot hold (indexed by data) and
spilled registers live in local memory: per thread, but interleaved so that consecutive 32-bit words belong to
consecutive lanes (NVIDIA's Nsight documentation, "Memory Statistics - Local"), so a warp's request of w bytes per
lane at one offset is 32 x w bytes in whole 128-byte lines, cached in the L1 and the L2. Owns that counting only:
reads a Profile's public results (kp.gpumodel.compiled's SASS per kernel and runs per line, kp.gpumodel.ptxas's
stack frame); never runs a kernel.
"""

from pathlib import Path

from kp.files import ROOT
from kp.gpumodel.ptxas import file_constants, instantiation, kernel_resources
from kp.gpumodel.sass import arch_of

LINE_BYTES = 128
WARP = 32


def local_lines(instructions, runs, block_runs=None):
    """The 128-byte lines the local loads and stores of one kernel's SASS moved, each LDL/STL moving 32 lanes x its
    width / 128 lines (at least one) per warp-level run. Where the trace fixes the runs of an LDL/STL's basic block
    (`block_runs`: {offset: (runs, bound)}, kp.gpumodel.runs.block_runs; runs None where open), it is charged its
    block's runs: each unrolled copy and remainder as often as it ran. The instructions of open blocks fall back to a
    per-line rule on their `.cu` line's runs (`runs`: {(file, line): runs}), each at most its block's bound: a line
    with global or shared accesses has its runs counted exactly (kp.gpumodel.sass.line_runs: its requests over its
    instructions, passes through all of them), so every open local instruction at it is charged per run; any other
    line's runs are its loop's iterations as the source wrote them (a branch's evaluations), which nvcc's unrolling
    spreads over several copies and paths: per run it is charged one access of each kind it has open (load, store), at
    its narrowest width, what one iteration of the source moves, for the runs its known copies of that kind did not
    move (their runs x width / that width), at most its block's bound (tests/test_local.py): a heuristic."""
    block_runs = block_runs or {}
    at = {}
    for i in instructions:
        at.setdefault((i.file, i.line), []).append(i)
    total = 0.0
    for place, group in at.items():
        local = [i for i in group if i.space == "local"]
        known = [i for i in local if block_runs.get(i.offset, (None,))[0] is not None]
        total += sum(block_runs[i.offset][0] * _lines(i) for i in known)
        opened = [i for i in local if i not in known]
        if not opened:
            continue
        ran, exact = runs.get(place, 0.0), any(i.space in ("global", "shared") for i in group)
        if not exact:
            opened = list({i.kind: i for i in sorted(opened, key=lambda i: -i.width)}.values())  # each kind's narrowest
        for i in opened:
            left = ran  # the source's iterations the known copies of its kind did not move (exact lines: every run)
            if not exact:
                moved = sum(block_runs[k.offset][0] * k.width for k in known if k.kind == i.kind)
                left = max(0.0, ran - moved / i.width)
            total += min(left, block_runs.get(i.offset, (None, float("inf")))[1]) * _lines(i)
    return total


def _lines(instruction):
    return max(1, WARP * instruction.width // LINE_BYTES)


def stack_bytes(file, kernel, ctype=None, gpu="H100"):
    """The stack frame of the instantiation of `kernel` a launch ran, bytes per thread (ptxas -v), 0 where ptxas
    is not at hand or does not name the kernel."""
    path = ROOT / file if not str(file).startswith("/") else Path(file)
    try:
        rows, constants = list(kernel_resources(path, arch_of(gpu))), file_constants(path.read_text())
    except Exception:  # no nvcc, or it failed: no stack known (the term is then the L1 pipe's alone)
        return 0
    chosen = instantiation([str(r.get("kernel", "")) for r in rows], kernel, ctype, constants)
    return next((int(r["stack (bytes)"]) for r in rows if r.get("kernel") == chosen), 0)


def local_work(counts, launch, gpu="H100"):
    """{local_lines, local_bytes_per_thread} of one launch of a Profile `counts` (kp.gpumodel.gputime.LaunchWork's
    fields): its kernel's local lines (local_lines at its basic blocks' runs, over every launch of the kernel)
    shared out by the launch's blocks, and its stack frame; {} where the kernel's SASS is not at hand or has no local
    access."""
    found = counts.kernel_sass(launch.kernel, gpu)
    if isinstance(found, str) or not any(i.space == "local" for i in found):
        return {}
    runs = {(x.file, x.line): x.executions for x in counts.compiled(gpu)[1] if x.kernel == launch.kernel}
    blocks = sum(la.blocks for la in counts.launches if la.kernel == launch.kernel) or 1
    return {
        "local_lines": local_lines(found, runs, counts.block_runs(launch.kernel, gpu)) * launch.blocks / blocks,
        "local_bytes_per_thread": stack_bytes(launch.file, launch.kernel, counts.ctype, gpu),
    }
