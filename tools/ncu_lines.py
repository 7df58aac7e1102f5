"""Nsight Compute's per-line counters beside the GPU model's (issue 31, item 9): on a GPU, `ncu` profiles ONE launch of
each case (every op of bench/ops.py at the size bench/gpu_model.py models it, the linear ladder's versions at 1024³,
the column-sum ladder at 8192 x 1024) with its source counters, and each .cu line's sectors, global requests, shared
wavefronts and warp instructions executed are printed beside what the model counts for the same call (profile(...)
with the same arguments), with the kernel's duration (gpu__time_duration.sum) beside the modelled time.

    python tools/ncu_lines.py               # on a GPU: ncu on every case, then the model beside it
    python tools/ncu_lines.py --ncu-only    # the GPU part only: reports and CSVs under --out (a few minutes)
    python tools/ncu_lines.py --join DIR    # anywhere: the model beside the CSVs a GPU run left in DIR
    python tools/ncu_lines.py --dry-run     # the ncu commands it would run, anywhere
    python tools/ncu_lines.py --only add2   # the cases whose name holds one of these words

Every report and CSV is written under --out (build/gpu-session/ncu) before it is read, so that the data comes back
even where this parser misreads it. The CUDA builds are made with -lineinfo (nvcc's NVCC_APPEND_FLAGS) in a build
folder of their own (KP_BUILD_DIR), so that ncu can put each SASS instruction at its .cu line and the cached builds
without line information stay as they are.

ncu's options and pages: the Nsight Compute CLI manual, https://docs.nvidia.com/nsight-compute/NsightComputeCli/
("Command Line Options": --profile-from-start, -k regex:, -c, --section, --metrics, --import-source, --clock-control,
--page source|raw, --print-source, --print-units, --csv); the source counters' metrics (inst_executed,
memory_l2_theoretical_sectors_global, memory_l1_tag_requests_global, memory_l1_wavefronts_shared) and
gpu__time_duration: its Profiling Guide, https://docs.nvidia.com/nsight-compute/ProfilingGuide/ ("Source Counters",
"Metrics Reference").
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # `python tools/ncu_lines.py` finds kp
sys.path += [str(ROOT / "bench"), str(ROOT / "kernels")]  # bench/gpu_model.py and ops.py, linear_ladder_ops.py

from tools.ncu_pages import (  # noqa: E402, F401 (the readers and the join, for tests/test_ncu_lines.py too)
    SUMMARY,
    base_name,
    join,
    join_all,
    model_lines,
    parse_raw,
    parse_source,
    report,
)

OUT = ROOT / "build" / "gpu-session" / "ncu"
LADDER_N, COLSUM_SHAPE = 1024, (8192, 1024)  # bench/ladder_linear.py's first size, bench/ladder_colsum.py's first shape
# The kernel-wide figures beside the SourceCounters section: the duration, and totals to check the per-line sums by.
METRICS = ("gpu__time_duration.sum", "smsp__inst_executed.sum", "dram__bytes_read.sum", "dram__bytes_write.sum")


@dataclass
class Case:
    name: str
    kernel: str  # kernels/<kernel>.cu
    call: object  # the loaded module -> the op
    make_inputs: object  # () -> the op's arguments, on the CPU
    max_blocks: int = 64  # blocks of each launch the model counts (bench/gpu_model.py's MAX_BLOCKS)
    flops: float = 0.0

    @property
    def slug(self):
        return re.sub(r"\W+", "_", self.name).strip("_")


def cases():
    """Every case, in the order they run: the ops, the linear ladder, the column-sum ladder."""
    import torch
    from gpu_model import MAX_BLOCKS, MEASURED, SAMPLING_SIZES
    from linear_ladder_ops import TILES
    from ops import all_ops

    found = []
    for op in all_ops():
        kind = "involution" if "involution" in op.op else "matrix" if op.kernel == "linear" else "elementwise"
        size = MEASURED[op.op][0] if op.op in MEASURED else SAMPLING_SIZES[kind]
        flops = op.flops(size) if op.flops else 0.0
        found.append(Case(op.op, op.kernel, op.custom, lambda op=op, s=size: op.make_inputs(s), MAX_BLOCKS, flops))
    n = LADDER_N
    steps = [(v,) for v in range(1, 7)] + [(7, i) for i in range(len(TILES))]
    for args in steps:
        name = f"linear ladder v{args[0]}" + (f" tiles {args[1]}" if len(args) > 1 else "")
        make = lambda a=args: (torch.randn(n, n), torch.randn(n, n), torch.randn(n), *a)  # noqa: E731
        found.append(Case(name, "linear_ladder", lambda m: m.linear_ladder, make, 8, 2.0 * n**3))
    for version in range(1, 6):
        make = lambda v=version: (torch.randn(*COLSUM_SHAPE), v)  # noqa: E731
        found.append(Case(f"colsum v{version}", "colsum", lambda m: m.colsum, make, 64))
    return found


def kernel_names(kernel):
    """The __global__ functions of kernels/<kernel>.cu, in file order."""
    text = (ROOT / "kernels" / f"{kernel}.cu").read_text()
    bounds = r"__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)\s*"  # (BM / TM * (BN / TN)): one level of nesting
    pattern = rf"__global__\s+void\s+(?:{bounds})?(\w+)\s*\("
    return list(dict.fromkeys(re.findall(pattern, text)))


def kernel_regex(kernel):
    """ncu's -k filter for any kernel of the file: a whole name (add2_fwd_kernel, not add2_fwd_kernel_v2), with or
    without template arguments after it."""
    return rf"regex:(^|\W)({'|'.join(kernel_names(kernel))})(\W|$)"


def find_ncu():
    found = shutil.which("ncu")
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if not found and home and (Path(home) / "bin" / "ncu").exists():
            found = str(Path(home) / "bin" / "ncu")
    return found or (sorted(map(str, Path("/opt/nvidia").glob("nsight-compute/*/ncu"))) or [None])[-1]


def ncu_commands(case, out, ncu="ncu"):
    """(profile, source export, raw export): the commands for one case. One launch (-c 1) of any kernel of the case's
    file, counted only inside the case's cudaProfilerStart/Stop (--profile-from-start off: the warm-up call and torch's
    own kernels are left out); the SourceCounters section and METRICS alone (a full set replays ~40 times); clocks not
    locked to base (--clock-control none: the duration at the clocks a user gets; the cache is still flushed before
    each pass, as the model starts cold)."""
    rep = out / f"{case.slug}.ncu-rep"
    profile = [ncu, "--profile-from-start", "off", "-k", kernel_regex(case.kernel), "-c", "1"]
    profile += ["--section", "SourceCounters", "--metrics", ",".join(METRICS), "--import-source", "yes"]
    profile += ["--clock-control", "none", "--force-overwrite", "-o", str(rep.with_suffix(""))]
    profile += [sys.executable, str(Path(__file__).resolve()), "--case", case.name]
    source = [ncu, "--import", str(rep), "--page", "source", "--csv", "--print-source", "cuda"]
    raw = [ncu, "--import", str(rep), "--page", "raw", "--csv", "--print-units", "base"]
    return profile, source, raw


def build_env():
    """The environment of the CUDA builds and of the runs under ncu: -lineinfo, in a build folder of its own."""
    flags = f"{os.environ.get('NVCC_APPEND_FLAGS', '')} -lineinfo".strip()
    return {**os.environ, "NVCC_APPEND_FLAGS": flags, "KP_BUILD_DIR": str(ROOT / "build" / "ncu-ext")}


def run_case(name):
    """The case's op once to warm up, then once between cudaProfilerStart and Stop: what ncu profiles."""
    import torch

    import helpers

    case = next(c for c in cases() if c.name == name)
    torch.manual_seed(0)
    inputs = [a.cuda() if torch.is_tensor(a) else a for a in case.make_inputs()]
    fn = case.call(helpers.load_kernel(case.kernel, target="cuda", quiet=True))
    fn(*inputs)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()  # cudaProfilerStart: ncu --profile-from-start off counts from here
    fn(*inputs)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


# ---------------------------------------------------------------------------------------------
# The run.


def run(cmd, log, timeout, env=None):
    """Run `cmd`, its output appended to `log`; its return code, or "timeout"."""
    with open(log, "a") as f:
        f.write(f"$ {shlex.join(cmd)}\n")
        f.flush()
        return _wait(
            subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True), timeout
        )


def _wait(process, timeout):
    """The process's return code, or "timeout" after `timeout` seconds, its whole group killed: ncu's target (the
    Python child that holds the GPU) goes with it."""
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return "timeout"


def export(cmd, path, log):
    """ncu's page for `cmd` into `path` (stdout), its errors to `log`; the return code, or "timeout"."""
    with open(path, "w") as f, open(log, "a") as err:
        return _wait(subprocess.Popen(cmd, stdout=f, stderr=err, start_new_session=True), 120)


def build_all(kernels, out, env):
    """{kernel: return code}: each kernel file built for CUDA with `env` (-lineinfo), in parallel, before any ncu."""
    with ThreadPoolExecutor(max_workers=max(1, min(len(kernels), (os.cpu_count() or 2) // 2))) as pool:
        cmds = {k: [sys.executable, str(Path(__file__).resolve()), "--build", k] for k in kernels}
        return dict(zip(kernels, pool.map(lambda k: run(cmds[k], out / f"build-{k}.log", 600, env), kernels)))


# What ncu prints where the driver lets only admins read the GPU's counters (Nsight Compute's "Known Issues" and the
# page https://developer.nvidia.com/ERR_NVGPUCTRPERM it links): no case can be profiled on that machine
NO_PERMISSION = "ERR_NVGPUCTRPERM"


def profile_all(todo, out, ncu, timeout, budget):
    """ncu on each case, one after another; each report exported to CSV as soon as it is written. After a case whose
    log says NO_PERMISSION, the rest are skipped (each would spend its device time to say the same)."""
    env, start, status, denied = build_env(), time.monotonic(), {}, None
    built = build_all(sorted({c.kernel for c in todo}), out, env)
    print(f"builds with -lineinfo ({time.monotonic() - start:.0f} s): {built}", flush=True)
    for case in todo:
        if denied or time.monotonic() - start > budget:
            status[case.name] = f"skipped: {NO_PERMISSION} in {denied}" if denied else "skipped: over --budget"
            continue
        profile, source, raw = ncu_commands(case, out, ncu)
        log, began = out / f"{case.slug}.log", time.monotonic()
        for stale in (f"{case.slug}.ncu-rep", f"{case.slug}.source.csv", f"{case.slug}.raw.csv"):
            (out / stale).unlink(missing_ok=True)  # an earlier run's: never exported or joined as this run's
        rc = run(profile, log, timeout, env) if built.get(case.kernel) == 0 else f"build failed ({case.kernel})"
        if Path(profile[profile.index("-o") + 1] + ".ncu-rep").exists():
            rc = f"{rc}, source {export(source, out / f'{case.slug}.source.csv', log)}"
            raw_rc = export(raw, out / f"{case.slug}.raw.csv", log)
            if raw_rc:  # an ncu without --print-units: parse_raw reads the units row
                raw_rc = export(raw[:-2], out / f"{case.slug}.raw.csv", log)
            rc = f"{rc}, raw {raw_rc}"
        status[case.name] = f"{rc} ({time.monotonic() - began:.0f} s)"
        print(f"{case.name}: {status[case.name]}", flush=True)
        if log.exists() and NO_PERMISSION in log.read_text(errors="replace"):
            denied = log.name
            print(f"{case.name}: ncu may not read this GPU's counters ({NO_PERMISSION}): the other cases are skipped")
        (out / "status.json").write_text(json.dumps(status, indent=1))
    (out / "status.json").write_text(json.dumps(status, indent=1))  # the skipped too
    return status


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("NCU_OUT", OUT)), help=f"default {OUT}")
    parser.add_argument("--only", nargs="+", metavar="WORD", help="only the cases whose name holds one of these")
    parser.add_argument("--dry-run", action="store_true", help="print the ncu commands, run nothing")
    parser.add_argument("--ncu-only", action="store_true", help="profile and export; no model")
    parser.add_argument("--join", type=Path, metavar="DIR", help="the model beside the CSVs in DIR; no GPU needed")
    parser.add_argument("--timeout", type=int, default=60, help="seconds for one case under ncu (default 60)")
    parser.add_argument("--budget", type=int, default=390, help="start no case after this many seconds (default 390)")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # what ncu runs: the case's launch
    parser.add_argument("--build", help=argparse.SUPPRESS)  # build one kernel file for CUDA (with build_env)
    args = parser.parse_args(argv)
    if args.case:
        return run_case(args.case)
    if args.build:
        import helpers

        helpers.load_kernel(args.build, target="cuda", quiet=True)
        return 0
    todo = [c for c in cases() if not args.only or any(w in c.name for w in args.only)]
    if args.join:
        return join_all(todo, args.join)
    ncu = find_ncu()
    if args.dry_run:
        for case in todo:
            print("\n".join(shlex.join(cmd) for cmd in ncu_commands(case, args.out, ncu or "ncu")) + "\n")
        return 0
    import torch

    missing = [what for what, found in (("GPU", torch.cuda.is_available()), ("ncu", ncu)) if not found]
    if missing:
        print(f"ncu_lines: no {' and no '.join(missing)} here: nothing to profile (--dry-run shows the commands)")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    status = profile_all(todo, args.out, ncu, args.timeout, args.budget)
    if not any((args.out / f"{c.slug}.ncu-rep").exists() for c in todo):
        print(f"ncu_lines: no case left a report ({len(status)} tried; {args.out / 'status.json'} says why)")
        return 1
    if not args.ncu_only:
        join_all(todo, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
