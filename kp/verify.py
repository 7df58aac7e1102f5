"""Verifications that print what they measured, then assert: against a reference, gradcheck, and a model
under torch.compile against eager (each records its verdict for the report, kp.report); and OpsRun, which
of a kernel's ops a block of code runs.

(kp.binding's check_* are argument checks that raise inside ops; these run in a notebook or a test.)
"""

import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kp.report import record


def check_against_reference(name, got, expected, atol=None, rtol=None):
    """Print the max abs error of `got` vs `expected`, then assert they are close."""
    err = (got.detach() - expected.detach()).abs().max().item() if got.numel() else 0.0
    print(f"{name:<12} max abs error {err:.3e}  ({got.dtype}, shape {tuple(got.shape)})")
    torch.testing.assert_close(got, expected, atol=atol, rtol=rtol)
    return err


def gradcheck(fn, inputs, name=None, **kwargs):
    """torch.autograd.gradcheck on `fn(*inputs)`: prints what passed, raises GradcheckError if not.

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
    print(f"gradcheck passed: {name}, gradients for {shapes}")
    record("gradcheck", f"passed: {name}")


def check_compiled(model, *inputs, **compile_kwargs):
    """Run `model(*inputs)` eagerly and under torch.compile(fullgraph=True); check that outputs agree,
    and gradients too, for every input and parameter that requires grad. Returns the compiled model.

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
    print(f"torch.compile(fullgraph=True): compiled and ran in {time.perf_counter() - start:.1f} s")
    for i, (g, e) in enumerate(zip(got[0], expected[0], strict=True)):
        check_against_reference(f"output {i}", g, e)
    for (n, _), g, e in zip(named, got[1], expected[1], strict=True):
        if (g is None) != (e is None):
            raise AssertionError(f"grad of {n}: compiled gave {g is not None}, eager gave {e is not None}")
        if g is not None:
            check_against_reference(f"grad {n}", g, e)
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
