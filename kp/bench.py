"""Benchmarks: median_ms (CUDA events on a GPU, runs queued back to back) and bench, which times providers
over sizes and returns a BenchResult (a table with throughput and the custom-over-baseline ratio, and one
plot). Never builds or loads a kernel.
"""

import html
import statistics
import time

import torch

from kp.gpumodel.gpus import H100_MEASURED, H100_MEASURED_ON
from kp.report import record
from kp.table import Quantity, Table, number


def median_ms(fn, args=(), warmup=3, min_reps=25, min_seconds=0.0, max_reps=None):
    """(median milliseconds, runs) of fn(*args): at least `min_reps` runs and `min_seconds`, at most `max_reps`
    (default `min_reps`), after `warmup` runs.

    On a GPU each run is timed with CUDA events, and the runs are queued back to back, as a training
    loop queues them: while the GPU is the bottleneck, a run's time is its kernels' alone, not the CPU
    side of the call (which a synchronisation after every run would add as an idle gap); where the CPU
    side of a call takes longer than its kernels, the GPU waits and the time says so.
    """
    cuda = any(torch.is_tensor(a) and a.is_cuda for a in args)
    for _ in range(warmup):
        fn(*args)
    if cuda:
        torch.cuda.synchronize()
    times, events, deadline = [], [], time.perf_counter() + min_seconds
    max_reps = max_reps or min_reps
    while len(times) + len(events) < min_reps or (
        time.perf_counter() < deadline and len(times) + len(events) < max_reps
    ):
        if cuda:
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            fn(*args)
            end.record()
            events.append((begin, end))
        else:
            begin = time.perf_counter()
            fn(*args)
            times.append((time.perf_counter() - begin) * 1e3)
    if cuda:
        torch.cuda.synchronize()
        times = [begin.elapsed_time(end) for begin, end in events]
    return statistics.median(times), len(times)


class BenchResult(Table):
    """bench()'s answer: rows per size and provider (ms, throughput), and the custom-vs-baseline ratio."""

    def __init__(self, rows, unit, formula, custom, baseline, title, where, emulated=()):
        super().__init__(rows, title)
        self.unit, self.formula, self.custom, self.baseline, self.where = unit, formula, custom, baseline, where
        self.emulated = tuple(emulated)  # providers whose time is the CPU stand-in's: the emulation's cost
        self.notes = []  # said under the table: what the stand-in's times are, what the H100 measured

    def label(self, provider):
        """The provider as the table and the plot name it: "(emulated)" after one that ran on the CPU stand-in
        ("add2 (custom, emulated)" where its name ends in a parenthesis)."""
        if provider not in self.emulated:
            return provider
        return f"{provider[:-1]}, emulated)" if provider.endswith(")") else f"{provider} (emulated)"

    def throughput(self, provider, size):
        return next(r[self.unit] for r in self.rows if r["provider"] == provider and r["size"] == size)

    def ratio(self, size=None):
        """Custom throughput / baseline throughput at `size` (default: the largest size measured)."""
        size = self.rows[-1]["size"] if size is None else size
        return self.throughput(self.custom, size) / self.throughput(self.baseline, size)

    def summary(self):
        size = self.rows[-1]["size"]
        return (
            f"{self.label(self.custom)} {self.ratio():.3g}x {self.baseline} at size {size} ({self.unit}, {self.where})"
        )

    def header(self, provider):
        """A provider's column: its label, which says "emulated" or "modelled" where it is, else ", measured"."""
        label = self.label(provider)
        return label if provider in self.emulated or label.endswith("modelled") else f"{label}, measured"

    def pivot(self):
        """The table people read: a row per size, a column per provider (its throughput in the unit that reads best:
        2.97 TB/s, 512 GB/s), and the custom op's ratio to the baseline."""
        providers = list(dict.fromkeys(r["provider"] for r in self.rows))
        ratio = f"{self.label(self.custom)} ÷ {self.label(self.baseline)}"
        rows = [
            {
                "size": size,
                **{self.header(p): Quantity(self.throughput(p, size), self.unit) for p in providers},
                ratio: f"{number(self.ratio(size))}x",
            }
            for size in dict.fromkeys(r["size"] for r in self.rows)
        ]
        return Table(rows, self.title)

    def note(self):
        return " ".join([f"{self.unit} = {self.formula} ÷ median time; {self.where}.", *self.notes])

    def markdown(self):
        return f"{self.pivot().markdown()}\n\n{self.note()}"

    def _repr_html_(self):
        return f"{self.pivot()._repr_html_()}<p>{html.escape(self.note())}</p>"


def bench(
    providers,
    sizes,
    make_inputs,
    *,
    formula,
    bytes_moved=None,
    flops=None,
    baseline=None,
    threads=None,
    warmup=3,
    min_reps=25,
    min_seconds=0.2,
    max_reps=1000,
    title="",
    plot=True,
    logy=False,
    model=None,
    measured_on_h100=None,
    emulated=None,
):
    """Time each provider on each size; report throughput as a table and one plot (a line per provider).

    `providers`: {"name": fn}, the custom op first, then the native torch op (or the pure-torch
    reference where torch has none). `make_inputs(size)` returns the arguments of fn; `size` may
    be an int or a tuple (e.g. (B, M, N)). Give `bytes_moved(size)` for GB/s or `flops(size)` for
    GFLOP/s, and state it in words in `formula` (e.g. "3 × 4n bytes: read a and b, write c").
    Each time is the median of at least `min_reps` runs and `min_seconds`, after `warmup` runs; on
    a GPU, timed with CUDA events. `baseline` (default: the second provider) is what the custom op's
    ratio is taken against. `threads`: torch's CPU threads while timing (the stand-in's pool follows
    them), restored after; on a small shared machine, 1 gives the steadiest numbers. Returns a
    BenchResult (shown as a table in Jupyter).

    On the CPU stand-in the custom op's time is what emulating a GPU costs, not a GPU's. `model` (kp.gpumodel.profile's
    `modelled(check_mode_op)`) adds, per size, what the GPU model gives on its GPU, and the table says which is which;
    `measured_on_h100` names the op's row of kp.gpumodel.gpus.H100_MEASURED, quoted under the table. `emulated`: the
    providers that run on the stand-in (default, with `model`: the custom op), labelled "(emulated)" on the CPU.
    """
    if (bytes_moved is None) == (flops is None):
        raise ValueError("give exactly one of bytes_moved= (GB/s) or flops= (GFLOP/s)")
    if len(providers) < 2:
        raise ValueError("give the custom op and at least one provider to compare it with")
    names = list(providers)
    baseline = baseline or names[1]
    if baseline not in providers:
        raise ValueError(f"baseline {baseline!r} is not one of the providers {names}")
    unit, amount = ("GB/s", bytes_moved) if bytes_moved else ("GFLOP/s", flops)
    rows, where, before = [], "CPU", torch.get_num_threads()
    try:
        if threads:
            torch.set_num_threads(threads)
        for size in sizes:
            args = make_inputs(size)
            if any(torch.is_tensor(a) and a.is_cuda for a in args):
                where = torch.cuda.get_device_name()
            for name, fn in providers.items():
                ms, reps = median_ms(fn, args, warmup, min_reps, min_seconds, max_reps)
                rows.append({"provider": name, "size": size, "ms": ms, unit: amount(size) / ms / 1e6, "runs": reps})
            if model is not None and not any(torch.is_tensor(a) and a.is_cuda for a in args):
                ms = model(*args) * 1e3
                name = f"{names[0]} on the {model.gpu}, modelled"
                rows.append({"provider": name, "size": size, "ms": ms, unit: amount(size) / ms / 1e6, "runs": 1})
        if where == "CPU":
            where = f"CPU, {torch.get_num_threads()} thread{'s' if torch.get_num_threads() > 1 else ''}"
    finally:
        torch.set_num_threads(before)
    on_standin = where.startswith("CPU") and (model is not None or emulated)
    emulated = tuple(emulated or names[:1]) if on_standin else ()
    if unknown := [e for e in emulated if e not in providers]:
        raise ValueError(f"emulated names {unknown}, not providers {names}")
    result = BenchResult(rows, unit, formula, names[0], baseline, title, where, emulated)
    if emulated:
        times = "its time is" if len(emulated) == 1 else "their times are"
        result.notes.append(f"{', '.join(emulated)} on the CPU stand-in: {times} the emulation's cost, not a GPU's.")
    if measured_on_h100:
        size, rate = H100_MEASURED[measured_on_h100]
        per_second = "TB/s" if bytes_moved else "TFLOP/s"
        result.notes.append(
            f"Measured: {measured_on_h100} at size {size}, {rate / 1e12:.3g} {per_second} on {H100_MEASURED_ON}."
        )
    record("bench", result.summary())
    if plot:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        labels = [str(s) for s in sizes]
        for name in names:
            ax.plot(labels, [r[unit] for r in rows if r["provider"] == name], marker="o", label=result.label(name))
        ax.set(
            xlabel="size",
            ylabel=unit,
            title=title or f"{unit} (median, {where})",
            yscale="log" if logy else "linear",
        )
        ax.legend()
        plt.show()
    return result


def gpu_trace(fn, *args, runs=10, kernel="<kernel name>"):
    """On a GPU (CUDA tensors in `args`): `runs` calls of fn under torch.profiler, its table of the ops and kernels
    by GPU time printed and returned, and how to run Nsight Compute on `kernel`. Without one: the one line that says
    so, and where the GPU model stands in; returns None."""
    ncu = (
        f"Nsight Compute, for the hardware's own counters of one launch: ncu --set full -k regex:{kernel} -c 1 "
        "python your_script.py (a script that loads the op and calls it; the GPU model's sectors per request, bank "
        "conflicts and occupancy are its counterparts)"
    )
    if not any(torch.is_tensor(a) and a.is_cuda for a in args):
        print(
            f"torch.profiler's GPU timeline and {ncu.split(',')[0]} need a GPU; on this machine the GPU model above "
            "gives their counterparts, as a model."
        )
        return None
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            fn(*args)
        torch.cuda.synchronize()
    table = prof.key_averages().table(sort_by="device_time_total", row_limit=8)
    print(f"{table}\n{ncu}")
    return table
