"""The contract every op of every kernel keeps, on every target present (cpu; cuda with a GPU, or for the build
only, nvcc): it is a torch custom op with a fake and, for a forward op, an autograd formula (opcheck); its fake
answers meta tensors as the kernel answers real ones; it runs under torch.compile(fullgraph=True); a bad call
is refused in the same words by the kernel and the fake and loses nothing; a compile error names the .cu line.
The sample calls are in op_samples.py; what is particular to an op is tested in tests/test_<kernel>.py."""

import re

import pytest
import torch
from conftest import TARGETS_BUILT
from op_samples import HALF, SAMPLES
from torch._subclasses.fake_tensor import FakeTensorMode

import helpers

KERNELS = sorted(p.stem for p in helpers.KERNELS.glob("*.cu"))
OPS = sorted(SAMPLES)
DTYPES = [torch.float32, torch.float64]


def loaded(kernel, target):
    return helpers.load_kernel(kernel, target=target, quiet=True)


def op_named(name, target):
    """`kernel.op` of the target's build, as a notebook calls it (ext.<op>)."""
    kernel, op = name.split(".")
    return getattr(loaded(kernel, target), op)


def on(device, args):
    """The sample's arguments on `device`: tensors copied there, requires_grad kept; other arguments as they are."""
    return tuple(a.detach().to(device).requires_grad_(a.requires_grad) if torch.is_tensor(a) else a for a in args)


def outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_op_has_samples_a_fake_and_a_forward_op_an_autograd_formula(kernel, target):
    ext = loaded(kernel, target)
    assert {f"{kernel}.{op}" for op in ext.ops} == {name for name in SAMPLES if name.startswith(f"{kernel}.")}
    assert ext.fakes == set(ext.ops), f"ops without a fake in kernels/{kernel}_ops.py"
    # A forward op's samples require grad, a gradient op's do not: the forward ops are the differentiable ones.
    forward = {
        op
        for op in ext.ops
        if any(torch.is_tensor(a) and a.requires_grad for a in SAMPLES[f"{kernel}.{op}"](torch.float64)[0])
    }
    assert forward and ext.autograd == forward


@pytest.mark.parametrize(
    "name, dtype",
    [(n, d) for n in OPS for d in DTYPES + ([torch.float16, torch.bfloat16] if n in HALF else [])],
    ids=str,
)
def test_opcheck(name, dtype, target_device, target):
    """Schema, fake, autograd registration and dispatch agree with the kernel (torch.library.opcheck)."""
    op = op_named(name, target)
    for args in SAMPLES[name](dtype):
        result = torch.library.opcheck(op.default, on(target_device, args))
        assert set(result.values()) == {"SUCCESS"}, (name, result)


@pytest.mark.parametrize("name", OPS)
def test_the_fake_answers_meta_tensors_as_the_kernel_answers_real_ones(name, target_device, target):
    op = op_named(name, target)
    for args in SAMPLES[name](torch.float64):
        with torch.no_grad():
            real, fake = outputs(op(*on(target_device, args))), outputs(op(*on("meta", args)))
        assert len(real) == len(fake)
        for r, f in zip(real, fake):
            assert (r is None) == (f is None), (name, r, f)
            if r is not None:
                assert f.device.type == "meta", name
                assert (f.shape, f.dtype, f.stride()) == (r.shape, r.dtype, r.stride()), name


@pytest.mark.parametrize("name", OPS)
def test_torch_compile_gives_eager_results(name, target_device, target):
    op = op_named(name, target)
    torch._dynamo.reset()  # each case compiles afresh, not against the last one's cache
    args = on(target_device, SAMPLES[name](torch.float32)[0])
    if any(torch.is_tensor(a) and a.requires_grad for a in args):
        helpers.check_compiled(op, *args)  # outputs and every input's gradient
    else:
        torch.testing.assert_close(torch.compile(op, fullgraph=True)(*args), op(*args), rtol=0, atol=0)


@pytest.mark.parametrize("name", OPS)
def test_a_bad_call_is_refused_alike_by_kernel_and_fake_and_loses_nothing(name, target_device, target):
    """An integer tensor for the first tensor argument: the binding and the fake give one message naming the
    op and the argument; the inputs are untouched, and the next call answers as before."""
    op = op_named(name, target)
    args = on(target_device, SAMPLES[name](torch.float32)[0])
    schema = op.default._schema.arguments
    first = next(i for i, a in enumerate(args) if torch.is_tensor(a))
    kinds = "float32, float64, float16 or bfloat16" if name in HALF else "float32 or float64"
    message = f"{name.split('.')[1]}: {schema[first].name} must be {kinds}, got Int"
    with torch.no_grad():
        before = outputs(op(*args))
        kept = [a.clone() if torch.is_tensor(a) else a for a in args]
        bad = list(args)
        bad[first] = args[first].detach().to(torch.int32)
        with pytest.raises(RuntimeError, match=re.escape(message)):
            op(*bad)
        with pytest.raises(RuntimeError, match=re.escape(message)):
            op(*on("meta", bad))
        with FakeTensorMode() as mode, pytest.raises(RuntimeError, match=re.escape(message)):  # as compile traces
            op(*(mode.from_tensor(a) if torch.is_tensor(a) else a for a in bad))
        torch.testing.assert_close(list(args), kept, rtol=0, atol=0)
        torch.testing.assert_close(outputs(op(*args)), before, rtol=0, atol=0)


def first_kernel_body_line(lines):
    """The 1-based number of the line that opens the first __global__ function's body."""
    start = next(i for i, text in enumerate(lines) if "__global__" in text)
    return next(i for i in range(start, len(lines)) if lines[i].rstrip().endswith("{")) + 1


@pytest.mark.parametrize("target", TARGETS_BUILT)
@pytest.mark.parametrize("kernel", KERNELS)
def test_a_compile_error_names_the_cu_line_and_shows_it(kernel, target, kernel_copy):
    """A name the compiler does not know, in the first kernel's body: g++ (the stand-in) and nvcc both report it
    at its .cu line, shown under the message."""
    cu = kernel_copy(kernel)
    lines = cu.read_text().splitlines()
    line = first_kernel_body_line(lines) + 1
    lines.insert(line - 1, "  kp_undeclared_name += 1;")
    cu.write_text("\n".join(lines) + "\n")
    with pytest.raises(helpers.KernelBuildError) as error:
        helpers.load_kernel(cu, target=target, quiet=True)
    message = str(error.value)
    assert re.match(rf"{re.escape(str(cu))}:{line}:(\d+:)? error: .*kp_undeclared_name", message), message
    assert f"{line:5d} |   kp_undeclared_name += 1;" in message.splitlines()[1], message


@pytest.mark.parametrize("kernel", KERNELS)
def test_the_files_contract_names_the_dtypes_its_ops_take(kernel):
    """The `// dtypes:` line of a kernel file's opening comment says float16 and bfloat16 exactly where its ops
    take them (op_samples.HALF, which the opcheck and bad-call cases above hold the ops to)."""
    lines = (helpers.KERNELS / f"{kernel}.cu").read_text().splitlines()
    dtypes = next(line for line in lines if line.startswith("// dtypes:"))
    assert ("float16 and bfloat16" in dtypes) == any(name.startswith(f"{kernel}.") for name in HALF), dtypes
