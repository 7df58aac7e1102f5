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
    "gpu_constants": 1,
    "caches": 1,
    "goals": 1,
    "toolchain": 2,
    "diagnostics": 2,
    "report": 2,
    "notebooks": 2,
    "gpus": 2,
    "sourceview": 2,
    "pictures": 2,
    "counts": 3,
    "newop": 2,
    "checksource": 2,
    "puzzlefiles": 2,
    "doctor": 3,
    "gputime": 3,
    "standin": 3,
    "build": 4,
    "check": 5,
    "load": 6,
    "ptxas": 5,
    "sass": 5,
    "package": 5,
    "verify": 6,
    "profile": 7,
    "compiled": 6,
    "program": 6,
    "bench": 5,
    "display": 7,
    "grade": 8,
    "puzzle": 9,
    "exercise": 9,
    "contract": 8,
}
PACKAGE = kp.files.ROOT / "kp"


def imported_modules(path):
    """Every module that `path` imports, at any depth (imports inside functions count too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            if node.module == "kp":
                names |= {f"kp.{a.name}" for a in node.names}
    return names


def test_every_module_of_the_package_has_a_floor():
    assert {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"} == set(FLOORS)


@pytest.mark.parametrize("name", FLOORS)
def test_a_module_imports_only_from_floors_below_and_never_helpers(name):
    imports = imported_modules(PACKAGE / f"{name}.py")
    assert "helpers" not in imports
    ours = {m.split(".")[1] for m in imports if m.startswith("kp.")}
    above = {m for m in ours if FLOORS[m] >= FLOORS[name]}
    assert not above, f"kp.{name} (floor {FLOORS[name]}) imports {sorted(above)} from its floor or above"


@pytest.mark.parametrize("name", FLOORS)
def test_a_module_opens_with_what_it_owns_and_stays_small(name):
    path = PACKAGE / f"{name}.py"
    assert ast.get_docstring(ast.parse(path.read_text())), f"kp/{name}.py opens with no docstring"
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
    assert (kp.files.ROOT / "tests" / f"test_{module}.py").exists(), f"kp.{module} has no tests/test_{module}.py"
