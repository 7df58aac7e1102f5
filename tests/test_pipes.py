"""kp.gpumodel.pipes and the pipe term of kp.gpumodel.gputime: which pipe each SASS opcode runs on, and the time a
launch's warp instructions hold the slowest pipe of its busiest SM, each worked out by hand from the table's rates
(results per clock per SM: FP32 64 on 8.0, 128 on 8.6 and 9.0; integer and IMAD 64; special functions 16; shuffle 32;
FP32 and IMAD sharing the FMA datapath; FP32 and integer sharing 128 lanes on 8.6; the load/store pipe's three terms:
every instruction it takes, shuffles included, one per clock per SM, its memory instructions one per 2 clocks per SM
(Huerta et al. MICRO 2025, Table 1; one per clock on 8.0 and 9.0, NVIDIA's forum) and one per 4 clocks per busy
sub-partition, Huerta et al.) and the GPU table (H100 SXM:
132 SMs, 1.98 GHz; A100: 108, 1.41 GHz; A10 (8.6): 72, 1.695 GHz). A LaunchWork built by hand, then fma_loop's and
float4_whole's SASS (tests/cuda_cpu/compiled.cu) profiled."""

import dataclasses

import pytest
import torch
from test_sass import COMPILED, NAMES, needs_sass

import helpers
import kp.gpumodel.sass
from kp.gpumodel.gpus import gpu
from kp.gpumodel.gputime import LaunchWork, estimate_launch
from kp.gpumodel.pipes import pipe_clocks, pipe_of, rates
from kp.gpumodel.profile import profile

H100, A100, A10 = 1.98e9, 1.41e9, 1.695e9


@pytest.fixture(scope="module")
def k():
    return helpers.load_kernel(COMPILED, target="cpu", check=True, quiet=True)


def test_each_opcode_runs_on_its_rows_pipe_and_uniform_ones_on_none():
    assert [pipe_of(op) for op in ("FFMA", "FADD", "FMUL32I", "IMAD.MOV.U32", "IMAD.WIDE", "IADD3", "LEA.HI.X")] == [
        "FP32", "FP32", "FP32", "IMAD", "IMAD", "integer", "integer"
    ]  # fmt: skip
    assert [pipe_of(op) for op in ("ISETP.GE.AND", "LOP3.LUT", "SHF.R.U32.HI", "FMNMX", "FSETP.GT.AND")] == [
        "integer"
    ] * 5  # fmt: skip
    assert [pipe_of(op) for op in ("MUFU.EX2", "SHFL.BFLY", "F2I.TRUNC.NTZ", "I2F.U32", "POPC", "DFMA")] == [
        "special-function", "shuffle", "conversion", "conversion", "bit-count", "FP64"
    ]  # fmt: skip
    assert [pipe_of(op) for op in ("F2F.F64.F32", "F2I.S64.TRUNC", "I2F.F64.S32", "F2F.F16.F32", "IDP.4A.S8.S8")] == [
        "64-bit conversion", "64-bit conversion", "64-bit conversion", "conversion", "IMAD"
    ]  # fmt: skip
    # the uniform datapath (once per warp, not on the lanes), no row of the table, or never slower than issue: none
    for op in ("UIADD3", "UMOV", "ULDC.64", "USHF.L.U32", "UISETP.NE.AND", "MOV", "SEL", "PRMT", "HFMA2.MMA", "EXIT"):
        assert pipe_of(op) is None, op


def test_loads_stores_atomics_and_special_register_reads_run_on_the_lsu_and_constant_loads_do_not():
    """Nsight Compute's "lsu" pipe: loads, stores, atomics and reductions to global, local and shared memory ("LSU"),
    and S2R and VOTE, which pass it without a memory access ("LSU other": NVIDIA's forum answer puts VOTE on the LSU).
    Constant loads and block barriers are the ADU's (LDC, BAR), S2UR and ULDC the uniform datapath's; shuffles keep
    their own pipe (and are added to the LSU's issue term: pipe_clocks)."""
    lsu = ("LDG.E", "LDG.E.128.CONSTANT", "STG.E.64", "LD.E", "ST.E.STRONG.GPU", "LDL", "STL.128", "LDS.U.128", "STS",
           "LDSM.16.M88.4", "STSM.16.M88.4", "ATOM.E.ADD.STRONG.GPU", "ATOMG.E.CAS.STRONG.GPU", "ATOMS.ADD",
           "RED.E.ADD.F32.FTZ.RN.STRONG.GPU", "REDG.E.ADD.STRONG.GPU", "LDGSTS.E.BYPASS.LTC128B.128",
           )  # fmt: skip
    assert [pipe_of(op) for op in lsu] == ["LSU"] * len(lsu)
    assert [pipe_of(op) for op in ("S2R", "VOTE.ANY", "VOTE.ALL", "VOTE.BALLOT")] == ["LSU other"] * 4
    for op in ("LDC", "LDC.64", "ULDC.64", "S2UR", "BAR.SYNC.DEFER_BLOCKING", "MEMBAR.SC.GPU", "DEPBAR.LE", "CS2R"):
        assert pipe_of(op) is None, op
    assert pipe_of("SHFL.DOWN") == "shuffle"


def test_the_rates_per_compute_capability():
    assert rates(gpu("H100")) == {"FP32": 128, "FP64": 64, "integer": 64, "IMAD": 64, "special-function": 16,
                                  "shuffle": 32, "conversion": 16, "bit-count": 16,
                                  "64-bit conversion": 16, "LSU issue": 32, "LSU": 32,
                                  "LSU address": 32}  # fmt: skip
    # the LSU on 7.5, 8.6 and 8.9: issue one warp instruction (32 results) per clock per SM, memory instructions one
    # per 2 clocks per SM (16 results) and one per 4 clocks per sub-partition (4 x 8 results); on 8.0 and 9.0 (the H100
    # above) the memory instructions at the issue's rate (GA100 and GH100 "can sustain 1 LSU instruction/cycle/SM")
    for name in ("T4", "A10", "RTX A6000", "RTX 4090", "L4"):
        r = rates(gpu(name))
        assert (r["LSU issue"], r["LSU"], r["LSU address"]) == (32, 16, 32), name
    r = rates(gpu("A100"))
    assert (r["LSU issue"], r["LSU"], r["LSU address"]) == (32, 32, 32)
    # 64-bit conversions at min(16, FP64's rate): 16 on the A100 (FP64 32), 2 on the A10 and the T4 (FP64 2)
    assert [rates(gpu(name))["64-bit conversion"] for name in ("A100", "A10", "T4")] == [16, 2, 2]
    assert (rates(gpu("A100"))["FP32"], rates(gpu("A100"))["FP64"]) == (64, 32)
    assert (rates(gpu("A10"))["FP32"], rates(gpu("A10"))["FP64"], rates(gpu("T4"))["FP32"]) == (128, 2, 64)
    volta = dataclasses.replace(gpu("A100"), compute_capability=(7, 0))  # no row of the table here
    with pytest.raises(RuntimeError, match=r"compute capability \(7, 0\): the pipe table covers"):
        rates(volta)


def per_sm(gpu_name, pipes, blocks=None, threads=256, **kw):
    """A launch of one block of `threads` per SM (8 warps: every sub-partition busy) whose every SM runs `pipes`
    (((pipe, warp instructions on one SM), ...)), and issues just those."""
    sms = gpu(gpu_name).sms
    blocks = blocks or sms
    total = tuple((p, n * blocks) for p, n in pipes)
    kw.setdefault("issued", sum(n for _, n in total))
    return estimate_launch(gpu_name, LaunchWork("k", blocks, threads, pipes=total, **kw))


def test_an_ffma_holds_an_a100s_fp32_lanes_two_clocks_and_an_h100s_one():
    """80,000 FFMA per SM. The A100's 64 FP32 lanes per SM: 80,000 x 32 / 64 = 40,000 clocks, twice its issue
    (80,000 / 4 schedulers = 20,000): FP32-pipe-bound, 28.37 us. The H100's 128: 20,000 clocks, the same as issue
    (10.10 us): issue names the bound (it comes first). The A10's (8.6) 128: 20,000 clocks likewise."""
    a100 = per_sm("A100", [("FP32", 80_000)])
    assert (a100.bound, a100.pipe_bound) == ("FP32 pipe", "FP32 pipe")
    assert a100.seconds == a100.pipe_s == pytest.approx(40_000 / A100)
    assert a100.issue_s == pytest.approx(20_000 / A100)
    h100 = per_sm("H100", [("FP32", 80_000)])
    assert h100.pipe_s == pytest.approx(20_000 / H100) == h100.issue_s
    assert h100.seconds == pytest.approx(20_000 / H100)  # the two tie: either names the bound
    assert per_sm("A10", [("FP32", 80_000)]).pipe_s == pytest.approx(20_000 / A10)


def test_integer_index_math_bounds_an_h100_above_issue():
    """80,000 IADD3 (or LOP3, ISETP, ...) per SM: 64 integer ALU lanes per SM on 9.0: 80,000 x 32 / 64 = 40,000 clocks
    (20.2 us); issue 20,000."""
    e = per_sm("H100", [("integer", 80_000)])
    assert (e.bound, e.seconds) == ("integer pipe", pytest.approx(40_000 / H100))


def test_special_functions_and_shuffles_have_their_own_slower_pipes():
    """Per SM on an H100: 10,000 MUFU at 16 per clock, 10,000 x 32 / 16 = 20,000 clocks; 10,000 SHFL at 32: 10,000;
    20,000 FFMA at 128: 5000; the shuffles pass the LSU too, its issue one per clock: 10,000. The special-function pipe
    bounds at 20,000 clocks; issue is 40,000 / 4 = 10,000."""
    e = per_sm("H100", [("special-function", 10_000), ("shuffle", 10_000), ("FP32", 20_000)])
    assert (e.bound, e.seconds) == ("special-function pipe", pytest.approx(20_000 / H100))
    assert pipe_clocks(gpu("H100"), [("special-function", 1000), ("shuffle", 1000), ("FP32", 2000)], 8) == {
        "special-function": 2000, "shuffle": 1000, "FP32": 500, "LSU issue": 1000
    }  # fmt: skip


def test_fp32_and_integer_share_128_lanes_on_86_and_not_on_90():
    """6000 FFMA and 2000 IADD3 per SM on an A10 (8.6): FP32 alone 6000 x 32 / 128 = 1500 clocks, integer alone 2000 x
    32 / 64 = 1000, together on their shared 128 lanes 8000 x 32 / 128 = 2000: "FP32 + integer pipe", 2000 clocks
    (as many as issue, 8000 / 4: on 8.6 the shared lanes give one warp instruction per clock per scheduler, issue's
    own rate, so the rule ties issue where these are all a kernel issues). On an H100 the two are apart: FP32 1500,
    integer 1000, no shared term."""
    clocks = pipe_clocks(gpu("A10"), [("FP32", 6000), ("integer", 2000)], 8)
    assert clocks == {"FP32": 1500, "integer": 1000, "FP32 + integer": 2000}
    e = per_sm("A10", [("FP32", 6000), ("integer", 2000)])
    assert (e.pipe_bound, e.pipe_s) == ("FP32 + integer pipe", pytest.approx(2000 / A10))
    assert pipe_clocks(gpu("H100"), [("FP32", 6000), ("integer", 2000)], 8) == {"FP32": 1500, "integer": 1000}


def test_fp32_and_imad_share_the_fma_datapath_at_the_fp32_rate():
    """40,000 FFMA and 40,000 IMAD per SM. On an A100 each alone takes 40,000 x 32 / 64 = 20,000 clocks (issue:
    80,000 / 4 = 20,000), but both go to its FMA datapath, 64 lanes per SM: 80,000 x 32 / 64 = 40,000 clocks, "FMA
    pipe", 28.37 us. On an H100 FP32 alone 10,000, IMAD alone 20,000 (the heavy half, 64), FMA 80,000 x 32 / 128 =
    20,000: no more than issue."""
    e = per_sm("A100", [("FP32", 40_000), ("IMAD", 40_000)])
    assert (e.bound, e.seconds) == ("FMA pipe", pytest.approx(40_000 / A100))
    both = [("FP32", 40_000), ("IMAD", 40_000)]
    assert pipe_clocks(gpu("H100"), both, 8) == {"FP32": 10_000, "IMAD": 20_000, "FMA": 20_000}
    # on 8.6 IMAD is integer work on the shared lanes too: 80,000 x 32 / 128 = 20,000
    assert pipe_clocks(gpu("A10"), both, 8)["FP32 + integer"] == 20_000


def test_only_the_sub_partitions_holding_a_warp_work_their_lanes():
    """One block of one warp on an A100, 10,000 FFMA: one sub-partition's 16 FP32 lanes, 10,000 x 32 / 16 = 20,000
    clocks; with 2 warps resident, 2 sub-partitions: 2000 FFMA on 32 lanes, 2000 clocks."""
    one = estimate_launch("A100", LaunchWork("k", 1, 32, pipes=(("FP32", 10_000),)))
    assert (one.bound, one.seconds) == ("FP32 pipe", pytest.approx(20_000 / A100))
    assert pipe_clocks(gpu("A100"), [("FP32", 2000)], 2) == {"FP32": 2000}
    with pytest.raises(RuntimeError, match="warps_resident"):
        pipe_clocks(gpu("A100"), [("FP32", 1)], 0)


def test_with_barriers_and_one_block_per_sm_the_pipe_adds_to_the_memory_phase():
    """108 blocks of 1024 threads on an A100 (one per SM), a barrier each, 8000 FFMA per SM (4000 clocks on the FP32
    pipe, 2.837 us), and DRAM moving 108 x 2^16 sectors: the phases add, memory + FP32 pipe."""
    e = per_sm("A100", [("FP32", 8000)], threads=1024, barriers=108, dram_read_sectors=108 * 2**16)
    assert e.phases_add and e.bound == f"{'latency' if e.latency_s > e.bandwidth_s else 'memory'} + FP32 pipe"
    assert e.seconds == pytest.approx(e.memory_s + 4000 / A100)


def test_without_pipes_counted_the_term_is_absent():
    """The same 80,000 warp instructions per SM on an A100: counted on no pipe (no SASS), issue bounds at 20,000
    clocks; counted as FFMA, the FP32 pipe at 40,000."""
    e = estimate_launch("A100", LaunchWork("k", 108, 256, issued=108 * 80_000))
    assert (e.pipe_s, e.pipe_bound, e.bound) == (0.0, "pipe", "issue")
    assert e.seconds == pytest.approx(20_000 / A100)
    assert per_sm("A100", [("FP32", 80_000)]).seconds == pytest.approx(40_000 / A100)


def test_with_barriers_one_blocks_chain_runs_its_pipes_on_the_sub_partitions_of_its_own_warps():
    """216 blocks of one warp on an A100 (108 SMs), a barrier each, 1000 FFMA a block. The busiest SM holds 2 blocks,
    both resident: 2 sub-partitions, 2000 FFMA x 32 / 32 lanes = 2000 clocks. One block slot runs its one block with
    the SM to itself, but its one warp holds one sub-partition, 16 lanes: 1000 x 32 / 16 = 2000 clocks, not the SM's
    2000 clocks shared out by 2 blocks (1000). Its memory phase and those 2000 clocks add."""
    e = per_sm("A100", [("FP32", 1000)], blocks=216, threads=32, barriers=216, dram_read_sectors=216 * 2**10)
    assert e.phases_add and e.bound.endswith(" + FP32 pipe")
    assert e.seconds == pytest.approx(e.memory_s + 2000 / A100)


@needs_sass
def test_fma_loops_uniform_loop_counter_is_charged_to_no_pipe_on_sm_90_and_its_iadd3_to_the_integer_pipe_on_sm_80(k):
    """fma_loop (n = 4096 iterations a warp, 128 blocks of one warp). Its sm_90 loop is UIADD3 (the counter, on the
    uniform datapath: no pipe), FFMA, ISETP, BRA; its entry has ISETP, IMAD, ISETP, its store block IMAD.WIDE: per
    warp n FFMA, n + 2 integer, 2 IMAD. Its sm_80 loop keeps the counter in a lane register, IADD3, FFMA, ISETP, BRA;
    entry IMAD.MOV twice, ISETP, IMAD, ISETP, preheader IMAD.MOV, store block IMAD.MOV, IMAD.WIDE: n FFMA, 2 n + 2
    integer, 6 IMAD. On both, 3 on the LSU: the entry's 2 S2R (thread and block index: "LSU other") and the store's
    STG ("LSU"). On the A100 the busiest SM has 2 of the 128 blocks (108 SMs), both resident: 2 of its 4
    sub-partitions work, at half its rates: FP32 2 n x 32 / 32 = 2 n clocks, FMA 2 (n + 6) = 2 n + 12, integer 2 (2 n
    + 2) = 4 n + 4 clocks, the pipe term."""
    n = 4096
    p = profile(k.run, NAMES.index("fma_loop"), torch.zeros(4 * n), torch.zeros(n), max_blocks=4)
    assert any(i.opcode.startswith("UIADD3") for i in p.kernel_sass("fma_loop", "H100"))
    assert p.pipe_instructions("H100")["fma_loop"] == {"FP32": 128 * n, "integer": 128 * (n + 2), "IMAD": 128 * 2,
                                                       "LSU": 128, "LSU other": 128 * 2}  # fmt: skip
    assert p.pipe_instructions("A100")["fma_loop"] == {"FP32": 128 * n, "integer": 128 * (2 * n + 2), "IMAD": 128 * 6,
                                                       "LSU": 128, "LSU other": 128 * 2}  # fmt: skip
    (work,) = p.work(gpu="A100")
    assert dict(work.pipes) == {"FP32": 128 * n, "integer": 128 * (2 * n + 2), "IMAD": 128 * 6, "LSU": 128,
                                "LSU other": 128 * 2}  # fmt: skip
    (e,) = p.estimate_detail("A100").launches
    assert (e.pipe_bound, e.pipe_s) == ("integer pipe", pytest.approx((4 * n + 4) / A100))
    assert kp.gpumodel.sass.arch_of("A100") == "sm_80"


@needs_sass
def test_work_sums_the_pipes_once_for_all_its_launches_and_shares_them_out_by_blocks(k, monkeypatch):
    """fma_loop launched three times, alike: each launch gets a third of the kernel's pipe instructions, as before,
    from one pipe_instructions per work() (it was made again for every launch: a pass over every SASS instruction)."""
    n = 4096
    run = lambda: [k.run(NAMES.index("fma_loop"), torch.zeros(4 * n), torch.zeros(n)) for _ in range(3)]  # noqa: E731
    p = profile(run, max_blocks=4)
    whole, made, original = p.pipe_instructions("A100")["fma_loop"], [], type(p).pipe_instructions
    monkeypatch.setattr(type(p), "pipe_instructions", lambda self, gpu="H100": made.append(gpu) or original(self, gpu))
    works = p.work(gpu="A100")
    assert made == ["A100"] and len(works) == 3
    assert [dict(w.pipes) for w in works] == [{pipe: pytest.approx(count / 3) for pipe, count in whole.items()}] * 3
    assert whole == {"FP32": 3 * 128 * n, "integer": 3 * 128 * (2 * n + 2), "IMAD": 3 * 128 * 6, "LSU": 3 * 128,
                     "LSU other": 3 * 128 * 2}  # as one launch x 3  # fmt: skip


def test_the_lsu_takes_a_memory_instruction_every_two_clocks_per_sm_and_every_instruction_once_per_clock():
    """Per SM of an A10 (8.6), 8 warps resident (4 sub-partitions busy). 20,000 coalesced 4-byte loads (LDG, one
    128-byte line each: 20,000 L1 wavefronts) and 10,000 SHFL: the SM's shared structures take a memory instruction
    every 2 clocks, 40,000 clocks ("LSU"); the MIO issues every instruction to the pipe, shuffles too, one per clock,
    30,000 ("LSU issue"); each sub-partition's address calculation one per 4 clocks, 4 of them, 20,000 ("LSU
    address"); the L1 pipe 20,000 (a line per clock), the shuffle pipe 10,000 x 32 / 32 = 10,000, issue 30,000 / 4 =
    7500. "LSU pipe", 40,000 clocks: 23.6 us. On an A100 (8.0) and an H100 (9.0), memory instructions at the issue's
    one per clock: LSU 20,000, LSU issue 30,000, the bound (21.3 us on the A100). Shuffle-heavy, 10,000 LDG and 30,000
    SHFL on the H100: LSU issue 40,000 over LSU 20,000 and shuffle 30,000."""
    e = per_sm("A10", [("LSU", 20_000), ("shuffle", 10_000)], l1_wavefronts=gpu("A10").sms * 20_000)
    assert (e.bound, e.pipe_bound) == ("LSU pipe", "LSU pipe")
    assert e.seconds == e.pipe_s == pytest.approx(40_000 / A10)
    assert e.l1_s == pytest.approx(20_000 / A10) and e.issue_s == pytest.approx(7500 / A10)
    e = per_sm("A100", [("LSU", 20_000), ("shuffle", 10_000)], l1_wavefronts=gpu("A100").sms * 20_000)
    assert (e.bound, e.pipe_bound) == ("LSU issue pipe", "LSU issue pipe")
    assert e.seconds == e.pipe_s == pytest.approx(30_000 / A100)
    assert e.l1_s == pytest.approx(20_000 / A100) and e.issue_s == pytest.approx(7500 / A100)
    assert pipe_clocks(gpu("A10"), [("LSU", 20_000), ("shuffle", 10_000)], 8) == {
        "LSU": 40_000, "LSU issue": 30_000, "LSU address": 20_000, "shuffle": 10_000
    }  # fmt: skip
    for name in ("A100", "H100"):
        assert pipe_clocks(gpu(name), [("LSU", 20_000), ("shuffle", 10_000)], 8) == {
            "LSU": 20_000, "LSU issue": 30_000, "LSU address": 20_000, "shuffle": 10_000
        }, name  # fmt: skip
    e = per_sm("H100", [("LSU", 10_000), ("shuffle", 30_000)])
    assert (e.bound, e.seconds) == ("LSU issue pipe", pytest.approx(40_000 / H100))


def test_one_busy_sub_partition_issues_a_memory_instruction_every_four_clocks_two_or_more_every_two():
    """Huerta et al.'s Table 1 (Ampere, loads and stores that hit): past the five a sub-core buffers, the i-th memory
    instruction issues at (i - 1) + 4 with 1 or 2 sub-cores active, + 6 with 3, + 8 with 4: per SM 1 per 4 clocks, then
    2 per 4, 3 per 6, 4 per 8. 1000 LDG on an A10 (8.6, GA102's kin): 4000 clocks with 1 warp resident (its
    sub-partition's address calculation), 2000 with 2, 3 or 4 (the shared structures); the MIO's issue 1000
    throughout. On an A100 (8.0: the shared structures one per clock) the address calculation binds below 4 busy
    sub-partitions, 4000, 2000, 1333 clocks, and with 4 the SM's one per clock, 1000. One warp's 10,000 on an A10:
    40,000 clocks, 23.6 us, four times its issue."""
    g = gpu("A10")
    assert pipe_clocks(g, [("LSU", 1000)], 1) == {"LSU issue": 1000, "LSU": 2000, "LSU address": 4000}
    assert pipe_clocks(g, [("LSU", 1000)], 2) == {"LSU issue": 1000, "LSU": 2000, "LSU address": 2000}
    assert pipe_clocks(g, [("LSU", 1000)], 3)["LSU address"] == pytest.approx(4000 / 3)
    for warps in (2, 3, 4, 8, 48):
        assert max(pipe_clocks(g, [("LSU", 1000)], warps).values()) == 2000
    a100 = gpu("A100")
    assert pipe_clocks(a100, [("LSU", 1000)], 1) == {"LSU issue": 1000, "LSU": 1000, "LSU address": 4000}
    assert [max(pipe_clocks(a100, [("LSU", 1000)], w).values()) for w in (2, 3)] == [2000, pytest.approx(4000 / 3)]
    for warps in (4, 8, 64):
        assert max(pipe_clocks(a100, [("LSU", 1000)], warps).values()) == 1000
    one = estimate_launch("A10", LaunchWork("k", 1, 32, issued=10_000, pipes=(("LSU", 10_000),)))
    assert (one.bound, one.pipe_bound) == ("LSU address pipe", "LSU address pipe")
    assert one.seconds == one.pipe_s == pytest.approx(40_000 / A10) and one.issue_s == pytest.approx(10_000 / A10)


def test_shuffles_special_register_reads_and_votes_hold_the_lsus_issue_without_memory_instructions():
    """1000 SHFL per SM of an H100, 8 warps: the shuffle pipe 1000 clocks and the LSU's issue 1000, no memory term; with
    1000 S2R or VOTE ("LSU other") beside them the issue term takes 2000, the bound. A shuffle runs on the shuffle pipe
    at the sub-partitions' rate: 4000 clocks with one warp, the LSU's issue 1000."""
    g = gpu("H100")
    assert pipe_clocks(g, [("shuffle", 1000)], 8) == {"shuffle": 1000, "LSU issue": 1000}
    assert pipe_clocks(g, [("shuffle", 1000), ("LSU other", 1000)], 8) == {"shuffle": 1000, "LSU issue": 2000}
    assert pipe_clocks(g, [("LSU other", 500)], 8) == {"LSU issue": 500}
    assert pipe_clocks(g, [("shuffle", 1000)], 1) == {"shuffle": 4000, "LSU issue": 1000}
    e = per_sm("H100", [("shuffle", 1000), ("LSU other", 1000)])
    assert (e.pipe_bound, e.pipe_s) == ("LSU issue pipe", pytest.approx(2000 / H100))


@needs_sass
def test_float4_wholes_lsu_instructions_are_its_s2r_ldg_and_stg_per_warp(k):
    """float4_whole on 1024 float4 (32 blocks of one warp, every lane in range). Its sm_86 SASS reads the thread and
    block index with 2 S2R ("LSU other"), then one LDG.E.128 and one STG.E.128 ("LSU"): 2 of each a warp, 64; its
    sm_90 SASS reads the block index with S2UR (the uniform datapath) and loads its constants with LDC (the ADU): one
    S2R a warp, 32."""
    n = 4096
    p = profile(k.run, NAMES.index("float4_whole"), torch.arange(4 * n, dtype=torch.float32), torch.zeros(n))
    assert p.pipe_instructions("A10")["float4_whole"] == {"LSU": 32 * 2, "LSU other": 32 * 2, "IMAD": 32 * 3,
                                                           "integer": 32}  # fmt: skip
    h100 = p.pipe_instructions("H100")["float4_whole"]
    assert (h100["LSU"], h100["LSU other"]) == (32 * 2, 32)


def test_one_list_of_memory_opcodes():
    """Review L10: the memory opcodes are kp.gpumodel.pipes' lists, which the LSU row, kp.gpumodel.depend's result
    latencies and kp.gpumodel.issue_rules' queue take; kp.gpumodel.sass's SPACES (a floor above) names the same."""
    from kp.gpumodel import depend, issue_rules, pipes, sass

    every = {*pipes.GLOBAL_LOADS, *pipes.SHARED_LOADS, *pipes.GLOBAL_STORES, *pipes.SHARED_STORES, *pipes.COPIES}
    assert set(pipes.PIPES["LSU"]) == every == set(sass.SPACES) == issue_rules.MEMORY
    assert depend.SHARED_RESULT == issue_rules.SHARED_LOADS
    assert depend.GLOBAL_RESULT - {"UTMALDG"} == issue_rules.MEMORY_LOADS - set(pipes.COPIES)
    assert {*pipes.GLOBAL_STORES, *pipes.SHARED_STORES, *pipes.COPIES} <= depend.NO_RESULT
