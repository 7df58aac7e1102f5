"""CUDA puzzles (notebook 00): `puzzle("map")` builds the learner's kernel in puzzles/map.cu in check mode, runs it
against its spec (a torch function) on ragged sizes and non-uniform data, and prints PASS or FAIL with a score: the
most global and shared reads and writes one thread made, against the target, and the GPU model's sectors per request
and bank conflicts.

A puzzle's `.cu` holds only its kernel. What runs it is made here, in build/puzzles/: a copy of the file (a `#line`
keeps its name and line numbers, so compiler errors and check mode name puzzles/map.cu) with a launcher appended,
and a binding with one op, `run`, that passes the tensors and sizes to it. The solutions are in puzzles/solutions/.
The order follows GPU-Puzzles (github.com/srush/GPU-Puzzles), in CUDA C++.
"""

import dataclasses

import torch

from kp.check import KernelCheckError
from kp.files import ROOT, display_path, module_from_file, write_if_changed
from kp.load import load_kernel
from kp.profile import profile
from kp.table import Table
from kp.verify import first_wrong_element

PUZZLES_DIR = ROOT / "puzzles"


def puzzles():
    """The puzzles, in order: puzzles/specs.py's table, which lives beside the puzzles (read on first use, so that
    helpers imports where there is no puzzles/ folder: a copy of the project, a packaged op)."""
    return module_from_file("kp_puzzle_specs", PUZZLES_DIR / "specs.py").PUZZLES


COUNTS = ("global reads", "global writes", "shared reads", "shared writes")


@dataclasses.dataclass
class PuzzleResult:
    """What `puzzle()` found: passed, the message, and per count the most one thread made and the target."""

    name: str
    passed: bool
    message: str
    most: dict = dataclasses.field(default_factory=dict)
    target: dict = dataclasses.field(default_factory=dict)
    gpu_model: str = ""

    def table(self):
        rows = [
            {"": "most by one thread", **{c: self.most.get(c, "") for c in COUNTS}},
            {"": "target", **{c: self.target.get(c, "–") for c in COUNTS}},
        ]
        return Table(rows)

    def __repr__(self):
        return f"<puzzle {self.name}: {'PASS' if self.passed else 'FAIL'}>"


def _find(name):
    by_name = {p.name: p for p in puzzles()}
    if name not in by_name:
        raise ValueError(f"no puzzle {name!r}; the puzzles, in order: {', '.join(by_name)}")
    return by_name[name]


def launcher(p):
    """The C++ appended to the learner's file: it launches the kernel as the puzzle says."""
    params = ", ".join(p.params)
    names = ", ".join(param.split()[-1].lstrip("*") for param in p.params)
    return (
        f"\nvoid kp_puzzle_launch({params}, int gx, int gy, int bx, int by) {{\n"
        f"  {p.name}<<<dim3(gx, gy), dim3(bx, by)>>>({names});\n"
        "  KP_CHECK_LAUNCH();\n"
        "}\n"
    )


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
        f"// puzzle {p.name}'s torch side, made by kp.puzzle.\n"
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
    """The copy of `source` (the learner's file or the solution) with its launcher, and the binding, in
    build/puzzles/; returns the copy's path, for load_kernel."""
    folder = ROOT / "build" / "puzzles" / ("solutions" if source.parent.name == "solutions" else "mine") / p.name
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


def _load(p, source, target, check):
    return load_kernel(build_files(p, source), target=target, check=check, quiet=True)


def _case(p, sizes, seed, device):
    g = torch.Generator().manual_seed(seed)
    inputs = p.inputs(*sizes, g)
    out = p.out(*sizes, *inputs)
    return [t.to(device) for t in inputs], out.to(device)


def _call(ext, p, sizes, inputs, out):
    grid, block = p.launch(*sizes)
    ext.run(*inputs, out, *sizes, *grid, *block)


def _said(p, sizes):
    """`rows=3, cols=5`: a case as the kernel's int parameters name it."""
    names = [param.split()[-1] for param in p.params if "*" not in param]
    return ", ".join(f"{n}={v}" for n, v in zip(names, sizes))


def _mismatch(p, sizes, got, expected):
    where = first_wrong_element(got, expected, atol=p.atol, rtol=p.rtol) or "the values differ"
    unwritten = " (NaN: your kernel did not write it)" if got.is_floating_point() and got.isnan().any() else ""
    return f"wrong result for {_said(p, sizes)}: {where}{unwritten}"


def _most(prof):
    """The most global and shared reads and writes (stores and atomics) one thread made, from the profile's touches."""
    space = {a.id: a.space for a in prof.arrays}
    per_thread = {}
    for t in prof.touches:
        key = (t.launch, t.block, t.tid)
        counts = per_thread.setdefault(key, dict.fromkeys(COUNTS, 0))
        counts[f"{space[t.array]} {'reads' if t.kind == 0 else 'writes'}"] += 1
    return {c: max((counts[c] for counts in per_thread.values()), default=0) for c in COUNTS}


def _gpu_model(prof):
    said = []
    loads = [ln for ln in prof.lines if ln.space == "global" and ln.kind == "load" and ln.requests]
    if loads:
        sectors = sum(ln.units for ln in loads) / sum(ln.requests for ln in loads)
        ideal = sum(ln.ideal for ln in loads) / sum(ln.requests for ln in loads)
        said.append(f"global loads: {sectors:.3g} sectors per request (ideal {ideal:.3g})")
    shared = [ln for ln in prof.lines if ln.space == "shared"]
    if shared:
        worst = max(shared, key=lambda ln: ln.worst)
        said.append(
            f"shared memory: a {worst.worst}-way bank conflict at {worst.file}:{worst.line}"
            if worst.worst >= 2
            else "shared memory: no bank conflicts"
        )
    return "; ".join(said)


def puzzle(name, solution=False, target=None, quiet=False):
    """Check puzzles/<name>.cu (`solution=True`: puzzles/solutions/<name>.cu) against its spec: in check mode on
    the CPU stand-in (out-of-bounds accesses, races and divergent barriers are named at their line), on every size
    of the puzzle, then the counts of one thread against the target. `target="cuda"` (the default where a GPU is
    present): the same sizes also run the nvcc build on the GPU. Prints PASS or FAIL and the score (unless `quiet`);
    returns a PuzzleResult."""
    p = _find(name)
    source = PUZZLES_DIR / "solutions" / f"{name}.cu" if solution else PUZZLES_DIR / f"{name}.cu"
    if not source.is_file():
        raise FileNotFoundError(f"no file {display_path(source)}: the puzzle's kernel goes there")
    result = _check(p, source, target or ("cuda" if torch.cuda.is_available() else "cpu"))
    if not quiet:
        verdict = "PASS" if result.passed else "FAIL"
        print(f"puzzle {p.number} · {p.name} ({display_path(source)}): {verdict}\n{result.message}")
        if result.most:
            print(result.table().markdown())
        if result.gpu_model:
            print(f"GPU model (a model, counted on the CPU stand-in): {result.gpu_model}")
    return result


def _check(p, source, target):
    copy = display_path(build_files(p, source))
    checked = _load(p, source, "cpu", check=True)
    for seed, sizes in enumerate(p.sizes):
        inputs, out = _case(p, sizes, seed, "cpu")
        try:
            _call(checked, p, sizes, inputs, out)
        except KernelCheckError as e:
            found = str(e).replace(copy, display_path(source))  # a barrier's finding names the file it was built from
            return PuzzleResult(p.name, False, f"check mode, on {_said(p, sizes)}:\n{found}")
        expected = p.spec(*inputs, *sizes)
        if not _close(p, out, expected):
            return PuzzleResult(p.name, False, _mismatch(p, sizes, out, expected))
    if target == "cuda":
        gpu = _load(p, source, "cuda", check=False)
        for seed, sizes in enumerate(p.sizes):
            inputs, out = _case(p, sizes, seed, "cuda")
            _call(gpu, p, sizes, inputs, out)
            expected = p.spec(*inputs, *sizes)
            if not _close(p, out, expected):
                return PuzzleResult(p.name, False, "on the GPU: " + _mismatch(p, sizes, out.cpu(), expected.cpu()))
    sizes = p.sizes[-1]
    inputs, out = _case(p, sizes, 0, "cpu")
    prof = profile(_call, checked, p, sizes, inputs, out)
    most = _most(prof)
    goal = {c: (t(*sizes) if callable(t) else t) for c, t in p.target.items()}
    over = [f"{c}: {most[c]}, the target is {goal[c]}" for c in goal if most[c] > goal[c]]
    where = "the CPU stand-in in check mode" + (" and the GPU" if target == "cuda" else "")
    sizes_said = "; ".join(_said(p, s) for s in p.sizes)
    if over:
        message = f"right on every size ({sizes_said}), but one thread makes too many accesses: " + "; ".join(over)
    else:
        message = f"right on every size ({sizes_said}), on {where}, within the targets"
    return PuzzleResult(p.name, not over, message, most, goal, _gpu_model(prof))


def _close(p, got, expected):
    if got.shape != expected.shape:
        return False
    return bool(torch.isclose(got, expected.to(got.dtype), rtol=p.rtol, atol=p.atol).all())


def show_puzzle(name):
    """Display puzzles/<name>.cu, the learner's file, with syntax highlighting (plain text outside IPython)."""
    _find(name)
    text = (PUZZLES_DIR / f"{name}.cu").read_text()
    try:
        from IPython.display import Code, display
    except ImportError:
        print(text)
        return
    display(Code(text, language="cuda"))


def scoreboard():
    """Every puzzle checked again (quietly: the builds are cached), printed as a table of PASS and FAIL in order;
    returns the number solved."""
    rows = []
    for p in puzzles():
        passed = puzzle(p.name, quiet=True).passed
        rows.append({"puzzle": f"{p.number} · {p.name}", "what it teaches": p.title, "": "PASS" if passed else "FAIL"})
    solved = sum(row[""] == "PASS" for row in rows)
    print(Table(rows, f"{solved} of {len(rows)} puzzles solved").markdown())
    return solved
