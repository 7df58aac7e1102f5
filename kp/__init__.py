"""Kernel Playground's Python side, one module per concern; helpers.py re-exports what notebooks call.

A module imports only modules on floors below its own (no circles, nothing imports helpers):

    floor 1  kp.files        the project's folders, display_path, OS-level locks, atomic writes
             kp.binding      the bindings' argument checks in Python (twins of kernels/common/binding.h)
             kp.table        Table: rows of dicts shown as markdown or HTML
             kp.gpumodel.gpu_constants  the GPU model's constants no data sheet gives (measured, studies, assumed)
             kp.gpumodel.caches   the GPU model's L1s and L2: the sectors DRAM moves, from the blocks' sharing
             kp.gpumodel.overlap  how a launch's memory and SM sides overlap, by the blocks resident per SM
             kp.gpumodel.cfg      a kernel's SASS in basic blocks (the model's one split), their edges and loops
             kp.gpumodel.pipes    the SM's arithmetic pipes per compute capability: each opcode's, their rates
             kp.goals        performance goals in the GPU model's counters, and the lines of a Profile that miss them
    floor 2  kp.toolchain    CUDA_HOME and PATH, Problem and ToolchainError, is nvcc / dot here, the probe of
                             optional compiler and linker flags
             kp.diagnostics  KernelBuildError: a build log read as an error at the `.cu` line
             kp.report       record / read_records: what a notebook found, for `make run`'s index page
             kp.notebooks    execute a notebook in a fresh kernel; tagged_code (imports Jupyter's packages)
             kp.gpumodel.gpus     the GPU table (data sheets, per-SM limits, measured bandwidth) and occupancy
             kp.gpumodel.estimates  a modelled launch's time and terms as printed (LaunchEstimate, Estimate)
             kp.gpumodel.flow     the basic blocks' runs solved from what the trace knows (the equations of runs)
             kp.gpumodel.charges  a launch's memory totals scaled from the source's accesses to what the SASS requests
             kp.gpumodel.register_banks  the issue clocks register-bank conflicts cost, per basic block of SASS
             kp.sourceview   a profile as Nsight's source view: the `.cu` lines with the GPU model's figures
             kp.pictures     a profile's pictures: who touched which element; one shared line's lanes and banks; who
                             took a branch, by lane
             kp.newop        a new op from templates/new_op/, in its five places (`make new-op NAME=...`)
             kp.checksource  where a check-mode finding sits in its `.cu`: the loop a race spans, the `if` over barriers
             kp.puzzlefiles  what runs a puzzle's kernel: its launcher and binding, made from its spec
    floor 3  kp.doctor       every check a target's build needs, and `python helpers.py doctor`
             kp.gpumodel.subcores  one SM's four sub-cores issuing a basic block's SASS, clock by clock
             kp.gpumodel.depend   dependent instructions: a basic block's critical path through its registers
             kp.gpumodel.counts   the GPU model's counts as records (Line, Launch, ...), put at their `.cu` lines
             kp.standin      the CPU stand-in's shared pieces: translator, runtime, precompiled header, link stubs
    floor 4  kp.build        build key, flags per target, ninja -> Build
             kp.gpumodel.runs     the equations for a kernel's basic blocks' runs, from the trace's lines and branches
             kp.gpumodel.schedule  which basic blocks the sub-cores simulate; a launch's clocks of them, by waves
    floor 5  kp.check        check mode's findings (KernelCheckError, KernelCheckWarning) and last writers
             kp.gpumodel.ptxas    ptxas's registers, shared memory and spills per kernel, without a GPU
             kp.gpumodel.sass     the SASS nvcc compiled for a GPU's arch, each instruction at its `.cu` line
             kp.gpumodel.gputime  a modelled time of counted launches on a named GPU (LaunchWork -> Estimate)
             kp.bench        median_ms, bench -> BenchResult
             kp.package      an op as a wheel (`import <op>`: torch.ops.<op>.*) and a CMake library -> Package
    floor 6  kp.load         a built library registered under a fresh namespace -> LoadedKernel (hot reload)
             kp.verify       check_against_reference, gradcheck, check_compiled: print, then assert
             kp.gpumodel.compiled  a profile's counts as nvcc compiled the kernels: SASS per launch, line, GPU
             kp.gpumodel.local    local memory as nvcc compiled it: a launch's LDL/STL lines, each thread's stack
             kp.program      a standalone program (`main()`) built and run in a child process; `%%cuda`
    floor 7  kp.gpumodel.profile  the GPU model's counters per `.cu` line (profile -> Profile), its modelled time
             kp.display      setup, show_kernel, show_graph, show_kernel_resources, the notebook's error view
    floor 8  kp.grade        a kernel file against a Puzzle-shaped spec: check mode, the targets, the goals; a score
             kp.contract     a lesson's op contract in one cell: opcheck, gradcheck, torch.compile, the graph
    floor 9  kp.puzzle       notebook 00's puzzles: their table and files, puzzle(name), hints, the scoreboard
             kp.exercise     the lessons' exercises: their table and files, exercise(name), hints

The GPU model's twenty-one modules are one room, kp/gpumodel/ (its __init__ draws how data flows through it: trace ->
counts -> SASS -> caches -> time); each keeps its floor above.

tests/test_layout.py holds the package to this.

Importing the package makes the build tools reachable (configure_environment: CUDA_HOME must be right
before torch.utils.cpp_extension is imported); nothing else in it acts at import time.
"""

from kp.toolchain import configure_environment

configure_environment()
