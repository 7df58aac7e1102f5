"""The project's folders, and safe ways to write in them: display paths, content keys, OS-level locks, atomic
writes.

Owns where things are (ROOT, KERNELS, COMMON, BUILD_ROOT); never builds, loads or prints anything.
"""

import contextlib
import fcntl
import hashlib
import importlib.util
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"
COMMON = KERNELS / "common"
BUILD_ROOT = Path(os.environ.get("KP_BUILD_DIR", ROOT / "build" / "ext"))


def display_path(path):
    """`path` relative to the project's root where it lies below it, else as it is."""
    path = Path(path)
    with contextlib.suppress(ValueError):
        return str(path.relative_to(ROOT))
    return str(path)


def content_key(params, paths, length=16):
    """What a cache entry was made from, as hex: repr(params), then each file's path and bytes. A build's
    key and ptxas's cache key are this; keep the formula, or every warm cache rebuilds."""
    h = hashlib.sha256(repr(params).encode())
    for p in paths:
        h.update(str(p).encode() + b"\0" + Path(p).read_bytes())
    return h.hexdigest()[:length]


@contextlib.contextmanager
def locked(path):
    """An OS-level lock: released by the kernel if the holder dies, so a killed build never blocks."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def write_atomically(path, text):
    """Readers see the old content or the new one, never a half-written file."""
    path = Path(path)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_if_changed(path, text):
    """write_atomically, but keep the timestamp (and so ninja's state) when the content is the same."""
    path = Path(path)
    if not path.exists() or path.read_text() != text:
        write_atomically(path, text)


def copy_atomically(src, dst):
    tmp = Path(f"{dst}.tmp{os.getpid()}")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def module_from_file(name, path):
    """The Python file `path` as module `name`, loaded once per process: for the files that live beside what they
    serve, outside any package (the stand-in's translator in kernels/common/, the puzzles' table in puzzles/)."""
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


def kernel_variant(op, name, old, new):
    """A copy of kernels/<op>.cu, its binding and its <op>_ops.py in build/variants/<name>/, with the one place
    where the `.cu` says `old` changed to `new`: a bug to try in a notebook without touching the real file.
    Returns the copy's `.cu` path, for load_kernel. Raises ValueError if `old` is not in the file once."""
    source = (KERNELS / f"{op}.cu").read_text()
    if source.count(old) != 1:
        raise ValueError(f"kernels/{op}.cu says {old!r} {source.count(old)} times, not once")
    folder = ROOT / "build" / "variants" / name
    folder.mkdir(parents=True, exist_ok=True)
    for suffix in ("_binding.cpp", "_ops.py"):
        if (KERNELS / f"{op}{suffix}").exists():
            write_if_changed(folder / f"{op}{suffix}", (KERNELS / f"{op}{suffix}").read_text())
    write_if_changed(folder / f"{op}.cu", source.replace(old, new))
    return folder / f"{op}.cu"
