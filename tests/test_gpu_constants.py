"""kp.gpumodel.gpu_constants: the GPU model's constants that no data sheet gives, each listed in the README with its
value and its source, and none fitted to a kernel's timing."""

import pytest

import kp.gpumodel.gpu_constants
from kp.files import ROOT
from kp.gpumodel.gpus import gpu


def test_every_constant_of_the_model_is_listed_in_the_readme_with_its_source():
    """kp.gpumodel.gpu_constants holds what no data sheet gives; the README's table of the model's constants names each,
    its value and its source, so a reader can check them (issue 31, item 7)."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### The GPU model's constants") :]
    section = section[: section.index("\n## ")]
    names = [n for n in vars(kp.gpumodel.gpu_constants) if n.isupper() and not n.startswith("H100_MEASURED_")]
    assert names and all(f"`{n}`" in section for n in names), [n for n in names if f"`{n}`" not in section]
    for source in ("data sheet", "Programming Guide", "Jia", "measured", "assumption", "Kernel Profiling Guide"):
        assert source in section


def test_the_h100_row_takes_the_constants():
    h = gpu("H100")
    assert h.achievable_dram_bandwidth == kp.gpumodel.gpu_constants.H100_MEASURED_BANDWIDTH
    assert (h.dram_latency, h.launch_floor) == (
        kp.gpumodel.gpu_constants.DRAM_LATENCY,
        kp.gpumodel.gpu_constants.LAUNCH_FLOOR,
    )
    assert (h.l1_hit_clocks, h.l2_hit_clocks, h.l1_wavefronts_per_clock) == (34, 265, 1)  # gpu-benches' H100 PCIe
    assert h.l2_bandwidth == pytest.approx(34.5 * 132 * 1.98e9)  # its 6.9 TB/s over 114 SMs at 1.755 GHz, per SM


@pytest.mark.parametrize("name", ["T4", "A10", "A100", "L4", "H100"])
def test_every_gpu_takes_its_compute_capabilitys_latencies_and_l2_bandwidth(name):
    g = gpu(name)
    cc = g.compute_capability
    assert (g.l1_hit_clocks, g.l2_hit_clocks) == kp.gpumodel.gpu_constants.HIT_CLOCKS[cc]
    assert g.l2_bytes_per_clock_per_sm == kp.gpumodel.gpu_constants.L2_BYTES_PER_CLOCK_PER_SM[cc]
