"""Loading a built kernel: its library copied per version, its ops registered under a fresh namespace,
kernels/<op>_ops.py run for that version, and the ops handed out as a LoadedKernel.

Owns the process-wide registries (a version is registered once and never undone, so a reload never
aborts the process); never compiles anything itself (kp.build does).
"""

import contextlib
import ctypes
import importlib.util
import os
import sys
import tempfile
import warnings

import torch

from kp.build import build_kernel, python_side_of, resolve_kernel
from kp.check import check_from_env, raise_findings
from kp.diagnostics import KernelBuildError, explain_launch_failure, load_failure, log_failure, registration_failure
from kp.files import ROOT, copy_atomically, display_path
from kp.report import record


def op_caller(packet, checked=None):
    """What `mod.<op>` is: a call of the custom op `packet` (torch.ops.<namespace>.<op>) that skips the
    autograd layer when nothing needs a gradient.

    torch.library.register_autograd puts a Python kernel at the op's Autograd key, and the dispatcher
    enters it on every call, gradients or not: on a tiny tensor that hop from C++ back into Python
    costs as much as the rest of the call (bench/op_overhead.py). When grad mode is off or no input
    requires grad, that kernel does nothing but call the op below autograd; this does the same from
    here, without the hop. Under torch.compile or torch.export, and whenever a gradient is needed, the
    op is called as it is. `call.op` is the op itself, `call.default` its overload (what opcheck takes).
    `checked`: the `.cu` file of a check-mode build, whose findings each call raises (kp.check).
    """
    overload = packet.default
    any_requires_grad, below_autograd = torch._C._any_requires_grad, torch._C._AutoDispatchBelowAutograd

    def call(*args, **kwargs):
        try:
            if torch.compiler.is_compiling() or (torch.is_grad_enabled() and any_requires_grad(*args, **kwargs)):
                out = overload(*args, **kwargs)
            else:
                with below_autograd():
                    out = overload(*args, **kwargs)
        except RuntimeError as error:  # a bad argument (the binding's check) or a failed launch
            if checked:
                raise_findings(packet.__name__, checked, failure=error)
            raise op_error(error, packet.__name__) from None
        if checked:
            raise_findings(packet.__name__, checked)
        return out

    call.__name__ = call.__qualname__ = packet.__name__
    call.__doc__ = str(overload._schema)  # e.g. kp_add2_<version>::add2(Tensor a, Tensor b) -> Tensor
    call.op, call.default = packet, overload
    return call


def op_error(error, op):
    """`error`, raised by the op `op`, marked as the op's (`error.kp_op`: kp.display's error view shows it
    without torch's frames), with the `.cu` lines a failed launch is about (explain_launch_failure) and the
    project's paths relative to it (kernels/add2.cu:48, as build errors name them). The same exception, so
    its type and traceback stay."""
    if error.args and isinstance(error.args[0], str):
        message = explain_launch_failure(error.args[0])
        error.args = (message.replace(f"{ROOT}{os.sep}", ""), *error.args[1:])
    error.kp_op = op
    return error


class LoadedKernel:
    """The ops of one loaded kernel version: `mod.add2(a, b)` calls the custom op
    `torch.ops.<namespace>.add2` (through `op_caller`; `mod.add2.op` is the op itself).

    `register_fake` and `register_autograd` add the Python side of torch.library to this version's
    ops (kernels/<op>_ops.py calls them); `fakes` and `autograd` name the ops that have one.
    """

    def __init__(self, build, namespace, library_path):
        self.build, self.namespace, self.library_path = build, namespace, library_path
        self.__name__ = build.name
        self.fakes, self.autograd = set(), set()
        self._library = None  # torch.library.Library(namespace, "FRAGMENT"), made on first use
        self._op_names = self.ops
        packets = getattr(torch.ops, namespace)
        for op in self._op_names:  # plain attributes: what torch.compile traces through without guards on code
            if op in vars(type(self)) or op in vars(self):
                raise KernelBuildError(f"{build.name}: an op may not be named {op!r} (a LoadedKernel attribute)")
            setattr(self, op, op_caller(getattr(packets, op), build.source if build.check else None))

    @property
    def ops(self):
        names = torch._C._dispatch_get_registrations_for_dispatch_key("CompositeExplicitAutograd")
        return sorted(n.split("::", 1)[1] for n in names if n.startswith(self.namespace + "::"))

    def _qualname(self, op):
        if op not in self._op_names:
            raise ValueError(f"{self.build.name} has no op {op!r}; its ops: {', '.join(self._op_names)}")
        if self._library is None:
            self._library = torch.library.Library(self.namespace, "FRAGMENT")
        return f"{self.namespace}::{op}"

    def register_fake(self, op, fn=None):
        """torch.library.register_fake for `op` of this version; use as `@ops.register_fake("add2")`."""

        def register(fn):
            torch.library.register_fake(self._qualname(op), fn, lib=self._library)
            self.fakes.add(op)
            return fn

        return register if fn is None else register(fn)

    def register_autograd(self, op, backward, setup_context=None):
        """torch.library.register_autograd for `op` of this version: `op(...)` becomes differentiable."""
        torch.library.register_autograd(self._qualname(op), backward, setup_context=setup_context, lib=self._library)
        self.autograd.add(op)

    def __getattr__(self, op):
        if op.startswith("_"):
            raise AttributeError(op)
        raise AttributeError(f"{self.build.name} has no op {op!r}; its ops: {', '.join(self._op_names)}")

    def __dir__(self):
        return [*super().__dir__(), *self._op_names]

    def __repr__(self):
        return f"<kernel {self.build.name} [{self.build.target}] ops={self._op_names} namespace={self.namespace}>"


class NoPythonSideWarning(UserWarning):
    """A kernel with ops and no `<op>_ops.py`: its ops have no fake and no autograd formula."""


_warned = set()  # the .cu files NoPythonSideWarning was given for (once per file per process)


def register_python_side(module, cu):
    """Run `register(ops)` of kernels/<op>_ops.py, if there is one, for one loaded version."""
    path = python_side_of(cu)
    if not path.is_file():
        return
    spec = importlib.util.spec_from_file_location(f"{module.namespace}_ops", path)
    code = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(code)
    if not callable(getattr(code, "register", None)):
        raise TypeError(f"{display_path(path)} must define register(ops), which load_kernel calls")
    code.register(module)  # if it raises, the module is dropped; a retry registers on a new one


def warn_if_no_python_side(module):
    """A NoPythonSideWarning, once per kernel file and process, for a kernel with ops and no `<op>_ops.py`."""
    cu, path = module.build.source, python_side_of(module.build.source)
    if module.ops and cu not in _warned and not path.is_file():
        _warned.add(cu)
        warnings.warn(no_python_side(module, path), NoPythonSideWarning, stacklevel=3)


def no_python_side(module, path):
    """What a kernel without `path` (its `<op>_ops.py`) lacks, what that breaks, and how to add it."""
    ops, binding = ", ".join(module.ops), display_path(resolve_kernel(module.build.source)[1])
    return (
        f"{binding} registers {ops}, but there is no {display_path(path)}, so these ops have no fake (torch.compile, "
        "torch.export and torch.library.opcheck fail on them) and no autograd formula (a backward through them "
        'fails: torch warns "an autograd kernel was not registered" and the gradient is missing: "... appears to '
        f'not have been used in the graph"). Add {display_path(path)} with a register(ops) that calls '
        "ops.register_fake and ops.register_autograd for each op, as kernels/add2_ops.py does; one whose "
        "register(ops) does nothing says the ops need neither."
    )


@contextlib.contextmanager
def stderr_kept():
    """Keeps what is written to file descriptor 2 meanwhile instead of printing it: yields a list that holds it
    (one string) once the block ends."""
    kept = []
    sys.stderr.flush()
    with tempfile.TemporaryFile() as file:
        saved = os.dup(2)
        os.dup2(file.fileno(), 2)
        try:
            yield kept
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            file.seek(0)
            kept.append(file.read().decode(errors="replace"))


_native = {}  # build key -> (namespace, library copy): C++ registrations made in this process, never undone
_loaded = {}  # build key -> LoadedKernel: one load per kernel version per process


def load_kernel(name_or_path, target=None, verbose=False, quiet=False, check=None):
    """Build (if needed) and load a kernel; return its ops as a LoadedKernel.

    `name_or_path`: an op name ("add2" -> kernels/add2.cu + kernels/add2_binding.cpp, and
    kernels/add2_ops.py if present) or a path to a `.cu` file with its `<stem>_binding.cpp` beside
    it. Prints one line saying what happened, unless `quiet`. Raises KernelBuildError (compile
    errors, pointing at the `.cu` line; a launcher the binding calls and the `.cu` does not define, in C++;
    a schema torch refuses, at the binding's line) or ToolchainError (a missing or misconfigured tool, with
    the fix); an error in `<op>_ops.py` is raised as it is.

    `check=True` (default: the KP_CHECK environment variable) loads the check-mode build, on the CPU stand-in:
    its op calls raise KernelCheckError for out-of-bounds accesses, shared-memory races and divergent
    barriers, at the `.cu` line (kp.check). Slower; the normal build stays as it is.
    """
    check = check_from_env() if check is None else check
    build = build_kernel(name_or_path, target, verbose, check=check)
    module = _loaded.get(build.key)
    if module is not None:
        build.status = "loaded"
        module.build = build
    else:
        if build.key not in _native:
            copies = build.library.parent / "loaded"
            copies.mkdir(exist_ok=True)
            # dlopen returns the already-loaded library for a path it has seen: every version gets its own file.
            copy = copies / f"{build.name}-{build.key}.so"
            if not copy.exists():
                copy_atomically(build.library, copy)
            namespace = f"kp_{build.name}_{build.key}"
            binding = resolve_kernel(build.source)[1]
            try:  # torch's load in the build may have found the previous version's library under the same path
                lib = ctypes.CDLL(str(copy))
            except OSError as refused:  # said in C++: the launcher the binding calls and the .cu does not define
                failure = load_failure(str(refused), build.library, build.source, binding)
                raise log_failure(copies.parent, failure) from None
            lib.kp_register.restype = ctypes.c_char_p
            with stderr_kept() as printed:  # torch's C shim prints a refused schema before it returns the error
                error = lib.kp_register(namespace.encode())
            _native[build.key] = (namespace, copy)
            if error:  # kept, and raised again: registering the same namespace twice would abort the process
                _native[build.key] = log_failure(copies.parent, registration_failure(error.decode(), binding))
            else:
                sys.stderr.write("".join(printed))
        if isinstance(_native[build.key], KernelBuildError):
            raise _native[build.key]
        module = LoadedKernel(build, *_native[build.key])
        register_python_side(module, build.source)
        _loaded[build.key] = module
    if not quiet:
        print(build.describe())
    record("build", build.describe())
    warn_if_no_python_side(module)
    return module
