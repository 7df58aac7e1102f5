import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import helpers
import kp.toolchain
from kp.notebooks import tagged_code

# Why a target cannot be used here (None: it can). "cpu" (the stand-in) always runs. A "cuda" build
# needs nvcc and a CUDA build of torch, and running it needs a GPU.
CUDA_BUILD_MISSING = (
    "torch is a CPU-only build"
    if torch.version.cuda is None
    else "no CUDA toolkit (nvcc) found"
    if kp.toolchain.find_cuda_root() is None
    else None
)
CUDA_RUN_MISSING = CUDA_BUILD_MISSING or (None if torch.cuda.is_available() else "no GPU here")

# The targets whose kernels run here: op tests take them as a parameter, so that on a GPU machine every
# check runs on CUDA tensors too, and skips with the reason elsewhere.
TARGETS = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(CUDA_RUN_MISSING is not None, reason=f"cuda: {CUDA_RUN_MISSING}")),
]
# The targets that build here (a CUDA build compiles and links without a GPU).
TARGETS_BUILT = [
    "cpu",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(CUDA_BUILD_MISSING is not None, reason=f"cuda build: {CUDA_BUILD_MISSING}")
    ),
]
DEVICE = {"cpu": "cpu", "cuda": "cuda"}  # the device of the tensors a target's build takes


@pytest.fixture(scope="module", params=TARGETS)
def target(request):
    """Each target whose kernels run on this machine: "cpu" always, "cuda" where there is a GPU."""
    return request.param


@pytest.fixture(scope="module")
def target_device(target):
    """The device of the tensors the target's build takes, as the bindings' messages name it."""
    return "cuda:0" if target == "cuda" else "cpu"


@pytest.fixture
def on_target_device(target_device):
    """Tensors made without a device in the test go to the target's (an op test module uses this for all)."""
    if target_device == "cpu":
        yield
        return
    with torch.device(target_device):
        yield


def on(device, *tensors):
    """`tensors` moved to `device`, except meta ones (a parametrize list makes its tensors on the cpu)."""
    moved = [t if t.device.type == "meta" else t.to(device) for t in tensors]
    return moved if len(moved) > 1 else moved[0]


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


@pytest.fixture
def kernel_copy(tmp_path):
    """Copy kernels/<op>.cu, its binding and its _ops.py into a fresh folder; returns the new .cu path.

    The copy builds in its own build folder, so tests may edit it freely.
    """

    def make(op="add2", folder="k"):
        dst = tmp_path / folder
        dst.mkdir(exist_ok=True)
        for suffix in (".cu", "_binding.cpp"):
            shutil.copy(helpers.KERNELS / f"{op}{suffix}", dst / f"{op}{suffix}")
        text = (dst / f"{op}.cu").read_text().replace('#include "common/kp.cuh"', '#include "kp.cuh"')
        (dst / f"{op}.cu").write_text(text)
        text = (dst / f"{op}_binding.cpp").read_text().replace('"common/binding.h"', '"binding.h"')
        (dst / f"{op}_binding.cpp").write_text(text)
        if (helpers.KERNELS / f"{op}_ops.py").exists():
            shutil.copy(helpers.KERNELS / f"{op}_ops.py", dst / f"{op}_ops.py")
        return dst / f"{op}.cu"

    return make


@pytest.fixture(scope="session")
def notebook_code():
    """kp.notebooks.tagged_code: the code cells of a notebook tagged `tag`, run with `names` as globals.

    ns = notebook_code("03_poly2_tan_fit", "autograd-function", torch=torch, poly2_ext=ext)
    p2 = ns["p2"]
    """
    return tagged_code


def run_python(code, timeout=300, **kwargs):
    """Run `code` in a new Python process (the project's interpreter); returns CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=Path(__file__).parent,
        **kwargs,
    )
