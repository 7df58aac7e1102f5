"""A torch custom op packaged by Kernel Playground (kp.package copies this file in as the package's __init__.py).

Importing the package loads its library, which registers the ops as torch.ops.<package>.* (kp_register_static.cpp),
then runs register(ops) of _ops.py: the ops' fakes and autograd formulas (torch.library), so that autograd,
torch.compile, torch.export and torch.library.opcheck work on them. Each op is an attribute too: `add2.add2(a, b)`.

TARGET is the build this is: "cpu" (the CPU stand-in: its ops take CPU tensors) or "cuda" (nvcc: CUDA tensors).
"""

import ctypes
import importlib
import importlib.util
import json
from pathlib import Path

import torch

_HERE = Path(__file__).resolve().parent
_SPEC = json.loads((_HERE / "kp_package.json").read_text())
NAMESPACE, TARGET = _SPEC["op"], _SPEC["target"]

if TARGET == "cuda" and (torch.version.cuda or "").split(".")[0] != _SPEC["torch_cuda"].split(".")[0]:
    raise ImportError(
        f"{NAMESPACE} was built with nvcc against a torch for CUDA {_SPEC['torch_cuda']}; this torch "
        f"({torch.__version__}) is for {'CUDA ' + torch.version.cuda if torch.version.cuda else 'no CUDA'}"
    )

LIBRARY = _HERE / f"lib{NAMESPACE}.so"
torch.ops.load_library(str(LIBRARY))  # its static initializer registers the ops
_native = ctypes.CDLL(str(LIBRARY))  # the same handle: dlopen counts it once more
_native.kp_registration_error.restype = ctypes.c_char_p
if _error := _native.kp_registration_error():
    raise ImportError(f"{NAMESPACE}: registering torch.ops.{NAMESPACE} failed: {_error.decode()}")

ops = getattr(torch.ops, NAMESPACE)
_registered = torch._C._dispatch_get_registrations_for_dispatch_key("CompositeExplicitAutograd")
OPS = sorted(n.split("::", 1)[1] for n in _registered if n.startswith(NAMESPACE + "::"))


class _Ops:
    """What _ops.py's register(ops) calls, in this package's namespace: kp.load's LoadedKernel, in small."""

    def __init__(self, namespace):
        self.namespace = namespace
        self.library = torch.library.Library(namespace, "FRAGMENT")  # kept: dropping it drops the registrations

    def register_fake(self, op, fn=None):
        def register(fn):
            torch.library.register_fake(f"{self.namespace}::{op}", fn, lib=self.library)
            return fn

        return register if fn is None else register(fn)

    def register_autograd(self, op, backward, setup_context=None):
        qualname = f"{self.namespace}::{op}"
        torch.library.register_autograd(qualname, backward, setup_context=setup_context, lib=self.library)

    def __getattr__(self, op):  # ops.<op>(...) in a backward formula
        if op.startswith("_"):
            raise AttributeError(op)
        return getattr(getattr(torch.ops, self.namespace), op)


_python_side = _Ops(NAMESPACE)
if importlib.util.find_spec(f"{__name__}._ops") is not None:
    importlib.import_module(f"{__name__}._ops").register(_python_side)

globals().update({op: getattr(ops, op) for op in OPS if op not in globals()})
__all__ = ["NAMESPACE", "TARGET", "LIBRARY", "ops", "OPS", *OPS]
