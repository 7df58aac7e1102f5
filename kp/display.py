"""What a notebook shows: the environment line (setup), a kernel's source, its autograd graph, ptxas's
table, progress bars, and our errors as people read them (install_error_view, which helpers.py runs on import: a build
error as its message with the log collapsed, an op's error as the notebook's lines and the message).
Computes nothing it shows.
"""

import ast
import contextlib
import html
import inspect
import os
import re
import sys
import textwrap
import traceback
import types

import torch

from kp.build import cpu_runtime, resolve_kernel
from kp.check import KernelCheckError, check_from_env
from kp.diagnostics import KernelBuildError
from kp.files import ROOT, display_path
from kp.gpumodel.gpus import occupancy
from kp.gpumodel.ptxas import resources_table, spills
from kp.standin import blank_comments_and_strings, function_bodies
from kp.toolchain import ToolchainError, dot_problem


def environment_line():
    """One line: versions and the device the notebook runs on."""
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU: kernels run on the CPU stand-in"
    return f"torch {torch.__version__} | python {sys.version.split()[0]} | {device} | {torch.get_num_threads()} threads"


def setup(seed=0):
    """Seed everything and print the environment line; returns the device to use: the GPU if there is one,
    unless KP_CHECK asks for check mode, which runs on the CPU stand-in (kp.check). On the CPU it loads the
    stand-in's runtime first, so that every tensor the notebook makes has redzones (kp.build.cpu_runtime)."""
    torch.manual_seed(seed)
    print(environment_line())
    device = torch.device("cuda" if torch.cuda.is_available() and not check_from_env() else "cpu")
    if check_from_env():
        print("KP_CHECK is set: kernels load in check mode, on the CPU stand-in")
    if device.type == "cpu":
        cpu_runtime()
    return device


def show(kind, data, text=None, **kwargs):
    """Display `data` as IPython.display.<kind> (Code, SVG, Markdown, HTML); without IPython, print `text`."""
    try:
        from IPython import display
    except ImportError:
        if text is not None:
            print(text)
        return
    display.display(getattr(display, kind)(data, **kwargs))


def progress(iterable=None, **kwargs):
    """A progress bar over `iterable` (tqdm's arguments): tqdm.auto's widget in JupyterLab, text in a terminal.
    In a headless run (`make run`, the notebook tests: kp.notebooks.execute sets KP_HEADLESS), where nothing
    draws widgets, text on stdout, whose last state the executed notebook keeps."""
    if os.environ.get("KP_HEADLESS"):
        from tqdm.std import tqdm

        return tqdm(iterable, file=sys.stdout, **kwargs)
    from tqdm.auto import tqdm

    return tqdm(iterable, **kwargs)


LONG_LISTING = 80  # lines: a longer kernel file shows its opening comment, its code one click away


def show_kernel(name_or_path, function=None):
    """Display a kernel file with syntax highlighting (plain text outside IPython). A file longer than
    LONG_LISTING lines shows its opening comment (the op's contract) and, collapsed under it, its code.
    `function="add2_fwd_kernel"`: that function alone (with its template line and the comment above it), with
    the file's line numbers, and the whole file one click away under it. A header's path (`.cuh`, e.g. one of
    kernels/common/) is shown the same way."""
    if str(name_or_path).endswith(".cuh"):
        cu = ROOT / name_or_path  # an absolute path stays itself
    else:
        cu, _ = resolve_kernel(name_or_path)
    text = cu.read_text()
    if function is not None:
        return show_function(cu, text, function)
    lines = text.splitlines()
    try:
        from IPython.display import Code, display
    except ImportError:
        print(text)
        return
    if len(lines) <= LONG_LISTING:
        display(Code(text, language="cuda"))
        return
    head = next((i for i, line in enumerate(lines) if not line.startswith("//")), len(lines))
    contract, code = (Code("\n".join(part), language="cuda")._repr_html_() for part in (lines[:head], lines[head:]))
    summary = f"the code: {display_path(cu)}, lines {head + 1}-{len(lines)} (click to show)"
    html_text = f"{contract}<details><summary>{summary}</summary>{code}</details>"
    display({"text/html": html_text, "text/plain": text}, raw=True)  # text/plain: a terminal, a text report


def function_definitions(text):
    """{name: (first line, last line)} (1-based) of each function a `.cu` or C++ text defines (the stand-in's
    translator finds the bodies): its signature, with the `template <...>` and the comment lines just above it,
    through its closing brace. Overloads and specialisations: the first one."""
    code, lines, spans = blank_comments_and_strings(text), text.splitlines(), {}
    for start, end, _ in function_bodies(code):
        close = code.rfind(")", 0, start)
        depth, open_paren = 0, -1
        for k in range(close, -1, -1):
            depth += {")": 1, "(": -1}.get(code[k], 0)
            if depth == 0:
                open_paren = k
                break
        name = re.search(r"([A-Za-z_]\w*)\s*$", code[:open_paren]) if open_paren > 0 else None
        if not name or name.group(1) in spans:
            continue
        first = code.count("\n", 0, name.start(1))  # 0-based line of the name
        while first > 0 and (above := lines[first - 1].strip()) and not above.endswith((";", "}", "{", "\\")):
            if above.startswith("#"):
                break
            first -= 1  # the signature's earlier lines: `template <typename T>`, `__global__ void`, a comment
        spans[name.group(1)] = (first + 1, code.count("\n", 0, end) + 1)
    return spans


def show_function(cu, text, function):
    """One function of `cu` with its line numbers; the whole file collapsed under it. ValueError naming the
    functions the file defines when it defines no `function`."""
    spans = function_definitions(text)
    if function not in spans:
        raise ValueError(f"{display_path(cu)} defines no function {function!r}; it defines: {', '.join(spans)}")
    first, last = spans[function]
    lines = text.splitlines()
    plain = "\n".join(f"{n:4d}  {line}" for n, line in enumerate(lines[first - 1 : last], first))
    try:
        from IPython.display import display
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import CudaLexer
    except ImportError:
        print(f"{display_path(cu)}, lines {first}-{last}:\n{plain}")
        return

    def code_html(part, start):
        formatter = HtmlFormatter(linenos="inline", linenostart=start, noclasses=True)
        return highlight("\n".join(part), CudaLexer(), formatter)

    summary = f"{display_path(cu)}, lines {first}-{last}; the whole file (click to show)"
    html_text = f"{code_html(lines[first - 1 : last], first)}<details><summary>{summary}</summary>"
    html_text += f"{code_html(lines, 1)}</details>"
    display({"text/html": html_text, "text/plain": f"{display_path(cu)}, lines {first}-{last}:\n{plain}"}, raw=True)


def show_graph(tensor, params=None):
    """Render the autograd graph of `tensor` with torchviz; returns the SVG (displayed in Jupyter). What a
    Function saved for backward (torchviz's orange boxes) is labelled with its name in the Function's forward."""
    from torchviz import make_dot

    if problem := dot_problem():
        raise ToolchainError.of([problem])
    dot = make_dot(tensor, params=params or {}, show_attrs=False)
    dot.body[:] = label_saved_tensors(dot.body, tensor.grad_fn)
    svg = dot.pipe(format="svg").decode()
    show("SVG", svg)
    return svg


def saved_names(function):
    """The names a Function's forward passes to `ctx.save_for_backward(...)`, as written (`x`; `weight` for
    `weight if ctx.needs_input_grad[0] else None`); [] where the source cannot tell."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function.forward)))
    except (OSError, TypeError, AttributeError, SyntaxError):
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "save_for_backward":
            args = [a.body if isinstance(a, ast.IfExp) else a for a in node.args]
            return [a.id if isinstance(a, ast.Name) else None for a in args]
    return []


def label_saved_tensors(body, grad_fn):
    """torchviz's graph lines `body`, with each saved tensor's box labelled `saved: <name>` (its name in the
    Function's forward, else its place in ctx.saved_tensors; a parameter's name in brackets, where it has one).
    torchviz writes a saved tensor as the edge `T -> F [dir=none]` and then the node `T [label="NAME\n SIZE" ...]`,
    in the order of F's saved_tensors."""
    nodes, stack = {}, [grad_fn]  # the graph's node ids (torchviz's: id(fn)) -> autograd nodes
    while stack:
        fn = stack.pop()
        if fn is not None and str(id(fn)) not in nodes:
            nodes[str(id(fn))] = fn
            stack.extend(next_fn for next_fn, _ in getattr(fn, "next_functions", ()))
    body, seen, names_of = list(body), {}, {}  # per node: saved tensors labelled so far; its forward's names
    for i in range(len(body) - 1):
        edge = re.fullmatch(r"\t(\w+) -> (\w+) \[dir=none\]\n", body[i])
        if not edge or edge[2] not in nodes:
            continue
        k = seen[edge[2]] = seen.get(edge[2], -1) + 1
        if edge[2] not in names_of:  # the forward's source, parsed once per node
            names_of[edge[2]] = saved_names(getattr(nodes[edge[2]], "_forward_cls", None))
        names = names_of[edge[2]]
        name = (names[k] if k < len(names) else None) or f"ctx.saved_tensors[{k}]"

        def label(m, name=name):
            return f'label="saved: {name}' + (f" ({m[1]})" if m[1] and m[1] != name else "") + "\n"

        body[i + 1] = re.sub(r'label="([^"\n]*)\n', label, body[i + 1], count=1)
    return body


def show_kernel_resources(name_or_path, arch=None, threads=256, gpu="H100"):
    """What each kernel of a `.cu` file gets on `gpu`, as one line per kernel from ptxas's registers and shared
    memory (resources_table) at `threads` per block: "16 registers x 256 threads -> 8 blocks (64 warps) per SM on
    an H100: 100% occupancy (limited by threads)", and its spills where it has any. Shown once; without nvcc, the
    one line that says how to get it."""
    try:
        table = resources_table([name_or_path], arch)
    except ToolchainError as e:
        print(str(e))
        return
    lines = []
    for row in table.rows:
        fits = occupancy(gpu, threads, row["registers"], row["shared memory (bytes)"]).describe()
        spilled = f"; spills {row['spills (bytes, stores / loads)']} bytes (stores / loads)" if spills(row) else ""
        lines.append(f"- {row['kernel']}: {fits}{spilled}")
    text = f"{table.title}, {threads} threads per block:\n\n" + "\n".join(lines)
    show("Markdown", text, text)


def user_frames(tb):
    """The traceback `tb` with only the notebook's own frames: none of torch's, the package's or helpers'."""
    hidden = (os.path.dirname(torch.__file__), os.path.dirname(__file__), str(ROOT / "helpers.py"))
    frames = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(hidden):
            frames.append(tb)
        tb = tb.tb_next
    kept = None
    for t in reversed(frames):
        kept = types.TracebackType(kept, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return kept


def install_error_view():
    """In IPython, show our errors as people read them: a KernelBuildError as its message (the .cu line, the
    source, the caret) with the build log collapsed under it, a KernelCheckError likewise (its findings at
    their .cu lines, the traceback collapsed); an error raised by one of our ops (a bad
    argument, a failed launch) as the notebook's own lines and the message, torch's and our frames collapsed
    under it. Every other error shows as IPython shows it."""
    if "IPython" not in sys.modules:  # not in a notebook: nothing to do, and no import to pay for
        return
    with contextlib.suppress(ImportError, AttributeError):
        from IPython import get_ipython
        from IPython.display import HTML, display

        shell = get_ipython()
        if shell is None:
            return

        def handler(shell, etype, value, tb, tb_offset=None):
            if isinstance(value, KernelBuildError):
                stb = [f"KernelBuildError: {value}"]  # no traceback, no colour codes
                shell._showtraceback(etype, value, stb)
                if log := value._render_html():  # none for an error without a log (the ops did not register)
                    display(HTML(log))
                return stb
            if isinstance(value, KernelCheckError):  # the findings at their .cu lines first, as a build error
                stb = [f"KernelCheckError: {value}"]
                shell._showtraceback(etype, value, stb)
                full = html.escape("".join(traceback.format_exception(etype, value, tb)))
                display(HTML(f"<details><summary>full traceback</summary><pre>{full}</pre></details>"))
                return stb
            if not getattr(value, "kp_op", None):
                shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
                return None
            stb = shell.InteractiveTB.structured_traceback(etype, value, user_frames(tb), tb_offset=tb_offset)
            shell._showtraceback(etype, value, stb)
            full = html.escape("".join(traceback.format_exception(etype, value, tb)))
            count = len(traceback.extract_tb(tb))
            display(HTML(f"<details><summary>full traceback ({count} frames)</summary><pre>{full}</pre></details>"))
            return stb

        shell.set_custom_exc((RuntimeError,), handler)  # KernelBuildError is one
