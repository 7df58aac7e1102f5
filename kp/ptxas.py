"""What nvcc made of a kernel, without a GPU: ptxas's registers, shared memory, stack and spills per
kernel (kernel_resources, cached), for the machine's GPU or the first of TORCH_CUDA_ARCH_LIST; and
resources_table, the one table of them that people read (the notebooks, `make run`'s page, `make bench`).
Never displays anything (kp.display.show_kernel_resources does).
"""

import contextlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import torch

from kp.build import project_headers, resolve_kernel
from kp.diagnostics import KernelBuildError
from kp.files import BUILD_ROOT, COMMON, KERNELS, content_key, display_path, write_if_changed
from kp.table import Table
from kp.toolchain import DEFAULT_CUDA_ARCH, require_nvcc

PTXAS_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>sm_\w+)'")
PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
PTXAS_USED = re.compile(r"Used (\d+) registers(?P<rest>.*)")


def parse_ptxas(log):
    """ptxas -v output -> one dict per kernel: registers, shared memory, stack and spill bytes."""
    rows, current = [], None
    for line in log.splitlines():
        if m := PTXAS_ENTRY.search(line):
            current = {"kernel": m["name"], "arch": m["arch"], "registers": 0, "shared memory (bytes)": 0}
            current.update({"stack (bytes)": 0, "spill stores (bytes)": 0, "spill loads (bytes)": 0})
            rows.append(current)
        elif current and (m := PTXAS_FRAME.search(line)):
            current["stack (bytes)"], current["spill stores (bytes)"], current["spill loads (bytes)"] = map(
                int, m.groups()
            )
        elif current and (m := PTXAS_USED.search(line)):
            current["registers"] = int(m[1])
            smem = re.search(r"(\d+) bytes smem", m["rest"])
            current["shared memory (bytes)"] = int(smem[1]) if smem else 0
    return rows


def demangle(names):
    """C++ symbol names -> `kernel<float>`, the template arguments kept and the parameters dropped."""
    filt = shutil.which("c++filt")
    if not filt or not names:
        return list(names)
    out = subprocess.run([filt], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    if len(out) != len(names):
        return list(names)
    short = []
    for full in out:
        full = re.sub(r"^void ", "", full)
        depth, cut = 0, len(full)
        for i, ch in enumerate(full):  # the parameter list is the first "(" outside template brackets
            depth += {"<": 1, ">": -1}.get(ch, 0)
            if ch == "(" and depth == 0:
                cut = i
                break
        short.append(full[:cut])
    return short


def cuda_arch():
    """nvcc's sm_XX for ptxas's report: this machine's GPU where there is one (the code that runs there),
    else the first architecture of TORCH_CUDA_ARCH_LIST (default 9.0)."""
    if torch.cuda.is_available():
        return "sm_{}{}".format(*torch.cuda.get_device_capability())
    first = re.split(r"[ ;]+", os.environ.get("TORCH_CUDA_ARCH_LIST", DEFAULT_CUDA_ARCH).strip())[0]
    return "sm_" + first.replace("+PTX", "").replace(".", "")


def kernel_resources(name_or_path, arch=None):
    """Registers, shared memory, stack and spills of each kernel in a `.cu` file, as ptxas reports them.

    Compiles the kernel file alone with nvcc (no binding, no torch headers: about a second) for
    `arch` (default: cuda_arch(), the GPU's own, else sm_90). Needs nvcc, not a GPU. Cached
    per file content. Returns a Table, one row per kernel (per template instantiation).
    """
    cu, _ = resolve_kernel(name_or_path)
    arch = arch or cuda_arch()
    home = require_nvcc()
    includes = [COMMON, KERNELS, cu.parent]
    inputs = sorted({cu, *project_headers(cu, includes)})
    cache = BUILD_ROOT / "cuda" / "ptxas" / f"{cu.stem}-{content_key((arch, home), inputs)}.json"
    with contextlib.suppress(OSError, ValueError):
        return Table(json.loads(cache.read_text()), f"ptxas, {arch}: {display_path(cu)}")
    cache.parent.mkdir(parents=True, exist_ok=True)
    obj = cache.with_suffix(f".o.tmp{os.getpid()}")
    cmd = [str(Path(home) / "bin" / "nvcc"), "-c", "-O2", "--resource-usage", f"-arch={arch}"]
    cmd += [f"-I{d}" for d in includes] + [str(cu), "-o", str(obj)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    obj.unlink(missing_ok=True)
    log = done.stdout + done.stderr
    if done.returncode:
        raise KernelBuildError.from_log(log, [cu])
    rows = parse_ptxas(log)
    for row, short in zip(rows, demangle([r["kernel"] for r in rows]), strict=True):
        row["kernel"] = short
    write_if_changed(cache, json.dumps(rows))
    return Table(rows, f"ptxas, {arch}: {display_path(cu)}")


def resources_table(names_or_paths, arch=None):
    """kernel_resources of each kernel file in one Table, as people read it: the file, the kernel (as code, so that
    `<float>` and `<double>` show), registers, shared memory, stack, and spills as "stores / loads"."""
    arch = arch or cuda_arch()
    rows = []
    for name_or_path in names_or_paths:
        cu, _ = resolve_kernel(name_or_path)
        for r in kernel_resources(cu, arch):
            rows.append(
                {
                    "kernel file": display_path(cu),
                    "kernel": f"`{r['kernel']}`",
                    "registers": r["registers"],
                    "shared memory (bytes)": r["shared memory (bytes)"],
                    "stack (bytes)": r["stack (bytes)"],
                    "spills (bytes, stores / loads)": f"{r['spill stores (bytes)']} / {r['spill loads (bytes)']}",
                }
            )
    return Table(rows, f"ptxas, {arch}")


def spills(row):
    """Whether a resources_table row spilled registers to local memory."""
    return row["spills (bytes, stores / loads)"] != "0 / 0"
