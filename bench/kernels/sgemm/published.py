"""The published timings of siboehm's SGEMM kernels (sgemm.cu beside this file) that bench/published_gemm.py sets the
GPU model against: each source quoted as it was read, with its address, the GPU it names, the matrix size, what its
code differs in from the vendored kernels and so which kernels are compared; and the arithmetic of the comparison
(|model ÷ published - 1|, its mean and worst, Kendall's τ between the two rankings) against issue 31's goals.
Owns no model and no measurement: it never profiles, never times. Not a script of bench/ (a data module beside the
kernels it describes).

Nothing here was set from a model's figures, and no model constant was set from these (the held-out set of issue 31).
Sources found but left out are listed in NOT_USED, which the script prints.
"""

import re
from dataclasses import dataclass

SIZE = 4096  # every source below timed M = N = K = 4096
GOALS = {"mean": 0.15, "worst": 0.35, "tau": 0.9}  # issue 31's, for the held-out set
# A markdown row of siboehm's README tables: "| 6: Vectorized Mem Access | `18237.3` | 78.4% |" (backticks from
# 4820c60 on, none before)
TABLE_ROW = r"^\| (?P<kernel>\d+): [^|]*?\| +`?(?P<gflops>[\d.]+)`? \|"


@dataclass(frozen=True)
class Source:
    """One published table: `text` quoted whole as read at `where`; `pattern` finds its (kernel, GFLOP/s) at SIZE
    (`kernel` fixed where the text is one kernel's output); `kernels` those compared (`left_out` says why not the
    rest); `gpu` the row of kp.gpumodel.gpus the model times, `device` the GPU as the source names it."""

    label: str
    gpu: str
    device: str
    where: str
    text: str
    kernels: tuple
    left_out: str = ""
    pattern: str = TABLE_ROW
    kernel: int = 0

    def gflops(self):
        """{kernel: GFLOP/s} of `kernels`, read from `text`; RuntimeError naming the source where one is missing."""
        found = {}
        for m in re.finditer(self.pattern, self.text, re.M):
            found[self.kernel or int(m["kernel"])] = float(m["gflops"])
        missing = [k for k in self.kernels if k not in found]
        if missing:
            raise RuntimeError(f"published source {self.label!r}: no figure for kernel(s) {missing} in its text")
        return {k: found[k] for k in self.kernels}

    def seconds(self):
        """{kernel: s} at SIZE³: 2·SIZE³ / GFLOP/s (siboehm's sgemm.cu counts FLOPs as 2·m·n·k)."""
        return {k: 2 * SIZE**3 / (rate * 1e9) for k, rate in self.gflops().items()}


A6000 = Source(
    label="siboehm 60cba6f",
    gpu="RTX A6000",
    device="NVIDIA A6000",
    where="siboehm/SGEMM_CUDA README.md at commit 60cba6f9b20a198116c76f18de8047f44df8c8b8 (2023-12-27), "
    '"Running the kernels on a NVIDIA A6000 (Ampere)", "GFLOPs at matrix size 4096x4096"; the figures came with '
    '4820c60 (2023-03-04, "Update results"; its heading said A100, corrected to A6000 two minutes later in 06d2cf5, '
    "and 4092x4092 corrected to 4096x4096 in b64882f). Kernels 1-10 and their launches at 4820c60 differ from "
    "60cba6f's (vendored) only in kernel 10's const qualifiers and comments",
    text="""\
| Kernel                              |  GFLOPs/s | Performance relative to cuBLAS |
|:------------------------------------|----------:|:-------------------------------|
| 1: Naive                            |   `309.0` | 1.3%                           |
| 2: GMEM Coalescing                  |  `1986.5` | 8.5%                           |
| 3: SMEM Caching                     |  `2980.3` | 12.8%                          |
| 4: 1D Blocktiling                   |  `8474.7` | 36.5%                          |
| 5: 2D Blocktiling                   | `15971.7` | 68.7%                          |
| 7: Avoid Bank Conflicts (Linearize) | `16213.4` | 69.7%                          |
| 8: Avoid Bank Conflicts (Offset)    | `16459.2` | 70.8%                          |
| 11: Double Buffering                | `17278.3` | 74.3%                          |
| 6: Vectorized Mem Access            | `18237.3` | 78.4%                          |
| 9: Autotuning                       | `19721.0` | 84.8%                          |
| 10: Warptiling                      | `21779.3` | 93.7%                          |
| 0: cuBLAS                           | `23249.6` | 100.0%                         |
""",
    kernels=tuple(range(1, 11)),
    left_out="11 (not one of the ten) and 0 (cuBLAS)",
)

# siboehm ran on an A100 from 2023-02-18 (227857f) to 2023-03-04 (cb726f2, "back to A6000": CUDA_COMPUTE_CAPABILITY
# 80 -> 86 and kernels 9 and 10's "Settings for A100" commented out). The README's last A100 table is c09b350's.
A100 = Source(
    label="siboehm c09b350",
    gpu="A100",
    device="NVIDIA A100 (the variant not named)",
    where='siboehm/SGEMM_CUDA README.md at commit c09b35070029c41b38d1be4c299f4627f0a40bad (2023-02-26, "K10: '
    'Updated params after tune sweep"), "Running the kernels on a NVIDIA A100 (Ampere)", "GFLOPs at matrix size '
    "4092x4092\" (a typo: that commit's plot_benchmark_results.py tabulates size == 4096, the largest its sgemm.cu "
    "runs; alpha 0.5, beta 3, 50 launches). Kernels 1-8's rows are 1a1b786's (2023-02-25); there kernels 1-5, 7 and 8 "
    "are 60cba6f's (vendored) but for the parentheses of a CEIL_DIV macro no kernel body uses, launched as the "
    "vendored launchers do. The model's A100 row is the SXM4 80GB; the source does not say which A100",
    text="""\
| Kernel                              |   GFLOPs/s | Performance relative to cuBLAS   |
|:------------------------------------|-----------:|:---------------------------------|
| 1: Naive                            |      292.1 | 1.5%                             |
| 2: GMEM Coalescing                  |     3119.0 | 16.4%                            |
| 3: SMEM Caching                     |     5451.9 | 28.6%                            |
| 4: 1D Blocktiling                   |    10368.6 | 54.5%                            |
| 5: 2D Blocktiling                   |    14155.1 | 74.4%                            |
| 8: Avoid Bank Conflicts (Offset)    |    15086.2 | 79.3%                            |
| 7: Avoid Bank Conflicts (Linearize) |    15171.3 | 79.7%                            |
| 6: Vectorized Mem Access            |    15296.5 | 80.4%                            |
| 9: Autotuning                       |    16344.1 | 85.9%                            |
| 10: Warptiling                      |    17806.7 | 93.6%                            |
| 0: cuBLAS                           |    19029.5 | 100.0%                           |
""",
    kernels=(1, 2, 3, 4, 5, 7, 8),
    left_out="6 and 9 (their bodies there sync at the loop's top, `if (bkIdx != 0) __syncthreads();`, and 6 has a "
    "`#pragma unroll`: not the vendored bodies), 10 (its body there is split into wt:: device functions and launched "
    'with the "Settings for A100", 64 x 128 tiles: not the vendored body), 0 (cuBLAS)',
)

RTX4090_ISSUE21 = Source(
    label="SGEMM_CUDA issue 21",
    gpu="RTX 4090",
    device="RTX 4090 (WSL2/WIN11, cuda 12.4)",
    where='https://github.com/siboehm/SGEMM_CUDA/issues/21 (bssrdf, 2025-10-08, "Question about double '
    'buffering"): "On my RTX 4090 (WSL2/WIN11, cuda 12.4), kernel 12 (double buffering) is slower than kernel 10 '
    '(warp tiling)"; the repository as published then (60cba6f, its last commit, 2023-12-27): kernel 10 with the '
    "A6000 settings the vendored launcher has. Its CMakeLists.txt builds for compute capability 86, so the 4090 most "
    "likely ran sm_86 code; the model reads nvcc's sm_89 SASS. One kernel: a worst error, no ranking",
    text="""\
$ ./sgemm 10
Running kernel 10 on device 0.
Max size: 4096
dimensions(m=n=k) 128, alpha: 0.5, beta: 3
Average elapsed time: (0.000020) s, performance: (  209.2) GFLOPS. size: (128).
dimensions(m=n=k) 256, alpha: 0.5, beta: 3
Average elapsed time: (0.000038) s, performance: (  888.1) GFLOPS. size: (256).
dimensions(m=n=k) 512, alpha: 0.5, beta: 3
Average elapsed time: (0.000058) s, performance: ( 4590.9) GFLOPS. size: (512).
dimensions(m=n=k) 1024, alpha: 0.5, beta: 3
Average elapsed time: (0.000126) s, performance: (17075.9) GFLOPS. size: (1024).
dimensions(m=n=k) 2048, alpha: 0.5, beta: 3
Average elapsed time: (0.000384) s, performance: (44766.6) GFLOPS. size: (2048).
dimensions(m=n=k) 4096, alpha: 0.5, beta: 3
Average elapsed time: (0.002913) s, performance: (47180.7) GFLOPS. size: (4096).
""",
    kernels=(10,),
    left_out="the issue's other run is kernel 12 (not one of the ten)",
    pattern=rf"performance: \( *(?P<gflops>[\d.]+)\) GFLOPS\. size: \({SIZE}\)\.",
    kernel=10,
)

SOURCES = (A6000, A100, RTX4090_ISSUE21)
# Read while searching (2026-11-28) and not used, with why: nothing of theirs is compared
NOT_USED = (
    'RTX 4090, kernels 1-10 at 4096³, two versions of one README ("Running the kernels on a NVIDIA RTX 4090 (Ada, '
    'SM89)"): the search index gave its text but not its repository or commit, so it cannot be quoted by address',
    'A100, kernels 1-10 at 4096³ in TFLOPS (a README "built upon siboehm-SGEMM_CUDA", "The experiments run on one '
    'A100 GPU"): likewise no repository or commit',
    "H100: reproductions of the worklog on Modal were found, their tables not read with an address",
    'https://github.com/siboehm/SGEMM_CUDA/issues/6: kernel 9 "15TFlops on A100 (sm80), and 6TFlops on 2080ti '
    '(sm75)", then 17 and 11 after autotuning: rounded, no size, launch settings changed and not given',
)


def kendall_tau(xs, ys):
    """Kendall's τ-a of two equally long sequences: (concordant - discordant pairs) / all pairs (ties count 0); None
    for fewer than two (no pair to order)."""
    pairs = [(i, j) for i in range(len(xs)) for j in range(i + 1, len(xs))]
    if not pairs:
        return None
    sign = [(xs[i] - xs[j]) * (ys[i] - ys[j]) for i, j in pairs]
    return (sum(s > 0 for s in sign) - sum(s < 0 for s in sign)) / len(pairs)


@dataclass(frozen=True)
class Agreement:
    """The model's times against published (or measured) ones, kernel by kernel, and the goals' figures."""

    ratio: dict  # {kernel: model ÷ published}
    mean: float  # mean |ratio - 1|
    worst: int  # the kernel of the largest |ratio - 1|
    tau: object  # Kendall's τ of the two rankings, None for one kernel
    swapped: list  # [(i, j)]: i published faster than j, modelled slower

    @property
    def worst_error(self):
        return abs(self.ratio[self.worst] - 1)

    def met(self, key):
        """Whether goal `key` ("mean", "worst", "tau") is met; None where it cannot be judged (τ of one kernel)."""
        value = {"mean": self.mean, "worst": self.worst_error, "tau": self.tau}[key]
        if value is None:
            return None
        return value >= GOALS[key] if key == "tau" else value <= GOALS[key]

    def verdict(self, key):
        """'met (goal ≤ 0.15)', 'missed (goal ≥ 0.9)' or 'not judged (...)' for goal `key`."""
        met, bound = self.met(key), f"{'≥' if key == 'tau' else '≤'} {GOALS[key]:g}"
        return f"{'not judged' if met is None else 'met' if met else 'missed'} (goal {bound})"

    def summary_row(self):
        """The goals' figures as the summary table shows them, and how many of the goals judged were met."""
        met = [self.met(key) for key in GOALS]
        return {
            "kernels": len(self.ratio),
            "mean error": f"{self.mean:.1%}",
            "worst": f"{self.worst_error:.1%} (kernel {self.worst}, {self.ratio[self.worst]:.2f}x)",
            "Kendall τ": "n/a" if self.tau is None else f"{self.tau:.2f}",
            "goals met": f"{sum(m is True for m in met)} of {sum(m is not None for m in met)}",
        }


def agreement(model, times):
    """Agreement of `model` ({kernel: s}) with `times` ({kernel: s}; the kernels compared are `times`')."""
    kernels = list(times)
    ratio = {k: model[k] / times[k] for k in kernels}
    error = {k: abs(r - 1) for k, r in ratio.items()}
    order = sorted(kernels, key=times.get)  # fastest first, as published or measured
    swapped = [(i, j) for x, i in enumerate(order) for j in order[x + 1 :] if model[i] > model[j]]
    return Agreement(
        ratio=ratio,
        mean=sum(error.values()) / len(error),
        worst=max(kernels, key=error.get),
        tau=kendall_tau([model[k] for k in kernels], [times[k] for k in kernels]),
        swapped=swapped,
    )
