"""kp.gpumodel.gpus: the GPU table (names, data-sheet numbers, the per-SM limits of each compute capability, peaks that
match the data sheets) and occupancy by the CUDA Occupancy Calculator's rules, each case worked out by hand in its
comment."""

import pytest

from kp.gpumodel.gpus import GPU, GPUS, gpu, gpu_table, occupancy

KiB = 1024


def test_gpu_finds_short_names_in_any_case_and_h100_is_the_sxm():
    assert gpu("H100") is GPUS["H100 SXM"] and gpu("h100") is GPUS["H100 SXM"]
    assert gpu("h100-pcie") is GPUS["H100 PCIe"] and gpu("H100 PCIE") is GPUS["H100 PCIe"]
    assert gpu("rtx4090") is gpu("4090") is GPUS["RTX 4090"]
    assert gpu("a100") is GPUS["A100"] and gpu("t4") is GPUS["T4"] and gpu("L4") is GPUS["L4"]
    assert gpu(GPUS["T4"]) is GPUS["T4"]
    assert list(GPUS) == [
        "H100 SXM",
        "H100 PCIe",
        "A100",
        "L4",
        "T4",
        "RTX 4090",
        "RTX 2080 Ti",
        "A10",
        "RTX 3090",
        "RTX 3080",
        "RTX A6000",
    ]
    assert gpu("a6000") is GPUS["RTX A6000"] and gpu("rtx 3090") is gpu("3090") and gpu("2080ti").sms == 68
    assert all(isinstance(g, GPU) for g in GPUS.values())


def test_an_unknown_gpu_is_an_error_that_lists_the_known_ones():
    with pytest.raises(
        ValueError, match=r"unknown GPU 'V100': known GPUs are H100 SXM, H100 PCIe, A100, L4, T4, RTX 4090, RTX 2080 Ti"
    ):
        gpu("V100")
    with pytest.raises(ValueError, match="unknown GPU"):
        occupancy("B200", 256, 32)


def test_the_h100_sxm_row_is_its_data_sheet_and_our_measured_bandwidth():
    h = gpu("H100")
    assert (h.compute_capability, h.sms, h.boost_clock_ghz, h.dram_bandwidth) == ((9, 0), 132, 1.98, 3.35e12)
    assert h.achievable_dram_bandwidth == 2.97e12  # measured here: torch.add on 2^26 floats, 2.95-3.0 TB/s
    assert h.l2_bytes == 50 * 1024**2
    assert (h.max_threads_per_sm, h.max_warps_per_sm, h.max_blocks_per_sm) == (2048, 64, 32)
    assert (h.registers_per_sm, h.max_registers_per_thread, h.register_unit) == (65536, 255, 256)
    # 228 KiB per SM; a block may opt in to 227 KiB; the runtime keeps 1 KiB per block; allocation in 128 bytes
    assert (h.shared_per_sm, h.shared_per_block, h.shared_reserved_per_block, h.shared_unit) == (
        233472,
        232448,
        1024,
        128,
    )
    assert 2e-6 <= h.launch_floor <= 3e-6 and 600e-9 <= h.dram_latency <= 800e-9


def test_the_others_reach_the_h100s_measured_share_of_their_data_sheet_bandwidth():
    sheets = [("H100 PCIe", 2.0e12), ("A100", 2.039e12), ("L4", 300e9), ("T4", 320e9), ("RTX 4090", 1008e9)]
    sheets += [("RTX 2080 Ti", 616e9), ("A10", 600e9), ("RTX 3090", 936e9), ("RTX 3080", 760e9), ("RTX A6000", 768e9)]
    for name, sheet in sheets:
        assert gpu(name).dram_bandwidth == sheet
        assert gpu(name).achievable_dram_bandwidth == pytest.approx(sheet * 2.97 / 3.35)  # 0.887 of the data sheet


def test_per_sm_limits_follow_the_compute_capability():
    t4, l4, a100 = gpu("T4"), gpu("L4"), gpu("A100")
    # Turing 7.5: 32 warps, 16 blocks, 64 KiB shared, no reserve, 256-byte units
    assert (t4.max_warps_per_sm, t4.max_blocks_per_sm, t4.shared_per_sm, t4.shared_reserved_per_block) == (
        32,
        16,
        64 * KiB,
        0,
    )
    assert t4.shared_unit == 256
    # Ada 8.9: 48 warps (1536 threads), 24 blocks, 100 KiB shared (99 KiB per block)
    assert (l4.max_threads_per_sm, l4.max_blocks_per_sm, l4.shared_per_sm, l4.shared_per_block) == (
        1536,
        24,
        100 * KiB,
        99 * KiB,
    )
    # Ampere 8.0: 164 KiB shared (163 KiB per block)
    assert (a100.max_warps_per_sm, a100.shared_per_sm, a100.shared_per_block) == (64, 164 * KiB, 163 * KiB)


# The data sheets' peaks (TFLOP/s, FP32 and FP64 without tensor cores; None where a data sheet gives none): SMs x
# results per clock x 2 x boost clock reproduces them (the H100's FP64 "34" and "26" are 33.5 and 25.6 rounded up).
@pytest.mark.parametrize(
    "name, fp32, fp64",
    [("H100 SXM", 67, 34), ("H100 PCIe", 51, 26), ("A100", 19.5, 9.7), ("L4", 30.3, None), ("T4", 8.1, None)]
    + [("RTX 4090", 82.6, None)],
)
def test_peak_flops_match_the_data_sheets(name, fp32, fp64):
    g = gpu(name)
    assert g.fp32_flops / 1e12 == pytest.approx(fp32, rel=0.01)
    if fp64:
        assert g.fp64_flops / 1e12 == pytest.approx(fp64, rel=0.02)
    else:  # Ada and Turing: 2 FP64 results per clock per SM (1/64 and 1/32 of FP32)
        assert g.fp64_flops == g.sms * 2 * 2 * g.clock_hz


def test_256_threads_of_32_registers_fill_an_h100_sm_limited_by_threads():
    occ = occupancy("H100", 256, 32)
    # threads: 2048 / 256 = 8 blocks (8 warps each, 64 warps)
    # registers: 32 x 32 = 1024 per warp (a multiple of 256); 65536 / 4 sub-partitions = 16384; 16384 / 1024 = 16
    #   warps each, x 4 = 64 warps -> 64 / 8 = 8 blocks (a tie: threads is named first)
    # shared memory: 0 + the 1 KiB reserve = 1024 bytes -> 233472 / 1024 = 228 blocks; blocks: 32
    assert occ.limits == {"threads": 8, "registers": 8, "shared memory": 228, "blocks": 32}
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy, occ.limited_by) == (8, 64, 1.0, "threads")
    assert (occ.registers_per_block, occ.shared_per_block) == (8192, 1024)
    assert occ.describe() == (
        "32 registers x 256 threads -> 8 blocks (64 warps) per SM on an H100 SXM: 100% occupancy "
        "(limited by threads; registers would allow exactly 8 too)"
    )


def test_64_registers_halve_it_limited_by_registers():
    occ = occupancy("H100", 256, 64)
    # registers: 64 x 32 = 2048 per warp; 16384 / 2048 = 8 warps per sub-partition, x 4 = 32 warps -> 32 / 8 = 4 blocks
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy, occ.limited_by) == (4, 32, 0.5, "registers")
    assert occ.describe() == (
        "64 registers x 256 threads -> 4 blocks (32 warps) per SM on an H100 SXM: 50% occupancy (limited by registers)"
    )


def test_one_register_past_32_rounds_up_to_256_per_warp():
    occ = occupancy("H100", 256, 33)
    # 33 x 32 = 1056 -> 1280 (the next multiple of 256); 16384 // 1280 = 12 warps per sub-partition, x 4 = 48 warps
    # -> 48 // 8 = 6 blocks
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy, occ.limited_by) == (6, 48, 0.75, "registers")
    assert occ.registers_per_block == 1280 * 8


def test_registers_fit_whole_warps_per_sub_partition():
    occ = occupancy("H100", 64, 40)
    # 40 x 32 = 1280 per warp; 16384 // 1280 = 12 warps per sub-partition (not 12.8), x 4 = 48 warps -> 48 // 2 = 24
    # blocks (65536 // 1280 = 51 warps, the whole register file at once, would give 25); threads 32, blocks 32
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limited_by) == (24, 48, "registers")


def test_48_kib_of_shared_memory_leaves_4_blocks_of_128_threads():
    occ = occupancy("H100", 128, 32, 48 * KiB)
    # shared: 49152 + 1024 reserve = 50176 (392 x 128); 233472 // 50176 = 4 (5 would need 250880)
    # threads: 64 warps / 4 = 16 blocks; registers: 64 warps / 4 = 16 blocks; blocks: 32
    assert occ.limits == {"threads": 16, "registers": 16, "shared memory": 4, "blocks": 32}
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy, occ.limited_by) == (4, 16, 0.25, "shared memory")
    assert occ.describe() == (
        "32 registers x 128 threads, 48 KiB shared -> 4 blocks (16 warps) per SM on an H100 SXM: 25% occupancy "
        "(limited by shared memory)"
    )


def test_shared_memory_is_rounded_to_the_unit_with_the_reserve_from_8_0_on():
    h100, t4 = occupancy("H100", 64, 16, 20000), occupancy("T4", 64, 16, 20000)
    # H100: 20000 + 1024 = 21024 -> 21120 (165 x 128); 233472 // 21120 = 11 blocks
    assert (h100.shared_per_block, h100.blocks_per_sm, h100.limited_by) == (21120, 11, "shared memory")
    # T4: no reserve; 20000 -> 20224 (79 x 256); 65536 // 20224 = 3 blocks
    assert (t4.shared_per_block, t4.blocks_per_sm, t4.limited_by) == (20224, 3, "shared memory")
    assert t4.describe() == (  # 3 blocks x 2 warps = 6 of 32 warps: 18.75%
        "16 registers x 64 threads, 20000 bytes shared -> 3 blocks (6 warps) per SM on a T4: 19% occupancy "
        "(limited by shared memory)"
    )


def test_a_1024_thread_block_is_alone_on_an_a100_sm_at_64_registers():
    occ = occupancy("A100", 1024, 64)
    # registers: 2048 per warp x 32 warps = 65536, the whole file; 8 warps per sub-partition x 4 = 32 warps = 1 block
    # threads: 64 warps / 32 = 2 blocks
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy, occ.limited_by) == (1, 32, 0.5, "registers")
    assert occupancy("T4", 1024, 32).describe() == (
        "32 registers x 1024 threads -> 1 block (32 warps) per SM on a T4: 100% occupancy (limited by threads)"
    )


def test_the_most_shared_memory_a_block_may_opt_in_to_fits_once():
    occ = occupancy("H100", 256, 32, 227 * KiB)  # 232448 + 1024 = 233472: the whole SM
    assert (occ.blocks_per_sm, occ.limited_by) == (1, "shared memory")


@pytest.mark.parametrize(
    "name, threads, registers, shared, message",
    [
        ("H100", 1025, 32, 0, "1025 threads per block: a block has 1 to 1024 threads"),
        ("H100", 0, 32, 0, "0 threads per block"),
        ("H100", 256, 256, 0, "256 registers per thread: at most 255"),
        ("H100", 256, 32, -1, "-1 bytes of shared memory"),
        # 228 KiB + 1 KiB reserve > 227 KiB + 1 KiB
        ("H100", 256, 32, 228 * KiB, "233472 bytes of shared memory per block cannot launch on H100 SXM"),
        ("A100", 256, 32, 164 * KiB, "at most 166912 \\(163 KiB"),
        # 65 x 32 = 2080 -> 2304 per warp x 32 warps = 73728 > 65536
        ("H100", 1024, 65, 0, "65 registers x 1024 threads cannot launch on H100 SXM: 2304 registers per warp x 32"),
        # 80 x 32 = 2560 per warp: 25 warps hold 64000 <= 65536, but the hardware counts warps in fours: 28 x 2560
        ("H100", 800, 80, 0, "2560 registers per warp x 28 warps > 65536 per block"),
    ],
)
def test_configurations_that_cannot_launch_are_errors(name, threads, registers, shared, message):
    with pytest.raises(ValueError, match=message):
        occupancy(name, threads, registers, shared)


def test_gpu_table_has_a_row_per_gpu_as_people_read_it():
    table = gpu_table()
    assert [r["GPU"] for r in table] == list(GPUS)
    assert table[0] == {
        "GPU": "H100 SXM",
        "compute capability": "9.0",
        "SMs": 132,
        "boost clock (MHz)": 1980,
        "DRAM (TB/s, data sheet)": 3.35,
        "DRAM (TB/s, achievable)": 2.97,
        "L2 (MiB)": 50,
        "FP32 (TFLOP/s)": pytest.approx(66.90816),  # 132 x 128 x 2 x 1.98 GHz
        "FP64 (TFLOP/s)": pytest.approx(33.45408),  # 132 x 64 x 2 x 1.98 GHz
        "warps / blocks per SM": "64 / 32",
        "shared memory per SM / block (KiB)": "228 / 227",
    }
    assert "| T4 | 7.5 | 40 | 1590 | 0.32 | 0.284 | 4 | 8.14 | 0.254 | 32 / 16 | 64 / 64 |" in table.markdown()


def test_the_h100_measurements_are_the_readmes_on_a_gpu_table():
    """kp.gpumodel.gpus quotes the README's "On a GPU" table: each op's throughput, and F.linear's beside `linear`."""
    import re

    from kp.files import ROOT
    from kp.gpumodel.gpus import H100_MEASURED, H100_MEASURED_ON, H100_MEASURED_TORCH, h100_measured

    row = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| linear 4096³"))
    custom, torch_op = (float(re.search(r"\d+\.\d+", cell)[0]) for cell in row.split("|")[2:4])
    assert H100_MEASURED["linear"] == ((4096, 4096, 4096), custom * 1e12)
    assert "F.linear" in row.split("|")[3] and H100_MEASURED_TORCH["F.linear"] == ((4096, 4096, 4096), torch_op * 1e12)
    assert h100_measured("F.linear") == ((4096, 4096, 4096), torch_op * 1e12, H100_MEASURED_ON)
    assert h100_measured("linear")[1] == custom * 1e12


def test_the_table_covers_compute_capability_7_5_to_9_0_with_the_common_cards_of_each():
    by_cc = {}
    for g in GPUS.values():
        by_cc.setdefault(g.compute_capability, []).append(g.name)
    assert by_cc == {
        (7, 5): ["T4", "RTX 2080 Ti"],
        (8, 0): ["A100"],
        (8, 6): ["A10", "RTX 3090", "RTX 3080", "RTX A6000"],
        (8, 9): ["L4", "RTX 4090"],
        (9, 0): ["H100 SXM", "H100 PCIe"],
    }
    # 8.6 (the Programming Guide's table): 48 warps and 16 blocks per SM, 100 KiB shared of which a block 99, FP32 128
    # results per clock per SM (two FP32 datapaths per partition), FP64 2. The RTX A6000: 84 SMs x 128 x 2 x 1.8 GHz
    a6000 = gpu("RTX A6000")
    assert (a6000.max_warps_per_sm, a6000.max_blocks_per_sm, a6000.shared_per_sm, a6000.shared_per_block) == (
        48,
        16,
        100 * KiB,
        99 * KiB,
    )
    assert a6000.fp32_flops == pytest.approx(38.7e12, rel=1e-3) and a6000.l2_bytes == 6 * 1024**2
    assert gpu("RTX 2080 Ti").l2_bytes == 5.5 * 1024**2  # 5,632 KB
    # A 1024-thread block: 32 warps fit an 8.6 SM once (48 // 32), an 8.0 SM twice
    assert occupancy("A10", 1024, 32).blocks_per_sm == 1 and occupancy("A100", 1024, 32).blocks_per_sm == 2


def test_hit_latencies_are_clocks_of_the_sm():
    h = gpu("H100")
    assert (h.l1_hit_clocks, h.l2_hit_clocks) == (
        34,
        265,
    )  # gpu-benches' H100 PCIe pointer chase (kp.gpumodel.gpu_constants)
    assert h.l1_latency == pytest.approx(34 / 1.98e9) and h.l2_latency == pytest.approx(265 / 1.98e9)
    assert h.l1_latency < h.l2_latency < h.dram_latency
