"""trips.cu's op drives tests/test_compiled.py: called on plain tensors, never traced or differentiated, so it has no
fake and no autograd formula. This file says so; without it, load_kernel would warn (NoPythonSideWarning) that it has
neither."""


def register(ops):
    """Nothing to register (kernels/add2_ops.py shows what an op's Python side holds)."""
