"""What the CPU stand-in costs, against the targets of its issue. Prints a markdown table.

    python bench/cpu_standin.py          # about 10 s
    python bench/cpu_standin.py --quick  # fewer runs and barriers: the same rows, noisier

- elementwise: add2 (one CUDA thread per element, blocks of 256) on 2^22 floats against torch.add,
  at the same thread count;
- one __syncthreads arrival: a 256-thread block doing nothing but barriers, per thread per barrier;
- compiling one kernel file with the header at -O2: ninja rebuilding add2's kernel object alone;
- the guards around CPU tensors (kernels/common/cuda_cpu_redzones.cpp: redzones, and a mapping of its own between
  unmapped guard regions), against torch's allocator (measured before the runtime is loaded): allocating and
  freeing a tensor of 1024 floats one at a time, 1000 alive at once (the guards reuse freed mappings: they keep
  1024) and 5000 at once (most need a new mapping: mmap, mprotect, the first touch of its pages, munmap); and one
  add2 call on 1024 floats (the op call, the output's allocation, the launch and the check of the three tensors'
  redzones) against torch.add.
"""

import argparse
import os
import platform
import statistics
import subprocess
import time

import torch

import helpers
import kp.bench
import kp.files

N = 2**22


def median_seconds(fn, reps=21, warmup=3):
    """The median of exactly `reps` runs after `warmup`, with helpers.bench's clock."""
    ms, _ = kp.bench.median_ms(fn, warmup=warmup, min_reps=reps)
    return ms / 1e3


def elementwise(add2, threads, reps=21):
    torch.set_num_threads(threads)
    a, b = torch.randn(N), torch.randn(N)
    ours = median_seconds(lambda: add2.add2(a, b), reps)
    native = median_seconds(lambda: torch.add(a, b), reps)
    return ours, native


def syncthreads_ns(costs, threads, blocks=8, block=256, iters=2000, reps=7):
    torch.set_num_threads(threads)
    out = torch.zeros(blocks, dtype=torch.int32)
    seconds = median_seconds(lambda: costs.sync_loop(out, block, iters), reps=reps, warmup=1)
    assert (out == iters).all(), out
    # Each OS thread runs its share of the blocks: time x threads / arrivals = cost of one arrival.
    return seconds * threads / (blocks * block * iters) * 1e9


def kernel_compile_seconds(add2, reps=3):
    build_dir = add2.build.library.parent
    source = build_dir / "src" / "add2.cu.cpp"
    times = []
    for _ in range(reps):
        os.utime(source)
        start = time.perf_counter()
        subprocess.run(["ninja", "-C", str(build_dir), "add2.cu.o"], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def allocation_us(reps, alive):
    """Allocating and freeing a tensor of 1024 floats, in µs: `alive` of them at once (1: each freed before the next
    is made), 5000 per run."""

    def run():
        for _ in range(5000 // alive):
            [torch.empty(1024) for _ in range(alive)]

    return median_seconds(run, reps) * 1e6 / 5000


def small_call_us(add2, reps):
    """One add2 call on 1024 floats, against torch.add, in µs (1000 calls per run), on one thread."""
    torch.set_num_threads(1)
    a, b = torch.randn(1024), torch.randn(1024)

    def calls(fn):
        def run():
            for _ in range(1000):
                fn(a, b)

        return run

    return median_seconds(calls(add2.add2), reps) * 1e3, median_seconds(calls(torch.add), reps) * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs and barriers (for tests)")
    args = parser.parse_args(argv)
    # runs per elementwise measure, per barrier measure, kernel compiles; barriers per thread
    elementwise_reps, sync_reps, compile_reps, barriers = (3, 3, 1, 200) if args.quick else (21, 7, 3, 2000)
    torch.set_num_threads(1)
    # Before the runtime is loaded: torch's own allocator; after: the guards'.
    alive = {1: "one at a time", 1000: "1000 alive at once", 5000: "5000 alive at once (new mappings)"}
    plain_alloc = {n: allocation_us(elementwise_reps, n) for n in alive}
    add2 = helpers.load_kernel("add2", target="cpu", quiet=True)
    guarded_alloc = {n: allocation_us(elementwise_reps, n) for n in alive}
    costs = helpers.load_kernel(kp.files.ROOT / "bench" / "kernels" / "standin_costs.cu", target="cpu", quiet=True)
    cores = os.cpu_count()
    print(f"CPU stand-in costs; {cores} cores, {platform.machine()}, torch {torch.__version__}\n")
    if args.quick:
        print("--quick: 3 runs per measure, 200 barriers per thread, one compile; the numbers are noisier.\n")
    print("| measure | stand-in | reference | ratio | target |")
    print("|---|---|---|---|---|")
    for threads in sorted({1, cores}):
        ours, native = elementwise(add2, threads, elementwise_reps)
        print(
            f"| add2 on 2^22 floats, {threads} thread(s) | {ours * 1e3:.2f} ms | torch.add {native * 1e3:.2f} ms "
            f"| {ours / native:.2f}x | within 3x |"
        )
    for threads in sorted({1, cores}):
        ns = syncthreads_ns(costs, threads, iters=barriers, reps=sync_reps)
        print(f"| one __syncthreads arrival, {threads} thread(s) | {ns:.1f} ns | | | at most 15 ns |")
    for n, how in alive.items():
        ours, plain = guarded_alloc[n], plain_alloc[n]
        print(
            f"| allocate and free 1024 floats, {how}, with guards | {ours:.2f} µs | torch's allocator "
            f"{plain:.2f} µs | {ours / plain:.2f}x | |"
        )
    ours, native = small_call_us(add2, elementwise_reps)
    print(
        f"| add2 on 1024 floats, one call (allocation, launch, redzone checks) | {ours:.2f} µs | torch.add "
        f"{native:.2f} µs | {ours / native:.2f}x | |"
    )
    seconds = kernel_compile_seconds(add2, compile_reps)
    print(f"| compile add2.cu with the header, -O2 | {seconds:.2f} s | | | at most 1.5 s |")


if __name__ == "__main__":
    main()
