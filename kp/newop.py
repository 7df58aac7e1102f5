"""A new op from one command: `make new-op NAME=leaky_relu` (`SCALAR=1` for a float argument alpha), or
`python -m kp.newop leaky_relu [--scalar]`, or `helpers.new_op("leaky_relu")` in a notebook cell.

It copies the template op in templates/new_op/ (y = f(x) elementwise with its backward kernel, every file
opening with what to change and where) into the op's five places, renamed: kernels/<name>.cu, its binding and
_ops.py, notebooks/NN_<name>.ipynb (NN: the next free number) and tests/test_<name>.py; and adds the op's
sample calls to tests/op_samples.py. What it writes builds, runs and passes unchanged (tests/test_newop.py
generates ops and runs their tests and notebook).

The template is the op with the scalar; an op without it drops what the template marks (its markers, below).
Owns the template's markers and the rules for op names; never builds, loads or runs what it writes.
"""

import argparse
import ast
import json
import keyword
import re
import sys
from pathlib import Path

from kp.files import ROOT, write_atomically

TEMPLATE = ROOT / "templates" / "new_op"
PLACEHOLDER, CLASS_PLACEHOLDER = "template_op", "TemplateOp"
# The template's files, relative to it and to the project's root (NN_ and template_op are renamed), and what
# each holds, as new_op() says it.
FILES = {
    "kernels/template_op.cu": "the kernels: f and df under EDIT HERE",
    "kernels/template_op_binding.cpp": "the torch side in C++: checks, dispatch, the schemas",
    "kernels/template_op_ops.py": "the fakes and the autograd formula",
    "notebooks/NN_template_op.ipynb": "the lesson: the reference (EDIT HERE), checks, toy model, benchmark",
    "tests/test_template_op.py": "its tests (the reference comes from the notebook)",
}
SAMPLES = "tests/op_samples.py"  # the op's sample calls, for tests/test_op_contract.py: one line appended
MAX_NAME = 20  # generated lines stay within ruff's 120 columns for names up to this long

# The template's markers. A line ending in a `scalar-only` comment is kept (the marker dropped) only with the
# scalar; a comment line `plain: CODE` becomes CODE only without it; and without it, the scalar argument goes
# from every argument list (", T alpha", ", alpha", ", ALPHA", ...).
SCALAR_ONLY = re.compile(r"\s*(?://|#)\s*scalar-only\s*$|\s*<!--\s*scalar-only\s*-->\s*$")
PLAIN_LINE = re.compile(r"^(\s*)(?://|#|<!--)\s*plain: ?(.*?)(?:\s*-->)?$")
SCALAR_ARGUMENT = re.compile(r",\s*(?:(?:T|float|double) alpha\b|ctx\.alpha\b|scalar_t\(alpha\)|alpha\b|ALPHA\b)")
# What a LoadedKernel (kp.load) keeps under its own names: an op named so could not be reached as ext.<op>.
LOADED_KERNEL_NAMES = {"build", "namespace", "library_path", "fakes", "autograd", "ops", "register_fake"}
LOADED_KERNEL_NAMES |= {"register_autograd"}


def class_name(name):
    """leaky_relu -> LeakyRelu: the notebook's autograd Function."""
    return "".join(part.capitalize() for part in name.split("_"))


def render(text, name, number, scalar):
    """The template's `text` for the op `name` (with the float argument alpha if `scalar`) in notebook `number`."""
    lines = []
    for line in text.split("\n"):
        if plain := PLAIN_LINE.match(line):
            if not scalar:
                lines.append(plain[1] + plain[2])
        elif SCALAR_ONLY.search(line):
            if scalar:
                lines.append(SCALAR_ONLY.sub("", line))
        else:
            lines.append(line if scalar else SCALAR_ARGUMENT.sub("", line))
    text = "\n".join(lines).replace(f"NN_{PLACEHOLDER}", f"{number}_{PLACEHOLDER}")
    text = re.sub(r"\bNN\b", number, text)
    return text.replace(PLACEHOLDER, name).replace(CLASS_PLACEHOLDER, class_name(name))


def render_notebook(text, name, number, scalar):
    """render() on every cell of a notebook's JSON, less the blank lines a dropped line leaves at either end; a cell
    left empty goes. Written as nbformat writes it."""
    nb = json.loads(text)
    cells = []
    for cell in nb["cells"]:
        source = render("".join(cell["source"]), name, number, scalar).strip("\n")
        if source.strip():
            cells.append({**cell, "source": source.splitlines(keepends=True)})
    return json.dumps({**nb, "cells": cells}, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def template_python(template=TEMPLATE):
    """The Python code of the template (its _ops.py, its test, the notebook's code cells), as texts."""
    texts = [(template / path).read_text() for path in FILES if path.endswith(".py")]
    nb = json.loads((template / "notebooks/NN_template_op.ipynb").read_text())
    return texts + ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def names_in_use(template=TEMPLATE):
    """Every name the template's Python code defines or uses (torch, device, target, print, ...), but the op's own
    (template_op_ext, TemplateOp...): an op named so would take the place of one of them."""
    names = set()
    for text in template_python(template):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    return {n for n in names if PLACEHOLDER not in n and CLASS_PLACEHOLDER not in n}


def check_name(name, root=ROOT):
    """Raise ValueError, saying why, unless `name` can be a new op's name in the project at `root`."""
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name) or "__" in name or name[-1] == "_":
        raise ValueError(
            f"{name!r} cannot name an op: use lowercase letters, digits and single underscores, starting with a "
            "letter (e.g. leaky_relu); it names C++ functions, Python functions and files"
        )
    if len(name) > MAX_NAME:
        raise ValueError(f"{name!r} is {len(name)} characters long: at most {MAX_NAME}, please")
    if keyword.iskeyword(name):
        raise ValueError(f"{name!r} is a Python keyword: ext.{name} could not be written")
    if name in LOADED_KERNEL_NAMES:
        raise ValueError(f"{name!r} is taken: a loaded kernel's own attribute ext.{name} has that name")
    if name in names_in_use():
        raise ValueError(f"{name!r} is a name the generated notebook or tests already use: choose another")
    root = Path(root)
    existing = [root / "kernels" / f"{name}.cu", *sorted((root / "notebooks").glob(f"[0-9][0-9]_{name}.ipynb"))]
    if found := [p for p in existing if p.exists()]:
        raise ValueError(f"{name!r} is an existing op: {found[0].relative_to(root)} exists")
    samples = root / SAMPLES
    if samples.exists() and re.search(rf"\b{name}\.{name}\b|made_by_new_op\(\"{name}\"", samples.read_text()):
        raise ValueError(f"{name!r} is an existing op: {SAMPLES} has its sample calls")


def next_number(root=ROOT):
    """The next free notebook number, as two digits ("07" after 06_involution.ipynb)."""
    numbers = [int(p.name[:2]) for p in (Path(root) / "notebooks").glob("[0-9][0-9]_*.ipynb")]
    number = max(numbers, default=0) + 1
    if number > 99:
        raise ValueError("notebooks/ has a notebook numbered 99: there is no next number")
    return f"{number:02d}"


class Written(list):
    """The paths new_op wrote. As a notebook cell's last value it shows nothing: new_op has printed them."""

    def _ipython_display_(self):
        pass


def _trust(notebook):
    """Sign the notebook written, so that Lab opens it trusted, as `make lab` signs the others (tools/lab.py): it has
    no outputs to distrust. Where Jupyter's packages are missing (a bare install), it stays unsigned."""
    try:
        import nbformat
        from nbformat.sign import NotebookNotary
    except ImportError:
        return
    NotebookNotary().sign(nbformat.read(notebook, as_version=4))


def new_op(name, scalar=False, root=ROOT, quiet=False):
    """Write a new elementwise op `name`, y = f(x) (`scalar`: y = f(x, alpha), with a float argument alpha), in
    its five places under `root` (the project's, by default), from templates/new_op/; add its sample calls to
    tests/op_samples.py if there is one. Returns the paths written (a list). Raises ValueError for a name that cannot be
    an op's (check_name) and FileExistsError rather than overwrite a file; then it writes nothing."""
    root = Path(root)
    check_name(name, root)
    number = next_number(root)
    paths = [root / render(path, name, number, scalar) for path in FILES]
    if existing := [p for p in paths if p.exists()]:
        raise FileExistsError(f"new_op({name!r}) would overwrite {', '.join(map(str, existing))}: nothing written")
    for path, template in zip(paths, FILES):
        text = (TEMPLATE / template).read_text()
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, (render_notebook if path.suffix == ".ipynb" else render)(text, name, number, scalar))
    _trust(next(p for p in paths if p.suffix == ".ipynb"))
    samples = root / SAMPLES
    if samples.exists():
        call = f'made_by_new_op("{name}"' + (", scalar=True)" if scalar else ")")
        write_atomically(samples, samples.read_text() + f"SAMPLES |= {call}  # make new-op NAME={name}\n")
    if not quiet:
        formula = "f(x, alpha)" if scalar else "f(x)"
        print(f"new op {name}: y = {formula}, elementwise, with its backward kernel")
        for path, what in zip(paths, FILES.values()):
            print(f"  wrote {str(path.relative_to(root)):<36} {what}")
        if samples.exists():
            print(f"  added a line to {SAMPLES:<26} its sample calls, for tests/test_op_contract.py")
        print(
            f"next: open kernels/{name}.cu and edit f and df under EDIT HERE; edit the reference in "
            f"{paths[3].relative_to(root)} (EDIT HERE); re-run notebook {number} from the top (make lab) and "
            f"`pytest tests/test_{name}.py`"
        )
    return Written(paths)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kp.newop", description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the op's name, e.g. leaky_relu")
    parser.add_argument("--scalar", action="store_true", help="the op takes a float argument alpha")
    parser.add_argument("--root", default=ROOT, type=Path, help="the project to write into (default: this one)")
    args = parser.parse_args(argv)
    try:
        new_op(args.name, scalar=args.scalar, root=args.root)
    except (ValueError, FileExistsError) as e:
        print(f"make new-op: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
