"""kp.pictures on real profiles of tests/cuda_cpu/patterns.cu: who touched which element (the numbers the picture
draws, and the drawn image itself), and one shared line's lanes against banks, padded and unpadded."""

import matplotlib
import numpy as np
import pytest
import torch

import helpers
import kp.files
from kp.gpumodel.profile import profile

matplotlib.use("Agg")
PATTERNS = kp.files.ROOT / "tests" / "cuda_cpu" / "patterns.cu"
NAMES = ["strided", "strided64", "vector4", "even_lanes", "shared", "transpose", "histogram"]


@pytest.fixture(scope="module")
def k():
    return helpers.load_kernel(PATTERNS, target="cpu", check=True, quiet=True)


def test_each_element_is_coloured_by_the_thread_warp_and_block_that_wrote_it(k):
    x, out = torch.arange(128.0), torch.zeros(40)  # 2 blocks of 32 threads; the second has 8 active
    p = profile(k.run, NAMES.index("strided"), x, out, 2)
    expected_thread = np.r_[np.arange(32), np.arange(8)]
    by_thread = kp_map(p, out, "thread")
    assert by_thread.shape == (40,) and (by_thread == expected_thread).all()
    assert (kp_map(p, out, "block") == np.r_[np.zeros(32), np.ones(8)]).all()
    assert (kp_map(p, out, "warp") == np.r_[np.zeros(32), np.ones(8)]).all()  # one warp per block of 32
    # x is read at every other element: thread t of block b read x[2 * (32b + t)]; the others stay untouched (-1)
    read = kp_map(p, x, "thread", kind="load")
    assert (read[0:80:2] == expected_thread).all() and (read[1:80:2] == -1).all() and (read[80:] == -1).all()
    figure = p.picture(out, by="thread")
    drawn = figure.axes[0].images[0].get_array()
    assert drawn.shape == (1, 40) and (np.asarray(drawn[0]) == expected_thread).all()
    assert "out: the thread that touched each element last (a model)" == figure.axes[0].get_title()
    # An array drawn by name in a shape of its caller's (an op's output, which the profile does not hand back).
    figure = p.picture("out", by="block", shape=(5, 8))
    drawn = figure.axes[0].images[0].get_array()
    assert drawn.shape == (5, 8) and (np.asarray(drawn).ravel() == np.r_[np.zeros(32), np.ones(8)]).all()
    with pytest.raises(ValueError, match=r"shape \(3, 8\) has 24 elements; 'out' has 40"):
        p.picture("out", shape=(3, 8))


def kp_map(p, what, by, kind=None):
    from kp.pictures import touch_map

    return touch_map(p, what, by, kind)


def test_a_shared_array_keeps_its_shape_and_an_unknown_name_is_refused(k):
    p = profile(k.run, NAMES.index("transpose"), torch.randn(1024), torch.zeros(1024), 0)
    tile = kp_map(p, "tile", "thread", kind="store")
    assert tile.shape == (32, 32) and (tile == np.arange(1024).reshape(32, 32)).all()  # tile[r][c] by thread (c, r)
    with pytest.raises(ValueError, match="saw no access to 'nope'"):
        kp_map(p, "nope", "thread")


@pytest.mark.parametrize("padded, ways", [(0, 32), (1, 1)])
def test_the_lanes_against_the_banks_show_the_conflict(k, padded, ways):
    p = profile(k.run, NAMES.index("transpose"), torch.randn(1024), torch.zeros(1024), padded)
    line = next(n for n, text in enumerate(PATTERNS.read_text().splitlines(), 1) if "tile[c][r]" in text)
    from kp.pictures import bank_map

    grid = bank_map(p, line)
    assert (grid > 0).sum() == 32  # each lane reads one word, in one bank
    busiest = max(len(set(grid[:, b]) - {0}) for b in range(32))
    assert busiest == ways
    figure = p.banks(line)
    assert f"{ways}-way" in figure.axes[0].get_title()
