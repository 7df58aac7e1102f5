"""kp.newop (`make new-op NAME=...`): the ops it writes, with and without the scalar, build and pass their own
tests, the contract every op keeps, the nvcc build and their notebooks, unchanged, in a copy of the project; what
it writes (the template renamed, its markers gone, lint-clean for every name length); the names it refuses and
the files it will not overwrite."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import helpers
import kp.files
import kp.newop
from kp.newop import FILES, MAX_NAME, check_name, names_in_use, new_op, next_number, render

ROOT = kp.files.ROOT
RUFF = importlib.util.find_spec("ruff") is not None


def project_copy(dest):
    """What an op's build, tests and notebook need of the project, copied to `dest` (its notebooks too, so that the
    new one gets the next number); returns `dest`."""
    skip = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints")
    for folder in ("kp", "templates", "kernels/common"):
        shutil.copytree(ROOT / folder, dest / folder, ignore=skip)
    for name in ("helpers.py", "pyproject.toml", ".clang-format"):
        shutil.copy(ROOT / name, dest / name)
    (dest / "tests").mkdir()
    for name in ("conftest.py", "op_samples.py", "test_op_contract.py", "test_cuda_build.py", "test_notebooks.py"):
        shutil.copy(ROOT / "tests" / name, dest / "tests" / name)
    (dest / "notebooks").mkdir()
    for path in ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"):
        shutil.copy(path, dest / "notebooks" / path.name)
    return dest


def python_in(root):
    """The environment of a Python process that imports the copy's helpers and kp, and builds in its own folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("KP_BUILD_DIR", "KP_REPORT", "KP_CHECK")}
    return {**env, "PYTHONPATH": str(root)}


# --- the ops it writes, at work ----------------------------------------------------------------------------------


def test_the_ops_it_writes_pass_their_tests_the_contract_and_their_notebooks_unchanged(tmp_path):
    """One op without the scalar (silu) and one with it (leaky_relu, the issue's own example), as a learner gets
    them: built on the CPU stand-in (and by nvcc where it is here), their tests, the contract every op keeps (on
    the sample calls new_op added), and their notebooks top to bottom (tests/test_notebooks.py's checks)."""
    root = project_copy(tmp_path / "project")
    notebooks = [new_op("silu", root=root, quiet=True)[3], new_op("leaky_relu", scalar=True, root=root, quiet=True)[3]]
    tests = ["tests/test_silu.py", "tests/test_leaky_relu.py", "tests/test_op_contract.py"]
    tests += ["tests/test_cuda_build.py", "tests/test_notebooks.py"]
    chosen = "(silu or relu) and not compile_error"  # the compile-error cases test the toolchain, not the op
    command = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *tests, "-k", chosen]
    done = subprocess.run(command, cwd=root, env=python_in(root), capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    summary = done.stdout.splitlines()[-1]
    print(summary)
    assert " passed" in summary and "failed" not in summary and "error" not in summary, summary
    ran = {m for m in re.findall(r"^PASSED tests/(test_\w+)\.py", done.stdout, re.M)}
    assert {"test_silu", "test_leaky_relu", "test_op_contract", "test_notebooks"} <= ran, ran
    if shutil.which("dot"):
        for path in notebooks:
            assert f"test_runs_top_to_bottom_and_records_what_the_report_shows[{path.stem}]" in done.stdout


# --- what it writes ---------------------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path):
    """A project with the real notebooks and op_samples.py, and nothing else: enough to write an op into."""
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "op_samples.py", tmp_path / "tests" / "op_samples.py")
    (tmp_path / "notebooks").mkdir()
    for path in ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"):
        (tmp_path / "notebooks" / path.name).write_text("{}")
    return tmp_path


def test_as_a_cells_last_value_it_shows_only_what_it_printed(project, capsys):
    from IPython.core.formatters import DisplayFormatter

    paths = new_op("my_op", root=project)
    printed = capsys.readouterr().out
    assert "kernels/my_op.cu" in printed and DisplayFormatter().format(paths) == ({}, {})  # no list of paths below it
    assert DisplayFormatter().format(list(paths))[0]["text/plain"].startswith("[PosixPath(")


@pytest.mark.parametrize("scalar", [False, True], ids=["plain", "scalar"])
def test_it_writes_the_template_renamed_in_the_five_places(project, scalar, capsys):
    paths = new_op("my_op", scalar=scalar, root=project)
    number = f"{max(int(p.name[:2]) for p in ROOT.glob('notebooks/[0-9][0-9]_*.ipynb')) + 1:02d}"
    expected = ["kernels/my_op.cu", "kernels/my_op_binding.cpp", "kernels/my_op_ops.py"]
    expected += [f"notebooks/{number}_my_op.ipynb", "tests/test_my_op.py"]
    assert [p.relative_to(project).as_posix() for p in paths] == expected
    for path in paths:
        text = path.read_text()
        assert not re.search(r"template_op|TemplateOp|\bNN\b|scalar-only|plain:", text), path.name
        assert ("alpha" in text.lower()) == scalar, path.name
        assert "make new-op" in text.splitlines()[0] or path.suffix == ".ipynb", path.name  # says where it comes from
    cu = paths[0].read_text()
    assert cu.count("EDIT HERE") >= 2 and "__device__ __forceinline__ T f(" in cu and "T df(" in cu
    binding = paths[1].read_text()
    assert "KP_DISPATCH_FLOATING(" in binding and 'kp::data<const scalar_t>(x, "x")' in binding
    schema = "my_op(Tensor x, float alpha) -> Tensor" if scalar else "my_op(Tensor x) -> Tensor"
    assert f'm.def("{schema}"' in binding
    nb = json.loads(paths[3].read_text())
    assert nb["cells"][0]["source"][0].startswith(f"# {number} · my_op: y = f(x")
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb["cells"] if "outputs" in c)
    assert paths[3].read_text() == json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    samples = (project / "tests" / "op_samples.py").read_text().splitlines()
    call = 'made_by_new_op("my_op", scalar=True)' if scalar else 'made_by_new_op("my_op")'
    assert samples[-1] == f"SAMPLES |= {call}  # make new-op NAME=my_op"
    out = capsys.readouterr().out
    assert "wrote kernels/my_op.cu" in out and "added a line to tests/op_samples.py" in out
    assert "next: open kernels/my_op.cu and edit f and df under EDIT HERE" in out and f"notebook {number}" in out


def test_the_template_is_the_scalar_op_with_markers(tmp_path):
    """Lines ending in a scalar-only comment stay only with the scalar; `plain:` lines replace them without it;
    without it, the scalar goes from every argument list; names and the notebook's number are filled in."""
    text = "\n".join(
        [
            "# NN · template_op",
            "def template_op(x, alpha):  # the op",
            "    s = alpha * x  # scalar-only",
            "    # plain: s = x",
            "    return TemplateOp.apply(s, ctx.alpha, ALPHA)",
            "void template_op_fwd(const T* x, T alpha, double alpha, float alpha) { g(x, scalar_t(alpha)); }",
            "<!-- plain: $f(x)$ -->",
            "$f(x; \\alpha)$ <!-- scalar-only -->",
        ]
    )
    assert render(text, "gelu", "07", scalar=True).split("\n") == [
        "# 07 · gelu",
        "def gelu(x, alpha):  # the op",
        "    s = alpha * x",
        "    return Gelu.apply(s, ctx.alpha, ALPHA)",
        "void gelu_fwd(const T* x, T alpha, double alpha, float alpha) { g(x, scalar_t(alpha)); }",
        "$f(x; \\alpha)$",
    ]
    assert render(text, "gelu", "07", scalar=False).split("\n") == [
        "# 07 · gelu",
        "def gelu(x):  # the op",
        "    s = x",
        "    return Gelu.apply(s)",
        "void gelu_fwd(const T* x) { g(x); }",
        "$f(x)$",
    ]


@pytest.mark.skipif(not RUFF, reason="ruff is not installed here (make lint installs it)")
def test_what_it_writes_is_lint_clean_for_every_name_length(tmp_path):
    """ruff (as `make lint` runs it) passes the Python, notebooks included, for the shortest and the longest names;
    no C++ line is longer than .clang-format's 120 columns, so that no wrapping depends on the name's length."""
    root = project_copy(tmp_path / "project")
    names = ["a", "leaky_relu", "x" * MAX_NAME]
    for name in names:
        new_op(name, root=root, quiet=True)
        new_op(f"s{name[: MAX_NAME - 1]}", scalar=True, root=root, quiet=True)
    written = [p for p in root.glob("*/*") if p.suffix in (".py", ".ipynb", ".cu", ".cpp") and "common" not in str(p)]
    for command in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--no-cache", "kernels", "tests", "notebooks"],
            cwd=root,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    for path in written:
        if path.suffix in (".cu", ".cpp"):
            assert max(map(len, path.read_text().splitlines())) <= 120, path.name
    clang_format = shutil.which("clang-format") or shutil.which("clang-format", path=str(ROOT / ".venv" / "bin"))
    if clang_format:
        cxx = [str(p) for p in written if p.suffix in (".cu", ".cpp")]
        done = subprocess.run([clang_format, "--dry-run", "--Werror", *cxx], cwd=root, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]


# --- names and files it refuses -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, message",
    [
        ("LeakyReLU", "cannot name an op: use lowercase letters"),
        ("leaky-relu", "cannot name an op"),
        ("2x", "cannot name an op"),
        ("leaky__relu", "cannot name an op"),
        ("relu_", "cannot name an op"),
        ("", "cannot name an op"),
        ("x" * (MAX_NAME + 1), f"is {MAX_NAME + 1} characters long: at most {MAX_NAME}"),
        ("lambda", "is a Python keyword"),
        ("ops", "a loaded kernel's own attribute ext.ops"),
        ("torch", "a name the generated notebook or tests already use"),
        ("target", "a name the generated notebook or tests already use"),
        ("poly2", r"is an existing op: kernels/poly2\.cu exists"),
        ("involution", r"is an existing op: kernels/involution\.cu exists"),
    ],
)
def test_names_it_refuses_say_why(name, message):
    with pytest.raises(ValueError, match=message):
        check_name(name)


def test_the_names_the_generated_code_uses_are_refused():
    used = names_in_use()
    assert {"torch", "device", "target", "ext", "setup", "bench", "print"} <= used
    assert not any("template_op" in n or "TemplateOp" in n for n in used)


def test_the_names_a_loaded_kernel_keeps_for_itself_are_refused():
    ext = helpers.load_kernel("add2", target="cpu", quiet=True)
    public = {n for n in (*vars(type(ext)), *vars(ext)) if not n.startswith("_")} - set(ext._op_names)
    assert public == kp.newop.LOADED_KERNEL_NAMES


def test_it_never_overwrites_and_then_writes_nothing(project):
    (project / "tests" / "test_fresh.py").write_text("# mine\n")
    samples = (project / "tests" / "op_samples.py").read_text()
    with pytest.raises(FileExistsError, match=r"would overwrite .*tests/test_fresh\.py: nothing written"):
        new_op("fresh", root=project, quiet=True)
    assert not (project / "kernels" / "fresh.cu").exists() and not list(project.glob("notebooks/*fresh*"))
    assert (project / "tests" / "test_fresh.py").read_text() == "# mine\n"
    assert (project / "tests" / "op_samples.py").read_text() == samples
    (project / "tests" / "test_fresh.py").unlink()
    new_op("fresh", root=project, quiet=True)
    with pytest.raises(ValueError, match=r"'fresh' is an existing op: kernels/fresh\.cu exists"):
        new_op("fresh", root=project, quiet=True)
    (project / "kernels" / "fresh.cu").unlink()  # its sample calls still name it
    with pytest.raises(ValueError, match=r"is an existing op: .*notebooks/\d\d_fresh\.ipynb exists"):
        new_op("fresh", root=project, quiet=True)


def test_the_next_number_follows_the_last_notebook(tmp_path):
    assert next_number(tmp_path) == "01"
    (tmp_path / "notebooks").mkdir()
    for name in ("01_a.ipynb", "06_b.ipynb", "scratch.ipynb"):
        (tmp_path / "notebooks" / name).write_text("{}")
    assert next_number(tmp_path) == "07"
    assert next_number() == f"{max(int(p.name[:2]) for p in ROOT.glob('notebooks/[0-9][0-9]_*.ipynb')) + 1:02d}"
    (tmp_path / "notebooks" / "99_last.ipynb").write_text("{}")
    with pytest.raises(ValueError, match="no next number"):
        next_number(tmp_path)


# --- how it is called -------------------------------------------------------------------------------------------


def test_the_command_line_writes_or_says_why_not(project):
    run = [sys.executable, "-m", "kp.newop"]
    env = python_in(ROOT)
    done = subprocess.run([*run, "Bad-Name", "--root", str(project)], capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "make new-op: 'Bad-Name' cannot name an op" in done.stderr
    done = subprocess.run([*run, "cube", "--scalar", "--root", str(project)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "new op cube: y = f(x, alpha)" in done.stdout and (project / "kernels" / "cube_binding.cpp").exists()
    assert "float alpha" in (project / "kernels" / "cube_binding.cpp").read_text()


def test_helpers_and_make_call_it():
    assert helpers.new_op is kp.newop.new_op
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^new-op:", makefile, re.M) and "-m kp.newop '$(NAME)'" in makefile
    assert len(FILES) == 5 and all((kp.newop.TEMPLATE / path).is_file() for path in FILES)


def test_the_notebook_it_writes_is_signed_so_lab_opens_it_trusted(project, monkeypatch, tmp_path):
    """As `make lab` signs the committed notebooks (tools/lab.py), so new_op signs the one it writes."""
    import nbformat
    from nbformat.sign import NotebookNotary

    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter-data"))  # its own signature store
    paths = new_op("my_op", root=project, quiet=True)
    (notebook,) = [p for p in paths if p.suffix == ".ipynb"]
    assert NotebookNotary().check_signature(nbformat.read(notebook, as_version=4))
