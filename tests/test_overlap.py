"""kp.gpumodel.overlap: the memory and SM sides of a launch combined by the blocks resident per SM, max(M + C, B x C)
per iteration, worked by hand on round numbers (kp.gpumodel.gputime's tests check it on launches)."""

import pytest

from kp.gpumodel.overlap import combine


def test_one_block_per_sm_adds_the_phases():
    # B = 1, 10 iterations of M = 3, C = 1: the chain is 10 x (3 + 1) = 40; the SM side alone is 10
    assert combine(memory_s=30, sm_s=10, chain_sm_s=10, phased=True) == (40, True)


def test_two_blocks_with_memory_longer_than_compute_hide_only_the_other_blocks_compute():
    # B = 2, each 10 iterations of M = 3, C = 1: max(M + C, 2C) = 4 per iteration, 40; the SM side is 20, and one
    # block's chain runs its own compute only (10)
    assert combine(memory_s=30, sm_s=20, chain_sm_s=10, phased=True) == (40, True)


def test_many_blocks_tend_to_the_max_of_the_terms():
    # B = 8, M = 3, C = 1: 8C = 8 > M + C = 4 per iteration: the SM bounds, 80 for 10 iterations
    assert combine(memory_s=30, sm_s=80, chain_sm_s=10, phased=True) == (80, False)
    # B = 100, C = 0.01: the chain 30.1 is the max of the terms (30) and a third of a percent
    seconds, chained = combine(memory_s=30, sm_s=10, chain_sm_s=0.1, phased=True)
    assert chained and seconds == pytest.approx(30.1)


def test_without_barriers_or_memory_the_terms_overlap():
    assert combine(memory_s=30, sm_s=10, chain_sm_s=10, phased=False) == (30, False)
    assert combine(memory_s=0, sm_s=10, chain_sm_s=10, phased=True) == (10, False)
