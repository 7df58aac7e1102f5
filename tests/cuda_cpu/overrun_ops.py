"""overrun.cu's ops drive tests/test_overrun.py: called on plain tensors, never traced or differentiated, so they
have no fake and no autograd formula. This file says so; without it, load_kernel would warn
(NoPythonSideWarning) that they have neither."""


def register(ops):
    """Nothing to register (kernels/add2_ops.py shows what an op's Python side holds)."""
