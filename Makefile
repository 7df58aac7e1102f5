# make run   — set up (first time only), execute every notebook, write build/report/
# make test  — set up (first time only), run the whole test suite
# make bench — set up (first time only), run every benchmark under bench/, write build/report/bench.md
# make lab   — JupyterLab at the project root (notebooks/, kernels/, build logs), notebook 01 open; PORT=8899 picks the port
# make new-op NAME=leaky_relu [SCALAR=1] — a new op of your own in its five places, from templates/new_op/
# make package OP=add2 — the op as a wheel and a CMake library in build/package/ (TARGET=cpu or cuda to choose)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup graphviz chromium run test bench lab doctor new-op package lint format clean gpu-wheels

setup: $(STAMP) graphviz chromium

# Re-installs only when requirements.txt or pyproject.toml change. The editable install makes
# `import helpers` work from any folder (notebooks/, tests/, bench/).
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

# torchviz renders through graphviz's `dot`, which pip cannot install.
graphviz:
	@command -v dot >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get install -y -q graphviz >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q graphviz >/dev/null; }; \
	else \
		echo "graphviz's dot is missing: run 'sudo apt-get install -y graphviz' (or 'conda install graphviz')"; exit 1; \
	fi

# The browser test (tests/test_lab.py) drives JupyterLab in Debian's chromium; Playwright's own browser
# download cannot reach its servers. Without root, the test skips and says how to install it.
chromium:
	@command -v chromium >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get install -y -q chromium >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }; \
	else \
		echo "chromium is missing, so tests/test_lab.py will skip: run 'sudo apt-get install -y chromium'"; \
	fi

# COLD=1 empties the notebooks' build folder first: the report's build column then shows cold builds.
run: setup
	$(PY) tools/run_notebooks.py $(if $(COLD),--cold)

test: setup
	$(PY) -m pytest

# Build latency, the CPU stand-in's costs, every op against torch, ptxas's registers per kernel, the GPU model, both
# ladders (several minutes).
bench: setup
	$(PY) bench/report.py

# Rooted at the project, so kernels/*.cu and the build logs open in Lab's editor too. As root (a container,
# a cloud VM) Jupyter refuses to start without --allow-root; it prints the URL to open either way.
# `make lab PORT=8899`: that port or an error (default: Jupyter's 8888, or the next free one).
lab: setup
	$(PY) tools/lab.py $(if $(PORT),--port $(PORT))

doctor: setup
	$(PY) helpers.py doctor

# kernels/<NAME>.cu, its binding and _ops.py, notebooks/NN_<NAME>.ipynb, tests/test_<NAME>.py (kp.newop); SCALAR=1
# gives both ops a float argument alpha. Only the virtual environment is needed, not graphviz or chromium.
new-op: $(STAMP)
	@test -n "$(NAME)" || { echo "usage: make new-op NAME=leaky_relu [SCALAR=1]"; exit 2; }
	$(PY) -m kp.newop '$(NAME)' $(if $(SCALAR),--scalar)

# kp.package: the target is this machine's (cuda with a GPU, else the CPU stand-in) unless TARGET says.
package: setup
	@test -n "$(OP)" || { echo "usage: make package OP=add2 [TARGET=cpu|cuda]"; exit 2; }
	$(PY) -m kp.package $(OP) $(if $(TARGET),--target $(TARGET))

# bench/kernels/sgemm/ is siboehm's code as published (kept verbatim for the held-out check): not ours to format.
CXX_SOURCES = $(filter-out bench/kernels/sgemm/%,$(shell git ls-files '*.cu' '*.cuh' '*.cpp' '*.h'))
# One clang-format for everyone: releases format some lines differently, so `make lint` pins the one the tree is in.
CLANG_FORMAT = clang-format==21.1.8

# Formatting by tools: ruff for Python, clang-format for kernels and bindings (.clang-format).
lint: setup
	$(PY) -m pip install --quiet --disable-pip-version-check ruff $(CLANG_FORMAT)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .
	$(VENV)/bin/clang-format --dry-run --Werror $(CXX_SOURCES)

format: setup
	$(PY) -m pip install --quiet --disable-pip-version-check ruff $(CLANG_FORMAT)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/clang-format -i $(CXX_SOURCES)

clean:
	rm -rf build

# The wheels a lent GPU machine lacks (it has torch, nvcc, numpy, pytest, onnx, but no package registry):
# downloaded here into .whl/ for Python 3.12; tools/gpu_session.sh installs them there.
GPU_WHEELS = nbclient nbformat nbconvert jupyter_client jupyter_core ipykernel ipython ipython_pygments_lexers comm \
	debugpy matplotlib-inline traitlets pyzmq tornado jedi parso prompt_toolkit wcwidth pexpect ptyprocess decorator \
	stack_data executing asttokens pure_eval fastjsonschema jsonschema jsonschema-specifications referencing rpds-py \
	platformdirs nest-asyncio2 torchviz graphviz mistune bleach tinycss2 pandocfilters defusedxml beautifulsoup4 \
	soupsieve jupyterlab_pygments webencodings attrs pygments psutil threadpoolctl
gpu-wheels: $(STAMP)
	$(PY) -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.12 \
		--implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
		--platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl $(GPU_WHEELS)
