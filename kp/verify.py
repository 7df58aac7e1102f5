"""Verifications that print what they measured, then assert: against a reference, gradcheck, and a model
under torch.compile against eager (each records its verdict for the report, kp.report); and OpsRun, which
of a kernel's ops a block of code runs.

(kp.binding's check_* are argument checks that raise inside ops; these run in a notebook or a test.)
"""

import time

import torch
from torch.testing._comparison import get_tolerances
from torch.utils._python_dispatch import TorchDispatchMode

from kp.check import last_write
from kp.report import record


def check_against_reference(name, got, expected, atol=None, rtol=None, quiet=False):
    """Print the max abs error of `got` vs `expected` (not when `quiet`), then assert they are close. On a mismatch
    the error names the first wrong element, and, when a check-mode build wrote it (kp.check), the block, thread
    and `.cu` line of its last write. Returns the max abs error."""
    err = (got.detach() - expected.detach()).abs().max().item() if got.numel() else 0.0
    if not quiet:
        print(f"{name:<12} max abs error {err:.3e}  ({got.dtype}, shape {tuple(got.shape)})")
    try:
        torch.testing.assert_close(got, expected, atol=atol, rtol=rtol)
    except AssertionError as mismatch:
        if culprit := first_wrong_element(got, expected, atol, rtol):
            raise AssertionError(f"{name}: {culprit}\n{mismatch}") from None
        raise
    return err


def first_wrong_element(got, expected, atol=None, rtol=None):
    """ "the first wrong element is [i, j]: expected E, got G; last written by kernel 'k' block (x,y,z) thread
    (x,y,z), at kernels/x.cu:LINE" (the writer only for a check-mode build's output), or None when `got` and
    `expected` cannot be compared element by element."""
    if got.shape != expected.shape or got.dtype != expected.dtype or got.is_complex() or not got.numel():
        return None
    rtol, atol = get_tolerances(got, expected, rtol=rtol, atol=atol)
    g, e = got.detach(), expected.detach().to(got.device)
    wrong = ~torch.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    if not wrong.any():
        return None
    index = tuple(int(i) for i in wrong.nonzero()[0])
    text = f"the first wrong element is {list(index)}: expected {e[index].item():.6g}, got {g[index].item():.6g}"
    if writer := last_write(g, index):
        text += f"; last written by {writer}"
    return text


def gradcheck(fn, inputs, name=None, quiet=False, **kwargs):
    """torch.autograd.gradcheck on `fn(*inputs)`: prints what passed (not when `quiet`), raises GradcheckError if
    not. Returns what it checked: "<name>, gradients for <shapes and dtypes>".

    Use float64 inputs: finite differences in float32 are too coarse to mean anything.
    """
    owner = getattr(fn, "__self__", None)  # P2.apply -> "P2"
    name = name or (owner.__name__ if isinstance(owner, type) else getattr(fn, "__qualname__", repr(fn)))
    leaves = [t for t in inputs if torch.is_tensor(t) and t.requires_grad]
    shapes = ", ".join(f"{tuple(t.shape)} {str(t.dtype).removeprefix('torch.')}" for t in leaves)
    try:
        torch.autograd.gradcheck(fn, tuple(inputs), **kwargs)
    except Exception as e:
        record("gradcheck", f"FAILED: {name}: {str(e).splitlines()[0]}")
        raise
    if not quiet:
        print(f"gradcheck passed: {name}, gradients for {shapes}")
    record("gradcheck", f"passed: {name}")
    return f"{name}, gradients for {shapes}"


def check_compiled(model, *inputs, quiet=False, **compile_kwargs):
    """Run `model(*inputs)` eagerly and under torch.compile(fullgraph=True); check that outputs agree,
    and gradients too, for every input and parameter that requires grad. Returns the compiled model, with
    `.kp_seconds` (compiling and running it) and `.kp_max_error` (the largest difference from eager).

    fullgraph=True makes any graph break an error: the custom ops and their autograd Function
    must trace whole, which takes a fake (shape-only) implementation of every op.
    """
    compiled = torch.compile(model, fullgraph=True, **compile_kwargs)
    named = [(f"input {i}", t) for i, t in enumerate(inputs) if torch.is_tensor(t) and t.requires_grad]
    if isinstance(model, torch.nn.Module):
        named += [(n, p) for n, p in model.named_parameters() if p.requires_grad]

    def run(fn):
        out = fn(*inputs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if not named:
            return outs, []
        generator = torch.Generator(device=outs[0].device).manual_seed(0)
        seeds = [torch.randn(o.shape, dtype=o.dtype, device=o.device, generator=generator) for o in outs]
        grads = torch.autograd.grad(outs, [t for _, t in named], seeds, allow_unused=True)
        return outs, grads

    expected = run(model)
    start = time.perf_counter()
    got = run(compiled)
    compiled.kp_seconds, compiled.kp_max_error = time.perf_counter() - start, 0.0
    if not quiet:
        print(f"torch.compile(fullgraph=True): compiled and ran in {compiled.kp_seconds:.1f} s")
    for i, (g, e) in enumerate(zip(got[0], expected[0], strict=True)):
        err = check_against_reference(f"output {i}", g, e, quiet=quiet)
        compiled.kp_max_error = max(compiled.kp_max_error, err)
    for (n, _), g, e in zip(named, got[1], expected[1], strict=True):
        if (g is None) != (e is None):
            raise AssertionError(f"grad of {n}: compiled gave {g is not None}, eager gave {e is not None}")
        if g is not None:
            compiled.kp_max_error = max(compiled.kp_max_error, check_against_reference(f"grad {n}", g, e, quiet=quiet))
    return compiled


class OpsRun(TorchDispatchMode):
    """Which ops of a loaded kernel run inside `with OpsRun(ext) as ops:`, backward included: `ops.names`,
    in order (e.g. ["involution", "involution_grad_input"]). Shows that a backward launches only the
    gradient kernels it needs."""

    def __init__(self, kernel):
        super().__init__()
        self.namespace, self.names = kernel.namespace, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace == self.namespace:
            self.names.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))
