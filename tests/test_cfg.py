"""kp.gpumodel.cfg: a SASS listing's basic blocks and edges, and the blocks' warp-level runs solved from equations
whose answers follow by hand (the entry's warps, flow, a loop's evaluations, a uniform branch's split, a block no
equation fixes: open, with its bound), its loops (Tarjan's components) and which of its branches are nvcc's test
before the two versions of a loop (kp.gpumodel.runs.hoisted_tests). Hand-written listings in nvdisasm's form; needs
neither nvcc nor a GPU. The same on nvcc's own SASS of small kernels: tests/test_sass.py and tests/test_compiled.py."""

import pytest

from kp.gpumodel.cfg import block_counts, blocks
from kp.gpumodel.sass import parse_sass

# A loop nvcc kept (the guard at the top, the test at the bottom), then an if/else on a uniform condition, then EXIT.
LISTING = """\
\t.section\t.text._Z1kPf,"ax",@progbits
\t//## File "k.cu", line 3
        /*0000*/                   ISETP.GE.AND P0, PT, R0, 0x1, PT ;
        /*0010*/               @!P0 BRA `(.L_x_1) ;
        /*0020*/                   MOV R2, RZ ;
.L_x_2:
\t//## File "k.cu", line 4
        /*0030*/                   FFMA R3, R3, R3, 1 ;
        /*0040*/                   IADD3 R2, R2, 0x1, RZ ;
\t//## File "k.cu", line 3
        /*0050*/                   ISETP.GE.AND P0, PT, R2, R0, PT ;
        /*0060*/               @!P0 BRA `(.L_x_2) ;
.L_x_1:
\t//## File "k.cu", line 6
        /*0070*/                   BSSY B0, `(.L_x_4) ;
        /*0080*/               @P1 BRA `(.L_x_3) ;
\t//## File "k.cu", line 7
        /*0090*/                   FADD R3, R3, 1 ;
        /*00a0*/                   BRA `(.L_x_5) ;
.L_x_3:
\t//## File "k.cu", line 9
        /*00b0*/                   FMUL R3, R3, 2 ;
.L_x_5:
        /*00c0*/                   BSYNC B0 ;
.L_x_4:
\t//## File "k.cu", line 11
        /*00d0*/                   STG.E [R4.64], R3 ;
        /*00e0*/                   EXIT ;
.L_x_6:
        /*00f0*/                   BRA `(.L_x_6);
"""


def graph():
    return blocks(parse_sass(LISTING))


def test_a_listing_splits_at_branch_targets_and_after_branches_into_blocks_with_their_edges():
    got = [(hex(b.instructions[0].offset), len(b.instructions), b.successors) for b in graph()]
    assert got == [
        ("0x0", 2, ((3, "jump"), (1, "fall"))),  # the loop's guard: past the loop, or into it
        ("0x20", 1, ((2, "fall"),)),  # its preheader
        ("0x30", 4, ((2, "jump"), (3, "fall"))),  # the loop, its test at the bottom
        ("0x70", 2, ((5, "jump"), (4, "fall"))),  # BSSY and the uniform branch
        ("0x90", 2, ((6, "jump"),)),  # one side, jumping to the BSYNC
        ("0xb0", 1, ((6, "fall"),)),  # the other
        ("0xc0", 1, ((7, "fall"),)),  # BSYNC
        ("0xd0", 2, ()),  # the BSSY's target: the store and EXIT (the branch to itself after it is padding)
    ]


def test_a_branch_to_a_label_the_listing_does_not_hold_leaves_the_graph_unknown():
    assert blocks(parse_sass(LISTING.replace("`(.L_x_5)", "`(.L_x_99)"))) is None


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


# nvcc's loop versioning in the form it gives involution_bwd_input_kernel's kh loop (line 4), whose first `if` (line 5)
# tests a loop-invariant condition: the test once, at line 5 (0x10), before the loop; a copy of the loop for each
# outcome (0x20-0x80 and 0x90-0xe0), each with its copy of line 5's branch (0x30, 0xa0); both rejoin at the store.
VERSIONED = """\
\t.section\t.text._Z1kPf,"ax",@progbits
\t//## File "k.cu", line 5
        /*0000*/                   ISETP.GT.AND P0, PT, R0, 0x1, PT ;
        /*0010*/                @P0 BRA `(.L_x_3) ;
\t//## File "k.cu", line 4
        /*0020*/                   MOV R2, RZ ;
.L_x_1:
\t//## File "k.cu", line 5
        /*0030*/                @P1 BRA `(.L_x_2) ;
\t//## File "k.cu", line 6
        /*0040*/                   FFMA R3, R3, R3, 1 ;
.L_x_2:
\t//## File "k.cu", line 4
        /*0050*/                   IADD3 R2, R2, 0x1, RZ ;
        /*0060*/                   ISETP.GE.AND P2, PT, R2, R4, PT ;
        /*0070*/               @!P2 BRA `(.L_x_1) ;
        /*0080*/                   BRA `(.L_x_5) ;
.L_x_3:
        /*0090*/                   MOV R2, RZ ;
.L_x_4:
\t//## File "k.cu", line 5
        /*00a0*/                @P1 BRA `(.L_x_6) ;
\t//## File "k.cu", line 6
        /*00b0*/                   FMUL R3, R3, 2 ;
.L_x_6:
\t//## File "k.cu", line 4
        /*00c0*/                   IADD3 R2, R2, 0x1, RZ ;
        /*00d0*/                   ISETP.GE.AND P2, PT, R2, R4, PT ;
        /*00e0*/               @!P2 BRA `(.L_x_4) ;
.L_x_5:
\t//## File "k.cu", line 8
        /*00f0*/                   STG.E [R6.64], R3 ;
        /*0100*/                   EXIT ;
"""
# The same blocks, the test's two edges led elsewhere. UNROLLED_COPIES: the first loop runs on into the second (an
# unrolled body, then its remainder, as nvcc lays out mul_add.cu:42's copies): the test either enters the unrolled
# loop or skips to the remainder, which both edges reach. PEELED: the test jumps past both loops to the store (an
# `if (y < 0 || y >= s.H) continue;` nvcc peeled before involution_fwd_kernel's kh loop, involution.cu:47): one edge
# leads into a loop, the other into none.
UNROLLED_COPIES = VERSIONED.replace(
    "/*0080*/                   BRA `(.L_x_5) ;", "/*0080*/                   MOV R2, RZ ;"
)
PEELED = VERSIONED.replace("@P0 BRA `(.L_x_3)", "@P0 BRA `(.L_x_5)")


def hoisted(listing):
    """runs.hoisted_tests on a listing above: line 5's branches uniform and evaluated 40 times by 4 warps (more than
    once per warp: in a loop); line 4 the loops' latches."""
    from kp.gpumodel.counts import Branch
    from kp.gpumodel.runs import hoisted_tests

    g = blocks(parse_sass(listing))
    latches = {("k.cu", 4): [b for b in g if any(kind == "jump" and s <= b.index for s, kind in b.successors)]}
    branch = {("k.cu", 5): Branch("k", "k.cu", 5, executions=40, lanes=40 * 32, divergent=0)}
    return {hex(g[k].instructions[-1].offset) for k in hoisted_tests(g, branch, latches, {0x30, 0xA0}, 4)}


def test_nvccs_test_before_the_two_versions_of_a_loop_is_a_hoisted_test():
    got = hoisted(VERSIONED)
    assert got == {"0x10"}


@pytest.mark.parametrize("listing", [UNROLLED_COPIES, PEELED], ids=["unrolled copies", "peeled guard"])
def test_a_test_whose_edges_do_not_lead_into_two_different_loops_each_its_own_is_no_hoisted_test(listing):
    """Before, any branch outside the loops at a line with a uniform copy inside one (same call site) was taken: both
    of these were (mul_add.cu:42's unrolled copies, involution.cu:47)."""
    got = hoisted(listing)
    assert got == set()


def test_the_loops_of_a_listing_are_its_strongly_connected_components():
    """Tarjan's components on VERSIONED: each loop (0x30-0x70, 0xa0-0xe0) one component, every other block its own;
    cyclic() (kp.gpumodel.runs) holds the loops' blocks, and a block that jumps to itself (LISTING's loop) is on a
    cycle too."""
    from kp.gpumodel.cfg import components
    from kp.gpumodel.runs import cyclic

    g = blocks(parse_sass(VERSIONED))
    first = {b.index: hex(b.instructions[0].offset) for b in g}
    component = components(g)
    loops = {}
    for k, c in component.items():
        loops.setdefault(c, set()).add(first[k])
    assert sorted(sorted(v) for v in loops.values() if len(v) > 1) == [
        ["0x30", "0x40", "0x50"],
        ["0xa0", "0xb0", "0xc0"],
    ]
    assert {first[k] for k in cyclic(g)} == {"0x30", "0x40", "0x50", "0xa0", "0xb0", "0xc0"}
    assert cyclic(graph()) == {2}  # LISTING's loop: one block jumping to itself
