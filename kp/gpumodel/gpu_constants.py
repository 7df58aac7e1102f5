"""The GPU model's constants that no data sheet gives, each with its source: what this project measured on an H100
(H100_MEASURED: the README's "On a GPU" table), what microbenchmark studies report (latencies), and what is assumed
(said so, with the range it was taken from). Data only: kp.gpumodel.gpus builds the GPU table from these and the data
sheets; nothing here is fitted to any kernel's published timing, and nothing here computes.
"""

# DRAM bandwidth a streaming kernel reaches. Measured by this project on the H100 SXM only: torch.add on 2^26
# float32 on an NVIDIA H100 80GB HBM3 ran at 2.95-3.0 TB/s (CUDA events; the README's "On a GPU" table, one `make
# bench` run: torch.add 3.00-3.01 TB/s, add2 3.02 TB/s); we take 2.97e12. The other GPUs are not measured: their data
# sheet bandwidth times the H100's measured / data-sheet ratio, 2.97 / 3.35 = 0.887 (GDDR parts may reach another
# share; replace with a measurement when there is one).
H100_MEASURED_BANDWIDTH = 2.97e12
ACHIEVABLE_FRACTION = H100_MEASURED_BANDWIDTH / 3.35e12

# DRAM latency, seconds, for Little's law in kp.gpumodel.gputime: an assumption, not measured by this project: 700 ns,
# the middle of the 600-800 ns issue 23 gives for HBM on Hopper, for every GPU here (the GDDR parts too, unchecked). An
# idle pointer chase reads less (gpu-benches, below: H100 PCIe 650 clocks = 370 ns, A100 570 = 404 ns, L40 631 =
# 253 ns); a loaded memory system adds queueing to that, by an amount no source here gives. The first constant to
# replace with a measurement on a lent GPU (a pointer chase under a streaming load).
DRAM_LATENCY = 700e-9

# Hit latencies, in clocks of the SM (seconds = clocks / boost clock), for the mean latency of a round trip in
# kp.gpumodel.gputime, per compute capability: (L1 hit, L2 hit). Read from the pointer-chasing results Ernst, Hager,
# Wellein et al. publish with their GPU microbenchmarks (github.com/te42kyfo/gpu-benches, the data behind "Analytical
# performance estimation during code generation on modern GPUs", 2023; one warp chases a random cycle through a
# buffer, cycles at the clock the run reports), each the plateau of its level:
# - 9.0: H100 PCIe (gpu-latency/h100_pcie.txt, 1755 MHz): L1 34.1, L2 265.5 for 0.25-20 MB (the SM's near partition;
#   past ~25 MB, the far partition, 475; DRAM 650-658);
# - 8.9: L40 (gpu-latency/l40.txt, 2490 MHz): L1 36.1, L2 276.5 (DRAM 631);
# - 8.0: A100 80GB (cuda-latency/a100_80.txt, 1410 MHz): L1 36.0, L2 211.0 for 0.2-18 MB (far: 424; DRAM 570);
# - 8.6: none of these sources measures a GA10x card: taken as 8.0's (the same generation), an assumption;
# - 7.5: sjfeng1999/gpu-arch-microbenchmark (github, README "Memory Latency", pointer chasing in SASS by turingas, read
#   2026-11-27 at ea74ff7): the RTX 2070, TU104 (the T4's chip): L1 32, L2 236 (global, a TLB miss included, 1000-1200);
#   the same benchmarks' V100 (cc 7.0, the README of gpu-benches: L1 30-31, L2 214) is close. (The T4 figures of Jia et
#   al., arXiv:1903.07486, were used before: recalled, never read here.)
HIT_CLOCKS = {(9, 0): (34, 265), (8, 9): (36, 277), (8, 0): (36, 211), (8, 6): (36, 211), (7, 5): (32, 236)}

# L2 bandwidth, bytes per clock per SM (x SMs x boost clock = the GPU's), per compute capability, for
# kp.gpumodel.gputime's L2 term: the same benchmarks' L2 plateaus (every SM streams a buffer that fits the L2 but not
# the L1s), over SMs x the clock the run reports:
# - 9.0: H100 PCIe, gpu-l2-cache/h100_pcie.txt: 6.85-6.95 TB/s for 9-33 MB: 6.9e12 / (114 x 1.755e9) = 34.5;
# - 8.0: A100 80GB, gpu-l2-cache/a100_80.txt: 5.33-5.43 TB/s up to 25 MB: 5.4e12 / (108 x 1.41e9) = 35.5;
# - 8.9: L40, gpu-cache/l40.txt: 5.70-5.72 TB/s for 1-100 MB: 5.71e12 / (142 x 2.49e9) = 16.1;
# - 8.6: A40 (GA102), gpu-cache/a40.txt: 2.43 TB/s for 1-8 MB: 2.43e12 / (84 x 1.74e9) = 16.6;
# - 7.5: not measured there: taken as 8.6's (the GDDR parts' design), an assumption. (V100, cc 7.0, in the README of
#   gpu-benches: 2.54 TB/s / (80 x 1.38e9) = 23.0.)
L2_BYTES_PER_CLOCK_PER_SM = {(9, 0): 34.5, (8, 0): 35.5, (8, 9): 16.1, (8, 6): 16.6, (7, 5): 16.6}

# The L1's data pipe: one wavefront per clock per SM. Nsight Compute's Kernel Profiling Guide ("Memory Tables"): a
# wavefront is "the maximum unit that can pass through the pipeline stage per cycle"; for a global request, one
# 128-byte cache line's data, so that a coalesced warp request of 32 floats is one wavefront and one whose 32 lanes
# fall in 32 lines is 32; shared-memory wavefronts (one per bank-conflict-free access, cuda_cpu_profile.h) pass through
# the same data stage (L1 and shared memory are one SRAM from Volta on: CUDA C++ Programming Guide, "Compute
# Capability 7.x/8.x/9.x: Shared Memory"). 128 bytes per clock per SM is also the shared-memory bandwidth the Volta
# and A100 whitepapers give.
L1_WAVEFRONTS_PER_CLOCK = 1

# The unified L1 data cache and shared memory of one SM, bytes, per compute capability: what is not carved out for
# the resident blocks' shared memory caches global and local data. NVIDIA's tuning guides, "Unified Shared Memory/L1/
# Texture Cache", and the CUDA C++ Programming Guide's "Compute Capability 7.x / 8.x / 9.0: Shared Memory": 256 KB
# on 9.0 (H100), 192 KB on 8.0 (A100), 128 KB on 8.6 and 8.9, 96 KB on 7.5. (Read in the guides when this table was
# written, 2026-11-27; this session's search tool returned their openings, NVIDIA's forum on the RTX 4090's 128 KB,
# and the Ampere guide's carve-outs of 0-164 KB on 8.0 and 0-100 KB on 8.6, each below these totals.) Local
# memory (per-thread arrays indexed by data, spilled registers) is cached in the L1 and the L2 (Nsight's
# documentation, "Memory Statistics - Local": "all local memory accesses are always cached in L1 and L2"):
# kp.gpumodel.gputime sends the local traffic that the resident threads' stacks do not leave room for in this, less
# their shared memory, to the L2.
UNIFIED_L1_BYTES = {(9, 0): 256 * 1024, (8, 0): 192 * 1024, (8, 9): 128 * 1024, (8, 6): 128 * 1024, (7, 5): 96 * 1024}

# Instruction issue: each of an SM's 4 warp schedulers (one per sub-partition: the Volta, Ampere and Hopper
# architecture whitepapers' SM diagrams; the CUDA C++ Programming Guide, "Compute Capability 7.x / 8.x / 9.0:
# Architecture": "An SM statically distributes its warps among its schedulers. Then, at every instruction issue
# time, each scheduler issues one instruction for one of its assigned warps that is ready to execute") issues one warp
# instruction per clock. kp.gpumodel.gputime's issue term: warp instructions / (schedulers busy x this x clock), a
# scheduler being busy only while it holds a warp (one warp issues at most one instruction per clock).
ISSUE_PER_SCHEDULER_PER_CLOCK = 1

# Dependent-instruction latencies, clocks of the SM, for kp.gpumodel.depend (a basic block's critical path):
# - ALU results: the CUDA C++ Programming Guide, "Multiprocessor Level" (Performance Guidelines, Maximize Utilization):
#   the latency of a back-to-back register dependency is the instruction's execution time, "typically 4 clock cycles"
#   for most arithmetic instructions on compute capability 7.x, hence 16 warps per SM (4 per scheduler) to hide it;
#   taken for 7.5 to 9.0 (the guide gives no other figure for 8.x and 9.0). Not re-read this session: the search tool
#   returned the guide's older versions (cc 3.x: about 11 clocks), not the 7.x sentence. The variable-latency
#   instructions (MUFU, conversions, FP64) take longer: 4 is an assumption that understates them.
ALU_LATENCY_CLOCKS = 4
# - shared loads (LDS): sjfeng1999/gpu-arch-microbenchmark (github, its README's latency table, read 2026-11-27 at
#   00f3916 and, as "Memory Latency", in the version HIT_CLOCKS's 7.5 row cites): "Shared Latency 23" cycles on the
#   RTX 2070 (TU104, cc 7.5); its "Shared Bankconflict" table: "Single" 23, "Vector2 X 2" 27 (a 128-bit load is not
#   given: 23 is taken for LDS.64 and LDS.128 too, which may understate them). For 8.0 to 9.0 no figure was
#   read: Jia et al. 2018 (Volta, arXiv:1804.06826) and Luo et al. 2024 (Hopper, arXiv:2402.13499) gave only their
#   abstracts to this session's search tool. 23 is taken for them too, an assumption; HIT_CLOCKS's L1 hits of the same
#   kind of pointer chase (32-36 clocks) bound it from above (a shared load needs no tag lookup or address translation).
SHARED_LOAD_CLOCKS = {(9, 0): 23, (8, 9): 23, (8, 6): 23, (8, 0): 23, (7, 5): 23}
# - constant loads (LDC, ULDC: kernel arguments and __constant__ data, hits in the constant cache): the same tables,
#   "Constant L1 Latency 4" cycles on the RTX 2070 ("const L1-cache is as fast as register"); 4 for every cc, an
#   assumption past 7.5. (A constant-cache miss, 62-448 cycles there, is not modelled.)
CONSTANT_LOAD_CLOCKS = {(9, 0): 4, (8, 9): 4, (8, 6): 4, (8, 0): 4, (7, 5): 4}

# Not a constant (the model reads none; kept as the record of why GPUS keeps the data sheets' boost clocks): the SM
# clock boards held under a sustained FP32 load, MHz (lowest, highest): gpu-benches' gpu-roofline (Ernst,
# Hager, Wellein et al., github.com/te42kyfo/gpu-benches, gpu-roofline/*.txt, read 2026-11-28 at 1c36d50): every SM
# runs FMA chains over streamed data, one launch per arithmetic intensity, and NVML's SM clock (its median over 2 s)
# and power are printed beside the FLOP/s (float: they pass these boards' FP64 peaks); the ranges are those of the
# compute-bound runs, 64 FLOP/byte and up, on every board of the file. None of the RTX A6000, the A100 SXM4 80GB, the
# RTX 4090 or the H100 SXM is there:
# - "A100 40GB" (alex_a100_40.txt, 8 boards, 864 blocks = 108 SMs x 8): 1410 at every intensity, 18.5-19.2 TFLOP/s
#   (95-98% of 108 x 64 x 2 x 1.41 GHz) at 176-212 W: GA100 holds its 1410 MHz boost under FP32 load;
# - "H200" (h200.txt, 1056 blocks = 132 SMs x 8; GH100 as the H100 SXM): 1980 at every intensity, 41-43 TFLOP/s at
#   396-428 W (63% of its FP32 peak: two dependent FMA chains a thread);
# - "A40" (alex_a40.txt, 8 boards, 504 blocks = 84 SMs x 6; GA102 as the RTX A6000, 84 SMs too): 1665-1725 at
#   297-303 W, a power limit (1620-1740 over all intensities, 1740 where memory-bound), 22-24 TFLOP/s (63% of peak);
# - "L40" (genoa_l40.txt, device 0, 852 blocks = 142 SMs x 6; AD102 as the RTX 4090): 1515-1740 at 301-314 W (1320
#   at the least; 2490 where memory-bound); device 1 of the file, drawing 351-359 W, held 2115-2220 (2520 at most).
# GPUS keeps each data sheet's boost clock: the A100's and the H100's are what their chips held; the A40 and the L40
# are other boards of the A6000's and the 4090's chips at other power limits (an A6000 user on NVIDIA's forum, "SM
# Clock on RTX A6000 never reaches max frequency", saw 1935 MHz under a CUDA warm-up before "SW Power Scaling" cut it,
# the settled clock not given), so nothing here sets their clocks: a measurement on the board itself would.

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
