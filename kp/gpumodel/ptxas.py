"""What nvcc made of a kernel, without a GPU: ptxas's registers, shared memory, stack and spills per
kernel (kernel_resources, cached; one row per instantiation, with its mangled name) for a named arch, the
machine's GPU or the first of TORCH_CUDA_ARCH_LIST; which instantiation a launch ran (instantiation: its
spelling with the file's constants and the call's dtype put in) and that row's figures (launch_resources,
for the GPU model); and resources_table, the one table of them that people read (the notebooks, `make run`'s
page, `make bench`). Never displays anything (kp.display.show_kernel_resources does).
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
from kp.files import BUILD_ROOT, COMMON, KERNELS, ROOT, content_key, display_path, write_if_changed
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
    cache = BUILD_ROOT / "cuda" / "ptxas" / f"{cu.stem}-{content_key((arch, home, 'mangled'), inputs)}.json"
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
        row["mangled"], row["kernel"] = row["kernel"], short
    write_if_changed(cache, json.dumps(rows))
    return Table(rows, f"ptxas, {arch}: {display_path(cu)}")


CONSTANT = re.compile(r"\b(?:constexpr|const)\s+(?:int|unsigned|int64_t|size_t|long)\s+([^;]+);")
DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+\(?(-?\d+)\)?\s*$", re.M)


def file_constants(text):
    """The integer constants a kernel file names at any scope ({name: value}): `constexpr int BM = 128, BN = 64;`,
    `const int ...`, `#define BM 128`; a constant defined from others (`V5_BM / V5_TM`) is worked out from them."""
    found = {m[1]: m[2] for m in DEFINE.finditer(text)}
    for m in CONSTANT.finditer(text):
        for part in m[1].split(","):
            if "=" in part:
                name, value = (x.strip() for x in part.split("=", 1))
                found[name] = value
    values = {}
    for _ in range(3):  # constants defined from constants, a few levels deep
        for name, value in found.items():
            expression = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: str(values.get(m[0], m[0])), value)
            if re.fullmatch(r"[\d\s()+\-*/%]+", expression):
                with contextlib.suppress(Exception):
                    values[name] = int(eval(expression.replace("/", "//"), {"__builtins__": {}}))  # digits only
    return values


def instantiation(names, kernel, ctype=None, constants=None):
    """Which of `names` (demangled instantiations: `linear_v7<float, 128, 128, 8, 8, 8>`) a launch of `kernel` ran,
    as the source spelled it (`linear_v7<T, BM, BN, BK, TM, TN>`): the one its spelling names once the file's
    `constants` ({name: value}) and `ctype` (the call's dtype as C++) are put in for the names; else the one whose
    template arguments name `ctype`; else the first of that name. None if no name is the kernel's."""

    def bare(name):
        return name.replace(" ", "")

    base = kernel.split("<")[0]
    rows = [n for n in names if bare(n).split("<")[0].split("(")[0] == base]
    spelled = kernel
    for name, value in (constants or {}).items():
        spelled = re.sub(rf"\b{re.escape(name)}\b", str(value), spelled)
    spellings = {bare(kernel), bare(spelled)}
    if ctype:
        spellings |= {bare(re.sub(r"\bT\b", ctype, s)) for s in (kernel, spelled)}
    exact = [n for n in rows if bare(n) in spellings]
    names_type = re.compile(rf"[<,]{re.escape(ctype)}[,>]") if ctype else None
    typed = [n for n in rows if names_type and names_type.search(bare(n))]
    return next(iter(exact or typed or rows), None)


_launch_cache = {}


def launch_resources(file, kernel, ctype=None, arch=None):
    """(registers, static shared bytes) of a launch of `kernel` (as the source spelled it) from `file` (a kernel
    file, relative to the project or absolute), as ptxas compiles it for `arch` (default: cuda_arch()); (32, 0)
    without nvcc or when the kernel is not found. The instantiation is the one the launch ran (instantiation).
    Instantiations differ: a double needs two registers, twice the shared memory; tile sizes, more."""
    if not file:
        return 32, 0
    path = ROOT / file if not str(file).startswith("/") else Path(file)
    key = (str(path), arch, path.stat().st_mtime_ns if path.exists() else 0)
    if key not in _launch_cache:
        try:
            _launch_cache[key] = list(kernel_resources(path, arch)), file_constants(path.read_text())
        except Exception:  # no nvcc, or it failed: the model goes on with the defaults (said in the docstring)
            _launch_cache[key] = [], {}
    rows, constants = _launch_cache[key]
    chosen = instantiation([str(row.get("kernel", "")) for row in rows], kernel, ctype, constants)
    for row in rows:
        if row.get("kernel") == chosen:
            return int(row["registers"]), int(row["shared memory (bytes)"])
    return 32, 0


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
