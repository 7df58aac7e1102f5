"""Every kernel also builds for a GPU: nvcc compiles it, it links against torch's CUDA libraries,
and it imports. No GPU is needed for that (calls would fail, cleanly, without one)."""

import os

import pytest
import torch
from conftest import CUDA_BUILD_MISSING

import helpers
import kp.files

# Every op, and the stand-in's conformance kernels: they are plain CUDA too.
KERNELS = sorted(p.stem for p in helpers.KERNELS.glob("*.cu")) + [str(kp.files.ROOT / "tests/cuda_cpu/conformance.cu")]
MISSING = CUDA_BUILD_MISSING


@pytest.mark.skipif(MISSING is not None, reason=f"the CUDA build needs nvcc and a CUDA torch: {MISSING}")
@pytest.mark.parametrize("op", KERNELS, ids=lambda op: op.rsplit("/", 1)[-1])
def test_builds_links_and_imports_with_nvcc(op):
    module = helpers.load_kernel(op, target="cuda")
    assert module.build.target == "cuda" and module.ops, module
    assert os.environ["TORCH_CUDA_ARCH_LIST"]
    if not torch.cuda.is_available():  # imported, and its checks answer cleanly without a GPU
        op_name, args = _a_call_of_an_op_taking_tensors(module)
        with pytest.raises(RuntimeError, match="this build takes cuda tensors"):
            getattr(module, op_name)(*args)


def _a_call_of_an_op_taking_tensors(module):
    """(name, arguments) of an op whose required arguments are tensors (float64 CPU ones) and floats (1.0)."""
    for name in module.ops:
        required = [str(a.type) for a in getattr(module, name).default._schema.arguments if not a.has_default_value()]
        if "Tensor" in required and set(required) <= {"Tensor", "float"}:
            return name, [torch.ones(2, dtype=torch.float64) if t == "Tensor" else 1.0 for t in required]
    pytest.fail(f"{module} has no op whose required arguments are all tensors and floats")
