"""kp.gpumodel.cfg: a SASS listing's basic blocks and edges, its loops (Tarjan's components) and which of its branches
are nvcc's test before the two versions of a loop (kp.gpumodel.cfg.hoisted_tests). Hand-written listings in
nvdisasm's form; needs neither nvcc nor a GPU. The blocks' runs solved on these listings: tests/test_flow.py; the same
on nvcc's own SASS of small kernels: tests/test_sass.py and tests/test_compiled.py."""

import pytest

from kp.gpumodel.cfg import blocks
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
    """cfg.hoisted_tests on a listing above: line 5's branches uniform and evaluated 40 times by 4 warps (more than
    once per warp: in a loop); line 4 the loops' latches."""
    from kp.gpumodel.cfg import hoisted_tests
    from kp.gpumodel.counts import Branch

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
    cyclic() (kp.gpumodel.cfg) holds the loops' blocks, and a block that jumps to itself (LISTING's loop) is on a
    cycle too."""
    from kp.gpumodel.cfg import components, cyclic

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
