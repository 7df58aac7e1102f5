"""Builds one op of Kernel Playground as a wheel. kp.package copies this file into the op's source tree, beside
kp_package.json (what to build: the op, its target, its sources, kp.build's flags for that target). Build it with
the environment's own torch, as every torch extension is built:

    python -m pip wheel --no-build-isolation --no-deps .

The library registers the op's ops as torch.ops.<op>.* as it is loaded (csrc/kp_register_static.cpp); the
package's __init__.py loads it and adds the fakes and autograd formulas of <op>/_ops.py.
"""

import json
from pathlib import Path

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

HERE = Path(__file__).resolve().parent
SPEC = json.loads((HERE / "kp_package.json").read_text())
OP = SPEC["op"]

Extension = CUDAExtension if SPEC["target"] == "cuda" else CppExtension
library = Extension(
    f"{OP}.lib{OP}",  # <op>/lib<op>.so, the name CMake gives it too: a library torch loads, not a Python module
    sources=SPEC["sources"],
    include_dirs=[str(HERE / d) for d in SPEC["include_dirs"]],
    define_macros=[("KP_NAMESPACE", OP)],
    # -UNDEBUG: setuptools adds Python's own CFLAGS (-DNDEBUG among them), which would turn the kernels' assert
    # off; load_kernel's and CMake's builds keep it on.
    extra_compile_args={"cxx": ["-UNDEBUG", *SPEC["cflags"]], "nvcc": SPEC["cuda_cflags"]},
    extra_link_args=SPEC["ldflags"],
)

setup(
    name=OP,
    version=SPEC["version"],
    description=SPEC["description"],
    packages=[OP],
    package_data={OP: ["kp_package.json"]},
    ext_modules=[library],
    cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True)},
    install_requires=[f"torch>={SPEC['torch_floor']}"],
    python_requires=">=3.10",
)
