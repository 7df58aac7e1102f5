"""The GPU model against timings published for kernels no one here wrote: siboehm's ten fp32 SGEMM kernels
(github.com/siboehm/SGEMM_CUDA, vendored with their bodies verbatim in bench/kernels/sgemm/sgemm.cu) at 4096³, on each
GPU a source publishes them for (bench/kernels/sgemm/published.py: the tables quoted with their addresses). Prints
markdown tables.

    python bench/published_gemm.py          # the model at 4096³ on every published GPU (max_blocks=2; minutes)
    python bench/published_gemm.py --quick  # the model at 256³ on the same GPUs: shows that it runs, compares nothing
    python bench/published_gemm.py --gpu A100  # one GPU of kp.gpumodel.gpus (its published sources, if any)
    python bench/published_gemm.py --measure-only --out m.json  # on a GPU: time the kernels only, no model (seconds)
    python bench/published_gemm.py --measured m.json  # anywhere: the model beside that file's times

Each kernel is profiled once on the CPU stand-in in check mode (kp.gpumodel.profile, as bench/ladder_linear.py does: 2
blocks of each launch traced, the counts scaled to the grid) with siboehm's arguments (C = 0.5·A·B + 3·C, A, B and C
random); the trace does not depend on the GPU, so each GPU only re-reads it through its own ptxas arch, occupancy
and constants (Profile.estimate_detail(gpu, flops=2·4096³)). A published time is 2·4096³ / the source's GFLOP/s
(siboehm's sgemm.cu: 50 launches timed with CUDA events, FLOPs = 2·m·n·k). Per GPU: model ÷ published and the model's
bound per kernel, the mean and worst |model ÷ published - 1| and Kendall's τ between the two rankings (issue 31's
goals: mean ≤ 15%, worst ≤ 35%, τ ≥ 0.9), the model's terms for the worst kernels; then one summary table. Nothing
here is fitted: the model's constants are kp.gpumodel.gpus' and kp.gpumodel.gpu_constants'.

On a GPU the same script times each kernel with CUDA events (kp.bench.median_ms) at the size it models, less the
op's copy of C (timed alone); --measure-only does only that and writes the times to a JSON file, which --measured
joins to the model later on any machine. Without --gpu the model times the GPU measured (device_model() finds its
row of kp.gpumodel.gpus by its exact name), or every published GPU where nothing was measured. The model is set
against a measurement only where the two are the same GPU: a GPU the model has no row for (an H200, an H100 NVL) gets
a warning and its measured column printed alone.
"""

import argparse
import datetime
import importlib.util
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
_spec = importlib.util.spec_from_file_location("sgemm_published", KERNEL.parent / "published.py")
published = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(published)
SIZE, QUICK_SIZE, MAX_BLOCKS = published.SIZE, 256, 2
ALPHA, BETA = 0.5, 3.0  # siboehm's sgemm.cu: "float alpha = 0.5, beta = 3.0; // GEMM input parameters, C=α*AB+β*C"
KERNELS = range(1, 11)
DETAILED = 3  # the worst kernels whose terms are printed
# torch.cuda.get_device_name()'s names that are a row of kp.gpumodel.gpus but do not read as its name: the H100 SXM5
# 80GB, and the A100 SXM4 80GB (the row's data sheet; the 40GB has another bandwidth, so it is not this row)
KNOWN_DEVICES = {"NVIDIA H100 80GB HBM3": "H100 SXM", "NVIDIA A100-SXM4-80GB": "A100"}
BRANDS = ("nvidia", "geforce", "tesla")


def profiled(checked, n, kernel, max_blocks):
    """(the Profile of kernel `kernel` at n³, the seconds profile() took): what every GPU's estimate reads."""
    torch.manual_seed(0)
    a, b, c = torch.randn(n, n), torch.randn(n, n), torch.randn(n, n)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="sampled: ")
        p = profile(checked.sgemm, a, b, c, ALPHA, BETA, kernel, max_blocks=max_blocks)
    return p, time.perf_counter() - start


def device_model(device):
    """The name of kp.gpumodel.gpus' row for the GPU torch.cuda.get_device_name() calls `device`, or None (with a
    warning) where no row is that GPU. A name is a row only as a whole (less NVIDIA's brand words: "NVIDIA GeForce RTX
    4090" is the RTX 4090) or as one of KNOWN_DEVICES: "NVIDIA H100 NVL" is not taken for the H100 SXM."""
    if device in KNOWN_DEVICES:
        return KNOWN_DEVICES[device]
    words = [w for w in re.split(r"\s+", device) if w.lower() not in BRANDS and w]
    try:
        return named_gpu(" ".join(words)).name
    except ValueError:
        warnings.warn(f"{device!r} is no GPU of kp.gpumodel.gpus: its measured column is printed alone", stacklevel=2)
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
    """A launch's terms as the model weighs them (ms), and its occupancy and hit shares, for the detail table."""
    ms = {"memory (DRAM bytes / bandwidth)": e.bandwidth_s, "latency (round trips)": e.latency_s, "L2": e.l2_s}
    ms.update({"shared memory": e.shared_s, "L1 pipe (shared + global lines)": e.l1_s, "issue": e.issue_s})
    ms["schedule (sub-cores simulated)"] = e.schedule_s
    occ = e.occupancy
    return {
        "bound": e.bound,
        **{name: number(s * 1e3) for name, s in ms.items()},
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


def summarise(what, results, times, n):
    """The goals' figures of `results` ({kernel: (Estimate, Profile)}) against `times` ({kernel: s}, at n³), then the
    terms of the worst kernels; returns the Agreement."""
    agree = published.agreement({k: results[k][0].seconds for k in times}, times)
    ratio, short = agree.ratio, what.split()[0]
    pairs = len(times) * (len(times) - 1) // 2
    print(f"\nAgainst {what}:")
    print(f"- mean |model ÷ {short} - 1|: {agree.mean:.1%}, {agree.verdict('mean')}")
    print(
        f"- worst: kernel {agree.worst}, {agree.worst_error:.1%} ({ratio[agree.worst]:.2f}x), {agree.verdict('worst')}"
    )
    tau = "n/a (one kernel)" if agree.tau is None else f"{agree.tau:.2f}"
    print(
        f"- Kendall τ of the two rankings: {tau}, {agree.verdict('tau')}; {len(agree.swapped)} of {pairs} pairs "
        f"modelled in the wrong order{' (the faster one first): ' if agree.swapped else ''}"
        f"{', '.join(f'{i} vs {j}' for i, j in agree.swapped)}"
    )
    detail = sorted(times, key=lambda k: -abs(ratio[k] - 1))[:DETAILED]
    columns = {}
    for k in detail:
        est, p = results[k]
        columns[f"kernel {k}"] = {f"model ÷ {short}": f"{ratio[k]:.2f}", **terms(est.launches[0])}
        columns[f"kernel {k}"].update(counters(p, est.gpu, n))
    rows = [{"figure": f, **{kernel: c[f] for kernel, c in columns.items()}} for f in next(iter(columns.values()))]
    print(f"\nThe model's terms (ms) and counts for the {len(detail)} worst:\n")
    print(Table(rows).markdown())
    return agree


def gpu_section(gpu, results, sources, measured, device, n):
    """One GPU's table (model, each source's published ms and ratio, bound, measured) and its summaries; returns
    [(what, Agreement)] for the summary table."""
    print(f"\n### {gpu}\n")
    for s in sources:
        left_out = f"; left out: {s.left_out}." if s.left_out else "."
        print(f"Published ({s.label}, {s.device}): {s.where}:\n\n{s.text}")
        print(f"Kernels compared: {', '.join(map(str, s.kernels))}{left_out}\n")
    rows = []
    for k, (est, _) in results.items():
        row = {"kernel": k, f"model ms ({n}³)": number(est.seconds * 1e3), "bound (model)": est.launches[0].bound}
        for s in sources:
            pub = s.seconds().get(k)
            row[f"published ms ({s.label})"] = number(pub * 1e3) if pub else "—"
            row[f"model ÷ published ({s.label})"] = f"{est.seconds / pub:.2f}" if pub else "—"
        if measured:
            row[f"measured ms ({device})"] = number(measured[k])
            row["model ÷ measured"] = f"{est.seconds * 1e3 / measured[k]:.2f}"
        rows.append(row)
    print(Table(rows).markdown())
    found = [(f"published ({s.label})", {k: t for k, t in s.seconds().items() if k in results}) for s in sources]
    found += [(f"measured ({device})", {k: ms / 1e3 for k, ms in measured.items()})] if measured else []
    return [(what, summarise(what, {k: results[k] for k in times}, times, n)) for what, times in found]


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
    published_gpus = list(dict.fromkeys(s.gpu for s in published.SOURCES))
    # an unknown --gpu: kp.gpumodel.gpus's error, before any trace
    gpus = [named_gpu(args.gpu).name] if args.gpu else [row_measured] if row_measured else published_gpus
    start = time.perf_counter()
    checked = helpers.load_kernel(KERNEL, target="cpu", check=True, quiet=True)
    profiles = {k: profiled(checked, n, k, args.max_blocks) for k in kernels}
    if measured is None:
        measured = measured_ms(n, kernels)
    print(
        f"siboehm's SGEMM kernels (bench/kernels/sgemm), C = {ALPHA}·A·B + {BETA}·C at {n}³: the GPU model on "
        f"{', '.join(gpus)} (counted on the CPU stand-in, {args.max_blocks} blocks of each launch traced, once for "
        "every GPU: " + ", ".join(f"kernel {k} {took:.1f} s" for k, (_, took) in profiles.items()) + ")"
    )
    if not measured:
        print("No GPU here: no measured column (on a GPU this script times each kernel itself).")
    elif row_measured not in gpus:
        print(
            f"WARNING: measured on {device}, "
            + (f"which is the model's {row_measured}" if row_measured else "which kp.gpumodel.gpus has no row for")
            + f", not a modelled GPU ({', '.join(gpus)}): the measured column is printed alone, set against no model."
        )
        print(Table([{"kernel": k, f"measured ms ({device})": number(ms)} for k, ms in measured.items()]).markdown())
    if args.quick:
        print(f"--quick: {n}³, where nothing was published: nothing compared.")
    summary = []
    for g in gpus:
        sources = [] if args.quick else [s for s in published.SOURCES if s.gpu == g and set(s.kernels) & set(kernels)]
        results = {k: (p.estimate_detail(g, flops=2 * n**3), p) for k, (p, _) in profiles.items()}
        mine = measured if measured and row_measured == g else {}
        summary += [(g, what, a) for what, a in gpu_section(g, results, sources, mine, device, n)]
    if summary:
        print_summary(summary)
    print("\nPublished and left out (read while searching, nothing of theirs compared):")
    print("".join(f"\n- {line}" for line in published.NOT_USED))
    print(f"\nThe script took {time.perf_counter() - start:.0f} s.")


def print_summary(summary):
    """One row per GPU and source: the goals' figures, and how many of the three goals were met."""
    goals = published.GOALS
    print(f"\n### Summary (issue 31's goals: mean ≤ {goals['mean']:.0%}, worst ≤ {goals['worst']:.0%}, ", end="")
    print(f"τ ≥ {goals['tau']:g})\n")
    print(Table([{"GPU": g, "against": what, **a.summary_row()} for g, what, a in summary]).markdown())


if __name__ == "__main__":
    main()
