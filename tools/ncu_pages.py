"""Nsight Compute's CSV pages read, and joined with the GPU model's lines, for tools/ncu_lines.py: `parse_source` (the
source page, per .cu line: sectors, global requests, shared wavefronts, warp instructions executed), `parse_raw` (the
raw page, per kernel: every metric, times in seconds), `model_lines` (a Profile's counts of one kernel, per line) and
`join` (the two side by side), `join_all` (each case's table and a summary, the model's profile of the same call beside
ncu's CSVs: `model_case`). Runs no kernel on a GPU; the model runs on the CPU stand-in.

The pages' formats: the Nsight Compute CLI manual, https://docs.nvidia.com/nsight-compute/NsightComputeCli/ (--page
source with --print-source cuda, --page raw with --print-units base, --csv); the source counters' metric and column
names: its Profiling Guide, https://docs.nvidia.com/nsight-compute/ProfilingGuide/ ("Source Counters").
"""

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from kp.table import Table

GPU = "H100"  # the model's GPU: what ncu_lines profiles on

# Each per-line counter: the source page's column names for it (as the docs name the metric, and its display name).
COUNTERS = {
    "sectors": ("memory_l2_theoretical_sectors_global", "L2 Theoretical Sectors Global"),
    "requests": ("memory_l1_tag_requests_global", "L1 Tag Requests Global"),
    "wavefronts": ("memory_l1_wavefronts_shared", "L1 Wavefronts Shared"),
    "instructions": ("inst_executed", "Instructions Executed", "Warp Instructions Executed"),
}
TIME_UNITS = {"nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3, "second": 1.0}


def _normal(name):
    return re.sub(r"[^a-z0-9#]+", " ", name.lower()).strip()


def _number(text):
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return 0.0  # "", "-", "n/a": no such access at the line


@dataclass
class NcuLine:
    file: str  # as ncu names it (a path); None where the page names no file
    line: int
    source: str
    counters: dict = field(default_factory=dict)  # COUNTERS' keys -> value; a counter the page lacks is missing


def parse_source(text):
    """The rows of `ncu --page source --print-source cuda --csv`: a "File Path" row names the file of the rows under
    it, a header row holds "Source", then one row per .cu line (its number in the "#" or "Line" column); lines of the
    same file and number (one per function) are summed."""
    lines, file, header = {}, None, None
    for row in csv.reader(io.StringIO(text)):
        cells = [c.strip() for c in row]
        if not any(cells):
            continue
        if _normal(cells[0]) in ("file path", "file", "source file"):
            file, header = (cells[1] if len(cells) > 1 else None), None
            continue
        if "source" in [_normal(c) for c in cells]:
            header = [_normal(c) for c in cells]
            continue
        if header is None or _normal(cells[0]) in ("function name", "kernel name"):
            continue
        at = next((header.index(h) for h in ("#", "# line", "line", "line no", "line number") if h in header), 0)
        if not cells[at].isdigit():
            continue
        entry = lines.setdefault((file, int(cells[at])), NcuLine(file, int(cells[at]), ""))
        if "source" in header and not entry.source:
            entry.source = cells[header.index("source")]
        for counter, names in COUNTERS.items():
            column = next((header.index(_normal(n)) for n in names if _normal(n) in header), None)
            if column is not None and column < len(cells):
                entry.counters[counter] = entry.counters.get(counter, 0.0) + _number(cells[column])
    return list(lines.values())


def parse_raw(text):
    """The rows of `ncu --page raw --csv`: one dict per profiled kernel, "Kernel Name" and every metric, a time metric
    in seconds ("duration" for gpu__time_duration.sum) whatever unit its units row gives."""
    rows = [r for r in csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
    if not rows:
        return []
    header, rows = rows[0], rows[1:]
    units = rows.pop(0) if rows and not rows[0][0].strip().isdigit() else [""] * len(header)
    kernels = []
    for row in rows:
        found = {}
        for name, unit, value in zip(header, units, row):
            try:
                found[name] = float(value.replace(",", "")) * TIME_UNITS.get(unit.strip(), 1.0)
            except ValueError:
                found[name] = value.strip()  # a name, an ID, or "n/a"
        found["duration"] = found.get("gpu__time_duration.sum")
        kernels.append(found)
    return kernels


def base_name(kernel):
    """A kernel's name without return type, namespace, template arguments or parameters."""
    name = re.sub(r"^void\s+", "", str(kernel).strip())
    return re.split(r"[<(]", name)[0].split("::")[-1].strip()


# ---------------------------------------------------------------------------------------------
# The model beside it.


def model_lines(p, kernel):
    """{(file name, line): {"sectors", "requests", "wavefronts", "instructions"}}: the model's counts of `kernel`'s
    lines in Profile `p` (its `.lines` as the H100's SASS serves them, its `.instructions` executed), summed over the
    call's launches of that kernel."""
    found = {}
    for ln in p.lines:
        if base_name(ln.kernel) == kernel:
            at = found.setdefault((Path(ln.file).name, ln.line), dict.fromkeys(COUNTERS, 0.0))
            if ln.space == "global":
                at["sectors"] += ln.units
                at["requests"] += ln.requests
            elif ln.space == "shared":
                at["wavefronts"] += ln.units
    for ins in p.instructions:
        if base_name(ins.kernel) == kernel:
            found.setdefault((Path(ins.file).name, ins.line), dict.fromkeys(COUNTERS, 0.0))["instructions"] += ins.total
    return found


def join(ncu_lines, modelled, default_file):
    """One row per .cu line that either side counted: ncu's figure, then the model's, for each counter."""
    hardware = {}
    for x in ncu_lines:
        if any(x.counters.values()):
            key = (Path(x.file).name if x.file else default_file, x.line)
            hardware[key] = x
    rows = []
    for key in sorted(set(hardware) | set(modelled), key=lambda k: (k[0] != default_file, k)):
        row = {"line": f"{key[0]}:{key[1]}", "source": hardware[key].source[:40] if key in hardware else ""}
        for counter in COUNTERS:
            got = hardware[key].counters.get(counter) if key in hardware else 0.0
            row[f"{counter} (ncu)"] = "-" if got is None else got
            row[f"{counter} (model)"] = modelled.get(key, {}).get(counter, 0.0)
        rows.append(row)
    return rows


def model_case(case, ncu_kernel):
    """(the model's lines of `ncu_kernel` in the case's call, its modelled seconds for that kernel's first launch, how
    many launches of it the call makes)."""
    import warnings

    import torch

    import helpers
    from kp.gpumodel.profile import profile

    torch.manual_seed(0)
    inputs = case.make_inputs()
    fn = case.call(helpers.load_kernel(case.kernel, target="cpu", check=True, quiet=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "sampled: ...": wanted here
        p = profile(fn, *inputs, max_blocks=case.max_blocks)
    launches = [e for e in p.estimate_detail(GPU, flops=case.flops).launches if base_name(e.kernel) == ncu_kernel]
    return model_lines(p, ncu_kernel), launches[0].seconds if launches else None, len(launches)


def report(case, out):
    """The case's table (per line) and its summary row, from the CSVs under `out`; raises where they are missing."""
    kernels = parse_raw((out / f"{case.slug}.raw.csv").read_text())
    if not kernels:
        raise RuntimeError(f"{case.slug}.raw.csv: no kernel profiled")
    kernel = base_name(kernels[0].get("Kernel Name", ""))
    hardware = parse_source((out / f"{case.slug}.source.csv").read_text())
    modelled, seconds, launches = model_case(case, kernel)
    rows = join(hardware, modelled, f"{case.kernel}.cu")
    measured = kernels[0].get("duration")
    total = {c: sum(r[f"{c} (model)"] for r in rows) for c in COUNTERS}
    summary = {
        "case": case.name,
        "kernel": kernel,
        "ncu (µs)": measured * 1e6 if isinstance(measured, float) else "-",
        "model (µs)": seconds * 1e6 if seconds else "-",
        "model ÷ ncu": f"{seconds / measured:.3g}x" if seconds and isinstance(measured, float) and measured else "-",
        "instructions (ncu, model)": f"{kernels[0].get('smsp__inst_executed.sum', '-')}, {total['instructions']:.4g}",
        "lines (ncu, model)": f"{sum(any(x.counters.values()) for x in hardware)}, {len(modelled)}",
        "model launches": launches,
    }
    return rows, summary


SUMMARY = ("case", "kernel", "ncu (µs)", "model (µs)", "model ÷ ncu", "instructions (ncu, model)", "lines (ncu, model)")
SUMMARY += ("model launches",)


def join_all(todo, out):
    summaries, text = [], []
    for case in todo:
        try:
            rows, summary = report(case, out)
        except Exception as e:  # one case's missing or unreadable CSV must not stop the others
            failed = {"case": case.name, "kernel": f"not joined: {type(e).__name__}: {str(e)[:80]}"}
            summaries.append(failed | {k: "-" for k in SUMMARY if k not in failed})
            continue
        text.append(f"### {case.name}\n\n{Table(rows).markdown()}\n")
        summaries.append(summary)
    text.append(f"### Summary ({GPU} model beside ncu, one launch each)\n\n{Table(summaries).markdown()}\n")
    (out / "lines.md").write_text("\n".join(text))
    print("\n".join(text))
