"""A launch's modelled time as the GPU model prints it: LaunchEstimate (one launch's time, its terms and the term that
bounds it) and Estimate (a sequence of launches on one GPU: the total, `describe()` in a sentence, `table()` a row per
launch). Owns these records and how they print; kp.gpumodel.gputime computes them. Never models anything itself.
"""

import dataclasses

from kp.table import NO_BREAK, Quantity, Table, quantity


@dataclasses.dataclass(frozen=True)
class LaunchEstimate:
    """One launch's modelled time, each term in seconds, and the term that bounds it."""

    kernel: str
    seconds: float
    # "memory", "latency", "L2", "compute", "issue", "issue (dependent)", "shared memory", "L1", an arithmetic pipe's
    # ("FP32 pipe", "integer pipe", ...: kp.gpumodel.pipes), "schedule" (kp.gpumodel.subcores), "launch"; "A + B":
    # phases add
    bound: str
    dram_bytes: int
    achieved_bandwidth: float  # dram_bytes / seconds, bytes/s
    occupancy: object  # kp.gpumodel.gpus.Occupancy: the blocks per SM and what limits them
    waves: int
    reachable_bandwidth: float  # Little's law in the first (fullest) wave: bytes in flight / mean latency
    bandwidth_s: float  # dram_bytes / achievable bandwidth
    latency_s: float  # the waves' round trips: round trips x mean latency per wave
    memory_s: float  # wave by wave, the larger of the two
    compute_s: float
    shared_s: float  # the shared-memory wavefronts alone
    launch_floor_s: float
    l1_s: float = 0.0  # the L1's data pipe: shared wavefronts + global lines
    issue_s: float = 0.0  # the busiest SM's warp instructions / its issue rate, and its waits on dependent instructions
    stall_s: float = 0.0  # the part of issue_s its schedulers wait on operands (kp.gpumodel.depend)
    l2_s: float = 0.0  # the bytes the L2 serves / its bandwidth
    latency: float = 0.0  # the latency of a round trip, seconds
    hit_shares: tuple = (0.0, 0.0, 1.0)  # the shares of the requested sectors the L1, the L2 and DRAM serve
    phases_add: bool = False  # barriers, and one block's memory + its SM phases outlast every term
    pipe_s: float = 0.0  # the busiest SM's warp instructions on its slowest arithmetic pipe (kp.gpumodel.pipes)
    pipe_bound: str = "pipe"  # which: "FP32 pipe", "integer pipe", "FMA pipe", "FP32 + integer pipe", ...
    schedule_s: float = 0.0  # the busiest SM's sub-cores simulated issuing its blocks (kp.gpumodel.subcores); 0: none


@dataclasses.dataclass(frozen=True)
class Estimate:
    """A sequence of launches on one GPU: the total and each launch's LaunchEstimate."""

    gpu: str
    seconds: float
    launches: tuple

    def describe(self):
        bounds = "; ".join(f"{e.kernel}: {_time(e.seconds)}, {e.bound}-bound" for e in self.launches)
        return f"{_time(self.seconds)} on the {self.gpu}, modelled ({bounds})"

    def table(self):
        """A row per launch: the modelled time and its bound first, then occupancy and waves, then the terms of the
        time in one column, largest first (the first is the bound; terms of 0 left out); times as Quantities (5.73 ms,
        42.1 µs). One column for the terms: seven of their own ran past Lab's output area (880-903 px of 848 at
        1280x800, measured by tests/test_lab.py on notebook 01). In HTML each number stays on one line with its unit
        and a kernel's template arguments stay together (kp.table's UNIT and TEMPLATE)."""
        rows = [
            {
                "kernel": f"`{e.kernel}`",
                "modelled": Quantity(e.seconds * 1e6, "µs"),
                "bound": e.bound,
                "DRAM": Quantity(e.achieved_bandwidth / 1e12, "TB/s"),
                "occupancy": f"{e.occupancy.occupancy:.0%} ({e.occupancy.limited_by})",
                "waves": e.waves,
                "terms": _terms(e),
                "served by L1 / L2 / DRAM": "{:.0%} / {:.0%} / {:.0%}".format(*e.hit_shares),
            }
            for e in self.launches
        ]
        return Table(rows, f"modelled on the {self.gpu} (kp.gpumodel.gputime): {_time(self.seconds)} in all")


def _terms(e):
    """A launch's terms, largest first, zeros left out: "DRAM 271 µs, latency 174 µs, L1 pipe 24.1 µs", each term's
    words joined by no-break spaces, so that Lab wraps the column between terms and never inside one (in Lab's ~850
    px output area, chromium split notebook 07's ladder terms as "FMA pipe / 2.28 ms" and "L2 722 / µs")."""
    terms = {
        "DRAM": e.bandwidth_s,
        "latency": e.latency_s,
        "FLOP": e.compute_s,
        "shared": e.shared_s,
        "L1 pipe": e.l1_s,
        "issue": e.issue_s,
        e.pipe_bound: e.pipe_s,
        "L2": e.l2_s,
        "schedule": e.schedule_s,
    }
    ranked = sorted((t for t in terms.items() if t[1] > 0), key=lambda t: -t[1])
    return ", ".join(f"{name} {_time(seconds)}".replace(" ", NO_BREAK) for name, seconds in ranked) or "none"


def _time(seconds):
    return quantity(seconds, "s")
