"""The GPU model's constants that no data sheet gives, each with its source: what this project measured on an H100
(H100_MEASURED: the README's "On a GPU" table), what microbenchmark studies report (latencies), and what is assumed
(said so, with the range it was taken from). Data only: kp.gpus builds the GPU table from these and the data
sheets; nothing here is fitted to any kernel's published timing, and nothing here computes.
"""

# DRAM bandwidth a streaming kernel reaches. Measured by this project on the H100 SXM only: torch.add on 2^26
# float32 on an NVIDIA H100 80GB HBM3 ran at 2.95-3.0 TB/s (CUDA events; the README's "On a GPU" table, one `make
# bench` run: torch.add 3.00-3.01 TB/s, add2 3.02 TB/s); we take 2.97e12. The other GPUs are not measured: their data
# sheet bandwidth times the H100's measured / data-sheet ratio, 2.97 / 3.35 = 0.887 (GDDR parts may reach another
# share; replace with a measurement when there is one).
H100_MEASURED_BANDWIDTH = 2.97e12
ACHIEVABLE_FRACTION = H100_MEASURED_BANDWIDTH / 3.35e12

# DRAM latency, seconds, for Little's law in kp.gputime: an assumption, neither measured by this project nor checked
# here against a paper's table. Such numbers come from pointer-chasing microbenchmarks (e.g. Luo et al., "Benchmarking
# and Dissecting the Nvidia Hopper GPU Architecture", arXiv:2402.13499, 2024; Chips and Cheese, "Nvidia's H100: Funny
# L2, and Tons of Bandwidth", 2023), and a loaded memory system adds queueing to an idle access; we take 700 ns, the
# middle of the 600-800 ns issue 23 gives for HBM on Hopper, for every GPU here (the GDDR parts too, unchecked). The
# first constant to replace with a measurement.
DRAM_LATENCY = 700e-9

# Hit latencies, in clocks of the SM (seconds = clocks / boost clock), for the mean latency of a round trip in
# kp.gputime: Jia, Maggioni, Smith and Scarpazza, "Dissecting the NVIDIA Turing T4 GPU via Microbenchmarking"
# (arXiv:1903.07486, 2019), pointer-chasing on the T4: L1 data cache hit 32 clocks, L2 hit 188 clocks (their Volta
# V100 figures, in "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", arXiv:1804.06826, are close:
# 28 and 193). Taken for every compute capability here, as these figures were recalled for this table and not
# re-read from the papers; Ampere's, Ada's and Hopper's own (Luo et al., arXiv:2402.13499, 2024) are the next to
# take: their L2 is larger and partitioned, so its hits are likely slower than 188 clocks.
L1_HIT_CLOCKS = 32
L2_HIT_CLOCKS = 188

# The L1's data pipe: one wavefront per clock per SM. Nsight Compute's Kernel Profiling Guide ("Memory Tables"): a
# wavefront is "the maximum unit that can pass through the pipeline stage per cycle"; for a global request, one
# 128-byte cache line's data, so that a coalesced warp request of 32 floats is one wavefront and one whose 32 lanes
# fall in 32 lines is 32; shared-memory wavefronts (one per bank-conflict-free access, cuda_cpu_profile.h) pass through
# the same data stage (L1 and shared memory are one SRAM from Volta on: CUDA C++ Programming Guide, "Compute
# Capability 7.x/8.x/9.x: Shared Memory"). 128 bytes per clock per SM is also the shared-memory bandwidth the Volta
# and A100 whitepapers give.
L1_WAVEFRONTS_PER_CLOCK = 1

# Instruction issue: each of an SM's 4 warp schedulers (one per sub-partition: the Volta, Ampere and Hopper
# architecture whitepapers' SM diagrams; the CUDA C++ Programming Guide, "Compute Capability 7.x / 8.x / 9.0:
# Architecture": "An SM statically distributes its warps among its schedulers. Then, at every instruction issue
# time, each scheduler issues one instruction for one of its assigned warps that is ready to execute") issues one warp
# instruction per clock. kp.gputime's issue term: warp instructions / (schedulers busy x this x clock), a scheduler
# being busy only while it holds a warp (one warp issues at most one instruction per clock).
ISSUE_PER_SCHEDULER_PER_CLOCK = 1

# The least time one launch takes, seconds: an assumption, not measured by this project: issue 23's ~2-3 us for an
# empty kernel timed with CUDA events; we take 2.5 us. (The README's 9.55 us per torch.add of 1024 elements is the
# CPU side of a whole op call, dispatcher and launch, not the GPU's floor, so it is not used.)
LAUNCH_FLOOR = 2.5e-6

# What the H100 measured: the README's "On a GPU" table (`make bench` on one NVIDIA H100 80GB HBM3, torch
# 2.11.0+cu130, 2026-11-23): op -> (size, throughput: bytes/s for memory-bound ops, FLOP/s otherwise).
H100_MEASURED_ON = 'one NVIDIA H100 80GB HBM3, `make bench`, 2026-11-23 (the README\'s "On a GPU" table)'
H100_MEASURED = {
    "add2": (2**26, 3.02e12),
    "add2_v1": (2**26, 2.74e12),
    "mul": (2**26, 3.01e12),
    "mul, broadcast": (2**26, 2.54e12),
    "mul_backward": (2**26, 3.01e12),
    "add": (2**26, 3.01e12),
    "poly2": (2**26, 2.96e12),
    "exp": (2**26, 2.96e12),
    "linear": ((4096, 4096, 4096), 5.83e12),  # the 16 x 16 shared tiles (large outputs now take a register-tiled one)
    "involution": ((32, 64, 56, 7), 0.829e12),
}
# The torch ops measured beside them in the same run (that table's "torch" column), where a lesson compares against
# one: F.linear is cuBLAS's float32 GEMM with TF32 off (torch's default, `torch.backends.cuda.matmul.allow_tf32` False:
# bench/ops.py leaves it so), 2·M·N·K FLOPs over the median time. Notebook 07's goal is a fraction of it.
H100_MEASURED_TORCH = {
    "F.linear": ((4096, 4096, 4096), 50.6e12),
}


def h100_measured(name):
    """(size, throughput, where) of `name` as the H100 measured it: an op of H100_MEASURED or a torch op of
    H100_MEASURED_TORCH ("F.linear"); throughput in bytes/s for memory-bound ops, FLOP/s otherwise."""
    size, rate = {**H100_MEASURED, **H100_MEASURED_TORCH}[name]
    return size, rate, H100_MEASURED_ON
