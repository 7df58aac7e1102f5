import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import helpers
from tools.notebooks import tagged_code


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
    """tools.notebooks.tagged_code: the code cells of a notebook tagged `tag`, run with `names` as globals.

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
