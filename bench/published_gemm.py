"""The GPU model against timings published for kernels no one here wrote: siboehm's ten fp32 SGEMM kernels
(github.com/siboehm/SGEMM_CUDA, vendored with their bodies verbatim in bench/kernels/sgemm/sgemm.cu) at 4096³, against
the GFLOP/s its README publishes for an RTX A6000. Prints markdown tables.

    python bench/published_gemm.py          # the model at 4096³ (max_blocks=2; a few minutes), against the README
    python bench/published_gemm.py --quick  # the model at 256³: shows that it runs, compares nothing
    python bench/published_gemm.py --gpu H100  # the model on another GPU of kp.gpumodel.gpus
    python bench/published_gemm.py --measure-only --out m.json  # on a GPU: time the kernels only, no model (seconds)
    python bench/published_gemm.py --measured m.json  # anywhere: the model beside that file's times

Each kernel is profiled on the CPU stand-in in check mode (kp.gpumodel.profile, as bench/ladder_linear.py does: 2
blocks of each launch traced, the counts scaled to the grid) with siboehm's arguments (C = 0.5·A·B + 3·C, A, B and C
random) and timed by the model (kp.gpumodel.gputime) on the named GPU with 2·4096³ FLOPs. The published time is
2·4096³ / the README's GFLOP/s (siboehm's sgemm.cu: 50 launches timed with CUDA events, FLOPs = 2·m·n·k). Then:
model ÷ published, the model's bound, the mean and worst |model ÷ published - 1| and Kendall's τ between the two
rankings (issue 31's goals: mean ≤ 15%, worst ≤ 35%, τ ≥ 0.9), and the model's terms for the worst kernels.
Nothing here is fitted: the model's constants are kp.gpumodel.gpus' and kp.gpumodel.gpu_constants'.

On a GPU the same script times each kernel with CUDA events (kp.bench.median_ms) at the size it models, less the
op's copy of C (timed alone); --measure-only does only that and writes the times to a JSON file, which --measured
joins to the model later on any machine (a lent GPU's minutes go to timing, not to the stand-in's profiling). Without
--gpu the model times the GPU measured (torch.cuda.get_device_name(), as device_model() finds its row of
kp.gpumodel.gpus), or the A6000 where nothing was measured. The model is set against a measurement only where the two
are the same GPU: a GPU the model has no row for (an H200) gets its measured column printed alone, with a warning.
"""

import argparse
import datetime
import json
import re
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/published_gemm.py` finds kp

import helpers  # noqa: E402
import kp.files  # noqa: E402
from kp.bench import median_ms  # noqa: E402
from kp.gpumodel.gpus import gpu as named_gpu  # noqa: E402
from kp.gpumodel.profile import profile  # noqa: E402
from kp.table import Table, number  # noqa: E402

KERNEL = kp.files.ROOT / "bench" / "kernels" / "sgemm" / "sgemm.cu"
SIZE, QUICK_SIZE, MAX_BLOCKS = 4096, 256, 2
ALPHA, BETA = 0.5, 3.0  # siboehm's sgemm.cu: "float alpha = 0.5, beta = 3.0; // GEMM input parameters, C=α*AB+β*C"
PUBLISHED_GPU = "RTX A6000"
PUBLISHED_WHERE = (
    "siboehm/SGEMM_CUDA README.md at commit 60cba6f9b20a198116c76f18de8047f44df8c8b8 (2023-12-27), "
    '"Running the kernels on a NVIDIA A6000 (Ampere)", "GFLOPs at matrix size 4096x4096"; the figures came with '
    '4820c60 (2023-03-04, "Update results"; its heading said A100, corrected to A6000 two minutes later in 06d2cf5, '
    "and 4092x4092 corrected to 4096x4096 in b64882f). Kernels 1-10 and their launches at 4820c60 differ from "
    "60cba6f's (vendored) only in kernel 10's const qualifiers and comments"
)
# The README's table as it stands at that commit, copied whole (kernels 11 and 0 are not modelled here: 11 is not one
# of the ten, 0 is cuBLAS)
PUBLISHED_TABLE = """\
| Kernel                              |  GFLOPs/s | Performance relative to cuBLAS |
|:------------------------------------|----------:|:-------------------------------|
| 1: Naive                            |   `309.0` | 1.3%                           |
| 2: GMEM Coalescing                  |  `1986.5` | 8.5%                           |
| 3: SMEM Caching                     |  `2980.3` | 12.8%                          |
| 4: 1D Blocktiling                   |  `8474.7` | 36.5%                          |
| 5: 2D Blocktiling                   | `15971.7` | 68.7%                          |
| 7: Avoid Bank Conflicts (Linearize) | `16213.4` | 69.7%                          |
| 8: Avoid Bank Conflicts (Offset)    | `16459.2` | 70.8%                          |
| 11: Double Buffering                | `17278.3` | 74.3%                          |
| 6: Vectorized Mem Access            | `18237.3` | 78.4%                          |
| 9: Autotuning                       | `19721.0` | 84.8%                          |
| 10: Warptiling                      | `21779.3` | 93.7%                          |
| 0: cuBLAS                           | `23249.6` | 100.0%                         |
"""
KERNELS = range(1, 11)
GOALS = {"mean": 0.15, "worst": 0.35, "tau": 0.9}  # issue 31's, for the held-out set
DETAILED = 3  # the worst kernels whose terms are printed


def published():
    """{kernel: (name, GFLOP/s)} read from PUBLISHED_TABLE, kernels 1 to 10."""
    found = {}
    for name, rate in re.findall(r"^\| (\d+: [^|]*?) +\| +`([\d.]+)` \|", PUBLISHED_TABLE, re.M):
        found[int(name.split(":")[0])] = (name, float(rate))
    return {k: found[k] for k in KERNELS}


def kendall_tau(xs, ys):
    """Kendall's τ-a of two equally long sequences: (concordant - discordant pairs) / all pairs (ties count 0)."""
    pairs = [(i, j) for i in range(len(xs)) for j in range(i + 1, len(xs))]
    sign = [(xs[i] - xs[j]) * (ys[i] - ys[j]) for i, j in pairs]
    return (sum(s > 0 for s in sign) - sum(s < 0 for s in sign)) / len(pairs)


def modelled(checked, n, kernel, gpu, max_blocks):
    """(the Estimate of kernel `kernel` at n³ on `gpu`, its Profile, seconds profile() took)."""
    torch.manual_seed(0)
    a, b, c = torch.randn(n, n), torch.randn(n, n), torch.randn(n, n)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        p = profile(checked.sgemm, a, b, c, ALPHA, BETA, kernel, max_blocks=max_blocks)
    took = time.perf_counter() - start
    return p.estimate_detail(gpu, flops=2 * n**3), p, took


def device_model(device):
    """The name of kp.gpumodel.gpus' row for the GPU torch.cuda.get_device_name() calls `device` ("NVIDIA H100 80GB
    HBM3" -> "H100 SXM"), or None where the model has no row for it (an H200). Its words, less NVIDIA's brand words,
    are tried longest first: a qualifier the table lacks (80GB HBM3) is dropped, one it has (PCIe) is kept."""
    words = [w for w in re.split(r"[\s-]+", device) if w.lower() not in ("nvidia", "geforce", "tesla", "")]
    for i in range(len(words), 0, -1):
        try:
            return named_gpu(" ".join(words[:i])).name
        except ValueError:
            continue
    return None


def write_measured(path, n, kernels):
    """--measure-only: time `kernels` at n³ on this GPU and write {device, torch, size, date, ms} to `path`."""
    if not torch.cuda.is_available():
        raise RuntimeError("--measure-only: no GPU here (it times the kernels with CUDA events)")
    ms = measured_ms(n, kernels)
    record = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "size": n,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "ms": {str(k): v for k, v in ms.items()},
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(record, indent=1) + "\n")
    print(f"{record['device']}, {n}³: " + ", ".join(f"kernel {k} {number(v)} ms" for k, v in ms.items()))
    print(f"Written to {path}; the model beside it, on any machine: python bench/published_gemm.py --measured {path}")


def read_measured(path, n, kernels):
    """(device, {kernel: ms}) from a file of --measure-only's; RuntimeError naming --measured where it was timed at
    another size than the one modelled or lacks one of `kernels`."""
    record = json.loads(Path(path).read_text())
    if record["size"] != n:
        raise RuntimeError(f"--measured: {path} was timed at {record['size']}³, the model runs at {n}³ (--quick: 256³)")
    missing = [k for k in kernels if str(k) not in record["ms"]]
    if missing:
        raise RuntimeError(f"--measured: {path} has no time for kernel(s) {missing} (pass --kernels)")
    return record["device"], {k: record["ms"][str(k)] for k in kernels}


def measured_ms(n, kernels):
    """{kernel: median ms at n³} of each of `kernels` on this machine's GPU, CUDA events (kp.bench.median_ms). The op
    writes a copy of C (siboehm's runner updates C in place): the copy's own median is taken off each kernel's."""
    ext = helpers.load_kernel(KERNEL, target="cuda", quiet=True)
    torch.manual_seed(0)
    a, b, c = (torch.randn(n, n, device="cuda") for _ in range(3))
    copy_ms = median_ms(torch.clone, (c,))[0]
    return {k: median_ms(ext.sgemm, (a, b, c, ALPHA, BETA, k))[0] - copy_ms for k in kernels}


def terms(e):
    """A launch's terms as the model weighs them (seconds), and what it counted, for the detail table."""
    occ = e.occupancy
    return {
        "bound": e.bound,
        "memory (DRAM bytes / bandwidth)": number(e.bandwidth_s * 1e3),
        "latency (round trips)": number(e.latency_s * 1e3),
        "L2": number(e.l2_s * 1e3),
        "shared memory": number(e.shared_s * 1e3),
        "L1 pipe (shared + global lines)": number(e.l1_s * 1e3),
        "issue": number(e.issue_s * 1e3),
        "slowest arithmetic pipe": f"{number(e.pipe_s * 1e3)} ({e.pipe_bound})",
        "FLOP": number(e.compute_s * 1e3),
        "phases add": "yes" if e.phases_add else "no",
        "occupancy": f"{occ.blocks_per_sm} block(s) of {occ.threads_per_block}, {occ.registers_per_thread} regs "
        f"({occ.limited_by})",
        "L1 / L2 / DRAM": "{:.0%} / {:.0%} / {:.0%}".format(*e.hit_shares),
    }


def counters(p, gpu, n):
    """What the model was given for the launch (per block where it says so): the figures the diagnosis reads."""
    (w,) = p.work(2 * n**3, gpu)
    per_block = 1 / w.grid_blocks
    compiled, _, basis = p.compiled(gpu)

    def load_sectors(lines):
        return sum(ln.units for ln in lines if (ln.space, ln.kind) == ("global", "load"))

    trace, sass = load_sectors(p.source_lines), load_sectors(compiled)
    return {
        # A float4 read member by member is one request of nvcc's (an LDG.128) and four of the trace's: the model is
        # charged the sectors SASS requests (kp.gpumodel.charges), so this is what that charge took off (the trace's
        # over the SASS's); "no SASS" where nvcc was not found and the source's accesses were charged as they are.
        "global load sectors, trace ÷ SASS": f"{trace / sass:.2f}" if basis.startswith("SASS") and sass else "no SASS",
        "shared wavefronts / block": number(w.shared_wavefronts * per_block),
        "global L1 lines / block": number(w.l1_wavefronts * per_block),
        "warp instructions / block": number(w.issued * per_block),
        "round trips / warp": number(w.dram_round_trips_per_warp),
        "DRAM read MB": number(w.dram_read_sectors * 32 / 1e6),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"the model at {QUICK_SIZE}³ (shows that it runs)")
    parser.add_argument("--gpu", help="the GPU the model times (a name of kp.gpumodel.gpus; the one measured)")
    parser.add_argument("--max-blocks", type=int, default=MAX_BLOCKS, help="blocks of each launch traced")
    parser.add_argument("--kernels", default=",".join(map(str, KERNELS)), help="which of 1-10, e.g. 1,2,10 (all)")
    parser.add_argument("--measure-only", action="store_true", help="on a GPU: time the kernels, write --out, no model")
    parser.add_argument("--out", default=str(kp.files.ROOT / "build" / "published_gemm.json"), help="--measure-only's")
    parser.add_argument("--measured", help="a file of --measure-only's: the model beside its times")
    args = parser.parse_args(argv)
    kernels = [int(k) for k in args.kernels.split(",")]
    if not kernels or any(k not in KERNELS for k in kernels):
        raise RuntimeError(f"--kernels: each must be 1 to 10, got {args.kernels!r}")
    torch.set_num_threads(1)
    n = QUICK_SIZE if args.quick else SIZE
    if args.measure_only:
        return write_measured(args.out, n, kernels)
    if args.measured:
        device, measured = read_measured(args.measured, n, kernels)
    elif torch.cuda.is_available():
        device, measured = torch.cuda.get_device_name(), None  # timed after the model's profiles, below
    else:
        device, measured = None, {}
    row_measured = device_model(device) if device else None
    # an unknown --gpu: kp.gpumodel.gpus's error, before any trace
    model_gpu = named_gpu(args.gpu or row_measured or PUBLISHED_GPU).name
    compare = not args.quick and model_gpu == PUBLISHED_GPU
    against_measured = device is not None and row_measured == model_gpu
    start = time.perf_counter()
    checked = helpers.load_kernel(KERNEL, target="cpu", check=True, quiet=True)
    rates = published()
    results = {k: modelled(checked, n, k, model_gpu, args.max_blocks) for k in kernels}
    if measured is None:
        measured = measured_ms(n, kernels)
    rows = []
    for k, (est, _, took) in results.items():
        name, rate = rates[k]
        row = {"kernel": name, f"model ms ({model_gpu}, {n}³)": number(est.seconds * 1e3)}
        if compare:
            pub = 2 * SIZE**3 / (rate * 1e9)
            row["published ms (A6000)"] = number(pub * 1e3)
            row["model ÷ published"] = f"{est.seconds / pub:.2f}"
        row["bound (model)"] = est.launches[0].bound
        if measured:
            row[f"measured ms ({device})"] = number(measured[k])
        if against_measured:
            row["model ÷ measured"] = f"{est.seconds * 1e3 / measured[k]:.2f}"
        row["profile s"] = f"{took:.1f}"
        rows.append(row)
    print(
        f"siboehm's SGEMM kernels (bench/kernels/sgemm), C = {ALPHA}·A·B + {BETA}·C at {n}³: the GPU model "
        f"({model_gpu}; counted on the CPU stand-in, {args.max_blocks} blocks of each launch traced)"
    )
    print(f"Published: {PUBLISHED_WHERE}:\n\n{PUBLISHED_TABLE}")
    if not measured:
        print("No GPU here: the measured column is left out (on a GPU this script times each kernel itself).\n")
    elif not against_measured:
        print(
            f"WARNING: measured on {device}, "
            + (f"which is the model's {row_measured}" if row_measured else "which kp.gpumodel.gpus has no row for")
            + f", not the modelled {model_gpu}: the measured column is printed alone, set against no model.\n"
        )
    print(Table(rows).markdown())
    against = {}
    if compare:
        against["published (A6000)"] = {k: 2 * SIZE**3 / (rates[k][1] * 1e9) for k in kernels}
    if against_measured:
        against[f"measured ({device})"] = {k: measured[k] / 1e3 for k in kernels}
    if not against:
        print("\n--quick, or a GPU other than the A6000 without one here: nothing to compare with.")
    for what, times in against.items():
        summarise(what, results, times, n)
    print(f"\nThe script took {time.perf_counter() - start:.0f} s.")


def summarise(what, results, times, n):
    """The goals' figures against `times` ({kernel: seconds}, at n³), then the terms of the worst kernels."""
    ratio = {k: results[k][0].seconds / times[k] for k in times}
    error = {k: abs(r - 1) for k, r in ratio.items()}
    mean, worst = sum(error.values()) / len(error), max(error, key=error.get)
    tau = kendall_tau([results[k][0].seconds for k in times], [times[k] for k in times]) if len(times) > 1 else 1.0

    def goal(value, key, below=True):
        met = value <= GOALS[key] if below else value >= GOALS[key]
        return f"{'met' if met else 'missed'} (goal {'≤' if below else '≥'} {GOALS[key]:g})"

    print(f"\nAgainst {what}:")
    print(f"- mean |model ÷ {what.split()[0]} - 1|: {mean:.1%}, {goal(mean, 'mean')}")
    print(f"- worst: kernel {worst}, {error[worst]:.1%} ({ratio[worst]:.2f}x), {goal(error[worst], 'worst')}")
    order = sorted(times, key=times.get)  # fastest first, as published or measured
    swapped = [
        (i, j) for x, i in enumerate(order) for j in order[x + 1 :] if results[i][0].seconds > results[j][0].seconds
    ]
    pairs = len(order) * (len(order) - 1) // 2
    print(
        f"- Kendall τ of the two rankings: {tau:.2f}, {goal(tau, 'tau', below=False)}; {len(swapped)} of {pairs} "
        f"pairs modelled in the wrong order{' (the faster one first): ' if swapped else ''}"
        f"{', '.join(f'{i} vs {j}' for i, j in swapped)}"
    )
    detail = sorted(times, key=lambda k: -error[k])[:DETAILED]
    columns = {}
    for k in detail:
        est, p, _ = results[k]
        columns[f"kernel {k}"] = {
            f"model ÷ {what.split()[0]}": f"{ratio[k]:.2f}",
            **terms(est.launches[0]),
            **counters(p, est.gpu, n),
        }
    figures = list(next(iter(columns.values())))
    rows = [{"figure": f, **{kernel: column[f] for kernel, column in columns.items()}} for f in figures]
    print(f"\nThe model's terms (ms) and counts for the {len(detail)} worst:\n")
    print(Table(rows).markdown())


if __name__ == "__main__":
    main()
