"""What a notebook found, for the index page of `make run` (tools/run_notebooks.py): the one owner of the
records file that KP_REPORT names, and of its lock.

record() writes (from a notebook's kernel), read_records() reads and cleans up (from the runner); never
runs notebooks or renders the page.
"""

import contextlib
import json
import os
from pathlib import Path

from kp.files import locked, write_if_changed

ENV = "KP_REPORT"  # the records file of the notebook that runs now; unset: record() does nothing


def _lock_of(path):
    return path.with_name(path.name + ".lock")


def record(key, text):
    """Note one result of this notebook (key: "build", "gradcheck", "metric", "bench") for the report.

    Only when the notebook runs under `make run`, which names the file in KP_REPORT; a no-op otherwise.
    load_kernel, gradcheck and bench record themselves; a notebook records its toy model's metric.
    """
    path = os.environ.get(ENV)
    if not path:
        return
    path = Path(path)
    with locked(_lock_of(path)):
        found = {}
        with contextlib.suppress(OSError, ValueError):
            found = json.loads(path.read_text())
        found.setdefault(key, []).append(str(text))
        write_if_changed(path, json.dumps(found, indent=1))


def read_records(path):
    """{key: [texts]} that a notebook recorded in `path` ({} if none), and the lock file removed."""
    path = Path(path)
    _lock_of(path).unlink(missing_ok=True)
    return json.loads(path.read_text()) if path.exists() else {}
