"""What nvcc made of every kernel in kernels/*.cu: registers, shared memory, stack and spills, from ptxas.

    python bench/kernel_resources.py                # one markdown table, for the default arch (sm_90)
    python bench/kernel_resources.py --arch sm_80

A compile-only CUDA build (kp.gpumodel.ptxas.kernel_resources: nvcc -c --resource-usage on the kernel file
alone), so it needs nvcc, not a GPU. Without nvcc it says so in one line and exits 0: there is
nothing to report, and nothing is wrong with the kernels.
"""

import argparse
import sys

import helpers
import kp.gpumodel.ptxas


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default=kp.gpumodel.ptxas.cuda_arch(), help="nvcc's -arch (default: %(default)s)")
    parser.add_argument("--quick", action="store_true", help="accepted for bench/report.py; the run is quick anyway")
    args = parser.parse_args(argv)
    try:
        table = kp.gpumodel.ptxas.resources_table(sorted(helpers.KERNELS.glob("*.cu")), args.arch)
    except helpers.ToolchainError as e:
        fix = str(e).splitlines()[-1].strip()
        print(f"nvcc was not found, so there is no CUDA build to report on and no ptxas table. {fix}")
        return 0
    except helpers.KernelBuildError as e:
        print(f"**FAILED**: the compile-only CUDA build did not compile:\n\n```\n{e}\n```")
        return 1
    print(
        f"ptxas resource usage for {args.arch}, from a compile-only nvcc build of each kernel file (no GPU needed). "
        "Registers are per thread, shared memory is the static `__shared__` per block, stack is each thread's "
        "stack frame; spills are bytes that ptxas moved to local memory because registers ran out (0 is what "
        "you want).\n"
    )
    print(table.markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
