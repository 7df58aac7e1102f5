"""Build latency of the edit-run loop, for add2: ours (helpers.load_kernel) against the seed's way.

The seed's way: one source including torch/extension.h with a pybind11 module, built by plain
torch.utils.cpp_extension.load. Ours: kernels/add2.cu (no torch headers) + its binding (torch's
stable API), through helpers.load_kernel, for the CPU stand-in and, on a machine with a GPU, for
nvcc too (what a GPU user waits for). Each scenario runs in a fresh process with an empty build
folder; times exclude `import torch`.

    python bench/build_latency.py                   # a markdown table (about two minutes: the seed's way is slow)
    python bench/build_latency.py --quick           # ours only, without the seed's way (about 20 s)
    python bench/build_latency.py --targets cpu cuda    # nvcc's build even without a GPU (compile and link only)
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent

SEED_SOURCE = """\
#include <torch/extension.h>

torch::Tensor add2(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.sizes() == b.sizes(), "a and b must have the same shape");
  auto c = torch::empty_like(a);
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  for (int64_t i = 0; i < a.numel(); ++i) pc[i] = pa[i] + pb[i];  // EDIT
  return c;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("add2", &add2); }
"""

# Each scenario prints {"first": s, "second": s}: a load, then (after an optional edit) a second
# load in the same process.
OURS = """
import json, sys, time
from pathlib import Path
import torch
target = sys.argv[3]
t = time.perf_counter()
import helpers
m = helpers.load_kernel(sys.argv[1], target=target, quiet=True)
first = time.perf_counter() - t
run = torch.cuda.is_available() or target == "cpu"  # nvcc's build runs where there is a GPU
a = torch.ones(4, device="cuda" if target == "cuda" and run else "cpu")
assert not run or m.add2(a, a).tolist() == [2.0] * 4
second = None
if sys.argv[2] == "edit":
    cu = Path(sys.argv[1]); cu.write_text(cu.read_text().replace("c[i] = a[i] + b[i];", "c[i] = a[i] + 2 * b[i];"))
    t = time.perf_counter()
    m = helpers.load_kernel(sys.argv[1], target=target, quiet=True)
    second = time.perf_counter() - t
    assert not run or m.add2(a, a).tolist() == [3.0] * 4, "stale module"
    # ninja's log: when each output of the reload's build started and ended (ms), the compile and the link
    log = (m.build.library.parent / ".ninja_log").read_text().splitlines()[1:]
    steps = {row.split("\t")[3]: row.split("\t")[:2] for row in log}  # the last entry of each output
    ms = {out: int(end) - int(start) for out, (start, end) in steps.items()}
    compile_ms = max(v for out, v in ms.items() if out.endswith(".cu.o" if target == "cpu" else ".cuda.o"))
    pieces = {"compile": compile_ms / 1e3, "link": ms[m.build.library.name] / 1e3}
print(json.dumps({"first": first, "second": second, **(pieces if second is not None else {})}))
"""

SEED = """
import json, sys, time
from pathlib import Path
import torch
from torch.utils.cpp_extension import load
src, build = sys.argv[1], sys.argv[3]
t = time.perf_counter(); m = load("add2_seed", [src], build_directory=build); first = time.perf_counter() - t
a = torch.ones(4)
assert m.add2(a, a).tolist() == [2.0] * 4
second = None
if sys.argv[2] == "edit":
    p = Path(src); p.write_text(p.read_text().replace("pa[i] + pb[i];  // EDIT", "pa[i] + 2 * pb[i];  // EDIT"))
    t = time.perf_counter(); m = load("add2_seed", [src], build_directory=build); second = time.perf_counter() - t
    assert m.add2(a, a).tolist() == [3.0] * 4, "stale module"
print(json.dumps({"first": first, "second": second}))
"""


def run(script, *args, env=None):
    done = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True, env=env)
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def copy_add2(folder):
    folder.mkdir()
    for suffix in (".cu", "_binding.cpp"):
        text = (ROOT / "kernels" / f"add2{suffix}").read_text()
        text = text.replace('"common/kp.cuh"', '"kp.cuh"').replace('"common/binding.h"', '"binding.h"')
        (folder / f"add2{suffix}").write_text(text)
    return folder / "add2.cu"


def measure_ours(tmp, target):
    """(first build ever, with the stand-in's runtime on the cpu target), cold, warm, edit -> reload."""
    env = {**os.environ, "KP_BUILD_DIR": str(tmp / f"ours-build-{target}")}
    first_ever = run(OURS, copy_add2(tmp / f"first-{target}"), "no-edit", target, env=env)["first"]
    cu = copy_add2(tmp / f"ours-{target}")  # another folder: a build of its own, the runtime already built
    cold = run(OURS, cu, "no-edit", target, env=env)["first"]
    warm = run(OURS, cu, "no-edit", target, env=env)["first"]
    edit = run(OURS, cu, "edit", target, env=env)
    return first_ever, cold, warm, edit["second"], edit["compile"], edit["link"]


def measure_seed(tmp):
    src = tmp / "add2_seed.cpp"
    src.write_text(SEED_SOURCE)
    build = tmp / "seed-build"
    build.mkdir()
    cold = run(SEED, src, "no-edit", build)["first"]
    warm = run(SEED, src, "no-edit", build)["first"]
    edit = run(SEED, src, "edit", build)["second"]
    return cold, warm, edit


TARGET_NAMES = {"cpu": "ours, CPU stand-in", "cuda": "ours, nvcc"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the seed's way (its builds take about 90 s)")
    parser.add_argument(
        "--targets",
        nargs="+",
        choices=list(TARGET_NAMES),
        default=["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"],
        help="load_kernel's targets to time (default: cpu, and cuda where there is a GPU)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        ours = {target: measure_ours(tmp, target) for target in args.targets}
        seed = None if args.quick else measure_seed(tmp)
    gpu = f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ", no GPU"
    print(f"add2 build latency, {os.cpu_count()} cores, {platform.machine()}{gpu}\n")
    if args.quick:
        print("--quick: the seed's way (about 90 s of builds) was skipped.\n")
    columns = [TARGET_NAMES[t] for t in args.targets]
    print("| step | seed's way (torch/extension.h, plain load) | " + " | ".join(columns) + " | seed ÷ ours, CPU |")
    print("|---" * (len(columns) + 3) + "|")
    steps = ("cold build", "warm load, new process", "edit -> reload, same process")
    for i, step in enumerate(steps):
        s = seed[i] if seed else None
        cells = [f"{ours[t][i + 1]:.2f} s" for t in args.targets]
        ratio = f"{s / ours['cpu'][i + 1]:.3g}x" if s is not None and "cpu" in ours else ""
        print(f"| {step} | {'skipped' if s is None else f'{s:.2f} s'} | " + " | ".join(cells) + f" | {ratio} |")
    for i, piece in ((4, "compile of the kernel file"), (5, "link")):
        cells = [f"{ours[t][i]:.2f} s" for t in args.targets]
        print(f"| edit -> reload: of which the {piece} (ninja's log) | | " + " | ".join(cells) + " | |")
    first = [f"{ours[t][0]:.2f} s" for t in args.targets]
    print(
        "| first build on a machine (on the cpu target ours also builds the stand-in's runtime, precompiled header and "
        "link stubs, once) | | " + " | ".join(first) + " | |"
    )
    print()
    print(
        textwrap.fill(
            "Times exclude `import torch` and include `import helpers`. The seed's way renames its module "
            "after an edit, so its reload rebuilds everything; ours rebuilds the kernel object and relinks. "
            "Without a GPU, nvcc's build is compiled and linked but not run.",
            100,
        )
    )


if __name__ == "__main__":
    main()
