"""kp.gpumodel.local: local memory as nvcc compiled it, on tests/cuda_cpu/terms.cu's local_array, counted by hand from
its SASS for sm_90: a per-thread float[64] indexed by data lives on the stack (ptxas: 256 bytes per thread), filled
by 16 STL.128 (each 32 lanes x 16 bytes = 4 lines of 128 bytes) and read by one LDL (32 x 4 bytes: 1 line), so a
warp moves 16 x 4 + 1 = 65 lines. Compiles with nvcc; needs no GPU."""

import dataclasses
import warnings
from types import SimpleNamespace

import pytest
import torch
from test_sass import needs_sass

import helpers
import kp.files
from kp.gpumodel.gputime import estimate_launch
from kp.gpumodel.local import local_lines, local_work
from kp.gpumodel.profile import profile
from kp.gpumodel.sass import Instruction

TERMS = kp.files.ROOT / "tests" / "cuda_cpu" / "terms.cu"


def instruction(opcode, line, space, width, kind="load"):
    return Instruction("k", 0, "k.cu", line, opcode, opcode, "memory", space, kind, width)


def test_a_warps_local_request_is_its_lanes_bytes_in_128_byte_lines():
    """Interleaved per lane: 32 lanes x 16 bytes = 4 lines, x 8 = 2, x 4 (or less) = 1. Line 3 also loads from global,
    so its runs are exact passes through all of it: every local instruction is charged per run. Line 4 has local
    accesses only (a loop like `oi[c] *= r`, its runs the source's iterations, which nvcc unrolled into copies): per
    run one access of each kind at its narrowest, a 4-byte load and a 4-byte store: 2 lines."""
    sass = [instruction("STL.128", 3, "local", 16, "store"), instruction("LDL.64", 3, "local", 8),
            instruction("LDG.E", 3, "global", 4), instruction("LDL.128", 4, "local", 16),
            instruction("LDL", 4, "local", 4), instruction("STL.128", 4, "local", 16, "store"),
            instruction("STL", 4, "local", 4, "store"), instruction("LDL.U8", 5, "local", 1)]  # fmt: skip
    runs = {("k.cu", 3): 10.0, ("k.cu", 4): 100.0, ("k.cu", 5): 2.0}
    assert local_lines(sass, runs) == 10 * (4 + 2) + 100 * (1 + 1) + 2 * 1
    assert local_lines(sass, {}) == 0  # a line that never ran moves nothing


def at(offset, opcode, line, space, width, kind="load"):
    return Instruction("k", offset, "k.cu", line, opcode, opcode, "memory", space, kind, width)


def test_where_the_trace_fixes_a_local_instructions_basic_block_it_is_charged_that_blocks_runs():
    """Line 4 has local accesses only, 103 runs of its source loop (4-byte accesses), which nvcc unrolled by 4: the
    body's copies (LDL.128 and STL.128 at 0x40 and 0x60, 25 runs of their block) and the remainder's LDL (0x50: 3 runs)
    are in blocks the trace fixes, charged those runs: 25 x 4 + 3 x 1 + 25 x 4 = 203 lines. The remainder's STL (0x70)
    is in an open block whose bound is 7: it falls back to the per-line rule, one store at its narrowest per run the
    known stores did not move: 103 - 25 x 16 / 4 = 3 runs, at most its bound: 3 x 1. Line 3 (with a global load: runs
    exact) has its STL.128 known (10 runs: 40 lines) and its LDL.64 open, bound 4: min(10, 4) x 2."""
    sass = [at(0x00, "STL.128", 3, "local", 16, "store"), at(0x10, "LDL.64", 3, "local", 8),
            at(0x20, "LDG.E", 3, "global", 4), at(0x40, "LDL.128", 4, "local", 16), at(0x50, "LDL", 4, "local", 4),
            at(0x60, "STL.128", 4, "local", 16, "store"), at(0x70, "STL", 4, "local", 4, "store")]  # fmt: skip
    runs = {("k.cu", 3): 10.0, ("k.cu", 4): 103.0}
    blocks = {0x00: (10.0, 10.0), 0x10: (None, 4.0), 0x40: (25.0, 25.0), 0x50: (3.0, 3.0), 0x60: (25.0, 25.0),
              0x70: (None, 7.0)}  # fmt: skip
    assert local_lines(sass, runs, blocks) == 10 * 4 + 4 * 2 + (25 * 4 + 3 * 1 + 25 * 4) + 3 * 1
    assert local_lines(sass, runs) == 10 * (4 + 2) + 103 * (1 + 1)  # no block known: the per-line rule, as before
    assert local_lines(sass, {}, blocks) == 10 * 4 + 25 * 4 + 3 + 25 * 4  # the known blocks need no line's runs
    blocks[0x60] = (20.0, 25.0)  # had the body's stores run 20 times, the open remainder's 23 runs meet its bound
    assert local_lines(sass, runs, blocks) == 10 * 4 + 4 * 2 + (25 * 4 + 3 * 1 + 20 * 4) + 7 * 1


def test_a_launchs_local_lines_take_its_kernels_basic_block_runs():
    """local_work hands the kernel's block_runs to local_lines: the loop above, in one launch of 2 of the kernel's 4
    blocks: half of its 203 + 3 lines (no stack: no ptxas row for a file that is not there)."""
    sass = [at(0x40, "LDL.128", 4, "local", 16), at(0x50, "LDL", 4, "local", 4),
            at(0x60, "STL.128", 4, "local", 16, "store"), at(0x70, "STL", 4, "local", 4, "store")]  # fmt: skip
    blocks = {0x40: (25.0, 25.0), 0x50: (3.0, 3.0), 0x60: (25.0, 25.0), 0x70: (None, 7.0)}
    launch = SimpleNamespace(kernel="k", blocks=2, file="/nonexistent/k.cu")
    counts = SimpleNamespace(
        kernel_sass=lambda kernel, gpu: sass,
        compiled=lambda gpu: ([], [SimpleNamespace(kernel="k", file="k.cu", line=4, executions=103.0)], ""),
        block_runs=lambda kernel, gpu: blocks,
        launches=[launch, SimpleNamespace(kernel="k", blocks=2)],
        ctype="float",
    )
    assert local_work(counts, launch) == {"local_lines": (203 + 3) / 2, "local_bytes_per_thread": 0}


@needs_sass
def test_a_per_thread_array_indexed_by_data_is_local_traffic_and_stack():
    k = helpers.load_kernel(TERMS, target="cpu", check=True, quiet=True)
    n = 1024  # 4 blocks of 256: 32 warps
    x, idx, out = torch.arange(64.0), torch.arange(n, dtype=torch.int32) * 7, torch.zeros(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = profile(k.run, 0, x, idx, out)
    assert torch.equal(out, x[(idx & 63).long()] + torch.arange(n))
    [work] = p.work()
    assert (work.local_lines, work.local_bytes_per_thread) == (32 * 65, 256)
    # 4 blocks: the busiest SM has 1, whose 8 warps' 65 local lines add 520 clocks at 1.98 GHz to its L1 pipe (beside
    # the global lines: 64 loads of x, one of idx, one store of out per warp: 66). 1024 x 256 bytes fit its L1: no L2.
    e, without = (estimate_launch("H100", w) for w in (work, dataclasses.replace(work, local_lines=0)))
    assert e.l1_s - without.l1_s == pytest.approx(8 * 65 / 1.98e9)
    assert e.l1_s == pytest.approx(8 * (65 + 66) / 1.98e9) and e.l2_s == without.l2_s
