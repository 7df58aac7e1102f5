"""kp.gpumodel.counts: the profiler's report read into records (a report written here, so no kernel runs;
kp.gpumodel.profile's tests read real ones): sites summed per `.cu` line, launches, what a Line and a Launch derive; the
lines counted as nvcc's SASS serves them (as_compiled, on SASS written here; tests/test_sass.py counts real kernels)."""

import dataclasses
from collections import namedtuple

from kp.gpumodel.compiled import as_compiled
from kp.gpumodel.counts import parse

REPORT = "\n".join(
    [
        # site  kernel  pc  space  kind  requests lanes bytes units ideal worst worst_bank worst_lanes
        "site\tk\t/nowhere.so+0x10\tglobal\tload\t10\t160\t640\t40\t20\t0\t0\t0",
        "site\tk\t/nowhere.so+0x20\tshared\tload\t4\t128\t512\t128\t4\t32\t7\t32",
        # launch  kernel  grid  block  shmem blocks traced sectors_read written wavefronts load_requests load_sites
        #         distinct_read distinct_written
        "launch\tk\t8 1 1\t64 1 1\t0\t8\t4\t80\t40\t128\t20\t1\t60\t40",
        "unprofiled\t2\tother, another",
        "garbage line",
    ]
)


def test_sites_are_read_into_lines_with_what_they_derive():
    counts = parse(REPORT)
    (load, shared) = sorted(counts.lines, key=lambda ln: ln.space)
    assert (load.space, load.kind, load.requests, load.sectors, load.wavefronts) == ("global", "load", 10, 40, None)
    assert (load.active_lanes, load.per_request, load.excess) == (16, 4, 2)  # half the lanes, twice the sectors
    assert (load.file, load.line) == ("?", 0)  # no library to place it in
    assert (shared.wavefronts, shared.worst, shared.worst_bank, shared.excess) == (128, 32, 7, 32)


def test_launches_and_uncounted_launches_are_read():
    counts = parse(REPORT)
    (launch,) = counts.launches
    assert (launch.grid, launch.block, launch.blocks, launch.traced, launch.threads_per_block) == (
        (8, 1, 1),
        (64, 1, 1),
        8,
        4,
        64,
    )
    assert (launch.distinct_read, launch.distinct_written) == (60, 40)
    # 20 load requests (the whole launch's) over 8 blocks of 2 warps, from 1 load site: 1.25 per warp and site
    assert launch.round_trips_per_warp == 1.25
    # With the warps that loaded counted: 20 load requests by 5 of the 16 warps, from 1 site: 4 round trips each
    loading = parse(REPORT.replace("\t60\t40\n", "\t60\t40\t5\n")).launches[0]
    assert (loading.loading_warps, loading.round_trips_per_warp) == (5, 4)
    assert (counts.unprofiled, counts.unprofiled_names) == (2, "other, another")


def test_scattered_requests_and_split_branches_are_read_and_older_reports_read_as_none():
    """A site's 14th field: requests whose lanes are not lanes 0..k-1 (divergence, not a ragged warp); a branch's
    7th: its divergent executions split at one lane (a bounds guard's). Reports without them read as 0."""
    site = "site\tk\t/nowhere.so+0x10\tglobal\tload\t10\t160\t640\t40\t20\t0\t0\t0"
    branch = "branch\tk\t/nowhere.so+0x30\t10\t320\t4"
    new = parse(f"{site}\t6\n{branch}\t3")
    assert (new.lines[0].scattered, new.branches[0].divergent, new.branches[0].split) == (6, 4, 3)
    old = parse(f"{site}\n{branch}")
    assert (old.lines[0].scattered, old.branches[0].split) == (0, 0)


# A site's counts regrouped as instructions of 4, 8 and 16 bytes per lane: requests units ideal worst bank lanes each.
REGROUPED = "\t".join(["8\t32\t8\t4\t3\t8", "4\t16\t8\t2\t3\t4", "2\t8\t8\t1\t0\t8"])
SASS = namedtuple("SASS", "opcode cls space kind width")


def lds(width):
    return SASS({4: "LDS", 8: "LDS.64", 16: "LDS.128"}[width], "memory", "shared", "load", width)


def shared_line():
    """8 requests of 4-byte shared loads, 4-way conflicts; at 16 bytes per lane, 2 requests and no conflict."""
    (ln,) = parse(f"site\tk\t/nowhere.so+0x20\tshared\tload\t8\t256\t1024\t32\t8\t4\t3\t8\t0\t{REGROUPED}").lines
    return dataclasses.replace(ln, line=5)


def test_a_site_reports_its_counts_regrouped_at_each_width():
    ln = shared_line()
    assert dict(ln.widths) == {4: (8, 32, 8, 4, 3, 8), 8: (4, 16, 8, 2, 3, 4), 16: (2, 8, 8, 1, 0, 8)}
    assert (ln.requests, ln.basis, ln.sass) == (8, "source", ())


def test_a_line_counts_at_the_width_of_its_sass_and_its_sass_runs_once_per_request():
    ln = shared_line()
    ffma = SASS("FFMA", "fp32", None, None, None)
    (compiled,), passes = as_compiled([ln], lambda k, f, n: [lds(16), ffma, ffma] if n == 5 else [], "SASS sm_90")
    assert (compiled.requests, compiled.wavefronts, compiled.worst, compiled.lanes) == (2, 8, 1, 64)
    assert (compiled.sass, compiled.basis) == (("LDS.128",), "SASS sm_90")
    assert passes == {("k", "?", 5): 2}


def test_with_mixed_widths_the_widest_serves_what_fits_it_and_runs_once_per_its_request():
    # A packed path's LDS.128 and its scalar fallback's four LDS: the trace's accesses that fit 16 bytes merge.
    (compiled,), passes = as_compiled([shared_line()], lambda k, f, n: [lds(16)] + [lds(4)] * 4, "SASS sm_90")
    assert (compiled.requests, compiled.units, compiled.worst, compiled.sass) == (2, 8, 1, ("LDS.128",) + ("LDS",) * 4)
    assert passes == {("k", "?", 5): 2}


def test_a_line_without_sass_of_its_kernel_stays_the_sources_and_one_served_elsewhere_is_dropped():
    ln = shared_line()
    assert as_compiled([ln], lambda k, f, n: None, "SASS sm_90") == ([ln], {})
    # No LDS at the line: its accesses joined another line's instruction; at 16 bytes it leads 2 requests, so it stays
    (kept,), passes = as_compiled([ln], lambda k, f, n: [], "SASS sm_90")
    assert (kept.requests, kept.sass, passes) == (2, (), {})
    follower = dataclasses.replace(ln, widths=((4, (8, 32, 8, 4, 3, 8)), (8, (0,) * 6), (16, (0,) * 6)))
    assert as_compiled([follower], lambda k, f, n: [], "SASS sm_90")[0] == []


def test_a_branch_reports_its_executions_where_no_lane_took_it():
    (branch,) = parse("branch\tk\t/nowhere.so+0x30\t12\t384\t0\t0\t3").branches  # divergent, split, none
    assert (branch.executions, branch.none) == (12, 3)  # a loop entered 3 times, 9 iterations in all
    (old,) = parse("branch\tk\t/nowhere.so+0x30\t12\t384\t0").branches
    assert (old.executions, old.none) == (12, 0)
