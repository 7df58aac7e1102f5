"""kp.diagnostics: a build error is the .cu line with the compiler's message and a caret, the full log one click
away in Jupyter, and the notebook's kernel lives on."""

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
    html = next(o["data"]["text/html"] for o in outputs if o["output_type"] == "display_data")
    assert "KernelBuildError" in html and "oops" in html and "<details>" in html
    (error,) = [o for o in outputs if o["output_type"] == "error"]
    assert len(error["traceback"]) == 1  # one line, not a wall of traceback
    assert error["traceback"][0].startswith(f"KernelBuildError: {cu}:") and "oops" in error["traceback"][0]
    assert "tensor([0., 0.])" in run.notebook.cells[2].outputs[-1]["text"]  # same kernel, fixed code
