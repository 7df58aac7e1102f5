"""The GPU model: what a kernel would do on a named GPU, without one. One room of kp/; its modules keep their floors
(kp/__init__.py draws them), and data flows one way through it:

    trace -> counts -> SASS -> caches -> time

- trace: kp.gpumodel.profile runs a call with the CPU stand-in's profiler on (kernels/common/cuda_cpu_profile.h
  counts each warp's requests, sectors, wavefronts and branches, and the sampled blocks' addresses) -> Profile;
- counts: kp.gpumodel.counts reads that report into records (Line, Branch, Launch) at their `.cu` lines;
- SASS: kp.gpumodel.sass compiles the kernel file with nvcc for the GPU's arch and reads nvdisasm's listing, line by
  line; kp.gpumodel.compiled counts the lines as that SASS serves them, the instructions each line ran (its basic
  blocks' runs: kp.gpumodel.runs's equations on kp.gpumodel.cfg's graph, solved by kp.gpumodel.flow) and the loads
  in flight together;
  kp.gpumodel.ptxas gives each instantiation's registers and shared memory; kp.gpumodel.depend each basic block's
  critical path through its registers; kp.gpumodel.charges scales a launch's totals (sectors, 128-byte lines, shared
  wavefronts), which the trace counts as the source wrote the accesses, to what that SASS requests;
- caches: kp.gpumodel.caches, the L1s and the one L2: the sectors DRAM moves, from the sampled blocks' sharing;
- time: kp.gpumodel.gputime, the terms of a launch and how they combine (kp.gpumodel.overlap: by the blocks resident
  per SM; kp.gpumodel.subcores simulates an SM's sub-cores issuing the hot basic blocks, kp.gpumodel.schedule says
  which and adds their clocks up wave by wave), on kp.gpumodel.gpus's GPU table (data sheets, occupancy) and
  kp.gpumodel.gpu_constants (what no data sheet gives, each with its source; kp.gpumodel.pipes: the arithmetic pipes'
  rates per compute capability);
  kp.gpumodel.estimates holds and prints the result (LaunchEstimate, Estimate).

Imports nothing itself: import the module you need (kp.gpumodel.profile for profile()).
"""
