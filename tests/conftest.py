import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import helpers


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
    """Run the code cells of notebooks/<stem>.ipynb tagged `tag` with `names` as globals; returns the globals.

    How a test uses the notebook's own autograd Function, not a copy that could drift from it:
        ns = notebook_code("03_poly2_tan_fit", "autograd-function", torch=torch, poly2_ext=ext)
        p2 = ns["p2"]
    """

    def run(stem, tag, **names):
        path = helpers.ROOT / "notebooks" / f"{stem}.ipynb"
        cells = [
            c
            for c in json.loads(path.read_text())["cells"]
            if c["cell_type"] == "code" and tag in c.get("metadata", {}).get("tags", [])
        ]
        assert cells, f"{path.name} has no code cell tagged {tag!r}"
        namespace = {"__name__": f"notebook_{stem}", **names}
        for i, cell in enumerate(cells):
            exec(compile("".join(cell["source"]), f"{path.name}[{tag} {i}]", "exec"), namespace)
        return namespace

    return run


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
