"""kp.gpumodel.charges: a launch's totals, counted by the trace as the source wrote the accesses, scaled per kernel to
what the SASS requests (the compiled lines over the source lines), on records made by hand: a float4 read member by
member (four 4-byte requests of 16 sectors per warp in the trace, one LDG.E.128 of 16 sectors in SASS), written
member by member, and a kernel without SASS; the accesses nvcc re-reads with narrower instructions (reloaded). The
same on kernels nvcc compiles: tests/test_sass.py, and siboehm's kernel 5 in tests/test_published_gemm.py."""

import collections
import dataclasses

from kp.gpumodel.cfg import block_of
from kp.gpumodel.charges import charged, compiled_shares, in_flight_sites, re_reads, reloaded
from kp.gpumodel.counts import Launch, Line

# One warp's float4 read member by member: 4 requests x 16 sectors (ideal 16 for its 512 bytes), 128 lanes
MEMBERS = Line("k", "k.cu", 3, "global", "load", 4, 64, 16, 512, 128)
AS_LDG128 = dataclasses.replace(MEMBERS, requests=1, units=16, lanes=32, sass=("LDG.E.128",), basis="SASS sm_90")
STORE = Line("k", "k.cu", 4, "global", "store", 1, 4, 4, 128, 32)  # one coalesced float per lane, as nvcc stores it
SHARED = Line("k", "k.cu", 5, "shared", "load", 4, 16, 4, 512, 128)  # four scalar reads of 4 floats per lane
AS_LDS128 = dataclasses.replace(SHARED, requests=1, units=4, lanes=32, sass=("LDS.128",), basis="SASS sm_90")
OTHER = dataclasses.replace(MEMBERS, kernel="other", units=1000)  # another kernel's lines count for nothing
ONES = {"read": 1.0, "written": 1.0, "global": 1.0, "shared": 1.0}


def test_without_sass_every_share_is_one_the_traces_counts():
    """No SASS: as_compiled keeps the source's lines, so the compiled lines are the source lines."""
    source = [MEMBERS, STORE, SHARED, OTHER]
    assert compiled_shares(source, source, "k") == ONES


def test_a_float4_read_member_by_member_is_charged_a_quarter_of_the_traces_sectors():
    """Reads: 16 of 64 sectors; global (the L1's lines, loads and stores together): (16 + 4) / (64 + 4); stores:
    as traced; shared: one LDS.128's 4 wavefronts of the four scalar reads' 16."""
    got = compiled_shares([MEMBERS, STORE, SHARED, OTHER], [AS_LDG128, STORE, AS_LDS128, OTHER], "k")
    assert got == {"read": 16 / 64, "written": 1.0, "global": 20 / 68, "shared": 4 / 16}


def test_a_float4_written_member_by_member_is_charged_a_quarter_of_the_traces_sectors():
    """Stores and atomics are the trace's `sectors_written`: 4 scalar stores of 16 sectors, one STG.E.128 of 16."""
    members = dataclasses.replace(MEMBERS, kind="store")
    as_stg128 = dataclasses.replace(AS_LDG128, kind="store", sass=("STG.E.128",))
    got = compiled_shares([members], [as_stg128], "k")
    assert got == ONES | {"written": 0.25, "global": 0.25}


def test_a_kernel_that_requested_nothing_of_a_kind_keeps_the_traces_count_of_it():
    assert compiled_shares([], [], "k") == ONES
    assert compiled_shares([OTHER], [OTHER], "k") == ONES


LAUNCH = Launch("k", (2, 1, 1), (32, 1, 1), 0, 2, 2, 128, 8, 0, load_requests=8, load_sites=1, distinct_read=32,
                distinct_written=8)  # fmt: skip


def test_loads_in_flight_stand_for_the_sources_requests_per_sass_request():
    """One LDG.E.128 in flight stands for the source's 4 member reads (4 requests per SASS request)."""
    assert in_flight_sites(1.0, LAUNCH, [MEMBERS], [AS_LDG128]) == (1.0, 4.0)


def test_without_sass_the_traces_load_sites_are_in_flight_together():
    assert in_flight_sites(None, LAUNCH, [MEMBERS], [MEMBERS]) == (1, 1)
    assert in_flight_sites(None, dataclasses.replace(LAUNCH, load_sites=3), [MEMBERS], [MEMBERS]) == (3, 3)


def test_a_launch_is_charged_no_fewer_sectors_than_it_touched():
    """The share is pooled over a kernel's launches: a launch on a scalar path (64 sectors traced, 64 distinct) of a
    kernel whose other launch nvcc merged 4 to 1 (a share of 0.25 pooled) is charged its 64 distinct sectors, not 16;
    a launch whose requests repeat sectors keeps the share (128 traced, 32 distinct: 32)."""
    assert charged(64, 0.25, 64) == 64
    assert charged(128, 0.25, 32) == 32
    assert charged(128, 0.25, 8) == 32
    assert charged(10, 1.0, 0) == 10


# A synthetic line shaped after one warp's tile of siboehm's kernel 5: 64 scalar reads in the trace (8 rows x 8
# columns, 2 wavefronts each: two rows 256 bytes apart, one bank), served by 16 LDS.128 of 4 wavefronts each (lanes
# that do not pair up; kernel 5's own As loads pair, lanes n and n^1 on one address, and take 2) and 8 scalar LDS
# re-reading each row's first float (cuda_cpu_profile.h's regroupings: width 4 as traced, width 16 as the LDS.128)
AS_ROWS = Line("k", "k.cu", 7, "shared", "load", 16, 64, 64, 1024, 512, sass=("LDS",) * 8 + ("LDS.128",) * 16,
               widths=((4, (64, 128, 64, 2, 0, 32)), (16, (16, 64, 64, 1, 0, 8))), basis="SASS sm_86")  # fmt: skip
Ins = collections.namedtuple("Ins", "file line space kind width text offset cls opcode function routine labels",
                             defaults=("LDS", 0, "memory", "LDS", "k", "", ""))  # fmt: skip


def at_offsets(runs):
    """{kernel: [(instruction, runs)]} with the instructions at successive offsets, in the order given, each opcode
    its text's ("@!P0 LDS": LDS)."""
    return {k: [(i._replace(offset=16 * n, opcode=i.text.split()[-1]), r) for n, (i, r) in enumerate(pairs)]
            for k, pairs in runs.items()}  # fmt: skip


def reload(lines, runs):
    """reloaded of `runs` (at_offsets), each kernel's listing the instructions the runs name."""
    runs = at_offsets(runs)
    return reloaded(lines, runs, {k: [i for i, _ in pairs] for k, pairs in runs.items()})


def test_what_nvcc_re_reads_with_narrower_instructions_is_charged_at_their_width():
    """16 LDS.128 and 8 LDS each ran once: 24 requests, 16 x 4 + 8 x 2 = 80 wavefronts (the trace's 64 accesses
    regrouped at 16 bytes count 16 requests and 64 wavefronts: the 8 LDS are missing)."""
    runs = {"k": [(Ins("k.cu", 7, "shared", "load", 16), 1.0)] * 16 + [(Ins("k.cu", 7, "shared", "load", 4), 1.0)] * 8}
    (got,) = reload([AS_ROWS], runs)
    assert (got.requests, got.units, got.ideal) == (24, 80, 64 + 8)


def test_a_scalar_path_beside_a_packed_one_adds_nothing():
    """A packed path ran 12 LDS.128, a scalar fallback 4 LDS of accesses the 16-byte regrouping could not merge: the
    line's 16 requests are their runs together, nothing re-read; another kernel's or line's runs change nothing."""
    runs = {"k": [(Ins("k.cu", 7, "shared", "load", 16), 1.0)] * 12 + [(Ins("k.cu", 7, "shared", "load", 4), 1.0)] * 4}
    runs["other"] = [(Ins("k.cu", 7, "shared", "load", 4), 9.0)]
    runs["k"] += [(Ins("k.cu", 8, "shared", "load", 4), 9.0), (Ins("k.cu", 7, "shared", "store", 4), 9.0)]
    assert reload([AS_ROWS], runs) == [AS_ROWS]


def test_a_line_with_a_predicated_instruction_re_reads_nothing():
    """reduce_v2's `@!P0 LDS.64` and `@!P1 LDS`: each issues for every warp of the unrolled loop, the warps with no
    lane on making no request; runs above the line's requests are those warps, not re-reads."""
    runs = {"k": [(Ins("k.cu", 7, "shared", "load", 16), 1.0)] * 16 + [(Ins("k.cu", 7, "shared", "load", 4, "@!P0 LDS"),
                                                                      1.0)] * 8}  # fmt: skip
    assert reload([AS_ROWS], runs) == [AS_ROWS]


def test_a_line_over_two_basic_blocks_re_reads_nothing():
    """attention's backward: a packed loop of LDS.128 and its copy of LDS.64 behind a branch, the cfg's runs of the two
    not the requests' split: the same runs as the first test, with a BRA between the widths, charge nothing."""
    wide, bra = (
        [(Ins("k.cu", 7, "shared", "load", 16), 1.0)] * 16,
        [(Ins("k.cu", 7, "", "", 0, "BRA", cls="control"), 1.0)],
    )
    runs = {"k": wide + bra + [(Ins("k.cu", 7, "shared", "load", 4), 1.0)] * 8}
    assert reload([AS_ROWS], runs) == [AS_ROWS]


def test_the_basic_blocks_are_the_whole_listings_not_those_of_the_instructions_with_runs():
    """The instruction runs leave out the open slow-division side of nvcc's 64-bit division, the BRA that rejoins it
    among them: the LDS.128 and the LDS on either side of that BRA are in two basic blocks of the kernel's listing
    (kp.gpumodel.runs.block_runs splits it so), which the runs' instructions alone would merge into one and charge."""
    bra = Ins("k.cu", 9, "", "", 0, "BRA", cls="control")
    whole = [(Ins("k.cu", 7, "shared", "load", 16), 1.0)] * 16 + [(bra, 0.0)] + [(Ins("k.cu", 7, "shared", "load", 4),
                                                                                   1.0)] * 8  # fmt: skip
    code = at_offsets({"k": whole})["k"]
    runs = {"k": [(i, n) for i, n in code if i.opcode != "BRA"]}
    assert reloaded([AS_ROWS], runs, {"k": [i for i, _ in code]}) == [AS_ROWS]
    (merged,) = reloaded([AS_ROWS], runs, {"k": [i for i, _ in runs["k"]]})  # the runs' instructions alone
    assert merged.requests == 24


def test_a_line_re_reads_where_its_widths_share_one_basic_block_unpredicated():
    """re_reads, what kp.gpumodel.runs (which leaves such a line out of its equations) and reloaded both ask: an
    LDS.128 and an LDS of one line in one basic block (kp.gpumodel.cfg.block_of) re-read, a label no branch names and
    a BSSY between them ending no block; a BRA between them (two blocks), a predicated one, one width, none."""

    def asked(*found):
        code = [i for i, _ in at_offsets({"k": [(i, 1.0) for i in found]})["k"]]
        lds = [i for i in code if i.space == "shared"]
        return re_reads(lds, block_of(code))

    wide, narrow = Ins("k.cu", 7, "shared", "load", 16, "LDS.128"), Ins("k.cu", 7, "shared", "load", 4)
    other = Ins("k.cu", 7, "", "", 0, "BSSY", cls="control")
    assert asked(wide, narrow) and asked(wide, other, narrow._replace(labels=".L_x_1"))
    assert not asked(wide, other._replace(text="BRA"), narrow)
    assert not asked(wide, narrow._replace(text="@!P0 LDS")) and not asked(narrow, narrow)


def test_runs_the_trace_cannot_have_made_or_a_rounding_above_the_requests_re_read_nothing():
    """16 LDS.128 at 2 runs each are 32 wide requests where the trace counted 16: runs of a block the equations left
    open, not re-reads (capping them at the 8 LDS's runs would charge 8); runs a solver's rounding puts within half a
    request (and a ten-thousandth of the requests) above them, 0.4 here, charge nothing either."""
    runs = {"k": [(Ins("k.cu", 7, "shared", "load", 16), 2.0)] * 16 + [(Ins("k.cu", 7, "shared", "load", 4), 1.0)] * 8}
    assert reload([AS_ROWS], runs) == [AS_ROWS]
    scalar = [(Ins("k.cu", 7, "shared", "load", 4), 1.1)] * 4  # 4.4 runs where the line's fallback made 4 requests
    runs = {"k": [(Ins("k.cu", 7, "shared", "load", 16), 1.0)] * 12 + scalar}
    assert reload([AS_ROWS], runs) == [AS_ROWS]


def test_without_sass_nothing_is_re_read():
    assert reloaded([SHARED, MEMBERS], {}, {}) == [SHARED, MEMBERS]
