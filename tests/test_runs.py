"""kp.gpumodel.runs: the equations for a kernel's basic blocks' runs, from the trace's records (Line, Branch), on
tests/test_cfg.py's hand-written listing (a loop nvcc kept, a uniform if/else, a store); needs neither nvcc nor a GPU.
On nvcc's own SASS of small kernels: tests/test_sass.py and tests/test_compiled.py."""

from test_cfg import LISTING

from kp.gpumodel.counts import Branch, Line
from kp.gpumodel.runs import block_runs
from kp.gpumodel.sass import parse_sass

SOURCE = {"k.cu": ["", "", "for (int j = 0; j < n; ++j)", "  a = a * a + 1;", "", "if (c)", "", "", "", "", "y = a;"]}


def runs_of(branches, warps=4):
    """{first offset of a block: its runs} of LISTING, with the store's line (11) run once per warp."""
    store = Line("k", "k.cu", 11, "global", "store", warps, warps, warps, 128 * warps, 32 * warps)
    found = parse_sass(LISTING)
    at = block_runs(found, [store], branches, warps, SOURCE.get)
    return {hex(o): at[o][0] for o in (0x0, 0x20, 0x30, 0x70, 0x90, 0xB0, 0xC0, 0xD0)}


def test_a_kept_loop_runs_its_body_once_per_evaluation_that_continued_and_a_uniform_branch_splits_as_it_went():
    """4 warps, each entering the loop once with 10 trips (11 evaluations of line 3, the last one none), and line 6's
    condition held for 1 warp (an `if` falls into its body: line 7's block at 0x90; the 3 others jump to 0xb0).
    By hand: the loop's body 40; the guard, BSSY, BSYNC and store 4 each; the preheader
    open (which warps entered the loop, the trace's totals do not say)."""
    got = runs_of([Branch("k", "k.cu", 3, 44, 44 * 32, 0, 0, 4), Branch("k", "k.cu", 6, 4, 128, 0, 0, 3)])
    assert got == {"0x0": 4, "0x20": None, "0x30": 40, "0x70": 4, "0x90": 1, "0xb0": 3, "0xc0": 4, "0xd0": 4}
