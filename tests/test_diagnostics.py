"""kp.diagnostics: a build error is the .cu line with the compiler's message and a caret, the full log one click
away in Jupyter, and the notebook's kernel lives on; a schema torch refuses is said once, at the binding's line."""

import subprocess

import pytest
from conftest import edit

import helpers


def test_compile_error_names_the_cu_line_and_shows_it(kernel_copy):
    cu = kernel_copy()
    edit(cu, "c[i] = a[i] + b[i];", "c[i] = a[i] + undefined_name;")
    line = next(i for i, ln in enumerate(cu.read_text().splitlines(), 1) if "undefined_name" in ln)
    col = cu.read_text().splitlines()[line - 1].index("undefined_name") + 1
    with pytest.raises(helpers.KernelBuildError) as err:
        helpers.load_kernel(cu, target="cpu")
    message = str(err.value)
    assert message.startswith(f"{cu}:{line}:{col}: error: ")
    assert "undefined_name" in message.splitlines()[0]
    assert f"{line:5d} |   c[i] = a[i] + undefined_name;" in message
    assert message.splitlines()[2] == "      | " + " " * (col - 1) + "^"
    assert "undefined_name" in err.value.log and len(err.value.log) > len(message.splitlines()[0])
    assert "<details>" in err.value._render_html()  # the full log, collapsed, in Jupyter


def test_unsupported_construct_is_a_build_error_with_the_line(kernel_copy):
    cu = kernel_copy()
    edit(cu, "  c[i] = a[i] + b[i];", '  asm volatile("");\n  c[i] = a[i] + b[i];')
    line = next(i for i, ln in enumerate(cu.read_text().splitlines(), 1) if "asm" in ln)
    with pytest.raises(helpers.KernelBuildError) as err:
        helpers.load_kernel(cu, target="cpu")
    assert str(err.value).startswith(f"{cu}:{line}: inline asm/PTX is not supported on the CPU stand-in\n")
    assert f'{line:5d} |   asm volatile("");' in str(err.value)


def test_in_jupyter_a_build_error_shows_readably_and_the_kernel_lives_on(kernel_copy, tmp_path):
    """Edit -> error -> fix, in one Jupyter kernel: the error is the .cu line plus a collapsed log."""
    import nbformat

    from kp.notebooks import execute

    cu = kernel_copy()
    cells = [
        f"import torch, helpers\nfrom pathlib import Path\ncu = Path({str(cu)!r})\ngood = cu.read_text()",
        "cu.write_text(good.replace('c[i] = a[i] + b[i];', 'c[i] = a[i] + oops;'))\n"
        "helpers.load_kernel(cu, target='cpu')",
        "cu.write_text(good.replace('a[i] + b[i]', 'a[i] - b[i]'))\n"
        "print(helpers.load_kernel(cu, target='cpu').add2(torch.ones(2), torch.ones(2)))",
    ]
    path = tmp_path / "edit_loop.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    run = execute(path, allow_errors=True)
    outputs = run.notebook.cells[1].outputs
    assert [o["output_type"] for o in outputs] == ["error", "display_data"]  # the message, then the log
    (error, log) = outputs
    # The message once: the .cu line, the source line and the caret, no traceback, no colour codes.
    assert error["traceback"] == [f"KernelBuildError: {error['evalue']}"] and "\x1b" not in error["traceback"][0]
    head, source, caret = error["evalue"].splitlines()[:3]
    assert (
        head.startswith(f"{cu}:") and "oops" in head and "oops" in source and caret.strip() == "|" + caret.split("|")[1]
    )
    html = log["data"]["text/html"]
    assert html.startswith("<details><summary>full build log") and "oops" in html and "KernelBuildError" not in html
    assert "tensor([0., 0.])" in run.notebook.cells[2].outputs[-1]["text"]  # same kernel, fixed code


SCHEMA = 'm.def("add2_v1(Tensor a, Tensor b) -> Tensor"'


def test_a_schema_torch_refuses_is_said_once_at_the_binding_line(kernel_copy, capfd):
    """torch's C shim prints the error it then returns: the loader keeps that copy off stderr, and says the error at
    the binding's line, with a caret where torch points; loading again raises it again without registering again."""
    cu = kernel_copy()
    binding = cu.with_name("add2_binding.cpp")
    edit(binding, SCHEMA, SCHEMA.replace("-> Tensor", "-> Tensr"))
    line, text = next((n, t) for n, t in enumerate(binding.read_text().splitlines(), 1) if "Tensr" in t)
    col = text.index("Tensr") + 1
    for _ in range(2):
        with pytest.raises(helpers.KernelBuildError) as err:
            helpers.load_kernel(cu, target="cpu", quiet=True)
        assert str(err.value) == (
            f"{binding}:{line}:{col}: error: torch refused this schema: unknown type specifier. Common valid schema "
            "types include Tensor, SymInt, int, float, bool, Scalar; for a full list, please see "
            "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#func\n"
            f"{line:5d} | {text}\n      | {' ' * (col - 1)}^\n(fix the schema in the binding and load again)"
        )
        assert err.value._render_html() == ""  # no empty "full build log (0 lines)" under it
    assert "Tensr" not in capfd.readouterr().err


def test_in_jupyter_a_schema_error_is_one_output(kernel_copy, tmp_path):
    import nbformat

    from kp.notebooks import execute

    cu = kernel_copy()
    edit(cu.with_name("add2_binding.cpp"), SCHEMA, SCHEMA.replace("(Tensor a,", "(Tensor a"))
    cells = [f"import helpers\nhelpers.load_kernel({str(cu)!r}, target='cpu')"]
    path = tmp_path / "schema.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    outputs = execute(path, allow_errors=True).notebook.cells[0].outputs
    assert [o["output_type"] for o in outputs] == ["error"], outputs  # no stderr copy, no empty log under it
    assert outputs[0]["traceback"] == [f"KernelBuildError: {outputs[0]['evalue']}"]
    assert outputs[0]["evalue"].startswith(f"{cu.with_name('add2_binding.cpp')}:"), outputs[0]["evalue"]


def test_a_coloured_compiler_log_reads_as_plain_text(tmp_path):
    """A compiler that colours its output (as under Jupyter it may): the error, its line and the log are plain."""
    cu = tmp_path / "bad.cu"
    cu.write_text("int f() {\n  return undefined_name;\n}\n")
    done = subprocess.run(
        ["c++", "-x", "c++", "-c", "-fdiagnostics-color=always", str(cu), "-o", "/dev/null"],
        capture_output=True,
        text=True,
    )
    assert "\x1b[" in done.stderr  # the log really is coloured
    error = helpers.KernelBuildError.from_log(done.stderr, [cu])
    assert str(error).startswith(f"{cu}:2:10: error: ") and "undefined_name" in str(error).splitlines()[0]
    assert "    2 |   return undefined_name;" in str(error)
    assert "\x1b" not in str(error) and "\x1b" not in error.log and "undefined_name" in error.log


def test_a_renamed_host_variable_is_named_as_the_user_wrote_it(tmp_path):
    """The stand-in's source step spells a launcher's own `dim3 gridDim` kp_host_gridDim; the compiler's message
    about it says gridDim, as the .cu does."""
    cu = tmp_path / "k.cu"
    cu.write_text("void f() {\n  dim3 gridDim(1);\n  gridDim.w = 2;\n}\n")
    log = f"{cu}:3:11: error: 'struct dim3' has no member named 'w' in 'kp_host_gridDim.w'\n"
    error = helpers.KernelBuildError.from_log(log, [cu])
    assert str(error).splitlines()[0] == f"{cu}:3:11: error: 'struct dim3' has no member named 'w' in 'gridDim.w'"
