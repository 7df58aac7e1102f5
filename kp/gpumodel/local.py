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


def local_lines(instructions, runs):
    """The 128-byte lines the local loads and stores of one kernel's SASS moved: each LDL/STL's lines per warp
    request (32 lanes x its width / 128, at least one) times the warp-level runs of its `.cu` line (`runs`:
    {(file, line): runs}). A local instruction is taken to run as often as its line does (kp.gpumodel.sass.line_runs:
    exact where the trace counts the line's requests; a loop nvcc unrolled in part counts its body once per
    iteration, that many times too many)."""
    local = [i for i in instructions if i.space == "local"]
    return sum(runs.get((i.file, i.line), 0.0) * max(1, WARP * i.width // LINE_BYTES) for i in local)


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
    fields): its kernel's local lines (local_lines, over every launch of the kernel) shared out by the launch's
    blocks, and its stack frame; {} where the kernel's SASS is not at hand or has no local access."""
    found = counts.kernel_sass(launch.kernel, gpu)
    if isinstance(found, str) or not any(i.space == "local" for i in found):
        return {}
    runs = {(x.file, x.line): x.executions for x in counts.compiled(gpu)[1] if x.kernel == launch.kernel}
    blocks = sum(la.blocks for la in counts.launches if la.kernel == launch.kernel) or 1
    return {
        "local_lines": local_lines(found, runs) * launch.blocks / blocks,
        "local_bytes_per_thread": stack_bytes(launch.file, launch.kernel, counts.ctype, gpu),
    }
