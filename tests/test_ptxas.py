"""kp.gpumodel.ptxas: ptxas's resource report (registers, shared memory, spills per kernel) parsed from nvcc's output,
compiled for the machine's GPU and cached, and its errors."""

import pytest

import helpers
import kp.files
import kp.gpumodel.ptxas
import kp.toolchain

PTXAS_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z22linear_bwd_bias_kernelIdEvPKT_PS0_ll' for 'sm_90'
ptxas info    : Function properties for _Z22linear_bwd_bias_kernelIdEvPKT_PS0_ll
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 2048 bytes smem
ptxas info    : Compile time = 41.703 ms
ptxas info    : Compiling entry function '_Z15add2_fwd_kernelIfEvPKT_S2_PS0_l' for 'sm_90'
ptxas info    : Function properties for _Z15add2_fwd_kernelIfEvPKT_S2_PS0_l
    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 380 bytes cmem[0]
"""


def test_parse_ptxas_reads_registers_shared_memory_and_spills():
    rows = kp.gpumodel.ptxas.parse_ptxas(PTXAS_LOG)
    assert [r["registers"] for r in rows] == [32, 255]
    assert [r["shared memory (bytes)"] for r in rows] == [2048, 0]
    assert (rows[1]["stack (bytes)"], rows[1]["spill stores (bytes)"], rows[1]["spill loads (bytes)"]) == (24, 8, 12)
    assert kp.gpumodel.ptxas.demangle([r["kernel"] for r in rows]) == [
        "linear_bwd_bias_kernel<double>",
        "add2_fwd_kernel<float>",
    ]


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None, reason="no CUDA toolkit here")
def test_kernel_resources_compiles_with_nvcc_and_caches(kernel_copy):
    cu = kernel_copy("add2")
    table = kp.gpumodel.ptxas.kernel_resources(cu)
    assert {r["kernel"] for r in table} == {
        f"add2_fwd_kernel{v}<{t}>" for v in ("", "_v2") for t in ("float", "double")
    }
    arch = kp.gpumodel.ptxas.cuda_arch()  # sm_90 without a GPU; the GPU's own with one
    assert all(r["arch"] == arch for r in table), table.markdown()
    assert all(0 < r["registers"] <= 255 for r in table), table.markdown()
    assert f"| add2_fwd_kernel<float> | {arch} |" in table.markdown()
    cu.write_text(cu.read_text().replace("c[i] = a[i] + b[i];", "c[i] = a[i] + b[i];;"))
    again = kp.gpumodel.ptxas.kernel_resources(cu)  # an edit compiles again; the result is the same kernel
    assert [r["kernel"] for r in again] == [r["kernel"] for r in table]


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None, reason="no CUDA toolkit here")
def test_kernel_resources_reports_a_compile_error_at_its_line(kernel_copy):
    cu = kernel_copy("add2")
    cu.write_text(cu.read_text().replace("c[i] = a[i] + b[i];", "c[i] = a[i] + bb[i];"))
    with pytest.raises(helpers.KernelBuildError, match=r"add2.cu:\d+: error: identifier \"bb\" is undefined"):
        kp.gpumodel.ptxas.kernel_resources(cu)


def test_kernel_resources_without_nvcc_says_how_to_fix_it(monkeypatch):
    monkeypatch.setenv("CUDA_HOME", "/nonexistent")
    with pytest.raises(
        helpers.ToolchainError,
        match="^nvcc was not found: CUDA_HOME: CUDA_HOME='/nonexistent' is not a CUDA toolkit root"
        ".*\n  fix: .*export CUDA_HOME=",
    ):
        kp.gpumodel.ptxas.kernel_resources("add2")


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None, reason="no CUDA toolkit here")
def test_the_resources_table_tells_each_instantiation_apart_and_names_its_file():
    table = kp.gpumodel.ptxas.resources_table(["add2", "linear"])
    kernels = [r["kernel"] for r in table]
    assert "`add2_fwd_kernel<float>`" in kernels and "`add2_fwd_kernel<double>`" in kernels  # code: <float> shows
    assert {r["kernel file"] for r in table} == {"kernels/add2.cu", "kernels/linear.cu"}
    assert table.title == f"ptxas, {kp.gpumodel.ptxas.cuda_arch()}"
    assert all(not kp.gpumodel.ptxas.spills(r) for r in table), table.markdown()
    assert kp.gpumodel.ptxas.spills({"spills (bytes, stores / loads)": "8 / 12"})


def test_a_files_constants_are_read_and_worked_out():
    text = (
        "constexpr int V5_BM = 64, V5_BN = 128, V5_TM = 4;\n"
        "constexpr int V5_THREADS = V5_BM / V5_TM * (V5_BN / 8);\n"
        "static const int kTile = 32;\n"
        "#define BK 8\n"
    )
    assert kp.gpumodel.ptxas.file_constants(text) == {"BK": 8, "V5_BM": 64, "V5_BN": 128, "V5_TM": 4, "V5_THREADS": 256,
                                             "kTile": 32}  # fmt: skip


def test_a_launch_spelled_with_constants_is_the_instantiation_they_name():
    names = ["tile<double, 64>", "tile<float, 64>", "tile<float, 128>", "other<float>"]
    constants = {"BM": 128}
    assert kp.gpumodel.ptxas.instantiation(names, "tile<T, BM>", "float", constants) == "tile<float, 128>"
    assert kp.gpumodel.ptxas.instantiation(names, "tile<T, 64>", "double", constants) == "tile<double, 64>"
    assert kp.gpumodel.ptxas.instantiation(names, "tile<float, 128>") == "tile<float, 128>"
    assert (
        kp.gpumodel.ptxas.instantiation(names, "tile<T, N>", "float", constants) == "tile<float, 64>"
    )  # N unknown: typed
    assert kp.gpumodel.ptxas.instantiation(names, "missing<T>", "float") is None


TILES = """
template <int BM>
__global__ void tile(float* out) {
  __shared__ float s[BM][BM];
  s[threadIdx.y][threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x % BM][threadIdx.y % BM];
}
constexpr int BIG = 64;
void launch(float* out, int which) {
  if (which) tile<BIG><<<1, dim3(32, 32)>>>(out);
  else tile<16><<<1, dim3(16, 16)>>>(out);
}
"""


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None, reason="no CUDA toolkit here")
def test_a_launch_gets_the_ptxas_row_of_its_instantiation_and_of_the_named_gpus_arch(kernel_copy):
    cu = kernel_copy("add2")
    cu.write_text(cu.read_text() + TILES)
    # The first instantiation (tile<16>, 1 KiB of shared memory) used to stand for every launch of tile
    assert kp.gpumodel.ptxas.launch_resources(cu, "tile<BIG>", "float", "sm_90")[1] == 64 * 64 * 4
    assert kp.gpumodel.ptxas.launch_resources(cu, "tile<16>", "float", "sm_90")[1] == 16 * 16 * 4
    rows = kp.gpumodel.ptxas.kernel_resources(cu, "sm_75")
    assert {r["arch"] for r in rows} == {"sm_75"}
    assert {r["mangled"] for r in rows if r["kernel"] == "tile<64>"} == {"_Z4tileILi64EEvPf"}


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None, reason="no CUDA toolkit here")
def test_registers_are_the_named_archs():
    ladder = kp.files.ROOT / "kernels" / "linear_ladder.cu"
    registers = {
        arch: {r["kernel"]: r["registers"] for r in kp.gpumodel.ptxas.kernel_resources(ladder, arch)}
        for arch in ("sm_75", "sm_90")
    }
    # 96 and 72 with nvcc 13.0: the model used sm_90's figure for every GPU
    assert registers["sm_75"]["linear_v5<double>"] != registers["sm_90"]["linear_v5<double>"]
    for arch in registers:
        got = kp.gpumodel.ptxas.launch_resources("kernels/linear_ladder.cu", "linear_v5<T>", "double", arch)[0]
        assert got == registers[arch]["linear_v5<double>"]
