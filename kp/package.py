"""Shipping an op: kernels/<op>.cu, its binding and its _ops.py as a source tree of their own, which builds a wheel
(setuptools + torch.utils.cpp_extension; `import <op>` registers torch.ops.<op>.* with its fakes and autograd
formulas) and, with CMake and libtorch, a library that torch.ops.load_library loads. `python -m kp.package add2`
(`make package OP=add2`) builds both into build/package/.

One target per tree and wheel ("cpu": the stand-in, the `.cu` translated and the stand-in's runtime compiled into
the op's library; "cuda": nvcc), as load_kernel builds one per target: both builds register the same op names.
Owns the tree's layout and runs the two builds; the files it fills in are in packaging/, the flags are kp.build's.
Never loads a packaged op into this process (its namespace is its name, which a process registers once).
"""

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from kp.build import UnsupportedConstruct, build_flags, project_headers, python_side_of, resolve_kernel, translate_tree
from kp.diagnostics import KernelBuildError, source_excerpt
from kp.doctor import doctor
from kp.files import COMMON, KERNELS, ROOT, display_path, write_if_changed
from kp.toolchain import DEFAULT_CUDA_ARCH, OPTIONAL_FLAGS, TARGETS, ToolchainError, default_target, require_nvcc

PACKAGING = ROOT / "packaging"  # setup.py, pyproject.toml, CMakeLists.txt, op_init.py, kp_register_static.cpp
OUT_DIR = ROOT / "build" / "package"
# The stand-in's runtime: every C++ source in kernels/common (the two that kp.build.cpu_runtime builds into
# libkp_cuda_cpu.so). A packaged op compiles them into its own library: one file to ship, nothing to find.
RUNTIME_SOURCES = sorted(COMMON.glob("*.cpp"))
# Optional flags make the edit-reload loop faster (kp.toolchain); a tree is built wherever it is taken, where they
# may fail: left out. (-fno-plt speeds up calls into the runtime's library, which a packaged op has compiled in.)
OPTIONAL = {flag for flag, _, _ in OPTIONAL_FLAGS}


def torch_floor():
    """The oldest torch a binding is compiled for: TORCH_TARGET_VERSION in kernels/common/binding.h ("2.11")."""
    found = re.search(r"0ULL \+ (\d+)\) << 56\) \| \(\(0ULL \+ (\d+)\) << 48", (COMMON / "binding.h").read_text())
    return f"{found[1]}.{found[2]}"


def python_side(cu):
    """kernels/<op>_ops.py as the package's <op>/_ops.py, or None: its `from kp.binding import ...` becomes
    `from ._binding import ...` (the package carries a copy of kp/binding.py, which imports only torch). Any other
    import of the playground is refused: an installed package has no kp."""
    path = python_side_of(cu)
    if not path.is_file():
        return None
    text = path.read_text()
    for node in ast.walk(ast.parse(text)):
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module != "kp.binding":
            modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        bad = [m for m in modules if m.split(".")[0] in ("kp", "helpers")]
        if bad:
            raise ValueError(
                f"{display_path(path)}:{node.lineno}: a packaged op cannot import {bad[0]} (only kp.binding)"
            )
    return re.sub(r"(?m)^(\s*)from kp\.binding import", r"\1from ._binding import", text)


def in_tree(path, cu):
    """Where `path`, a file that `cu`'s package holds, lies under csrc/ (an include dir, as kernels/ is for
    load_kernel): below kernels/ (common/...) as there, or beside the .cu."""
    base = KERNELS if path.is_relative_to(KERNELS) else cu.parent
    if not path.is_relative_to(base):
        raise ValueError(f"{display_path(path)}, which {cu.stem} includes, is neither under kernels/ nor beside it")
    return path.relative_to(base).as_posix()


def tree_files(cu, binding, target, version):
    """{path in the tree: text} of `cu`'s package for `target`: kp_package.json (what to build, with kp.build's flags),
    the packaging/ files, csrc/ (the sources and every project header they include) and the Python package."""
    op = cu.stem
    includes, cflags, cuda_cflags, ldflags = build_flags(target, cu, runtime=False)
    headers = project_headers(cu, includes) | project_headers(binding, includes)
    files = {f"csrc/{op}.cu": cu.read_text(), f"csrc/{op}_binding.cpp": binding.read_text()}
    sources = [f"csrc/{op}.cu", f"csrc/{op}_binding.cpp", "csrc/kp_register_static.cpp"]
    if target == "cpu":
        # The .cu and the project headers it includes, translated as load_kernel translates them (kp.standin's
        # translate_tree), each beside its original: errors and faults name csrc/<file>, which the tree keeps, and
        # an #include names a header's translation from csrc/, an include dir.
        def place(path):
            name = in_tree(path, cu)
            return f"csrc/{name}.cpp", f"{name}.cpp", f"csrc/{name}"

        try:
            text = translate_tree(cu, includes, None, shown=display_path, place=place, files=files)
        except UnsupportedConstruct as e:
            raise KernelBuildError(f"{e}\n{source_excerpt(e.file, e.line)}") from None
        files[f"csrc/{op}.cu.cpp"] = text
        standin = [COMMON / "cuda_cpu.h", *RUNTIME_SOURCES]
        headers |= {standin[0], *set().union(*(project_headers(p, [COMMON]) for p in standin))}
        sources[0] = f"csrc/{op}.cu.cpp"
        for path in RUNTIME_SOURCES:
            files[f"csrc/{path.relative_to(KERNELS).as_posix()}"] = path.read_text()
            sources.append(f"csrc/{path.relative_to(KERNELS).as_posix()}")
    for header in headers:  # as the sources include them
        files[f"csrc/{in_tree(header, cu)}"] = header.read_text()
    variant = "cpu" if target == "cpu" else "cu" + (torch.version.cuda or "").replace(".", "")
    spec = {
        "op": op,
        "target": target,
        "version": f"{version}+{variant}",  # torch's way: 0.1.0+cpu, 0.1.0+cu130
        "description": cu.read_text().splitlines()[0].lstrip("/ ").strip(),  # the contract's first line
        "torch_floor": torch_floor(),
        "torch_built_with": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "sources": sources,
        "include_dirs": ["csrc", "csrc/common"],  # kernels/ and kernels/common/, as load_kernel builds
        "cflags": [f for f in cflags if f not in OPTIONAL],
        "cuda_cflags": [f for f in cuda_cflags if f not in OPTIONAL],
        "ldflags": [f for f in ldflags if f not in OPTIONAL],
    }
    files["kp_package.json"] = files[f"{op}/kp_package.json"] = json.dumps(spec, indent=2) + "\n"
    for name in ("setup.py", "pyproject.toml", "CMakeLists.txt"):
        files[name] = (PACKAGING / name).read_text()
    files["csrc/kp_register_static.cpp"] = (PACKAGING / "kp_register_static.cpp").read_text()
    files[f"{op}/__init__.py"] = (PACKAGING / "op_init.py").read_text()
    if (ops := python_side(cu)) is not None:
        files[f"{op}/_ops.py"] = ops
        if "from ._binding import" in ops:
            files[f"{op}/_binding.py"] = (ROOT / "kp" / "binding.py").read_text()
    return files


def write_tree(name_or_path, out_dir=OUT_DIR, target=None, version="0.1.0"):
    """Write the source tree of an op's package for `target` (default: this machine's, as load_kernel's) into
    out_dir/<op>-<target>/; return its path. Files that did not change keep their time (the next build is
    incremental), and files of an earlier tree that this one lacks are removed."""
    target = target or default_target()
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    cu, binding = resolve_kernel(name_or_path)
    if not cu.stem.isidentifier():
        raise ValueError(f"{cu.name}: a packaged op's name is a Python package and a torch namespace: {cu.stem!r}")
    if target == "cuda" and (problems := [p for p in doctor("cuda") if p.check != "TORCH_CUDA_ARCH_LIST"]):
        raise ToolchainError.of(problems)
    tree = Path(out_dir).resolve() / f"{cu.stem}-{target}"
    files = tree_files(cu, binding, target, version)
    for name, text in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        write_if_changed(tree / name, text)
    for folder in ("csrc", cu.stem):
        for path in (tree / folder).rglob("*"):
            if path.is_file() and path.relative_to(tree).as_posix() not in files and "__pycache__" not in path.parts:
                path.unlink()
    return tree


def _run(cmd, tree, what, env=None):
    """Run one build step in `tree`; its output goes to <tree>/<what>.log, and a failure raises KernelBuildError."""
    log_path = tree / f"{what}.log"
    done = subprocess.run([str(c) for c in cmd], cwd=tree, env=env, capture_output=True, text=True)
    log_path.write_text(f"$ {' '.join(map(str, cmd))}\n{done.stdout}{done.stderr}")
    if done.returncode:
        spec = json.loads((tree / "kp_package.json").read_text())
        raise KernelBuildError.from_log(done.stdout + done.stderr, [tree / s for s in spec["sources"]], log_path)


def _build_env(spec):
    env = dict(os.environ)  # CUDA_HOME as kp set it: torch.utils.cpp_extension would guess from nvcc's wrapper
    if spec["target"] == "cuda":
        env.setdefault("TORCH_CUDA_ARCH_LIST", DEFAULT_CUDA_ARCH)  # a GPU-less machine compiles for this one
    return env


def build_wheel(tree, dist=None):
    """`pip wheel` of a tree, with this environment's torch (no build isolation), into `dist` (default: the tree's
    parent folder); returns the wheel's path."""
    tree = Path(tree)
    spec = json.loads((tree / "kp_package.json").read_text())
    dist = Path(dist or tree.parent).resolve()
    for old in dist.glob(f"{spec['op']}-{spec['version']}-*.whl"):
        old.unlink()
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "--no-cache-dir"]
    _run([*cmd, "--disable-pip-version-check", "--wheel-dir", dist, tree], tree, "wheel", _build_env(spec))
    return next(dist.glob(f"{spec['op']}-{spec['version']}-*.whl"))


def build_cmake(tree, build_dir=None):
    """The tree's CMakeLists.txt configured against this torch (torch.utils.cmake_prefix_path) and built in
    `build_dir` (default: <tree>/build-cmake); returns the library's path (lib<op>.so)."""
    tree = Path(tree)
    spec = json.loads((tree / "kp_package.json").read_text())
    if shutil.which("cmake") is None:
        raise ToolchainError("cmake was not found: apt-get install -y cmake, or pip install cmake")
    build_dir = Path(build_dir or tree / "build-cmake").resolve()
    env = _build_env(spec)
    configure = ["cmake", "-S", tree, "-B", build_dir, f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}"]
    if torch.version.cuda:  # a CUDA torch's CMake config finds CUDA's toolkit, for the stand-in's build too
        home = require_nvcc(env)  # the real root: nvcc on PATH may be a wrapper script, from which CMake guesses wrong
        configure += [f"-DCUDA_TOOLKIT_ROOT_DIR={home}", f"-DCUDAToolkit_ROOT={home}"]
    if spec["target"] == "cuda":
        env["CUDACXX"] = str(Path(home) / "bin" / "nvcc")
    _run(configure, tree, "cmake-configure", env)
    _run(["cmake", "--build", build_dir, "--parallel", str(os.cpu_count() or 1)], tree, "cmake-build", env)
    return build_dir / f"lib{spec['op']}.so"


@dataclass
class Package:
    """What one call of package() made."""

    op: str
    target: str
    tree: Path  # the source tree: setup.py, CMakeLists.txt, kp_package.json, csrc/, <op>/
    wheel: Path
    library: Path | None = None  # CMake's lib<op>.so, where it was built
    seconds: dict = field(default_factory=dict)  # "wheel", "cmake": how long each build took

    def describe(self):
        where = {"cpu": "cpu stand-in", "cuda": "nvcc"}[self.target]
        lines = [f"{self.op} ({where}): source tree {display_path(self.tree)}"]
        lines.append(f"  wheel   {display_path(self.wheel)} ({self.seconds['wheel']:.1f} s)")
        if self.library:
            lines.append(f"  CMake   {display_path(self.library)} ({self.seconds['cmake']:.1f} s)")
        return "\n".join(lines)


def package(name_or_path, out_dir=OUT_DIR, target=None, cmake=False, version="0.1.0"):
    """Write the op's source tree (write_tree) and build its wheel into out_dir; with `cmake`, CMake's library too.
    Returns a Package. Raises KernelBuildError (with the build's log) or ToolchainError, as load_kernel does."""
    tree = write_tree(name_or_path, out_dir, target, version)
    spec = json.loads((tree / "kp_package.json").read_text())
    start = time.perf_counter()
    result = Package(spec["op"], spec["target"], tree, build_wheel(tree, out_dir))
    result.seconds["wheel"] = time.perf_counter() - start
    if cmake:
        start = time.perf_counter()
        result.library = build_cmake(tree)
        result.seconds["cmake"] = time.perf_counter() - start
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kp.package", description="Build an op's wheel and CMake library.")
    parser.add_argument("op", help="an op of kernels/ (add2) or a path to a .cu with its _binding.cpp beside it")
    parser.add_argument("--target", choices=TARGETS, help="default: cuda where torch sees a GPU, else cpu")
    parser.add_argument("--out", default=OUT_DIR, type=Path, help=f"default: {display_path(OUT_DIR)}")
    parser.add_argument("--no-cmake", action="store_true", help="build the wheel only")
    args = parser.parse_args(argv)
    made = package(args.op, args.out, args.target, cmake=not args.no_cmake and shutil.which("cmake") is not None)
    print(made.describe())
    print(f"  install: python -m pip install --no-deps {display_path(made.wheel)}, then `import {made.op}`")
    if made.library:
        print(f"  or: torch.ops.load_library({str(made.library)!r}) registers torch.ops.{made.op}.*")


if __name__ == "__main__":
    main()
