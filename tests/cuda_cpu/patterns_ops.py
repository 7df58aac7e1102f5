"""patterns.cu's op drives the GPU model's and check mode's tests (tests/test_profile.py, tests/test_pictures.py,
tests/test_check.py): called on plain tensors, never traced or differentiated, so it has no fake and no autograd
formula. This file says so; without it, load_kernel would warn (NoPythonSideWarning) that it has neither."""


def register(ops):
    """Nothing to register (kernels/add2_ops.py shows what an op's Python side holds)."""
