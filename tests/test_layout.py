"""The kp/ package's layout, as kp/__init__.py draws it: one concern per module, each opening with what it
owns, none over ~300 lines; a module imports only from floors below its own; nothing in kp/ imports helpers;
helpers.py defines nothing and re-exports exactly what the notebooks call."""

import ast

import pytest

import helpers
import kp.files

FLOORS = {
    "files": 1,
    "binding": 1,
    "table": 1,
    "gpumodel.gpu_constants": 1,
    "gpumodel.caches": 1,
    "gpumodel.overlap": 1,
    "gpumodel.cfg": 1,
    "gpumodel.flow": 2,
    "gpumodel.pipes": 1,
    "gpumodel.charges": 2,
    "gpumodel.register_banks": 2,
    "goals": 1,
    "toolchain": 2,
    "diagnostics": 2,
    "report": 2,
    "notebooks": 2,
    "gpumodel.gpus": 2,
    "gpumodel.estimates": 2,
    "sourceview": 2,
    "pictures": 2,
    "gpumodel.counts": 3,
    "newop": 2,
    "checksource": 2,
    "puzzlefiles": 2,
    "doctor": 3,
    "gpumodel.gputime": 5,
    "gpumodel.issue_rules": 2,
    "gpumodel.subcores": 3,
    "gpumodel.schedule": 4,
    "gpumodel.depend": 3,
    "standin": 3,
    "build": 4,
    "gpumodel.runs": 4,
    "check": 5,
    "load": 6,
    "gpumodel.ptxas": 5,
    "gpumodel.sass": 5,
    "package": 5,
    "verify": 6,
    "gpumodel.profile": 7,
    "gpumodel.compiled": 6,
    "gpumodel.local": 6,
    "program": 6,
    "bench": 5,
    "display": 7,
    "grade": 8,
    "puzzle": 9,
    "exercise": 9,
    "contract": 8,
}
PACKAGE = kp.files.ROOT / "kp"
SUBPACKAGES = {"gpumodel"}  # a room of its own inside kp/: the GPU model (kp/gpumodel/__init__.py draws it)


def path_of(name):
    """kp/<name>.py, for a module named as FLOORS names it ("files", "gpumodel.sass")."""
    return PACKAGE / f"{name.replace('.', '/')}.py"


def ours(module):
    """The FLOORS name of a kp module named in an import ("kp.files" -> "files", "kp.gpumodel.sass" ->
    "gpumodel.sass"); None for a subpackage itself ("kp.gpumodel": its __init__ imports nothing) or another package."""
    if not module.startswith("kp."):
        return None
    name = module[len("kp.") :]
    return None if name in SUBPACKAGES else name


def imported_modules(path):
    """Every module that `path` imports, at any depth (imports inside functions count too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            if node.module == "kp" or node.module.startswith("kp.") and node.module[3:] in SUBPACKAGES:
                names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def test_every_module_of_the_package_has_a_floor():
    found = {p.relative_to(PACKAGE).with_suffix("").as_posix().replace("/", ".") for p in PACKAGE.rglob("*.py")}
    assert {m for m in found if not m.endswith("__init__")} == set(FLOORS)


def test_the_gpu_model_room_opens_with_its_architecture():
    assert "trace -> counts -> SASS -> caches -> time" in ast.get_docstring(
        ast.parse(path_of("gpumodel/__init__").read_text())
    )


@pytest.mark.parametrize("name", FLOORS)
def test_a_module_imports_only_from_floors_below_and_never_helpers(name):
    imports = imported_modules(path_of(name))
    assert "helpers" not in imports
    mine = {ours(m) for m in imports} - {None}
    above = {m for m in mine if FLOORS[m] >= FLOORS[name]}
    assert not above, f"kp.{name} (floor {FLOORS[name]}) imports {sorted(above)} from its floor or above"


@pytest.mark.parametrize("name", FLOORS)
def test_a_module_opens_with_what_it_owns_and_stays_small(name):
    path = path_of(name)
    assert ast.get_docstring(ast.parse(path.read_text())), f"{path} opens with no docstring"
    assert len(path.read_text().splitlines()) <= 300


def test_helpers_defines_nothing_and_re_exports_the_notebook_api():
    tree = ast.parse((kp.files.ROOT / "helpers.py").read_text())
    defined = [
        n
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Assign))
        and not (isinstance(n, ast.Assign) and [t.id for t in n.targets if isinstance(t, ast.Name)] == ["__all__"])
    ]
    assert defined == [], [ast.dump(n)[:80] for n in defined]
    assert all(getattr(helpers, name).__module__.startswith("kp.") for name in helpers.__all__ if name != "KERNELS")
    assert helpers.KERNELS == kp.files.KERNELS


@pytest.mark.parametrize("module", FLOORS)
def test_every_module_has_its_own_test_module(module):
    stem = module.rsplit(".", 1)[-1]
    assert (kp.files.ROOT / "tests" / f"test_{stem}.py").exists(), f"kp.{module} has no tests/test_{stem}.py"
