"""`make lab`: JupyterLab at the project root with notebook 01 open, as root or as a normal user.

    python tools/lab.py              # prints the URL to open (and opens a browser where there is one)
    python tools/lab.py --port 8899  # `make lab PORT=8899`

Rooted at the project, not at notebooks/, so that Lab's file browser reaches kernels/*.cu (the files the
playground is about: open one, edit, save, re-run the loading cell) and build/ (the full build logs).
Notebooks open unmodified: see PlaygroundContents. Lab's settings come from tools/lab_settings/ (overrides.json:
no news pop-up, no update check; a user's own settings still win), and tools/lab_extensions/ adds one extension:
`.cu` and `.cuh` files open as CUDA C++, highlighted as C++, and an edited file open in the editor is saved before
a notebook cell runs (the kernel reads the file on disk). Nothing is written into the environment's Jupyter folders.
Its kernels get lab_environment: torch's "No CUDA runtime is found, using CUDA_HOME=..." warning is off where there
is no GPU (a notebook that imports torch.utils.benchmark before helpers would show it red in its first cell).
tests/test_lab.py starts Lab through lab_command and lab_environment too.
"""

import argparse
import os
import platform
import shutil
import subprocess
import sys

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from kp.files import ROOT

FIRST_NOTEBOOK = "notebooks/01_add2_sum_of_squares.ipynb"


def lab_command(port=None, token=None, browser=True, root=ROOT):
    """The `jupyter lab` command line: rooted at the project, notebook 01 open, --allow-root as root."""
    cmd = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}"]
    cmd.append(f"--LabApp.default_url=/lab/tree/{FIRST_NOTEBOOK}")
    cmd.append("--ServerApp.contents_manager_class=tools.lab.PlaygroundContents")  # run from ROOT: importable
    cmd.append(f"--LabApp.app_settings_dir={root / 'tools' / 'lab_settings'}")  # the environment's has nothing
    cmd.append(f"--LabApp.extra_labextensions_path={root / 'tools' / 'lab_extensions'}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # Jupyter refuses root without it: "Running as root is not recommended"
    if port:
        cmd += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if token is not None:
        cmd.append(f"--IdentityProvider.token={token}")
    if not browser:
        cmd.append("--no-browser")
    return cmd


def lab_environment(environ=None):
    """The environment Lab and its kernels run in: `environ` (os.environ's copy by default), and where there is no
    GPU (no nvidia-smi), torch.utils.cpp_extension's log at errors only (TORCH_LOGS), unless the user set TORCH_LOGS:
    its warning that there is no CUDA runtime, on import, is what a CPU machine expects (kp.build says the same)."""
    env = dict(os.environ if environ is None else environ)
    if "TORCH_LOGS" not in env and shutil.which("nvidia-smi", path=env.get("PATH")) is None:
        env["TORCH_LOGS"] = "-torch.utils.cpp_extension"
    return env


class PlaygroundContents(AsyncLargeFileManager):
    """Jupyter's own contents manager, with a notebook's Python version as this machine's kernel reports it.

    When its kernel connects, Lab writes the kernel's `language_info` into the notebook, and marks the notebook
    modified if that changed anything. The committed notebooks hold what every machine's ipykernel reports but
    the version (3.11.7 here, 3.12.3 there; tests/test_notebooks.py holds them to it). So this adds this
    machine's version as Lab reads a notebook, and takes it out again as Lab saves one: a notebook opens
    unmodified, and saving it leaves no machine's version for git to see. Lab's kernel is this Python's.
    """

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        model = await super().get(path, content, type, format, **kwargs)
        if model["type"] == "notebook" and model["content"]:
            info = model["content"]["metadata"].get("language_info")
            if info is not None and info.get("name") == "python":
                info.setdefault("version", platform.python_version())
        return model

    async def save(self, model, path=""):
        if model.get("type") == "notebook" and model.get("content"):
            info = model["content"].get("metadata", {}).get("language_info", {})
            if info.get("version") == platform.python_version():
                del info["version"]
        return await super().save(model, path)


def trust_notebooks(root=ROOT):
    """Sign the committed notebooks, so that Lab opens them trusted (they have no outputs to distrust)."""
    import nbformat
    from nbformat.sign import NotebookNotary

    notary = NotebookNotary()
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        notary.sign(nbformat.read(path, as_version=4))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, help="the port (default: Jupyter's, 8888 or the next free one)")
    parser.add_argument("--no-browser", action="store_true", help="only print the URL")
    args = parser.parse_args(argv)
    trust_notebooks()
    return subprocess.call(lab_command(args.port, browser=not args.no_browser), cwd=ROOT, env=lab_environment())


if __name__ == "__main__":
    sys.exit(main())
