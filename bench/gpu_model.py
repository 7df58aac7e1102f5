"""The GPU model (kp.gpumodel.profile's counters, kp.gpumodel.gputime's time) against what the H100 measured. Prints a
markdown table.

    python bench/gpu_model.py          # every op at the size the H100 ran it, blocks sampled (a few minutes)
    python bench/gpu_model.py --quick  # one small op: shows that it runs
    python bench/gpu_model.py --sampling [--quick]  # every kernel of kernels/ at max_blocks 2, 4, 8, 16 and 0

Each op of bench/ops.py that the README's "On a GPU" table measured (`make bench` on one NVIDIA H100 80GB HBM3,
torch 2.11.0+cu130, 2026-11-23: CUDA events, float32) is profiled here on the CPU stand-in, in check mode, at the
same size: about MAX_BLOCKS blocks of each launch run and are counted (spread over the grid, the counts scaled; the
model needs the counts, not the output). Its modelled H100 time is set against the measured one (the op's bytes
or FLOPs formula over the measured throughput). The goals (issue 31): within 15% for every op, add2_v1 slower than
add2. Nothing here is fitted: the
model's constants are kp.gpumodel.gpus' and kp.gpumodel.gpu_constants'.

What profile() costs per kernel, in seconds on this machine: "trace" is profile() itself (the stand-in's run with
the profiler on, at the sampled blocks, and the counts put at their lines and read as nvcc's SASS serves them, the
SASS read from its cache), "SASS cold" kp.gpumodel.sass's nvcc + nvdisasm with its cache emptied, "SASS warm" the same
read from the cache, "model" the estimate from the counts (kp.gpumodel.gputime).

--sampling: the modelled time of every kernel of kernels/ (each op of bench/ops.py, the linear ladder's versions,
colsum's, reduce_sum's, softmax's, layer norm and causal attention's) at a size of many blocks, counting 2, 4, 8 and
16 sampled blocks per launch; the spread (largest / smallest - 1) is what sampling moves the answer by (issue 31's
goal: at most 5%). Then with every block traced (max_blocks=0) where that is affordable, the whole grid's work as the
16-block profile counts it (all_blocks_work) within --all-blocks-bound ("-" elsewhere, and why below the table), and
how far the farthest of the four sampled figures is from it, and what it added to the run (about 0 where max_blocks=16
ran every block already). --kernels NAME,...: only the kernels whose names contain one of these.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import torch

import helpers
import kp.files
import kp.gpumodel.sass
from kp.build import resolve_kernel
from kp.gpumodel.gpus import H100_MEASURED
from kp.gpumodel.profile import profile
from kp.table import Table

sys.path.insert(0, str(kp.files.ROOT / "bench"))
from ops import all_ops  # noqa: E402

MEASURED = H100_MEASURED  # the README's "On a GPU" table (kp.gpumodel.gpus)
MAX_BLOCKS = 64
GPU = "H100"
# Ops whose kernel file changed since the H100 measured them: modelled as they were measured, in a copy of the file
# with this one change (kernel_variant), so that model and measurement describe the same kernel.
AS_MEASURED = {
    # linear 4096³ was measured with the 16 x 16 shared tiles alone (2026-11-23); large outputs now take the
    # register-tiled kernel of notebook 07, not yet measured on a GPU.
    "linear": ("constexpr int64_t FAST_MIN_BLOCKS = 16;", "constexpr int64_t FAST_MIN_BLOCKS = int64_t(1) << 62;"),
}


def sass_seconds(kernel):
    """(cold, warm): seconds kp.gpumodel.sass takes for the kernel's file on GPU's arch, its cache emptied first, then
    again."""
    found = Path(str(kernel))
    cu = found if found.suffix == ".cu" and found.is_file() else resolve_kernel(kernel)[0]
    for cached in (kp.files.BUILD_ROOT / "cuda" / "sass").glob(f"{cu.stem}-*.json"):
        cached.unlink()
    seconds = []
    for _ in range(2):
        start = time.perf_counter()
        try:
            kp.gpumodel.sass.sass(cu, GPU)
        except kp.gpumodel.sass.SassUnavailable:
            pass  # the model then counts the source, and says so; the time is still what a profile pays
        seconds.append(time.perf_counter() - start)
    return tuple(seconds)


def model_row(op, size, rate, max_blocks):
    kernel = op.kernel
    if op.op in AS_MEASURED:
        kernel = helpers.kernel_variant(op.kernel, f"{op.kernel}_as_measured", *AS_MEASURED[op.op])
    ext = helpers.load_kernel(kernel, target="cpu", check=True, quiet=True)
    cold, warm = sass_seconds(kernel)
    torch.manual_seed(0)
    inputs = op.make_inputs(size)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "sampled: ...": wanted here
        p = profile(op.custom(ext), *inputs, max_blocks=max_blocks)
    profiled = time.perf_counter() - start
    flops = op.flops(size) if op.flops else 0
    start = time.perf_counter()
    detail = p.estimate_detail(GPU, flops=flops)
    modelled = time.perf_counter() - start
    work = op.bytes_moved(size) if op.bytes_moved else flops
    measured = work / rate
    goal = abs(detail.seconds / measured - 1) <= 0.15  # issue 31: every op within 15% (issue 23 asked 20% and 2x)
    return {
        "op": op.op,
        "size": size,
        "model (µs)": detail.seconds * 1e6,
        "measured on the H100 (µs)": measured * 1e6,
        "model ÷ measured": f"{detail.seconds / measured:.3g}x",
        "bound (model)": ", ".join(dict.fromkeys(e.bound for e in detail.launches)),
        "goal": ("met" if goal else "missed") + " (within 15%)",
        "blocks counted": ", ".join(f"{la.traced} of {la.blocks}" for la in p.launches),
        "trace (s)": profiled,
        "SASS cold (s)": cold,
        "SASS warm (s)": warm,
        "model (s)": modelled,
    }


SAMPLES = (2, 4, 8, 16)
SAMPLING_SIZES = {"elementwise": 2**22, "matrix": (512, 512, 512), "involution": (8, 32, 32, 7)}


def sampling_cases(quick=False):
    """(name, kernel, the call, its arguments, FLOPs) for every kernel of kernels/ at a size of many blocks."""
    n = 256 if quick else 512
    ops = all_ops()[:1] if quick else all_ops()
    for op in ops:
        kind = "involution" if "involution" in op.op else "matrix" if op.kernel == "linear" else "elementwise"
        size = SAMPLING_SIZES[kind] if not quick else 2**18
        ext = helpers.load_kernel(op.kernel, target="cpu", check=True, quiet=True)
        torch.manual_seed(0)
        yield op.op, op.custom(ext), op.make_inputs(size), op.flops(size) if op.flops else 0
    if quick:
        return
    ladder = helpers.load_kernel("linear_ladder", target="cpu", check=True, quiet=True)
    x, w, b = torch.randn(n, n), torch.randn(n, n), torch.randn(n)
    for args in [(v,) for v in range(1, 7)] + [(7, i) for i in range(len(ladder.tiles))]:
        yield f"linear ladder {args}", ladder.linear_ladder, (x, w, b, *args), 2 * n**3
    colsum = helpers.load_kernel("colsum", target="cpu", check=True, quiet=True)
    for version in range(1, 6):
        yield f"colsum v{version}", colsum.colsum, (torch.randn(8192, 1024), version), 0
    reduce = helpers.load_kernel("reduce", target="cpu", check=True, quiet=True)
    for version in range(1, 7):
        yield f"reduce_sum v{version}", reduce.reduce_sum, (torch.randn(1 << 22), version), 0
    softmax = helpers.load_kernel("softmax", target="cpu", check=True, quiet=True)
    for version in range(1, 6):
        yield f"softmax v{version}", softmax.softmax, (torch.randn(4096, 1024), version), 0
    layernorm = helpers.load_kernel("layernorm", target="cpu", check=True, quiet=True)
    x = torch.randn(4096, 1024)
    yield "layernorm", layernorm.layernorm, (x, torch.randn(1024), torch.randn(1024), 1e-5), 0
    attention = helpers.load_kernel("attention", target="cpu", check=True, quiet=True)
    q, k, v = (torch.randn(16, 512, 64) for _ in range(3))  # 16 heads of 512 x 64, causal: the attention ladder's
    for version in (1, 2):
        yield f"attention v{version}, causal", attention.attention, (q, k, v, True, version), 0


# What tracing every block costs the stand-in, in threads' worth: each thread of the grid (its fiber, started and
# ended), each lane of a memory request (the profiler's bookkeeping per access: sectors, lines, banks) and each
# instruction a thread executes (nvcc's SASS, as the profile counts them), weighed by what profile(max_blocks=0) took
# on the 2-core development machine (AMD EPYC, 2026-11-27): about 5 µs a thread (add2's 2^20 threads: 6.2 s), 0.25
# µs a lane (causal attention v2's 3.1e8 lanes, mostly shared: 78 s) and 7 ns an instruction (involution_grad_weight's
# 5.4e8 over 16384 threads: 9.5 s); within 1.5x on the 10 kernels timed. A guide to what is affordable, not a model.
LANES_PER_THREAD, INSTRUCTIONS_PER_THREAD = 20, 700
# The default bound, 2.8M threads' worth (about 14 s each there): 32 of the 47 kernels within it, 7 of them whole at
# 16 blocks already; the other 25 added 223 s to the --sampling run (2026-11-27, the same machine at a load of about 6:
# 814 s in all). Past it: the linear ladder's first six versions (4 to 15M), causal attention (v2 16M, about 80 s at a
# load of 1; v1 54M), reduce_sum (2.9 to 5.8M), softmax v2 (3.0M) and add2_v1 (5.0M): about 10 more minutes.
ALL_BLOCKS_BOUND = 2.8e6


def all_blocks_work(p):
    """The whole grid's work for the stand-in in threads' worth (above), as the sampled profile `p` counts it."""
    threads = sum(la.blocks * la.threads_per_block for la in p.launches)
    lanes = sum(ln.lanes for ln in p.source_lines)
    instructions = 32 * sum(p.issue_instructions(GPU).values())
    return threads + lanes / LANES_PER_THREAD + instructions / INSTRUCTIONS_PER_THREAD


def sampling_rows(quick=False, bound=ALL_BLOCKS_BOUND, only=()):
    """A row per kernel of sampling_cases (only: those whose names contain one of these), and a note per kernel whose
    blocks were not all traced."""
    rows, notes = [], []
    for name, fn, inputs, flops in sampling_cases(quick):
        if only and not any(o in name for o in only):
            continue
        seconds = {}
        for max_blocks in SAMPLES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "sampled: ...": wanted here
                p = profile(fn, *inputs, max_blocks=max_blocks)
            seconds[max_blocks] = p.estimate(GPU, flops=flops)
        spread = max(seconds.values()) / min(seconds.values()) - 1
        work, took = all_blocks_work(p), 0.0
        if all(la.traced == la.blocks for la in p.launches):
            whole = seconds[SAMPLES[-1]]  # the last count ran every block already
        elif work <= bound:
            start = time.perf_counter()
            whole = profile(fn, *inputs, max_blocks=0).estimate(GPU, flops=flops)
            took = time.perf_counter() - start
        else:
            whole = None
            notes.append(f"{name}: {work / 1e6:.3g}M threads' worth, past the bound ({bound / 1e6:.3g}M)")
        farthest = None if whole is None else max(abs(s / whole - 1) for s in seconds.values())
        rows.append(
            {
                "kernel": name,
                **{f"max_blocks={m} (µs)": s * 1e6 for m, s in seconds.items()},
                "spread": f"{spread:.1%}",
                "goal (≤ 5%)": "met" if spread <= 0.05 else "missed",
                "all blocks (µs)": "-" if whole is None else whole * 1e6,
                "farthest from all blocks": "-" if whole is None else f"{farthest:.1%}",
                "all blocks took (s)": "-" if whole is None else took,
                "blocks": ", ".join(str(la.blocks) for la in p.launches),
            }
        )
    return rows, notes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small op (for tests)")
    parser.add_argument("--sampling", action="store_true", help="how much sampling moves the answer")
    parser.add_argument(
        "--all-blocks-bound",
        type=float,
        default=ALL_BLOCKS_BOUND,
        help="--sampling: trace every block where the grid's work (threads' worth: all_blocks_work) is within this",
    )
    parser.add_argument("--kernels", default="", help="--sampling: only the kernels whose names contain one of these")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.sampling:
        print(
            f"GPU model ({GPU}): the modelled time at max_blocks {', '.join(map(str, SAMPLES))}, and with every block "
            f"traced (max_blocks=0) where the grid's work is within {args.all_blocks_bound / 1e6:.3g}M threads' worth\n"
        )
        rows, notes = sampling_rows(args.quick, args.all_blocks_bound, [k for k in args.kernels.split(",") if k])
        print(Table(rows).markdown())
        if notes:
            print("\n-: not every block traced (--all-blocks-bound raises the bound):")
            print("\n".join(f"- {note}" for note in notes))
        return
    ops = {op.op: op for op in all_ops()}
    todo = {"add2": (2**20, MEASURED["add2"][1])} if args.quick else MEASURED
    rows = [model_row(ops[name], size, rate, MAX_BLOCKS) for name, (size, rate) in todo.items()]
    print(
        f"GPU model ({GPU}, kp.gpumodel.gputime) against the README's H100 measurements; counted on the CPU stand-in\n"
    )
    if args.quick:
        print("--quick: add2 at 2^20 against the 2^26 measurement: shows that it runs, measures nothing.\n")
    print(Table(rows).markdown())
    by_op = {r["op"]: r for r in rows}
    if "add2_v1" in by_op:
        v1, v2 = by_op["add2_v1"]["model (µs)"], by_op["add2"]["model (µs)"]
        order = "met: add2_v1 modelled slower" if v1 > v2 * 1.001 else "missed: add2_v1 not modelled slower"
        print(
            f"\nThe order of add2_v1 and add2: {order} than add2 ({v1:.1f} against {v2:.1f} µs; measured 294 against "
            "267 µs)."
        )


if __name__ == "__main__":
    main()
