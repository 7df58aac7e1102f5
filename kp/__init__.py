"""Kernel Playground's Python side, one module per concern (helpers.py re-exports what notebooks use).

Floor one, whose modules import only kp.files (and torch, nbformat...) from below:
    kp.files      paths of the project, display_path, OS-level locks, atomic writes
    kp.binding    the bindings' argument checks in Python (twins of kernels/common/binding.h), for fakes
    kp.table      Table: rows of dicts shown as markdown
    kp.diagnostics  KernelBuildError: a build log read as an error at the `.cu` line
    kp.report     record / read_records: what a notebook found, for `make run`'s index page
    kp.notebooks  execute a notebook in a fresh kernel; tagged_code: run a notebook's tagged cells

    kp.toolchain  CUDA_HOME and PATH, the doctor, ToolchainError, the probe of optional flags

Importing the package makes the build tools reachable (kp.toolchain.configure_environment: CUDA_HOME must
be right before torch.utils.cpp_extension is imported); nothing else acts at import time.
"""

from kp.toolchain import configure_environment

configure_environment()
