"""Every kernel also builds for a GPU: nvcc compiles it, it links against torch's CUDA libraries,
and it imports. No GPU is needed for that (calls would fail, cleanly, without one)."""

import os

import pytest
import torch

import helpers

# Every op, and the stand-in's conformance kernels: they are plain CUDA too.
KERNELS = sorted(p.stem for p in helpers.KERNELS.glob("*.cu")) + [str(helpers.ROOT / "tests/cuda_cpu/conformance.cu")]
MISSING = (
    "torch is a CPU-only build"
    if torch.version.cuda is None
    else "no CUDA toolkit (nvcc) found"
    if helpers.find_cuda_root() is None
    else None
)


@pytest.mark.skipif(MISSING is not None, reason=f"the CUDA build needs nvcc and a CUDA torch: {MISSING}")
@pytest.mark.parametrize("op", KERNELS, ids=lambda op: op.rsplit("/", 1)[-1])
def test_builds_links_and_imports_with_nvcc(op):
    module = helpers.load_kernel(op, target="cuda")
    assert module.build.target == "cuda" and module.ops, module
    assert os.environ["TORCH_CUDA_ARCH_LIST"]
    if not torch.cuda.is_available():  # imported, and its checks answer cleanly without a GPU
        first = module.ops[0]
        with pytest.raises(RuntimeError, match="this build takes cuda tensors"):
            schema_args = getattr(module, first).default._schema.arguments
            getattr(module, first)(
                *[torch.ones(2, dtype=torch.float64) for _ in schema_args if "Tensor" in str(_.type)]
            )
