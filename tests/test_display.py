"""kp.display: what the notebooks show, and what they say when a tool to show it is missing."""

import re

import pytest
import torch

import helpers
import kp.display
import kp.files
import kp.gpumodel.gpus
import kp.gpumodel.ptxas
import kp.load
import kp.toolchain
from kp.diagnostics import plain


def test_show_graph_without_graphviz_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` here
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(helpers.ToolchainError, match=r"apt-get install -y graphviz .*conda install graphviz"):
        helpers.show_graph((x * 2).sum())


def test_progress_is_text_on_stdout_in_a_headless_run_and_tqdm_autos_bar_elsewhere(monkeypatch, capsys):
    import tqdm.auto
    import tqdm.std

    monkeypatch.setenv("KP_HEADLESS", "1")
    bar = helpers.progress(range(3), desc="train")
    assert type(bar) is tqdm.std.tqdm and list(bar) == [0, 1, 2]
    assert "train: 100%|" in capsys.readouterr().out
    monkeypatch.delenv("KP_HEADLESS")
    bar = helpers.progress(range(3))
    assert type(bar) is tqdm.auto.tqdm and list(bar) == [0, 1, 2]


def test_a_long_kernel_shows_its_contract_and_its_code_collapsed_a_short_one_whole(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False: shown.append(obj))
    helpers.show_kernel("linear")
    helpers.show_kernel("add2")
    (linear, add2) = shown
    text = (kp.files.KERNELS / "linear.cu").read_text()
    lines = text.splitlines()
    assert len(lines) > kp.display.LONG_LISTING and linear["text/plain"] == text
    contract, code = linear["text/html"].split("<details>")
    head = next(i for i, line in enumerate(lines) if line.startswith("#include"))  # the first line after the comment
    summary = f"<summary>the code: kernels/linear.cu, lines {head + 1}-{len(lines)} (click to show)</summary>"
    assert "fully connected layer" in contract and "constexpr" not in contract
    assert code.startswith(summary) and "constexpr" in code and code.endswith("</details>")
    assert type(add2) is IPython.display.Code and add2.data == (kp.files.KERNELS / "add2.cu").read_text()


def test_show_kernel_shows_one_function_with_its_line_numbers_and_the_whole_file_collapsed(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False: shown.append(obj))
    helpers.show_kernel("add2", function="add2_fwd_kernel")
    (kernel,) = shown
    lines = (kp.files.KERNELS / "add2.cu").read_text().splitlines()
    first = next(n for n, line in enumerate(lines, 1) if "void add2_fwd_kernel(" in line) - 1  # its template line
    last = next(n for n, line in enumerate(lines, 1) if n > first and line == "}")
    assert lines[first - 1] == "template <typename T>"
    plain = kernel["text/plain"].splitlines()
    assert plain[0] == f"kernels/add2.cu, lines {first}-{last}:"
    assert plain[1:] == [f"{n:4d}  {lines[n - 1]}" for n in range(first, last + 1)]
    shown_part, whole = kernel["text/html"].split("<details>")
    assert "add2_fwd_kernel_v2" not in shown_part and "add2_fwd_kernel_v2" in whole
    assert f"lines {first}-{last}; the whole file (click to show)" in whole


def test_show_kernel_shows_a_function_of_a_shared_header(monkeypatch):
    """kernels/common/*.cuh holds device code several kernel files share (linear_tiles.cuh: notebook 07's version 7)."""
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False: shown.append(obj))
    helpers.show_kernel("kernels/common/linear_tiles.cuh", function="multiply_fragments")
    (kernel,) = shown
    assert kernel["text/plain"].startswith("kernels/common/linear_tiles.cuh, lines ")
    assert "multiply_fragments" in kernel["text/plain"] and "store_fragment" not in kernel["text/plain"]


def test_show_kernel_of_a_function_the_file_lacks_names_those_it_has():
    with pytest.raises(ValueError, match=r"kernels/add2.cu defines no function 'add3'; it defines: add2_at, "):
        helpers.show_kernel("add2", function="add3")


def test_function_definitions_take_the_comment_and_template_above_and_skip_calls_and_braces_in_comments():
    text = """#include "x.h"
// the sum, { in a comment
template <typename T>
__global__ void k(const T* a,
                  T* c) {
  if (a) { c[0] = f(a[0]); }  // } not the end
  const char* s = "}";
}

int g(int x);
int h() { return g(1); }
"""
    assert kp.display.function_definitions(text) == {"k": (2, 8), "h": (11, 11)}


class Saves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        y = x * weight
        ctx.save_for_backward(weight if ctx.needs_input_grad[0] else None, x, y)
        return y

    @staticmethod
    def backward(ctx, grad):
        weight, x, _ = ctx.saved_tensors
        return grad * weight, grad * x


@pytest.mark.skipif(kp.toolchain.dot_problem() is not None, reason="graphviz's `dot` is missing")
def test_the_graph_labels_what_a_function_saved_with_its_name_in_forward(monkeypatch):
    monkeypatch.setattr(kp.display, "show", lambda *args, **kwargs: None)
    x, w = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    svg = helpers.show_graph(Saves.apply(x, w).sum(), params={"w": w, "input": x})
    labels = re.findall(r">(saved: [^<]*)<", svg)
    assert sorted(labels) == ["saved: weight (w)", "saved: x (input)", "saved: y"], labels
    # Where the source cannot tell (here: a forward compiled from a string), the place in ctx.saved_tensors.
    namespace = {}
    exec("def forward(ctx, x):\n    ctx.save_for_backward(x)\n    return x * x", namespace)
    square = type("Square", (torch.autograd.Function,), {"forward": staticmethod(namespace["forward"])})
    svg = helpers.show_graph(square.apply(x).sum())
    assert re.findall(r">(saved: [^<]*)<", svg) == ["saved: ctx.saved_tensors[0]"]


def test_show_kernel_resources_without_nvcc_prints_the_fix_and_goes_on(monkeypatch, capsys):
    monkeypatch.setenv("CUDA_HOME", "/nonexistent")
    assert helpers.show_kernel_resources("add2") is None
    out = capsys.readouterr().out
    assert out.startswith("nvcc was not found") and "export CUDA_HOME=" in out


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None, reason="no CUDA toolkit here")
def test_show_kernel_resources_says_once_what_each_kernel_gets_on_an_h100(monkeypatch):
    shown = []
    monkeypatch.setattr(kp.display, "show", lambda kind, data, text=None: shown.append((kind, data)))
    assert helpers.show_kernel_resources("add2") is None  # nothing for Jupyter to display a second time
    ((kind, markdown),) = shown
    rows = kp.gpumodel.ptxas.resources_table(["add2"]).rows
    first = rows[0]
    expected = kp.gpumodel.gpus.occupancy("H100", 256, first["registers"], first["shared memory (bytes)"]).describe()
    assert kind == "Markdown" and markdown.startswith("ptxas, sm_") and ", 256 threads per block:" in markdown
    assert f"- {first['kernel']}: {expected}" in markdown.splitlines() and len(markdown.splitlines()) == 2 + len(rows)
    assert " registers x 256 threads -> " in expected and "per SM on an H100" in expected


def test_a_launch_split_over_two_lines_is_shown_from_the_kernels_name():
    lines = (kp.files.KERNELS / "add2.cu").read_text().splitlines()
    check = lines.index("  KP_CHECK_LAUNCH();", 50) + 1  # add2's v2 launcher: `kernel<T>` then `<<<...>>>(...)`
    assert lines[check - 2].lstrip().startswith("<<<") and "add2_fwd_kernel_v2" in lines[check - 3]
    error = kp.load.op_error(RuntimeError(f"{kp.files.ROOT}/kernels/add2.cu:{check}: kernel launch failed: x"), "add2")
    shown = str(error).splitlines()[1:]
    assert shown == [f"{n:5d} | {lines[n - 1]}" for n in (check - 2, check - 1)]


def test_an_ops_error_names_the_project_file_relative_to_it():
    error = kp.load.op_error(RuntimeError(f"{kp.files.ROOT}/kernels/add2.cu:48: kernel launch failed: x"), "add2")
    lines = (kp.files.KERNELS / "add2.cu").read_text().splitlines()
    assert "<<<" in lines[46] and "KP_CHECK_LAUNCH()" in lines[47]  # the launch, then its check
    assert str(error) == f"kernels/add2.cu:48: kernel launch failed: x\n   47 | {lines[46]}" and error.kp_op == "add2"


def test_in_jupyter_an_ops_error_shows_the_notebooks_lines_and_the_message_first(kernel_copy, tmp_path):
    """A bad argument through the notebook's Function and a launch with 2048 threads: the error output is the
    notebook's own frames and the message (torch's and kp's frames hidden), the full traceback collapsed under
    it; an error that is not an op's shows as IPython shows any error."""
    import nbformat

    from kp.notebooks import execute

    cu = kernel_copy()
    cu.write_text(cu.read_text().replace("const int threads = 256;", "const int threads = 2048;", 1))
    lines = cu.read_text().splitlines()
    start = next(i for i, text in enumerate(lines) if "add2_fwd_kernel<T><<<" in text)
    launch = next(i for i in range(start, len(lines)) if "KP_CHECK_LAUNCH()" in lines[i]) + 1  # the check's line
    cells = [
        f"import torch\nfrom helpers import load_kernel\next = load_kernel({str(cu)!r}, target='cpu', quiet=True)\n"
        "class Add2(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, a, b):\n"
        "        return ext.add2(a, b)\n",
        "Add2.apply(torch.ones(3), torch.ones(4))",
        "ext.add2_v1(torch.ones(3), torch.ones(3))",
        "torch.ones(2) @ torch.ones(3)",
    ]
    path = tmp_path / "op_errors.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    run = execute(path, allow_errors=True)
    cases = [(1, "add2: b has shape [4] but a has [3]", 2), (2, f"{cu}:{launch}: kernel launch failed", 1)]
    for cell, message, frames in cases:
        error, full = run.notebook.cells[cell].outputs
        text = plain("\n".join(error["traceback"]))
        assert error["output_type"] == "error" and error["evalue"].startswith(message), error["evalue"]
        assert "torch/" not in text and "kp/" not in text and "helpers.py" not in text, text
        # the cell's line (and the Function's forward), then the message
        assert re.findall(r"^Cell In\[\d\]", text, re.M) == [f"Cell In[{cell + 1}]", "Cell In[1]"][:frames], text
        assert full["data"]["text/html"].startswith("<details><summary>full traceback")
    assert "launched with grid (1,1,1) and block (2048,1,1)" in run.notebook.cells[2].outputs[0]["evalue"]
    (other,) = run.notebook.cells[3].outputs  # not an op's error: IPython's own view, no collapsed copy
    assert other["output_type"] == "error" and "inconsistent tensor size" in other["evalue"]
    assert "Traceback (most recent call last)" in plain("\n".join(other["traceback"]))


@pytest.mark.skipif(torch.cuda.is_available(), reason="with a GPU setup() gives the GPU; redzones are the stand-in's")
def test_setup_on_the_cpu_gives_the_notebooks_tensors_redzones_from_the_start(tmp_path):
    """A tensor made after setup() and before the first load_kernel has redzones: a write just past it fails the
    launch. Made before the runtime is loaded (no setup()), it has none, and the write goes unnoticed."""
    import subprocess
    import sys

    faults = kp.files.ROOT / "tests" / "cuda_cpu" / "faults.cu"
    code = (
        "import sys, torch, helpers\n"
        "if sys.argv[1] == 'setup':\n"
        "    assert helpers.setup() == torch.device('cpu')\n"
        "x = torch.zeros(64)\n"
        f"k = helpers.load_kernel({str(faults)!r}, target='cpu', quiet=True)\n"
        "try:\n"
        "    k.wild_write(x, 64)\n"
        "    print('unnoticed')\n"
        "except RuntimeError as e:\n"
        "    print('redzone' if \"wrote past the end of 'x'\" in str(e) else e)\n"
    )
    said = {}
    for how in ("setup", "no-setup"):
        run = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        said[how] = run.stdout.splitlines()[-1]
    assert said == {"setup": "redzone", "no-setup": "unnoticed"}
