"""kp.gpumodel.issue_rules: what the sub-core simulation reads of each SASS instruction, on instructions as
kp.gpumodel.schedule.as_block gives them (their clocks in the simulation: tests/test_subcores.py)."""

from kp.gpumodel.gpus import gpu
from kp.gpumodel.issue_rules import COPY_RAW, COPY_WAR, DISPATCH, NONE, SHARED_LOAD_RAW, decode
from kp.gpumodel.pipes import rates

A6000 = gpu("RTX A6000")
ON = (tuple(A6000.compute_capability), tuple(sorted(rates(A6000).items())))


def _decoded(opcode, operands=""):
    return decode(((opcode, 1, False, NONE, NONE, 0, None, operands),), *ON)[0]


def test_depbar_operands_as_nvdisasm_prints_them():
    """`DEPBAR.LE SB0, 0x3` (nvdisasm 13.0 on an sm_86 cp.async pipeline) and Huerta et al.'s `DEPBAR .LE SB1, 0x3,
    {4,3,2}`: (counter, the most it may hold, the counters that must be at zero); another form, no wait."""
    assert _decoded("DEPBAR.LE", "SB0, 0x3")[9] == (0, 3, ())
    assert _decoded("DEPBAR.LE", "SB1, 0x3, {4,3,2}")[9] == (1, 3, (4, 3, 2))
    assert _decoded("DEPBAR.LE", "")[9] is None
    assert _decoded("NOP")[9] is None


def test_cp_async_copies_and_commits():
    """LDGSTS queues as a memory instruction with Table 2's WAR 13 (its RAW, 39, for its own counter: COPY_RAW);
    LDGDEPBAR commits the group."""
    copy = _decoded("LDGSTS.E", "[R2], [R4.64]")
    assert (copy[3], copy[5], copy[8]) == ("memory", COPY_WAR, "copy") and COPY_RAW == 39
    assert _decoded("LDGDEPBAR")[8] == "commit"


def test_a_shared_loads_result_is_timed_from_its_issue():
    """Table 2's LDS RAW (24 at 32 bits, 26 at 128) is from issue; the simulation starts the result clock at the
    dispatch into the address calculation, DISPATCH clocks later."""
    assert _decoded("LDS", "R4, [R2]")[4] == SHARED_LOAD_RAW[4] - DISPATCH
    assert _decoded("LDS.128", "R4, [R2]")[4] == SHARED_LOAD_RAW[16] - DISPATCH


def test_a_constant_loads_result_by_its_address():
    """Table 2's LDC: 26 clocks with an immediate address, 29 with a regular register's."""
    assert _decoded("LDC", "R4, c[0x0][0x160]")[4] == 26
    assert _decoded("LDC.64", "R4, c[0x0][R2+0x160]")[4] == 29


def test_barrier_operands():
    """nvdisasm's barriers: (kind, barrier, warps or None for the block)."""
    assert _decoded("BAR.SYNC.DEFER_BLOCKING", "0x0")[6] == ("sync", 0, None)
    assert _decoded("BAR.SYNC.DEFER_BLOCKING", "0x1, 0x40")[6] == ("sync", 1, 2)
    assert _decoded("BAR.ARV", "0x2, 0x40")[6] == ("arrive", 2, 2)
    assert _decoded("BAR.RED.POPC.DEFER_BLOCKING", "0x0, P0")[6] == ("sync", 0, None)
    assert _decoded("BAR.SYNC", "R2, R3")[6] == ("sync", "R2", None)
