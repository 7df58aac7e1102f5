"""What a notebook shows: the environment line (setup), a kernel's source, its autograd graph, ptxas's
table, and a build error as its message with the log collapsed (install_error_view, which helpers.py runs
on import). Computes nothing it shows.
"""

import contextlib
import sys

import torch

from kp.build import resolve_kernel
from kp.diagnostics import KernelBuildError
from kp.ptxas import resources_table
from kp.toolchain import ToolchainError, dot_problem


def environment_line():
    """One line: versions and the device the notebook runs on."""
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU: kernels run on the CPU stand-in"
    return f"torch {torch.__version__} | python {sys.version.split()[0]} | {device} | {torch.get_num_threads()} threads"


def setup(seed=0):
    """Seed everything and print the environment line; returns the device to use."""
    torch.manual_seed(seed)
    print(environment_line())
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def show(kind, data, text=None, **kwargs):
    """Display `data` as IPython.display.<kind> (Code, SVG, Markdown, HTML); without IPython, print `text`."""
    try:
        from IPython import display
    except ImportError:
        if text is not None:
            print(text)
        return
    display.display(getattr(display, kind)(data, **kwargs))


def show_kernel(name_or_path):
    """Display a kernel file with syntax highlighting (plain text outside IPython)."""
    cu, _ = resolve_kernel(name_or_path)
    text = cu.read_text()
    show("Code", text, text, language="cuda")


def show_graph(tensor, params=None):
    """Render the autograd graph of `tensor` with torchviz; returns the SVG (displayed in Jupyter)."""
    from torchviz import make_dot

    if problem := dot_problem():
        raise ToolchainError.of([problem])
    svg = make_dot(tensor, params=params or {}, show_attrs=False).pipe(format="svg").decode()
    show("SVG", svg)
    return svg


def show_kernel_resources(name_or_path, arch=None):
    """Show ptxas's registers, shared memory, stack and spills of each kernel in a `.cu` file (resources_table),
    once; without nvcc, print the one line that says how to get it."""
    try:
        table = resources_table([name_or_path], arch)
    except ToolchainError as e:
        print(str(e))
        return
    show("Markdown", table.markdown(), table.markdown())


def install_error_view():
    """In IPython, show a KernelBuildError as its message and a collapsed log, not a traceback."""
    if "IPython" not in sys.modules:  # not in a notebook: nothing to do, and no import to pay for
        return
    with contextlib.suppress(ImportError, AttributeError):
        from IPython import get_ipython
        from IPython.display import HTML, display

        shell = get_ipython()
        if shell is None:
            return

        def handler(shell, etype, value, tb, tb_offset=None):
            display(HTML(value._render_html()))
            stb = [f"KernelBuildError: {str(value).splitlines()[0]}"]
            shell._showtraceback(etype, value, stb)  # the cell's error output: one line, not a traceback
            return stb

        shell.set_custom_exc((KernelBuildError,), handler)
