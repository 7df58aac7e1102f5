"""The CPU stand-in's source step: launches, extern __shared__, line numbers, unsupported constructs."""

import re

import pytest
from cuda_cpu_translate import UnsupportedConstruct, translate

import helpers  # noqa: F401  (puts the translator on the path)


def body(out):
    """The translated text without its two-line preamble."""
    head, line, rest = out.split("\n", 2)
    assert head == '#include "cuda_cpu.h"' and line == '#line 1 "/k.cu"'
    return rest


def test_launch_forms():
    src = (
        "void f(float* x, int n, cudaStream_t s) {\n"
        "  a<<<1, 2>>>(x, n);\n"
        "  ns::b<float, 4><<<dim3(n, 2), dim3(8, 8, 1), 64, s>>>(x);\n"
        "  c<<<g, b>>>();\n"
        "}\n"
    )
    out = body(translate(src, "/k.cu"))
    assert '::kp::launch("a", (1), ( 2), (0), (nullptr), [](auto... kp_args) { a(kp_args...); }, x, n);' in out
    assert (
        '::kp::launch("ns::b<float, 4>", (dim3(n, 2)), ( dim3(8, 8, 1)), ( 64), ( s), '
        "[](auto... kp_args) { ns::b<float, 4>(kp_args...); }, x);" in out
    )
    assert '::kp::launch("c", (g), ( b), (0), (nullptr), [](auto... kp_args) { c(kp_args...); });' in out


def test_multiline_launch_keeps_line_numbers():
    src = "void f() {\n  k<<<1,\n     32>>>(a,\n            b);\n  marker();\n}\n"
    out = body(translate(src, "/k.cu"))
    assert out.count("\n") == src.count("\n")
    assert out.splitlines()[4] == "  marker();"


def test_launch_text_in_comments_and_strings_is_left_alone():
    src = '// k<<<1, 1>>>();\nconst char* s = "k<<<1, 1>>>()";\n'
    assert body(translate(src, "/k.cu")) == src


def test_extern_shared_in_function_and_at_file_scope():
    src = (
        "extern __shared__ __align__(16) float file_smem[];\n"
        "__global__ void k() {\n"
        "  extern __shared__ double smem[];\n"
        "  smem[0] = file_smem[0];\n"
        "}\n"
    )
    out = body(translate(src, "/k.cu"))
    assert 'double* const smem = reinterpret_cast<double*>(::kp::dynamic_shared_memory("smem", sizeof(double)));' in out
    assert (
        '#define file_smem (reinterpret_cast<float*>(::kp::dynamic_shared_memory("file_smem", sizeof(float))))' in out
    )
    # After the macro the numbering is restored: `smem[0] = ...` is still line 4 of /k.cu.
    lines = out.splitlines()
    directive = next(i for i, ln in enumerate(lines) if ln.startswith("#line"))
    m = re.match(r'#line (\d+) "/k.cu"', lines[directive])
    assert int(m.group(1)) + lines[directive + 1 :].index("  smem[0] = file_smem[0];") == 4


def test_check_mode_guards_and_registers_every_shared_variable_on_the_same_lines():
    """Check mode (kp.check): a guard array before and after each `__shared__` declaration, and its variables
    registered as it runs; a file-scope one put on the library's list (a header's too, which the `.cu`'s kernels
    cannot see), which each kernel runs as it starts. Every line keeps its number; the plain translation has none
    of it."""
    src = (
        "__shared__ int counter;\n"
        "__global__ void k(float* out) {\n"
        "  __shared__ __align__(16) float tile[32][33], row[8];\n"
        "  extern __shared__ float dyn[];\n"
        "  out[0] = tile[0][0] + row[0] + dyn[0] + counter;\n"
        "}\n"
    )
    out = body(translate(src, "/k.cu", check=True)).splitlines()
    assert len(out) == len(src.splitlines())
    assert out[0] == (
        "static thread_local char kp_guard_0_lo[256]; __shared__ int counter; "
        "static thread_local char kp_guard_0_hi[256]; static ::kp::detail::file_shared kp_file_shared_0([] {"
        ' ::kp::check_shared(counter, "counter", kp_guard_0_lo, kp_guard_0_hi); });'
    )
    assert out[1].endswith("{ ::kp::detail::check_file_shared();")
    assert out[2] == (
        "  static thread_local char kp_guard_1_lo[256]; __shared__ __align__(16) float tile[32][33], row[8]; "
        'static thread_local char kp_guard_1_hi[256]; ::kp::check_shared(tile, "tile", kp_guard_1_lo, kp_guard_1_hi);'
        ' ::kp::check_shared(row, "row", kp_guard_1_lo, kp_guard_1_hi);'
    )
    assert "kp_guard" not in out[3] and out[4] == src.splitlines()[4]
    assert "check_shared" not in translate(src, "/k.cu") and "kp_guard" not in translate(src, "/k.cu")


def test_check_mode_wraps_the_branch_conditions_of_device_code_for_the_gpu_model():
    """`if`, `while`, `do ... while` and a `for`'s condition in device code go through KP_BRANCH (kp.gpumodel.profile
    counts each lane's outcome); `if constexpr`, a declaration as the condition, a range-for, a `for` without a
    condition and host code are left alone, and so is everything in the plain translation. Lines keep their numbers."""
    src = (
        "__global__ void k(float* c, int n) {\n"
        "  if (n > 0) c[0] = 1;\n"
        "  for (int j = 0; j < n; ++j) { while (n > 3 && (j == 1)) --n; }\n"
        "  do { n--; } while (n >= 0);\n"
        "  if constexpr (sizeof(float) == 4) c[0] = 0;\n"
        "  if (int x = n) c[0] = x;\n"
        "  for (float v : {1.f}) c[0] = v;\n"
        "  for (;;) break;\n"
        "}\n"
        "void host(int n) { if (n) return; }\n"
    )
    out = body(translate(src, "/k.cu", check=True)).splitlines()
    # each kernel starts by registering the file-scope __shared__ variables (none here)
    assert out == [
        src.splitlines()[0] + " ::kp::detail::check_file_shared();",
        "  if (KP_BRANCH(n > 0)) c[0] = 1;",
        "  for (int j = 0;KP_BRANCH( j < n); ++j) { while (KP_BRANCH(n > 3 && (j == 1))) --n; }",
        "  do { n--; } while (KP_BRANCH(n >= 0));",
        *src.splitlines()[4:],
    ]
    assert "KP_BRANCH" not in translate(src, "/k.cu")


def test_noinline_becomes_an_attribute():
    out = body(translate("__device__ __noinline__ float f(float x) { return x; }\n", "/k.cu"))
    assert out == "__device__ __attribute__((noinline)) float f(float x) { return x; }\n"


def test_pragma_unroll_becomes_gcc_unroll():
    src = "  #pragma unroll\n  for (;;) {}\n#pragma unroll 4\n  for (;;) {}\n"
    assert body(translate(src, "/k.cu")) == "#pragma GCC unroll 8\n  for (;;) {}\n#pragma GCC unroll 4\n  for (;;) {}\n"


def test_cuda_runtime_includes_are_dropped():
    out = body(translate("#include <cuda_runtime.h>\n#include <cmath>\n", "/k.cu"))
    assert "cuda_runtime.h: provided by cuda_cpu.h" in out and "#include <cmath>" in out


@pytest.mark.parametrize(
    "code, construct",
    [
        ('  asm volatile("membar.gl;");', "inline asm/PTX"),
        ("  float v = tex2D<float>(tex, 0.5f, 0.5f);", "texture/surface memory"),
        ("  wmma::fragment<wmma::matrix_a, 16, 16, 16, half> a;", "WMMA/tensor cores"),
        ("  __pipeline_memcpy_async(dst, src, 16);", "cp.async"),
        ("  cooperative_groups::this_grid().sync();", "grid-wide cooperative sync"),
        ("  child<<<1, 32>>>();", "launching kernels from kernels"),
        # CUDA's names the stand-in lacks (kernels/common/cuda_names.txt), named before g++ runs
        ("  __half2 h = __hcmadd(a, b, c);", "__hcmadd"),
        ("  x[0] = erfinvf(x[0]);", "erfinvf"),
        ("  atomicAdd_block(x, 1.0f);", "atomicAdd_block"),
        ("  auto g = cooperative_groups::coalesced_threads();", "coalesced_threads"),
        ("  x[0] = __shfl(x[0], 0);", "__shfl"),
    ],
)
def test_unsupported_constructs_name_file_and_line(code, construct):
    src = f"#include <cstdint>\n\n__global__ void k(float* x) {{\n{code}\n}}\n"
    with pytest.raises(UnsupportedConstruct) as err:
        translate(src, "/abs/k.cu", "kernels/k.cu")
    assert str(err.value) == f"kernels/k.cu:4: {construct} is not supported on the CPU stand-in"


def test_host_launch_beside_device_function_is_fine():
    src = "__device__ float sq(float x) { return x * x; }\nvoid host() { k<<<1, 1>>>(); }\n"
    assert "::kp::launch" in translate(src, "/k.cu")


@pytest.mark.parametrize("header", ["cuda_fp8.h", "cuda/barrier"])
def test_a_cuda_header_the_stand_in_lacks_is_named_at_its_include(header):
    with pytest.raises(UnsupportedConstruct) as err:
        translate(f"#include <cstdint>\n#include <{header}>\n", "/abs/k.cu", "kernels/k.cu")
    assert str(err.value) == f"kernels/k.cu:2: #include <{header}> is not supported on the CPU stand-in"


def test_what_the_stand_in_has_a_typo_and_the_users_own_words_pass_to_gpp():
    """Names the header defines (some through its macros) or libm has pass; so does a misspelt name, for g++ to
    report as the user's mistake; and a plain word from the list used as the user's own variable."""
    src = (
        "__global__ void k(float* x, unsigned* u) {\n"
        "  x[0] = __fadd_rz(x[0], 1.0f) + __float2int_rd(x[1]) + erff(x[2]) + exp10f(x[3]);\n"
        "  u[0] = atomicInc(u, 4u) + __syncthreads_count(1) + __reduce_add_sync(~0u, 1u);\n"
        "  __syncthread();\n"  # a typo: g++ says "was not declared; did you mean '__syncthreads'?"
        "  float erfinvf = 1.0f, hsin = erfinvf;\n"  # the user's own variables
        "  x[0] = hsin;\n"
        "}\n"
    )
    assert "__syncthread();" in translate(src, "/k.cu")


def test_null_pointer_constants_as_launch_arguments_pass_as_null_pointer_constants():
    """`NULL` and `0` (also with a comment beside them, on lines of their own) become zero_literal{}, which converts
    to the kernel's parameter type; nullptr, other literals, enums and expressions containing 0 stay as written."""
    src = "void f(float* x) {\n  k<<<1, 2>>>(x, NULL, 0, nullptr,\n    0L /* bias */, 10, MODE_A, x + 0, n == 0);\n}\n"
    out = body(translate(src, "/k.cu"))
    z = "::kp::detail::zero_literal{}"
    assert f"x, {z}, {z}, nullptr,\n    {z} /* bias */, 10, MODE_A, x + 0, n == 0);" in out
    assert out.count("\n") == src.count("\n")


def test_a_launchers_own_griddim_and_blockdim_are_renamed_in_host_code_only():
    src = (
        "__global__ void k(float* x) { x[blockIdx.x * blockDim.x + threadIdx.x] = gridDim.x; }\n"
        "void launch(float* x, int n) {\n"
        "  dim3 blockDim(128);\n"
        "  dim3 gridDim = dim3((n + blockDim.x - 1) / blockDim.x);\n"
        "  k<<<gridDim, blockDim>>>(x);\n"
        "}\n"
        "void other(dim3 threadIdx) { use(threadIdx.x); }\n"
        "void untouched(P p) { use(p.gridDim); }\n"
    )
    out = body(translate(src, "/k.cu")).splitlines()
    assert out[0] == src.splitlines()[0]  # device code keeps CUDA's built-ins
    assert out[2] == "  dim3 kp_host_blockDim(128);"
    assert out[3] == "  dim3 kp_host_gridDim = dim3((n + kp_host_blockDim.x - 1) / kp_host_blockDim.x);"
    assert out[4].startswith('  ::kp::launch("k", (kp_host_gridDim), ( kp_host_blockDim), ')
    assert out[6] == "void other(dim3 kp_host_threadIdx) { use(kp_host_threadIdx.x); }"
    assert out[7] == "void untouched(P p) { use(p.gridDim); }"


def test_cuda_func_set_attribute_gets_the_kernels_name():
    src = (
        "void f(int smem) {\n"
        "  cudaFuncSetAttribute(ns::k<float, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);\n"
        "  cudaCheck(cudaFuncSetAttribute((void*)kern, cudaFuncAttributePreferredSharedMemoryCarveout, 100));\n"
        "  cudaFuncSetAttribute(reinterpret_cast<const void*>(&ns::k2<T>), attr, 1);\n"
        "}\n"
    )
    out = body(translate(src, "/k.cu")).splitlines()
    assert out[1] == (
        '  ::kp::func_set_attribute("k", ns::k<float, 4>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);'
    )
    assert out[2] == (
        '  cudaCheck(::kp::func_set_attribute("kern", (void*)kern, cudaFuncAttributePreferredSharedMemoryCarveout, '
        "100));"
    )
    assert out[3].startswith('  ::kp::func_set_attribute("k2", reinterpret_cast<const void*>(&ns::k2<T>), ')


@pytest.mark.parametrize(
    "condition",
    [
        "#if __CUDA_ARCH__ >= 800",
        "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
        "#ifdef __CUDACC__",
        "#ifndef KP_CPU_STANDIN",
        "#if !defined(KP_CPU_STANDIN) || USE_PTX",
        "#if USE_PTX",  # the file's own #define below
    ],
)
def test_code_in_a_branch_the_stand_in_does_not_compile_is_not_inspected(condition):
    src = (
        "#define USE_PTX 0\n"
        "__device__ float f(float x) {\n"
        f"{condition}\n"
        '  asm("rcp.approx.f32 %0, %1;" : "=f"(x) : "f"(x)); return __low2float(__hcmadd(a, b, c));\n'
        "#elif 0\n"
        '  asm("never");\n'
        "#else\n"
        "  return 1.0f / x;\n"
        "#endif\n"
        "}\n"
    )
    assert body(translate(src, "/k.cu")).splitlines()[3] == src.splitlines()[3]  # untouched; g++ never sees it


@pytest.mark.parametrize(
    "condition, line",
    [
        ("#if SOME_MACRO_FROM_A_HEADER", 4),  # unknown here: inspected, as g++ may compile it
        ("#ifndef __CUDA_ARCH__", 4),  # the branch the stand-in compiles
        ("#if 0\n#elif __CUDA_ARCH__ < 700", 5),
        ("#if __CUDA_ARCH__ >= 800\n#else", 5),
    ],
)
def test_code_in_a_branch_the_stand_in_compiles_is_still_inspected(condition, line):
    src = f'__device__ float f(float x) {{\n  float r;\n{condition}\n  asm("rcp");\n#endif\n  return r;\n}}\n'
    with pytest.raises(UnsupportedConstruct) as err:
        translate(src, "/abs/k.cu", "kernels/k.cu")
    assert str(err.value) == f"kernels/k.cu:{line}: inline asm/PTX is not supported on the CPU stand-in"


def test_a_cuda_library_header_is_named_at_its_include():
    """llm.c's dev/cuda/common.h includes cuBLAS's headers: the stand-in has no cuBLAS, and says so by name."""
    with pytest.raises(UnsupportedConstruct) as err:
        translate("#include <cuda_runtime.h>\n#include <cublas_v2.h>\n", "/abs/k.cu", "kernels/k.cu")
    assert str(err.value) == "kernels/k.cu:2: #include <cublas_v2.h> is not supported on the CPU stand-in"


def test_an_include_in_a_branch_the_stand_in_does_not_compile_is_not_refused():
    src = "#ifdef __CUDACC__\n#include <cuda_fp8.h>\n#include <cublas_v2.h>\n#endif\n__global__ void k() {}\n"
    assert "#include <cuda_fp8.h>" in translate(src, "/k.cu")


def test_quoted_includes_g_plus_plus_compiles_are_pointed_where_include_says():
    """`include(name)` is asked of each `#include "name"` that g++ compiles, and where it answers, the copy includes
    that file instead (a header's translation); <system> headers, CUDA's runtime headers (dropped or forwarded),
    commented-out lines and includes in a branch the stand-in does not compile are left alone, as are the lines."""
    src = (
        '#include "rows.cuh"\n'
        "#include <cmath>\n"
        '#include "cuda_runtime.h"\n'
        '// #include "commented.cuh"\n'
        "#ifdef __CUDACC__\n"
        '#include "nvcc_only.cuh"\n'
        "#endif\n"
        '  #  include "sub/deep.h"\n'
        '#include "unknown.h"\n'
    )
    asked = []

    def include(name):
        asked.append(name)
        return None if name == "unknown.h" else f"/build/{name}.cpp"

    out = body(translate(src, "/k.cu", include=include))
    assert asked == ["rows.cuh", "sub/deep.h", "unknown.h"]
    lines = out.splitlines()
    assert lines[0] == '#include "/build/rows.cuh.cpp"' and lines[7] == '  #  include "/build/sub/deep.h.cpp"'
    assert lines[1] == "#include <cmath>" and lines[5] == '#include "nvcc_only.cuh"' and lines[8] == src.splitlines()[8]
    assert len(lines) == len(src.splitlines())


def test_a_header_is_translated_without_the_stand_ins_include_and_with_names_of_its_own():
    """A header's copy starts at its own `#line 1` (the `.cu`'s copy included cuda_cpu.h already); its launches
    are rewritten as a `.cu`'s; in check mode its guard arrays and file-scope registrations carry its tag, so that
    two files of one translation unit never declare the same name, and its `__forceinline__` stays (the `.cu`'s
    becomes `inline` there: see test_constructs)."""
    src = (
        "__shared__ float scratch[4];\n"
        "__global__ void k(float* x) { __shared__ int t[2]; x[0] = t[0] + scratch[0]; }\n"
        "inline void go(float* x) { k<<<1, 2>>>(x); }\n"
        "__device__ __forceinline__ float twice(float v) { return 2 * v; }\n"
    )
    out = translate(src, "/abs/rows.cuh", "kernels/common/rows.cuh", check=True, header=True, tag="h1_")
    assert out.splitlines()[-1] == src.splitlines()[-1]  # inlined into the .cu's kernels, whose lines are named
    assert out.startswith('#line 1 "/abs/rows.cuh"\n') and "cuda_cpu.h" not in out
    assert "kp_guard_h1_0_lo" in out and "kp_guard_h1_1_hi" in out and "kp_file_shared_h1_0(" in out
    assert "kp_guard_0" not in out and '::kp::launch("k", (1), ( 2), (0), (nullptr)' in out
    assert len(out.splitlines()) == len(src.splitlines()) + 1


def test_translate_tree_translates_the_headers_a_cu_includes_into_the_build_folder(tmp_path):
    """kp.standin.translate_tree: each quoted include that resolves (beside the including file, then in the include
    dirs) is translated into folder/h/<hash>/<name>.cpp and included from there, transitively, once per header even
    in a cycle; the stand-in's own headers and what does not resolve are left to g++."""
    from kp.files import COMMON
    from kp.standin import translate_tree

    src, inc, out = tmp_path / "src", tmp_path / "inc", tmp_path / "out"
    (src / "sub").mkdir(parents=True)
    inc.mkdir()
    (src / "k.cu").write_text(
        '#include "sub/a.cuh"\n#include "b.cuh"\n#include "cuda_cpu_fp16.h"\n#include "missing.h"\n'
        "void f(float* x) { launch_a(x); }\n"
    )
    (src / "sub" / "a.cuh").write_text(
        '#pragma once\n#include "b.cuh"\n__global__ void a_kernel(float* x) {}\n'
        "inline void launch_a(float* x) { a_kernel<<<1, 32>>>(x); }\n"
    )
    (inc / "b.cuh").write_text('#pragma once\n#include "../src/sub/a.cuh"\n')  # a cycle, as pragma once allows
    text = translate_tree(src / "k.cu", [inc, COMMON], out)
    copies = {p.name: p for p in out.glob("h/*/*.cpp")}
    assert set(copies) == {"a.cuh.cpp", "b.cuh.cpp"}
    assert f'#include "{copies["a.cuh.cpp"]}"' in text and f'#include "{copies["b.cuh.cpp"]}"' in text
    assert f'#include "{COMMON / "cuda_cpu_fp16.h"}"' in text and '#include "missing.h"' in text
    a = copies["a.cuh.cpp"].read_text()
    assert a.startswith(f'#line 1 "{(src / "sub" / "a.cuh").resolve()}"\n')
    assert f'#include "{copies["b.cuh.cpp"]}"' in a and '::kp::launch("a_kernel"' in a
    assert f'#include "{copies["a.cuh.cpp"]}"' in copies["b.cuh.cpp"].read_text()


def test_an_unsupported_construct_in_a_header_is_named_at_the_headers_line(tmp_path):
    from kp.standin import translate_tree

    (tmp_path / "my.cuh").write_text('#pragma once\n__device__ float f(float x) {\n  asm("rcp");\n  return x;\n}\n')
    (tmp_path / "k.cu").write_text('#include "my.cuh"\n')
    with pytest.raises(UnsupportedConstruct) as err:
        translate_tree(tmp_path / "k.cu", [], tmp_path / "out", shown=lambda p: f"shown/{p.name}")
    assert str(err.value) == "shown/my.cuh:3: inline asm/PTX is not supported on the CPU stand-in"
    assert err.value.file == (tmp_path / "my.cuh").resolve()
