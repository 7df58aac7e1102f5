"""kp.gpumodel.register_banks: the issue clocks that register-bank conflicts cost, counted from SASS by the rule of
Huerta et al. (MICRO 2025, section 5.3: two banks by register parity, one read per bank per clock, a fixed-latency
instruction reads its sources within three clocks or waits; the `.reuse` cache, one entry per bank and operand slot), on
listings whose bubbles follow by hand; and kp.gpumodel.gputime's issue term, which adds them. Needs no GPU; the last
test compiles with nvcc."""

import pytest
import torch

import helpers
import kp.files
import kp.gpumodel.register_banks
import kp.gpumodel.sass
import kp.toolchain
from kp.gpumodel.cfg import basic_blocks
from kp.gpumodel.depend import dependent_blocks
from kp.gpumodel.gpus import gpu
from kp.gpumodel.gputime import LaunchWork, estimate_launch
from kp.gpumodel.register_banks import conflict_cycles, sources, stalls
from kp.gpumodel.sass import Instruction, classify, parse_sass


def listing(*texts, labels=()):
    """Instructions of one function at offsets 0, 0x10, ...; `labels`: the indices that are branch targets."""
    out = []
    for n, text in enumerate(texts):
        opcode = text.split()[1] if text.startswith("@") else text.split()[0]
        out.append(Instruction("f", 16 * n, "k.cu", 1, text, opcode, *classify(opcode), 1, "",
                               ".L_x_1" if n in labels else ""))  # fmt: skip
    return out


def test_an_ffma_with_all_three_sources_in_one_bank_waits_two_clocks_and_reuse_removes_it():
    """FFMA R4, R2, R6, R8, eight times: R2, R6, R8 all even (bank 0). The first reads them at clocks 1-3 (its
    window); the second, ready at 2, finds bank 0 free only at 4 and waits until 4-6 are free: 2 bubbles; every later
    one likewise. 2 x 7 = 14. With R2 and R6 `.reuse`d, only the first reads all three; the others read R8 alone, one
    read a clock: none."""
    plain = listing(*["FFMA R4, R2, R6, R8"] * 8)
    assert stalls(plain) == {16 * n: 2 for n in range(1, 8)}
    assert sum(stalls(plain).values()) == 14
    assert stalls(listing(*["FFMA R4, R2.reuse, R6.reuse, R8"] * 8)) == {}


def test_sources_in_two_banks_read_in_parallel_and_two_in_one_bank_cost_a_clock_an_instruction():
    """FFMA R4, R3, R6, R9: bank 1 (R3, R9) twice, bank 0 once: the first reserves bank 1 at 1, 2; the second (2-4)
    finds 3, 4; the third (3-5) only 5, waits to 4 (5, 6): 1 bubble, and so on: 1 for each but the first two. FMUL
    R4, R2, R6 (both bank 0) likewise: the study's "1-cycle bubble"; FMUL R4, R2, R5 (one in each bank): none."""
    assert sum(stalls(listing(*["FFMA R4, R3, R6, R9"] * 8)).values()) == 6
    assert sum(stalls(listing(*["FMUL R4, R2, R6"] * 8)).values()) == 6
    assert stalls(listing(*["FMUL R4, R2, R5"] * 8)) == {}


def test_ffmas_reading_three_registers_each_issue_two_in_three_clocks_as_the_studys_maxflops():
    """64 FFMAs, each three uncached sources, alternately two in bank 0 and one in bank 1 and the other way round:
    3 reads a bank per pair of instructions, 2 ports: 3 clocks a pair once the first two pairs have used the windows'
    slack (the fifth waits for bank 0 at 7): 30 bubbles, 94 clocks for 64 instructions. Two ports per bank would take
    64: 1.47x faster, where Huerta et al. (table 6) simulate MaxFlops on the RTX A6000 1.45x faster (its FFMAs' reuse
    bits: 1.3% of its instructions)."""
    found = stalls(listing(*["FFMA R4, R2, R6, R9", "FFMA R5, R3, R7, R8"] * 32))
    assert found == {16 * n: 1 for n in range(4, 64, 2)}
    assert (64 + sum(found.values())) / 64 == pytest.approx(1.47, abs=0.005)


def test_the_studys_listing_1_waits_zero_one_or_two_clocks_by_the_parity_of_two_registers():
    """Huerta et al.'s listing 1: CLOCK, NOP, FFMA R11, R10, R12, R14, FFMA R13, R16, R_X, R_Y, NOP, CLOCK; they
    measured 5, 6 and 7 clocks for (R19, R21), (R18, R21), (R18, R20): 0, 1, 2 bubbles at the second FFMA."""
    for (x, y), bubbles in {("R19", "R21"): 0, ("R18", "R21"): 1, ("R18", "R20"): 2}.items():
        code = listing("CS2R R2, SR_CLOCKLO", "NOP", "FFMA R11, R10, R12, R14", f"FFMA R13, R16, {x}, {y}", "NOP")
        assert stalls(code) == ({0x30: bubbles} if bubbles else {})


def test_a_cached_operand_serves_only_its_own_slot_until_a_read_of_its_bank_and_slot_evicts_it():
    """The study's listing 4: IADD3 R1, R2.reuse, R3, R4 first, then a second instruction, three NOPs, FFMA R10, R2,
    R12, R14 (all bank 0) and FFMA R11, R16, R18, R20 (all bank 0), which waits 1 clock after the one before it read
    two registers (R2 hit the cache) and 2 after it read three. R2 hits after FFMA R5, R2.reuse, R7, R8 (example 2);
    misses after FFMA R5, R2, R7, R8 (1: read without reuse, it is evicted) and after FFMA R5, R4, R7, R8 (4: same
    bank and slot); hits after FFMA R5, R7, R2, R8 (3: R7 in bank 1 leaves bank 0's slot 0 alone)."""
    for second, hit in {"FFMA R5, R2.reuse, R7, R8": True, "FFMA R5, R2, R7, R8": False,
                        "FFMA R5, R4, R7, R8": False, "FFMA R5, R7, R2, R8": True}.items():  # fmt: skip
        code = listing("IADD3 R1, R2.reuse, R3, R4", second, "NOP", "NOP", "NOP", "FFMA R10, R2, R12, R14",
                       "FFMA R11, R16, R18, R20")  # fmt: skip
        # the last reads three bank-0 registers at once after it: 1 bubble after two reads (a hit), 2 after three
        waited = stalls(code).get(0x60, 0)
        assert waited == (1 if hit else 2), second


def test_what_the_rule_reads_and_leaves_out():
    """Sources after the destination and any predicate written; RZ, constants and uniform registers read no bank; a
    64-bit pair one register in each; memory, MUFU and control instructions neither wait nor touch the cache."""
    assert sources("@!P0 IADD3 R2, P0, R3.reuse, -R4, RZ") == [(0, 3, True), (1, 4, False)]
    assert sources("FFMA R4, R2, c[0x0][0x160], UR4") == [(0, 2, False)]
    assert sources("IMAD.WIDE R2, R3, 0x4, R6") == [(0, 3, False), (2, 6, False), (2, 7, False)]
    assert stalls(listing(*["LDS R4, [R2+0x10]"] * 4, *["MUFU.EX2 R4, R2"] * 4)) == {}


def test_each_basic_block_of_the_cfg_starts_with_free_ports_and_an_empty_cache():
    """Two FFMAs of three bank-0 sources: the second waits 2 clocks where both lie in one basic block
    (kp.gpumodel.cfg.basic_blocks, the model's one split), none where a branch names the second's label (a block of
    its own). A label no branch names, a WARPSYNC or a BSYNC between them end no block: 2 (1 with the WARPSYNC's or
    BSYNC's clock between)."""
    ffma, loop = "FFMA R4, R2, R6, R8", "@P0 BRA `(.L_x_1)"
    assert stalls(listing(ffma, ffma, loop, labels=(1,))) == {}
    assert stalls(listing(ffma, ffma, labels=(1,))) == {0x10: 2}
    assert stalls(listing(ffma, "WARPSYNC 0xffffffff", ffma)) == {0x20: 1}
    assert stalls(listing(ffma, "BSYNC B0", ffma)) == {0x20: 1}
    assert stalls(listing(ffma, "BRA `(.L_x_1)", ffma, labels=(2,))) == {}


def test_a_register_at_two_source_slots_is_read_twice_its_sharing_unknown():
    """FFMA R4, R2, R2, R4: R2 at slots 0 and 1 is two reads of bank 0 (with R4, three: 2 bubbles at each but the
    first of 8, 14). Whether the hardware reads it once no source says (the module's docstring): as three distinct
    registers, until measured."""
    assert sources("FFMA R4, R2, R2, R4") == [(0, 2, False), (1, 2, False), (2, 4, False)]
    assert sum(stalls(listing(*["FFMA R4, R2, R2, R4"] * 8)).values()) == 14


def test_an_absolute_values_bars_before_its_flags_keep_the_operand_and_its_reuse():
    """nvdisasm prints |R2|.reuse and -|R2|.reuse (the bars before the flags): still a read of R2 at its slot, cached.
    FMULs alternating -|R2|.reuse, R6 and |R8|.reuse, R10 read two bank-0 registers each (each evicts the other's
    cached slot 0): 1 bubble at each but the first two, 6, as FMUL R4, R2, R6 (dropped, R2 and R8 would leave one read
    each: none)."""
    assert sources("FADD.FTZ R4, |R2|.reuse, -RZ") == [(0, 2, True)]
    assert sources("FSETP.GT.AND P2, PT, |R23|.reuse, R28.reuse, PT") == [(0, 23, True), (1, 28, True)]
    assert sources("FFMA R4, -|R2|.reuse, R6, |R8|") == [(0, 2, True), (1, 6, False), (2, 8, False)]
    assert sum(stalls(listing(*["FMUL R4, -|R2|.reuse, R6", "FMUL R5, |R8|.reuse, R10"] * 4)).values()) == 6


def test_a_predicate_written_before_a_register_destination_leaves_the_sources_at_their_slots():
    """LOP3.LUT P0, RZ, R2, ...: P0 and RZ are its destinations, R2 its slot 0 (not slot 1); a register destination
    too (R6). FCHK P0, R0, R3 writes the predicate alone: R0 and R3 are its sources."""
    assert sources("LOP3.LUT P0, RZ, R2, 0x3, RZ, 0xc0, !PT") == [(0, 2, False)]
    assert sources("LOP3.LUT P0, R6, R3.reuse, R5, RZ, 0xc0, !PT") == [(0, 3, True), (1, 5, False)]
    assert sources("LOP3.LUT R6, R3, R5, RZ, 0xc0, !PT") == [(0, 3, False), (1, 5, False)]
    assert sources("FCHK P0, R0, R3") == [(0, 0, False), (1, 3, False)]


LISTING = """\
\t.section\t.text._Z1kPf,"ax",@progbits
_Z1kPf:
\t//## File "/p/k.cu", line 5
        /*0000*/                   FFMA R4, R2, R6, R8 ;
        /*0010*/                   FFMA R5, R2, R6, R10 ;
        /*0020*/                   FFMA R7, R2.reuse, R6.reuse, R12 ;
        /*0030*/                   FFMA R9, R2, R6, R14 ;
        /*0040*/                   EXIT ;
"""


def test_a_listings_stalls_times_the_runs_of_its_instructions_are_the_kernels_lost_clocks():
    """nvdisasm's text, all sources in bank 0: the first FFMA reads at 1-3; the second, ready at 2, waits to 4 (2
    bubbles); the third, ready at 5, to 7 (2 more: its R2, R6 were read without reuse before) and caches R2, R6; the
    fourth, ready at 8, hits both and reads R14 alone, at 10: none. Run 1000 times by a warp: 4000 clocks."""
    found = parse_sass(LISTING)
    assert [i.text for i in found][2] == "FFMA R7, R2.reuse, R6.reuse, R12"
    assert stalls(found) == {0x10: 2, 0x20: 2}
    assert conflict_cycles(found, [(i, 1000.0) for i in found]) == 4000


def test_the_issue_term_adds_the_clocks_lost_to_bank_conflicts():
    """One block of 4 warps on the H100 (4 schedulers at 1.98 GHz): 4e6 warp instructions issue in 1e6 clocks; 2e6
    clocks of bank stalls, spread over the 4 schedulers, add 0.5e6: 1.5e6 / 1.98e9 s."""
    work = LaunchWork(kernel="k", grid_blocks=1, threads_per_block=128, issued=4e6)
    plain, banked = estimate_launch("H100", work), estimate_launch("H100", LaunchWork(**{**vars(work),
                                                                                     "bank_stalls": 2e6}))  # fmt: skip
    clock = gpu("H100").clock_hz
    assert plain.issue_s == pytest.approx(1e6 / clock)
    assert banked.issue_s == pytest.approx(1.5e6 / clock)


class OneBlockLoop:
    """What kp.gpumodel.depend.dependent_blocks reads of a profile: one kernel's SASS, one basic block run `runs` times
    by the trace's count."""

    def __init__(self, code, runs):
        self.code, self.runs = code, runs

    def kernel_sass(self, kernel, gpu):
        return self.code

    def block_runs(self, kernel, gpu):
        return {0: (self.runs, self.runs)}


def one_warp_issue_clocks(code, runs=1000):
    """The issue term, in clocks per run, of one warp running `code` (one basic block) `runs` times: the block's runs,
    instructions, critical path and bubbles from dependent_blocks, its bank stalls from conflict_cycles."""
    work = LaunchWork(kernel="k", grid_blocks=1, threads_per_block=32, issued=len(code) * runs,
                      bank_stalls=conflict_cycles(code, [(i, runs) for i in code]),
                      dependent_blocks=dependent_blocks(OneBlockLoop(code, runs), "k"))  # fmt: skip
    return work.dependent_blocks, estimate_launch("H100", work).issue_s * gpu("H100").clock_hz / runs


def test_bank_bubbles_hide_under_a_dependent_chain_and_add_to_a_stream_of_independent_instructions():
    """The reviewer's chain: FFMA R4, R2, R6, R4 eight times (all sources in bank 0: 2 bubbles at each but the first,
    14; each FFMA waits 4 clocks for the R4 before: path 32). Issued 4 clocks apart, the ports are free again: one
    warp takes max(8 + 14, 32) = 32 clocks a run, not 32 + 14 = 46. FFMAs into R10, R12, ... (independent: path 8)
    issue back to back and wait for the banks: 8 + 14 = 22."""
    chain = listing(*["FFMA R4, R2, R6, R4"] * 8)
    blocks, clocks = one_warp_issue_clocks(chain)
    assert blocks == ((1000, 8, 32, 14),)
    assert clocks == pytest.approx(32)
    stream = listing(*[f"FFMA R{10 + 2 * k}, R2, R6, R8" for k in range(8)])
    blocks, clocks = one_warp_issue_clocks(stream)
    assert blocks == ((1000, 8, 8, 14),)
    assert clocks == pytest.approx(22)


def test_a_listings_stalls_are_counted_once_for_every_caller(monkeypatch):
    """A profile asks for one kernel's stalls in its launch total (conflict_cycles) and in each launch's basic blocks
    (kp.gpumodel.depend.dependent_blocks): the listing is split and its ports reserved once, the answers the same."""
    splits = []
    monkeypatch.setattr(kp.gpumodel.register_banks, "basic_blocks", lambda code: splits.append(1) or basic_blocks(code))
    code = listing(*[f"FFMA R{40 + 2 * k}, R32, R34, R36" for k in range(6)])  # a listing no other test has
    counts = OneBlockLoop(code, 10)
    total = conflict_cycles(code, [(i, 10) for i in code])
    first, second = dependent_blocks(counts, "k"), dependent_blocks(counts, "k")  # two launches of the kernel
    assert splits == [1]
    assert total == 10 * sum(stalls(code).values()) == 100 and first == second == ((10, 6, 6, 10),)


needs_sass = pytest.mark.skipif(
    kp.toolchain.find_cuda_root() is None or kp.gpumodel.sass.nvdisasm() is None, reason="no nvcc or no nvdisasm here"
)


@needs_sass
def test_a_profiles_launch_carries_its_kernels_bank_stalls_into_the_issue_term():
    """tests/cuda_cpu/compiled.cu's halves, as profiled on 8 blocks of one warp: nvcc 13.0 compiles its even warps'
    side to 16 FFMA R4, R4, R4, 1 for sm_90, two reads of bank 0 each: 14 bubbles a run by the rule. The launch's
    bank_stalls are its SASS's stalls x their runs and its basic blocks' bubbles x their runs (every block's runs
    fixed). That side is a dependent chain (path 61 clocks) longer than its 16 instructions and 14 bubbles: one warp
    per scheduler issues them 4 clocks apart, the bubbles hidden under the path. The issue term by hand: instructions +
    bubbles + each block's runs x max(0, path - instructions - bubbles), the busiest SM's 1/8 of it (one block)."""
    from kp.gpumodel.profile import profile

    k = helpers.load_kernel(kp.files.ROOT / "tests" / "cuda_cpu" / "compiled.cu", target="cpu", check=True, quiet=True)
    floats = 256
    p = profile(k.run, 7, torch.zeros(4 * floats), torch.zeros(floats), max_blocks=4)  # 7: halves (tests/test_sass.py)
    (work,) = p.work(gpu="H100")
    runs = p._instruction_runs("H100")["halves"]
    assert work.bank_stalls > 0
    assert work.bank_stalls == pytest.approx(conflict_cycles(p.kernel_sass("halves", "H100"), runs))
    assert sum(r * b for r, _, _, b in work.dependent_blocks) == pytest.approx(work.bank_stalls)
    assert any(b and path > n + b for _, n, path, b in work.dependent_blocks), "no block's bubbles under its path"
    waits = sum(r * max(0.0, path - n - b) for r, n, path, b in work.dependent_blocks)
    assert (work.grid_blocks, work.threads_per_block) == (8, 32)
    clocks = (work.issued + work.bank_stalls + waits) / work.grid_blocks
    assert estimate_launch("H100", work).issue_s == pytest.approx(clocks / gpu("H100").clock_hz)


def test_the_first_free_clock_per_bank_is_the_window_rule():
    """Review L10: read_start (kp.gpumodel.subcores' sub-cores and stalls alike) keeps each bank's first free clock, not
    the set of reserved read clocks: an instruction starts no earlier than the one before, so a port left free before
    that is never used again. Against the rule searched clock by clock over the reserved set (the sources' words:
    held "until it can reserve all ports needed to read the source operands in the next three cycles") on 300 seeded
    random blocks of FFMAs, FMULs and IADD3s with and without reuse bits: the same bubbles."""
    import random

    from kp.gpumodel.register_banks import BANKS, WINDOW

    def searched(block):
        cached, reserved, clock, out = {}, set(), 0, []
        for text in block:
            clock += 1
            reads = [0] * BANKS
            for slot, register, reuse in sources(text):
                reads[register % BANKS] += cached.get((register % BANKS, slot)) != register
                cached[(register % BANKS, slot)] = register if reuse else None
            start = clock
            while not all(sum((b, start + k) not in reserved for k in range(WINDOW)) >= n for b, n in enumerate(reads)):
                start += 1
            for bank, n in enumerate(reads):
                free = [start + k for k in range(WINDOW) if (bank, start + k) not in reserved]
                reserved |= {(bank, c) for c in free[:n]}
            out.append(start - clock)
            clock = start
        return out

    rng = random.Random(31)
    for _ in range(300):
        texts = []
        for _ in range(rng.randint(1, 24)):
            op, count = rng.choice([("FFMA", 3), ("FMUL", 2), ("IADD3", 3)])
            regs = [f"R{rng.randint(0, 9)}{'.reuse' if rng.random() < 0.3 else ''}" for _ in range(count)]
            texts.append(f"{op} R20, {', '.join(regs)}")
        found = stalls(listing(*texts))
        assert [found.get(16 * k, 0) for k in range(len(texts))] == searched(texts), texts
