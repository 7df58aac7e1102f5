"""Execute notebooks top to bottom in a fresh kernel (`make run`, the notebook tests), and run a notebook's
tagged cells as a module (tagged_code: the tests and benches use the notebook's own code, not a copy).

Imports Jupyter's packages only here; never renders the report page.
"""

import itertools
import json
import os
import re
import sys
import tempfile
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from jupyter_client import KernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from kp.files import ROOT

NOTEBOOKS = ROOT / "notebooks"
HEADLESS = "KP_HEADLESS"  # set in the kernels execute() starts: nothing draws widgets (kp.display.progress)
_modules = itertools.count()  # tagged_code's module names


@dataclass
class Executed:
    path: Path
    notebook: nbformat.NotebookNode
    seconds: float
    error: str | None  # None when every cell ran
    failed_cell: int | None  # index of the failing code cell
    # Per code cell that ran: (code cell index, wall seconds, CPU seconds of the kernel and of the children it waited
    # for, such as a build's compilers). CPU seconds say more than wall seconds on a shared, loaded machine.
    cell_seconds: list = field(default_factory=list)

    def slowest(self, n=5):
        """The `n` code cells that took longest, as (code cell index, wall s, CPU s, the cell's first line)."""
        code = [c for c in self.notebook.cells if c.cell_type == "code"]
        ranked = sorted(self.cell_seconds, key=lambda t: -t[1])[:n]
        return [(i, wall, cpu, code[i].source.split("\n", 1)[0]) for i, wall, cpu in ranked]


def all_notebooks():
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def execute(path, timeout=1200, allow_errors=False):
    """Run every cell of `path` in a fresh python3 kernel whose working folder is the notebook's.

    With `allow_errors`, cells after a failing one still run (the error stays in its outputs). A cell's
    stdout is one output, as a frontend shows it (a text progress bar's last state, not each redraw).
    """
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    cell_seconds, started = [], {}

    def cpu():  # the kernel's CPU seconds and its waited-for children's (psutil comes with ipykernel)
        import psutil

        t = psutil.Process(km.provisioner.process.pid).cpu_times()
        return t.user + t.system + t.children_user + t.children_system

    def before(cell, **_):
        if cell.cell_type == "code":
            started.update(wall=time.perf_counter(), cpu=cpu())

    def after(cell, cell_index, **_):
        if cell.cell_type == "code":
            code_index = sum(c.cell_type == "code" for c in nb.cells[:cell_index])
            cell_seconds.append((code_index, time.perf_counter() - started["wall"], cpu() - started["cpu"]))

    # IPC sockets in a private folder: a local kernel needs no TCP port (and jupyter_client warns
    # about unencrypted TCP).
    with tempfile.TemporaryDirectory(prefix="kp-kernel-") as sockets:
        km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(sockets, "kernel"))
        client = NotebookClient(
            nb,
            km=km,
            timeout=timeout,
            allow_errors=allow_errors,
            coalesce_streams=True,
            resources={"metadata": {"path": str(path.parent)}},
            on_cell_execute=before,
            on_cell_executed=after,
        )
        start = time.perf_counter()
        error, failed = None, None
        try:
            client.execute(env={**os.environ, HEADLESS: "1"})
        except CellExecutionError as e:
            error = str(e)
            code_cells = [c for c in nb.cells if c.cell_type == "code"]
            failed = next(
                (i for i, c in enumerate(code_cells) if any(o.get("output_type") == "error" for o in c.outputs)),
                None,
            )
        finally:
            seconds = time.perf_counter() - start
            # nbclient shuts down only the kernels it made itself: ours would live on until this process exits, and
            # then say "Parent appears to have exited, shutting down" on stderr (at the end of `make run`).
            if km.has_kernel:
                km.shutdown_kernel()
    return Executed(path, nb, seconds, error, failed, cell_seconds)


def tagged_code(stem, tag, **names):
    """Run the code cells of notebooks/<stem>.ipynb tagged `tag`, with `names` as globals; return the globals.

    How tests and benchmarks use a notebook's own autograd Function or reference, not a copy that
    could drift from it: `tagged_code("06_involution", "reference", torch=torch, F=F)["involution_reference"]`.
    """
    path = NOTEBOOKS / f"{stem}.ipynb"
    cells = [
        c
        for c in json.loads(path.read_text())["cells"]
        if c["cell_type"] == "code" and tag in c.get("metadata", {}).get("tags", [])
    ]
    if not cells:
        raise LookupError(f"{path.name} has no code cell tagged {tag!r}")
    # A real module, registered: torch.compile (2.11) imports the module a traced Function's class names
    # as its __module__. One per call, so that code run with another kernel keeps its own globals.
    module = types.ModuleType(re.sub(r"\W", "_", f"notebook_{stem}_{tag}_{next(_modules)}"))
    module.__dict__.update(names)
    sys.modules[module.__name__] = module
    for i, cell in enumerate(cells):
        exec(compile("".join(cell["source"]), f"{path.name}[{tag} {i}]", "exec"), module.__dict__)
    return module.__dict__
