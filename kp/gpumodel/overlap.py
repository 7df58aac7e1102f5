"""How a launch's memory side and its SM side overlap, by occupancy (issue 31 item 4): one rule whose extremes are
"the phases add" (one block per SM, barriers) and "the slowest resource bounds" (many blocks per SM). Owns that rule
and its derivation only; kp.gpumodel.gputime computes the terms it combines. Imports nothing.

The derivation. A block with barriers (__syncthreads) cycles through iterations, each a memory phase (its warps load
and wait at the barrier: M, the round trip, or its share of the bandwidth where that is longer) and an SM phase (the
block computes from what it loaded: C, the longest of its issue, FP32 and L1-pipe times with the SM to itself). A
block cannot start its next memory phase before its SM phase ends, nor its SM phase before its memory phase ends. B
blocks resident on one SM are B such cycles sharing one server (the SM) and a delay (the memory: every block waits
at once, none waits for another's wait). That is a closed queueing network of B customers, one queue and one delay,
and its two asymptotic bounds (Lazowska et al., "Quantitative System Performance", 1984, ch. 5, "bounding analysis")
say what B iterations, one per block, take at least:

    max(M + C, B x C)

one block's own cycle (no other block can shorten its wait or its compute), and the SM serving every block's compute
one after another. B = 1 gives M + C: the phases add. B x C >= M + C once B >= 1 + M / C: the SM never idles and the
compute bounds; as B grows the time tends to max(M, B x C), the max of the terms. In between (B = 2, M > C) it is
M + C: each block's wait shows, only the other's compute hides in it. (The exact answer lies between this bound and
M + B x C, every block queueing behind all others; it is furthest from the bound near B = 1 + M / C. The bound is what
is modelled: optimistic there.)

Over a launch, on the busiest SM: `memory_s` is the memory side's time (the waves' round trips, or their bytes over
the bandwidth, or the L2's), `sm_s` the SM side's (all of the SM's blocks' compute at the SM's rate: B x C summed),
and `chain_sm_s` the compute one block slot runs in sequence (each of its blocks' C, with the SM to itself): the
launch takes max(memory_s, sm_s, memory_s + chain_sm_s).

Without barriers the same rule holds with warps for blocks (each warp waits for its own loads only), with C a warp's
own SM time (its instructions at one per clock on one scheduler) and B the warps per scheduler; it is not applied: a
warp's round trips are counted as the loads in flight together (kp.gpumodel.compiled), and nvcc issues the next
iteration's loads ahead of this one's compute in unrolled loops, so no phase need wait for the other; there the
terms are taken to overlap fully, max(memory_s, sm_s).

Where kp.gpumodel.subcores simulates a launch's blocks (its SASS has control bits), the rule is not applied: the
simulation runs each block's warps through their loads, barriers and compute with the latencies and rates in it, so
the phases show there, in the "schedule" term (kp.gpumodel.gputime), not twice.
"""


def combine(memory_s, sm_s, chain_sm_s, phased):
    """(seconds, whether the phases show: the chain is the longest) of a launch by the rule above; `phased`: the
    kernel has barriers separating its memory and SM phases (else the terms overlap: max)."""
    overlapped = max(memory_s, sm_s)
    if not phased or memory_s <= 0:
        return overlapped, False
    chain = memory_s + chain_sm_s
    return (chain, True) if chain > overlapped else (overlapped, False)
