"""Standalone CUDA programs (kp.program): a `.cu` with a `main()` built and run in a child process, on the CPU
stand-in and, where there is a GPU, with nvcc; its output, exit status, failed launches and check mode's findings
come back, and a program that faults or hangs never takes this process with it. `%%cuda` runs a cell as one."""

from pathlib import Path

import pytest
from conftest import TARGETS

from kp.diagnostics import KernelBuildError
from kp.program import install_cuda_magic, run_cell, run_program

HERE = Path(__file__).parent
VECTOR_ADD = HERE / "programs" / "vector_add.cu"


def program(tmp_path, name, text):
    path = tmp_path / f"{name}.cu"
    path.write_text(text)
    return path


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [1, 1000, 100_003])
def test_a_textbook_program_runs_as_written(target, n):
    run = run_program(VECTOR_ADD, args=[n], target=target)
    assert run.stdout == f"n = {n}, wrong = 0, c[n-1] = {3 * (n - 1):g}\n", run
    assert run.returncode == 0 and run.ok and not run.stderr and not run.launch_failure
    assert "exit code 0" in str(run)


def test_check_mode_is_silent_on_a_correct_program():
    run = run_program(VECTOR_ADD, args=[1000], check=True)
    assert run.ok and run.findings == [], run


def test_exit_code_stdin_and_stderr_come_back(tmp_path):
    path = program(
        tmp_path,
        "echo",
        '#include <cstdio>\nint main() {\n  int x = 0;\n  if (scanf("%d", &x) != 1) return 2;\n'
        '  fprintf(stderr, "read %d\\n", x);\n  return x;\n}\n',
    )
    run = run_program(path, stdin="7\n")
    assert (run.returncode, run.stderr, run.ok) == (7, "read 7\n", False)
    assert "exit code 7" in run.status()


def test_an_off_by_one_is_found_in_check_mode_at_its_line(tmp_path):
    text = VECTOR_ADD.read_text().replace("if (i < n) c[i]", "if (i <= n) c[i]")
    run = run_program(program(tmp_path, "off_by_one", text), args=[1000], check=True)
    errors = [f for f in run.findings if f.severity == "error"]
    assert errors and errors[0].kind == "global-bounds", run
    line = next(k for k, code in enumerate(text.splitlines(), 1) if "if (i <= n) c[i]" in code)
    assert errors[0].line == line and "[1000]" in errors[0].message and "cudaMalloc" in errors[0].message
    assert not run.ok and "if (i <= n)" in str(run)


def test_a_race_is_found_in_check_mode(tmp_path):
    text = """#include <cstdio>
__global__ void reverse(float* x) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = x[t];
  x[t] = s[63 - t];
}
int main() {
  float* d;
  cudaMalloc(&d, 64 * sizeof(float));
  cudaMemset(d, 0, 64 * sizeof(float));
  reverse<<<1, 64>>>(d);
  printf("%s\\n", cudaGetErrorString(cudaDeviceSynchronize()));
  cudaFree(d);
}
"""
    run = run_program(program(tmp_path, "race", text), check=True)
    races = [f for f in run.findings if f.kind == "race"]
    assert races and {races[0].line, races[0].other_line} == {5, 6}, run
    assert not run.ok
    text = text.replace("  x[t] = s", "  __syncthreads();\n  x[t] = s")
    fixed = run_program(program(tmp_path, "race", text), check=True)
    assert fixed.ok and fixed.findings == [], fixed


def test_a_kernel_fault_fails_its_launch_and_is_named_at_its_line(tmp_path):
    text = """#include <cstdio>
__global__ void wild(float* x) { x[threadIdx.x + (1 << 28)] = 1; }
int main() {
  float* d;
  cudaMalloc(&d, 1024);
  wild<<<1, 32>>>(d);
  printf("after the launch: %s\\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
"""
    run = run_program(program(tmp_path, "wild", text))
    assert run.returncode == 0 and "illegal memory access" in run.stdout, run
    assert "wild.cu:2" in run.launch_failure and "x[threadIdx.x + (1 << 28)]" in run.launch_failure
    assert not run.ok


def test_a_fault_in_host_code_kills_the_program_not_this_process(tmp_path):
    text = '#include <cstdio>\nint main() {\n  printf("before\\n");\n  fflush(stdout);\n'
    text += "  int* p = nullptr;\n  *p = 1;\n}\n"
    run = run_program(program(tmp_path, "segv", text))
    assert run.stdout == "before\n" and run.returncode == -11, run
    assert "killed by SIGSEGV" in run.status() and not run.ok


def test_a_program_that_hangs_is_stopped(tmp_path):
    text = "int main() {\n  volatile int spin = 1;\n  while (spin) {\n  }\n}\n"
    run = run_program(program(tmp_path, "spin", text), timeout=1)
    assert run.timed_out and run.returncode is None and "timeout" in run.status(), run


def test_a_compile_error_names_the_cu_line(tmp_path):
    text = "#include <cstdio>\n__global__ void k(float* x) { x[0] = undeclared; }\nint main() { return 0; }\n"
    with pytest.raises(KernelBuildError) as e:
        run_program(program(tmp_path, "broken", text))
    assert "broken.cu:2" in str(e.value) and "undeclared" in str(e.value)


def test_a_missing_file_says_what_run_program_takes(tmp_path):
    with pytest.raises(FileNotFoundError, match="a .cu file with a main"):
        run_program(tmp_path / "nope.cu")


def test_the_cuda_cell_magic_runs_a_cell_as_a_program():
    cell = VECTOR_ADD.read_text()
    run = run_cell("--check 5", cell)
    assert run.check and run.args == ["5"] and run.stdout == "n = 5, wrong = 0, c[n-1] = 12\n", run
    again = run_cell("5", cell)  # the same cell: the same file, built without check mode
    assert again.path == run.path and not again.check and again.ok

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        install_cuda_magic()
        assert shell.run_cell_magic("cuda", "7", cell).stdout.startswith("n = 7, wrong = 0")
    finally:
        InteractiveShell.clear_instance()


def test_a_programs_header_with_a_kernel_and_its_launch_is_translated_and_checked_at_its_lines(tmp_path):
    """The kernel and its `<<<...>>>` live in a header the program includes (issue 33 item 1): it runs, and check
    mode names the header's off-by-one at the header's line."""
    header = (
        "#pragma once\n"
        "__global__ void fill(float* x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) x[i] = 2.0f * i;\n"
        "}\n"
        "inline void fill_all(float* x, int n) { fill<<<(n + 127) / 128, 128>>>(x, n); }\n"
    )
    main = (
        '#include <cstdio>\n#include "fill.cuh"\n'
        "int main() {\n  float* x;\n  cudaMallocManaged(&x, 1000 * sizeof(float));\n  fill_all(x, 1000);\n"
        '  cudaDeviceSynchronize();\n  printf("%g\\n", x[999]);\n  cudaFree(x);\n  return 0;\n}\n'
    )
    (tmp_path / "fill.cuh").write_text(header)
    run = run_program(program(tmp_path, "filled", main))
    assert run.ok and run.stdout == "1998\n", run
    (tmp_path / "fill.cuh").write_text(header.replace("if (i < n)", "if (i <= n)"))
    run = run_program(tmp_path / "filled.cu", check=True)
    errors = [f for f in run.findings if f.severity == "error"]
    assert errors and errors[0].kind == "global-bounds", run
    assert (errors[0].file, errors[0].line) == (str(tmp_path / "fill.cuh"), 4), errors[0]


REUSE = """#include <cstdio>
__global__ void fill(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 1.0f;
}
int main() {
  float *a = nullptr, *b = nullptr;
  cudaMalloc(&a, 4096 * sizeof(float));
  LAUNCH_A
  cudaFree(a);
  cudaMalloc(&b, 256 * sizeof(float));
  printf("same=%d\\n", a == b);
  fill<<<N_B / 256, 256>>>(b, N_B);
  cudaDeviceSynchronize();
  cudaFree(b);
  return 0;
}
"""


@pytest.mark.parametrize("launch_a", [True, False], ids=["launched", "not_launched"])
@pytest.mark.parametrize("n_b", [256, 1024])
def test_memory_freed_and_reused_by_a_smaller_allocation_is_checked_against_the_new_one(tmp_path, launch_a, n_b):
    """cudaMalloc 4096 floats, cudaFree, cudaMalloc 256 (malloc gives back the same address): a launch writing 1024
    floats into the second runs past its end, which the first's registration, left behind, would cover. cudaFree
    forgets it (not_launched: nothing else tells the two apart, a program being one op call); a registration from
    before the last launch that the new one overlaps is stale too (launched). 256 floats: nothing to report."""
    launch = "fill<<<16, 256>>>(a, 4096);\n  cudaDeviceSynchronize();" if launch_a else ""
    text = REUSE.replace("LAUNCH_A", launch).replace("N_B", str(n_b))
    run = run_program(program(tmp_path, "reuse", text), check=True)
    assert run.stdout == "same=1\n", run  # the case of the bug: the same address
    errors = [f for f in run.findings if f.severity == "error"]
    if n_b == 256:
        assert run.ok and run.findings == [], run
    else:
        assert errors and errors[0].kind == "global-bounds" and "[256]" in errors[0].message, run
        assert errors[0].line == 4 and run.returncode == 0, run
