"""kp.puzzlefiles: what runs a puzzle's kernel, made from its spec (no build here; tests/test_puzzle.py builds and
runs them): the launcher launches the kernel as the puzzle says, the binding checks each tensor by name and dtype and
registers one op `run`, and the copy of the learner's file keeps its name and line numbers."""

from kp.puzzle import puzzles
from kp.puzzlefiles import binding, build_files, launcher

BY_NAME = {p.name: p for p in puzzles()}


def test_the_launcher_launches_the_kernel_on_the_puzzles_grid_and_block():
    text = launcher(BY_NAME["histogram"])
    assert (
        "void kp_puzzle_launch(const int* x, int* counts, int size, int bins, int gx, int gy, int bx, int by)" in text
    )
    assert "histogram<<<dim3(gx, gy), dim3(bx, by)>>>(x, counts, size, bins);" in text and "KP_CHECK_LAUNCH();" in text


def test_the_binding_checks_each_tensor_by_name_and_writes_only_out():
    text = binding(BY_NAME["dot"])
    assert 'kp::check_tensor("dot", "a", a, kp::ScalarType::Float);' in text
    assert 'kp::data<const float>(a, "a")' in text and 'kp::data<float>(out, "out")' in text
    assert 'm.def("run(Tensor a, Tensor b, Tensor(a!) out, int size, int gx, int gy, int bx, int by) -> ()"' in text


def test_the_copy_keeps_the_learners_file_name_and_line_numbers(tmp_path):
    source = tmp_path / "01_map.cu"
    source.write_text('// a comment\n#include "kp.cuh"\n__global__ void map(const float* a, float* out, int size) {}\n')
    copy = build_files(BY_NAME["map"], source).read_text().splitlines()
    assert copy[0] == f'#line 2 "{source}"' and copy[2].startswith("__global__ void map(")  # line 3 of both
    assert '#line 1 "kp.puzzle: the launcher of map"' in copy


def test_a_puzzle_of_several_kernels_launches_each_of_its_host_launches_in_order():
    text = launcher(BY_NAME["scan"])
    launches = ["scan_blocks<<<gx, bx>>>(a, sums, out, size);", "scan_sums<<<1, bx>>>(sums, gx);"]
    launches.append("add_sums<<<gx, bx>>>(sums, out, size);")
    positions = [text.index(launch) for launch in launches]
    assert positions == sorted(positions) and text.count("KP_CHECK_LAUNCH();") == 3, text
    assert "scan<<<" not in text
