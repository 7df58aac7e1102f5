"""The notebooks' import point: everything a notebook calls, and nothing else (the code lives in kp/).

    from helpers import load_kernel
    add2 = load_kernel("add2")          # builds kernels/add2.cu + kernels/add2_binding.cpp
    c = add2.add2(a, b)                 # the op, registered with torch

Edit `kernels/add2.cu`, call `load_kernel("add2")` again, and the new code answers, in the same
process. `load_kernel("add2", check=True)` (or KP_CHECK=1) builds it in check mode: out-of-bounds accesses,
shared-memory races and divergent barriers raise KernelCheckError at the `.cu` line.
Targets: "cuda" (nvcc) when a GPU is present, else "cpu": the CPU stand-in for CUDA's
execution model (kernels/common/cuda_cpu.h), which runs the same `.cu` file.
`python helpers.py doctor` checks the toolchain; `new_op("leaky_relu")` (or `make new-op NAME=leaky_relu`)
starts a new op of your own, from the template in templates/new_op/. `puzzle("map")` checks your answer to a
puzzle of notebook 00 (puzzles/01_map.cu); `exercise("01_grid_stride")` the kernel a lesson ends with
(exercises/01_grid_stride.cu). `run_program("file.cu", args=[...])`, or a `%%cuda` cell, builds and runs a
standalone program with a `main()` in a child process.
"""

import sys

from kp.bench import bench, gpu_trace
from kp.check import KernelCheckError
from kp.contract import check_contract
from kp.diagnostics import KernelBuildError
from kp.display import install_error_view, progress, setup, show_graph, show_kernel, show_kernel_resources
from kp.doctor import main as doctor_cli
from kp.exercise import exercise, show_exercise
from kp.files import KERNELS, kernel_variant
from kp.gpumodel.gpus import gpu, h100_measured
from kp.gpumodel.profile import modelled, profile
from kp.load import load_kernel
from kp.newop import new_op
from kp.program import install_cuda_magic, run_program
from kp.puzzle import puzzle, scoreboard, show_puzzle
from kp.report import record
from kp.table import Quantity, Table
from kp.toolchain import ToolchainError
from kp.verify import OpsRun, check_against_reference, check_compiled, gradcheck

__all__ = [
    "setup",
    "load_kernel",
    "show_kernel",
    "show_kernel_resources",
    "show_graph",
    "check_against_reference",
    "gradcheck",
    "check_compiled",
    "check_contract",
    "OpsRun",
    "progress",
    "bench",
    "gpu_trace",
    "profile",
    "modelled",
    "run_program",
    "gpu",
    "h100_measured",
    "puzzle",
    "exercise",
    "show_exercise",
    "show_puzzle",
    "scoreboard",
    "record",
    "Table",
    "Quantity",
    "KERNELS",
    "kernel_variant",
    "new_op",
    "KernelBuildError",
    "KernelCheckError",
    "ToolchainError",
]

install_error_view()
install_cuda_magic()  # %%cuda, in IPython

if __name__ == "__main__":  # `python helpers.py doctor [cpu|cuda]`, as `make doctor` runs it
    sys.exit(doctor_cli(sys.argv[1:]))
