"""terms.cu's op drives tests/test_local.py's and tests/test_gputime.py's by-hand cases of the GPU model's local memory and atomics: called
on plain tensors, never traced or differentiated, so it has no fake and no autograd formula. This file says so;
without it, load_kernel would warn (NoPythonSideWarning) that it has neither."""


def register(ops):
    """Nothing to register (kernels/add2_ops.py shows what an op's Python side holds)."""
