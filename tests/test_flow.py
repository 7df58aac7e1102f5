"""kp.gpumodel.flow: the warp-level runs of a listing's basic blocks solved from equations whose answers follow by hand
(the entry's warps, flow, a loop's evaluations, a uniform branch's split, a block no equation fixes: open, with its
bound), on tests/test_cfg.py's listing (a loop nvcc kept, then an if/else on a uniform condition, then EXIT) and one
whose block ends in a predicated instruction. Needs neither nvcc nor a GPU."""

import pytest
from test_cfg import graph

from kp.gpumodel.cfg import blocks
from kp.gpumodel.flow import block_counts
from kp.gpumodel.sass import parse_sass


def test_runs_follow_from_the_entry_the_loops_evaluations_and_the_branchs_split():
    """4 warps; the loop's body ran 40 times (the loop line's evaluations that continued); the uniform branch at
    0x80 jumped for 1 warp and fell through for 3. By hand: guard 4, the loop 40, branch 4, sides 3 and 1, BSYNC 4
    (its BSSY's block), store 4. The preheader is open (the trace does not say how many warps entered the loop), at
    most the guard's 4."""
    counts, bounds = block_counts(
        graph(), 4, [], loops=[({0x30: 1.0}, 40.0)], uniform={0x80}, splits=[([0x80], (1, 3))]
    )
    assert counts == {0: 4, 1: None, 2: 40, 3: 4, 4: 3, 5: 1, 6: 4, 7: 4}
    assert bounds[1] == 4


def test_a_split_is_read_the_other_way_round_where_the_other_equations_say_so():
    """The store's block ran 4 (a memory equation) and the side at 0x90 holds a request counted 3 times: the split
    (3 jumped, 1 fell) disagrees with it, (1, 3) does not, and is taken."""
    equations = [({0x90: 1.0}, 3.0)]
    counts, _ = block_counts(graph(), 4, equations, uniform={0x80}, splits=[([0x80], (3, 1))])
    assert (counts[4], counts[5]) == (3, 1)


def test_the_side_a_uniform_branch_never_took_ran_none():
    """The branch always fell through (a uniform split of (0, 4)): the side at 0xb0 ran none, fixed by its edge."""
    counts, _ = block_counts(graph(), 4, [], uniform={0x80}, splits=[([0x80], (0, 4))])
    assert (counts[4], counts[5]) == (4, 0)


@pytest.mark.parametrize("value", [0.0, 7.0])
def test_an_equation_on_a_block_fixes_it_and_what_flow_then_follows(value):
    counts, _ = block_counts(graph(), 4, [({0x30: 1.0}, value)])
    assert counts[2] == value and counts[0] == 4


def test_a_trial_that_disagrees_with_the_equations_is_left_out_and_one_that_agrees_is_kept():
    """The loop's body ran 40 (an equation); a trial saying 7 disagrees and is left out; one giving the preheader's
    runs (4: what its loop's trip counts say) agrees, and fixes it."""
    counts, _ = block_counts(graph(), 4, [({0x30: 1.0}, 40.0)], trials=[[({0x30: 1.0}, 7.0)]])
    assert (counts[1], counts[2]) == (None, 40)
    counts, _ = block_counts(graph(), 4, [({0x30: 1.0}, 40.0)], trials=[[({0x30: 1.0}, 7.0)], [({0x20: 1.0}, 4.0)]])
    assert (counts[1], counts[2]) == (4, 40)


def test_an_edge_term_stands_for_what_that_edge_carried():
    """The guard's jump (past the loop) carried 1 of the 4 warps: the preheader ran 3."""
    counts, _ = block_counts(graph(), 4, [({(0x10, "jump"): 1.0}, 1.0)], uniform={0x10})
    assert counts[1] == 3


def test_a_split_that_fits_neither_way_is_left_out():
    """The side at 0x90 holds a request counted 3 times and the store 4: a split of (2, 5) fits neither way (its sides
    sum to 7 where 4 warps ran the branch) and is left out: the sides stay 3 and 1, not a compromise between them."""
    equations = [({0x90: 1.0}, 3.0), ({0xD0: 1.0}, 4.0)]
    counts, _ = block_counts(graph(), 4, equations, uniform={0x80}, splits=[([0x80], (2, 5))])
    assert (counts[4], counts[5]) == (3, 1)


PREDICATED = """\
\t.section\t.text._Z1kPf,"ax",@progbits
\t//## File "k.cu", line 3
        /*0000*/                   ISETP.NE.AND P1, PT, R0, RZ, PT ;
        /*0010*/               @!P1 BRA `(.L_x_1) ;
        /*0020*/                   MOV R2, RZ ;
        /*0030*/               @!P1 LOP3.LUT R2, RZ, R3, RZ, 0x33, !PT ;
.L_x_1:
\t//## File "k.cu", line 4
        /*0040*/                   STG.E [R4.64], R2 ;
        /*0050*/                   EXIT ;
"""


def test_a_block_that_ends_in_a_predicated_instruction_sends_on_all_it_ran():
    """The side at 0x20 ends in `@!P1 LOP3` before a label (nvcc's 32-bit division does): it is no branch, so all
    that ran it runs on. 4 warps, the uniform branch sent 1 down that side: the store's block ran 3 + 1."""
    counts, _ = block_counts(blocks(parse_sass(PREDICATED)), 4, [({0x20: 1.0}, 1.0)], uniform={0x10})
    assert counts == {0: 4, 1: 1, 2: 4}


def test_a_one_way_branch_sends_all_its_block_ran_down_the_edge_the_equations_agree_with():
    """The branch at 0x80 is not uniform (its edges free); one side (0x90) ran 4, all its block ran. As one_way (nvcc's
    test of a loop-invariant condition before the two versions of a loop), the other side's edge carried none: 0xb0
    is fixed at 0; without it, 0xb0 is open."""
    counts, _ = block_counts(graph(), 4, [({0x90: 1.0}, 4.0)])
    assert counts[5] is None
    counts, _ = block_counts(graph(), 4, [({0x90: 1.0}, 4.0)], one_way=[0x80])
    assert (counts[4], counts[5]) == (4, 0)


def test_a_block_that_ran_none_sent_none_down_its_edges():
    """The loop's body (0x30) ran none: its back edge carried none, so its preheader (0x20), whose runs are the body's
    less its back edge, ran none too (before, open: the back edge was free to carry minus what the preheader ran)."""
    counts, _ = block_counts(graph(), 4, [({0x30: 1.0}, 0.0)])
    assert (counts[0], counts[1], counts[2]) == (4, 0, 0)


def test_a_split_whose_runs_no_warp_could_make_is_read_the_other_way_round():
    """The loop's body ran 40 (an equation), and the guard's split says (4 jumped past the loop, none fell into it):
    the residuals fit it (the body's 40 go round its back edge), but no warp could have entered the loop. Read the
    other way round, (0, 4), all 4 warps entered it: the preheader 4. The residuals alone took the first reading."""
    counts, _ = block_counts(graph(), 4, [({0x30: 1.0}, 40.0)], uniform={0x10}, splits=[([0x10], (4, 0))])
    assert (counts[1], counts[2], counts[3]) == (4, 40, 4)
