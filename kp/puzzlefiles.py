"""What runs a puzzle's kernel (notebook 00; kp.puzzle checks it): made from its spec in build/puzzles/, a copy of the
learner's file (a `#line` keeps its name and line numbers, so that compiler errors and check mode name
puzzles/01_map.cu) with a launcher appended, and a binding with one op, `run`, that passes the tensors and sizes to
it. Writes files only; never builds, loads or runs them (kp.puzzle does, through kp.load).
"""

import hashlib

from kp.files import ROOT, write_if_changed


def launcher(p):
    """The C++ appended to the learner's file: it launches the kernel as the puzzle says, or, for a puzzle of several
    kernels, each launch of its `host` in turn (C++ launch expressions of the parameters and gx, gy, bx, by)."""
    params = ", ".join(p.params)
    names = ", ".join(param.split()[-1].lstrip("*") for param in p.params)
    launches = getattr(p, "host", ()) or (f"{p.name}<<<dim3(gx, gy), dim3(bx, by)>>>({names})",)
    body = "".join(f"  {launch};\n  KP_CHECK_LAUNCH();\n" for launch in launches)
    return f"\nvoid kp_puzzle_launch({params}, int gx, int gy, int bx, int by) {{\n{body}}}\n"


def binding(p):
    """The puzzle's binding: one op, `run(<tensors>, <ints>, gx, gy, bx, by) -> ()`, which writes into `out`."""
    dtype = {"float": "Float", "int": "Int"}
    args, passed, schema, checks = [], [], [], []
    for param in p.params:
        words = param.replace("*", "").split()
        name, ctype = words[-1], words[-2]
        if "*" in param:
            const = "const " if words[0] == "const" else ""
            args.append(f"kp::Tensor {name}")
            schema.append(f"Tensor{'' if const else '(a!)'} {name}")
            checks.append(f'  kp::check_tensor("{p.name}", "{name}", {name}, kp::ScalarType::{dtype[ctype]});')
            passed.append(f'kp::data<{const}{ctype}>({name}, "{name}")')
        else:
            args.append(f"int64_t {name}")
            schema.append(f"int {name}")
            passed.append(f"static_cast<int>({name})")
    launch = ["gx", "gy", "bx", "by"]
    return (
        f"// puzzle {p.name}'s torch side, made by kp.puzzlefiles.\n"
        '#include "binding.h"\n\n'
        f"void kp_puzzle_launch({', '.join(p.params)}, int gx, int gy, int bx, int by);\n\n"
        f"void run({', '.join(args + [f'int64_t {x}' for x in launch])}) {{\n"
        + "\n".join(checks)
        + f'\n  kp::before_launch("{p.name}");\n'
        f"  kp_puzzle_launch({', '.join(passed + [f'static_cast<int>({x})' for x in launch])});\n"
        "}\n\n"
        f'KP_OPS(m) {{ m.def("run({", ".join(schema + [f"int {x}" for x in launch])}) -> ()", TORCH_BOX(&run)); }}\n'
    )


PYTHON_SIDE = '''"""A puzzle's op runs once per check, never traced or differentiated: no fake, no autograd formula."""


def register(ops):
    pass
'''


def build_files(p, source):
    """The copy of `source` (a kernel file for the spec `p`, wherever it lives: the learner's, a solution, a lesson's
    exercise) with its launcher, and the binding, in build/puzzles/<name>/, a folder per source file (so that two files
    for one spec never share a copy); returns the copy's path, for load_kernel."""
    key = hashlib.sha256(str(source.resolve()).encode()).hexdigest()[:10]
    folder = ROOT / "build" / "puzzles" / p.name / f"{source.parent.name}-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    first, _, rest = source.read_text().partition("\n")
    if first.strip().startswith("//") or not first.strip():  # the directive takes the comment's place: same lines
        text = f'#line 2 "{source}"\n{rest}'
    else:
        text = f'#line 1 "{source}"\n{first}\n{rest}'
    text += f'\n#line 1 "kp.puzzle: the launcher of {p.name}"\n{launcher(p)}'
    write_if_changed(folder / f"{p.name}.cu", text)
    write_if_changed(folder / f"{p.name}_binding.cpp", binding(p))
    write_if_changed(folder / f"{p.name}_ops.py", PYTHON_SIDE)
    return folder / f"{p.name}.cu"
