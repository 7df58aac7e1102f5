"""kp.counts: the profiler's report read into records (a report written here, so no kernel runs; kp.profile's tests
read real ones): sites summed per `.cu` line, launches, what a Line and a Launch derive."""

from kp.counts import parse

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
