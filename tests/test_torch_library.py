"""Every op is a torch custom op with a fake implementation, registered again with every loaded version:
kernels/<op>_ops.py across hot reloads, under torch.compile, and when it is broken."""

import os
import sys
import textwrap

import pytest
import torch
from conftest import run_python

import helpers

KERNELS = sorted(p.stem for p in helpers.KERNELS.glob("*.cu"))


def python_calls_from_torch_autograd_kernel(fn, *args):
    """How many Python calls run inside torch.library's autograd kernel (torch/_library/autograd.py) while
    fn(*args) runs."""
    calls = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.endswith(os.path.join("_library", "autograd.py")):
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return len(calls)


def test_a_call_that_needs_no_gradient_skips_the_python_autograd_kernel():
    # ext.add2 (kp.load.op_caller) calls the op below autograd itself when nothing needs a gradient; the
    # op's overload goes through the Python kernel that register_autograd put at its Autograd key.
    ext = helpers.load_kernel("add2", target="cpu", quiet=True)
    a, b = torch.randn(5), torch.randn(5)
    ga, gb = a.clone().requires_grad_(), b.clone().requires_grad_()
    assert python_calls_from_torch_autograd_kernel(ext.add2, a, b) == 0
    with torch.no_grad():
        assert python_calls_from_torch_autograd_kernel(ext.add2, ga, gb) == 0
    assert python_calls_from_torch_autograd_kernel(ext.add2.default, a, b) > 0  # the layer it skips
    assert python_calls_from_torch_autograd_kernel(ext.add2, ga, b) > 0  # a gradient is needed: through it
    out = ext.add2(ga, b)
    assert out.grad_fn is not None and ext.add2(a, b).grad_fn is None
    torch.testing.assert_close(torch.autograd.grad(out.sum(), ga)[0], torch.ones(5))
    assert ext.add2.op is getattr(torch.ops, ext.namespace).add2 and ext.add2.default is ext.add2.op.default
    assert ext.add2.__name__ == "add2" and "add2(Tensor a, Tensor b) -> Tensor" in ext.add2.__doc__


def add2_function(holder):
    """An autograd Function that calls whatever version `holder["ext"]` is, as a notebook's global does."""

    class Add2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return holder["ext"].add2(a, b)

        @staticmethod
        def backward(ctx, grad_c):
            return grad_c, grad_c

    return Add2.apply


def test_a_reloaded_kernel_answers_under_torch_compile(kernel_copy):
    """After an edit and a reload, the compiled model runs the new kernel: no stale code, no abort."""
    cu = kernel_copy("add2")
    holder = {"ext": helpers.load_kernel(cu, target="cpu", quiet=True)}
    add2 = add2_function(holder)
    compiled = torch.compile(lambda a, b: add2(a * 2, b), fullgraph=True)
    a, b = torch.randn(300), torch.randn(300)
    torch.testing.assert_close(compiled(a, b), a * 2 + b)

    cu.write_text(cu.read_text().replace("c[i] = a[i] + b[i];", "c[i] = a[i] + b[i] + T(1);"))
    old = holder["ext"]
    holder["ext"] = helpers.load_kernel(cu, target="cpu", quiet=True)
    assert holder["ext"].namespace != old.namespace
    assert holder["ext"].fakes == {"add2", "add2_v1"}
    torch.testing.assert_close(compiled(a, b), a * 2 + b + 1)
    torch.testing.assert_close(holder["ext"].add2(a, b), a + b + 1)


def test_an_edit_of_the_ops_file_alone_loads_a_new_version(kernel_copy):
    cu = kernel_copy("add2")
    ops_py = cu.with_name("add2_ops.py")
    first = helpers.load_kernel(cu, target="cpu", quiet=True)
    a, b = torch.randn(7, requires_grad=True), torch.randn(7, requires_grad=True)
    (grad_a,) = torch.autograd.grad(first.add2(a, b).sum(), a)
    torch.testing.assert_close(grad_a, torch.ones(7))

    ops_py.write_text(ops_py.read_text().replace("return grad_c, grad_c", "return 3 * grad_c, grad_c"))
    second = helpers.load_kernel(cu, target="cpu", quiet=True)
    assert second.namespace != first.namespace and second.build.rebuilt == 0
    said = second.build.describe()  # not "built in 0.0 s (0 of 2 objects)"
    assert said == "add2: python side reloaded, nothing compiled (cpu stand-in; the library is unchanged)"
    (grad_a,) = torch.autograd.grad(second.add2(a, b).sum(), a)
    torch.testing.assert_close(grad_a, torch.full((7,), 3.0))
    (grad_a,) = torch.autograd.grad(first.add2(a, b).sum(), a)  # the old version keeps its own formula
    torch.testing.assert_close(grad_a, torch.ones(7))


def test_an_error_in_the_ops_file_is_raised_and_a_fix_loads(kernel_copy):
    cu = kernel_copy("add2")
    ops_py = cu.with_name("add2_ops.py")
    good = ops_py.read_text()
    ops_py.write_text(good.replace("def register(ops):", "def register(ops)"))
    with pytest.raises(SyntaxError) as e:
        helpers.load_kernel(cu, target="cpu", quiet=True)
    assert e.value.filename == str(ops_py)

    ops_py.write_text(good.replace("def register(ops):", "def setup(ops):"))
    with pytest.raises(TypeError, match=r"add2_ops.py must define register\(ops\), which load_kernel calls"):
        helpers.load_kernel(cu, target="cpu", quiet=True)

    ops_py.write_text(good)
    module = helpers.load_kernel(cu, target="cpu", quiet=True)
    assert module.fakes == {"add2", "add2_v1"}


def test_a_failing_register_can_be_retried_without_registering_the_kernel_again(kernel_copy):
    """register() fails after the C++ ops were registered: loading the same version again must fail the
    same way, not register the namespace a second time (which crashes the process)."""
    cu = kernel_copy("add2")
    ops_py = cu.with_name("add2_ops.py")
    good = ops_py.read_text()
    ops_py.write_text(good.replace('ops.register_autograd("add2", backward)', 'raise ValueError("half done")'))
    code = textwrap.dedent(f"""
        import helpers
        for attempt in range(2):
            try:
                helpers.load_kernel({str(cu)!r}, target='cpu', quiet=True)
            except ValueError as e:
                print("attempt", attempt, "failed:", e)
        """)
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["attempt 0 failed: half done", "attempt 1 failed: half done"]


def test_an_unknown_op_is_named_with_the_ops_there_are():
    module = helpers.load_kernel("add2", target="cpu", quiet=True)
    with pytest.raises(AttributeError, match=r"add2 has no op 'add3'; its ops: add2"):
        module.add3  # noqa: B018
    with pytest.raises(ValueError, match=r"add2 has no op 'add3'; its ops: add2"):
        module.register_fake("add3", lambda a, b: a)
