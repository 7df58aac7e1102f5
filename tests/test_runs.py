"""kp.gpumodel.runs: the equations for a kernel's basic blocks' runs, from the trace's records (Line, Branch), on
tests/test_cfg.py's hand-written listing (a loop nvcc kept, a uniform if/else, a store) and on nvcc's sm_90 listing of
a loop it unrolled by 4 and then by 4 again (UNROLLED); needs neither nvcc nor a GPU. On nvcc's own SASS of small
kernels: tests/test_sass.py and tests/test_compiled.py."""

import pytest
from test_cfg import LISTING

from kp.gpumodel.cfg import blocks
from kp.gpumodel.counts import LOST_TRIPS, Branch, Line
from kp.gpumodel.runs import block_runs, digits
from kp.gpumodel.sass import parse_sass

# nvcc 13.0's sm_90 SASS (nvdisasm -c -g, its NOPs left out, the file renamed k.cu) of
#   1 __global__ void unroll4(const float* x, float* out, int n) {
#   2   int i = blockIdx.x * blockDim.x + threadIdx.x;
#   3   int trips = int(x[0]);
#   4   float a = 1.0f;
#   5   for (int k = 0; k < trips; ++k) a = a * 0.999f + 1.0f;
#   6   if (i < n) out[i] = a;
#   7 }
# Line 5, t trips: the guard (t >= 1, 0xb0), a loop of 16 FFMA while 12 or more are left (0x1a0), 8 once if 8 or
# more are left (0x2f0), a loop of 4 (0x3b0) and one of 1 (0x440, t mod 4 times).
UNROLLED = """\
\t.section\t.text._Z7unroll4PKfPfi,"ax",@progbits
\t.align\t128
        .global         _Z7unroll4PKfPfi
        .type           _Z7unroll4PKfPfi,@function
        .size           _Z7unroll4PKfPfi,(.L_x_10 - _Z7unroll4PKfPfi)
        .other          _Z7unroll4PKfPfi,@"STO_CUDA_ENTRY STV_DEFAULT"
_Z7unroll4PKfPfi:
.text._Z7unroll4PKfPfi:
\t//## File "k.cu", line 1
        /*0000*/                   LDC R1, c[0x0][0x28] ;
\t//## File "k.cu", line 3
        /*0010*/                   LDC.64 R2, c[0x0][0x210] ;
        /*0020*/                   ULDC.64 UR4, c[0x0][0x208] ;
        /*0030*/                   LDG.E R2, desc[UR4][R2.64] ;
\t//## File "k.cu", line 2
        /*0040*/                   ULDC UR6, c[0x0][0x0] ;
\t//## File "k.cu", line 5
        /*0050*/                   HFMA2.MMA R5, -RZ, RZ, 1.875, 0 ;
\t//## File "k.cu", line 2
        /*0060*/                   S2R R0, SR_CTAID.X ;
        /*0070*/                   S2R R7, SR_TID.X ;
        /*0080*/                   IMAD R0, R0, UR6, R7 ;
\t//## File "k.cu", line 3
        /*0090*/                   F2I.TRUNC.NTZ R4, R2 ;
\t//## File "k.cu", line 5
        /*00a0*/                   ISETP.GE.AND P0, PT, R4, 0x1, PT ;
        /*00b0*/              @!P0 BRA `(.L_x_0) ;
        /*00c0*/                   IADD3 R2, R4.reuse, -0x1, RZ ;
        /*00d0*/                   LOP3.LUT R3, R4, 0x3, RZ, 0xc0, !PT ;
        /*00e0*/                   ISETP.GE.U32.AND P0, PT, R2, 0x3, PT ;
        /*00f0*/                   MOV R2, 0x3f800000 ;
        /*0100*/                   MOV R5, 0x3f800000 ;
        /*0110*/              @!P0 BRA `(.L_x_1) ;
        /*0120*/                   IADD3 R4, R4, -R3, RZ ;
        /*0130*/                   MOV R5, 0x3f800000 ;
        /*0140*/                   ISETP.GT.AND P0, PT, R4, RZ, PT ;
        /*0150*/              @!P0 BRA `(.L_x_2) ;
        /*0160*/                   ISETP.GT.AND P1, PT, R4, 0xc, PT ;
        /*0170*/                   PLOP3.LUT P0, PT, PT, PT, PT, 0x80, 0x0 ;
        /*0180*/              @!P1 BRA `(.L_x_3) ;
        /*0190*/                   PLOP3.LUT P0, PT, PT, PT, PT, 0x8, 0x0 ;
.L_x_4:
        /*01a0*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*01b0*/                   IADD3 R4, R4, -0x10, RZ ;
        /*01c0*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*01d0*/                   ISETP.GT.AND P1, PT, R4, 0xc, PT ;
        /*01e0*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*01f0*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0200*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0210*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0220*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0230*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0240*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0250*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0260*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0270*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0280*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0290*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*02a0*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*02b0*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*02c0*/               @P1 BRA `(.L_x_4) ;
.L_x_3:
        /*02d0*/                   ISETP.GT.AND P1, PT, R4, 0x4, PT ;
        /*02e0*/              @!P1 BRA `(.L_x_5) ;
        /*02f0*/                   FFMA R5, R5, 0.99900001287460327148, R2.reuse ;
        /*0300*/                   PLOP3.LUT P0, PT, PT, PT, PT, 0x8, 0x0 ;
        /*0310*/                   IADD3 R4, R4, -0x8, RZ ;
        /*0320*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0330*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0340*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0350*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0360*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0370*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0380*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
.L_x_5:
        /*0390*/                   ISETP.NE.OR P0, PT, R4, RZ, P0 ;
        /*03a0*/              @!P0 BRA `(.L_x_1) ;
.L_x_2:
        /*03b0*/                   IADD3 R4, R4, -0x4, RZ ;
        /*03c0*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*03d0*/                   ISETP.NE.AND P0, PT, R4, RZ, PT ;
        /*03e0*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*03f0*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0400*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0410*/               @P0 BRA `(.L_x_2) ;
.L_x_1:
        /*0420*/                   ISETP.NE.AND P0, PT, R3, RZ, PT ;
        /*0430*/              @!P0 BRA `(.L_x_0) ;
.L_x_6:
        /*0440*/                   IADD3 R3, R3, -0x1, RZ ;
        /*0450*/                   FFMA R5, R5, 0.99900001287460327148, R2 ;
        /*0460*/                   ISETP.NE.AND P0, PT, R3, RZ, PT ;
        /*0470*/               @P0 BRA `(.L_x_6) ;
.L_x_0:
\t//## File "k.cu", line 6
        /*0480*/                   ULDC UR6, c[0x0][0x220] ;
        /*0490*/                   ISETP.GE.AND P0, PT, R0, UR6, PT ;
.L_x_8:
        /*04a0*/               @P0 EXIT ;
        /*04b0*/                   LDC.64 R2, c[0x0][0x218] ;
        /*04c0*/                   IMAD.WIDE R2, R0, 0x4, R2 ;
        /*04d0*/                   STG.E desc[UR4][R2.64], R5 ;
.L_x_9:
\t//## File "k.cu", line 7
        /*04e0*/                   EXIT ;
.L_x_7:
        /*04f0*/                   BRA `(.L_x_7);
"""

SOURCE = {"k.cu": ["", "", "for (int j = 0; j < n; ++j)", "  a = a * a + 1;", "", "if (c)", "", "", "", "", "y = a;"]}


def runs_of(branches, warps=4):
    """{first offset of a block: its runs} of LISTING, with the store's line (11) run once per warp."""
    store = Line("k", "k.cu", 11, "global", "store", warps, warps, warps, 128 * warps, 32 * warps)
    found = parse_sass(LISTING)
    at = block_runs(found, [store], branches, warps, SOURCE.get)
    return {hex(o): at[o][0] for o in (0x0, 0x20, 0x30, 0x70, 0x90, 0xB0, 0xC0, 0xD0)}


def test_a_kept_loop_runs_its_body_once_per_evaluation_that_continued_and_a_uniform_branch_splits_as_it_went():
    """4 warps, each entering the loop once with 10 trips (11 evaluations of line 3, the last one none), and line 6's
    condition held for 1 warp (an `if` falls into its body: line 7's block at 0x90; the 3 others jump to 0xb0).
    By hand: the loop's body 40; the guard, BSSY, BSYNC and store 4 each; the preheader
    open (which warps entered the loop, the trace's totals do not say)."""
    got = runs_of([Branch("k", "k.cu", 3, 44, 44 * 32, 0, 0, 4), Branch("k", "k.cu", 6, 4, 128, 0, 0, 3)])
    assert got == {"0x0": 4, "0x20": None, "0x30": 40, "0x70": 4, "0x90": 1, "0xb0": 3, "0xc0": 4, "0xd0": 4}


def test_with_its_trip_counts_a_kept_loops_preheader_is_known():
    """The same, with the loop's trip counts: 10 for each of the 4 warps. The preheader ran once per entry of 1 trip
    or more (what entered the loop less what its back edge carried): 4."""
    loop = Branch("k", "k.cu", 3, 44, 44 * 32, 0, 0, 4, trips=((10, 4),))
    got = runs_of([loop, Branch("k", "k.cu", 6, 4, 128, 0, 0, 3)])
    assert got == {"0x0": 4, "0x20": 4, "0x30": 40, "0x70": 4, "0x90": 1, "0xb0": 3, "0xc0": 4, "0xd0": 4}
    lost = Branch("k", "k.cu", 3, 44, 44 * 32, 0, 0, 4, trips=((10, 3), (LOST_TRIPS, 1)))
    assert runs_of([lost, Branch("k", "k.cu", 6, 4, 128, 0, 0, 3)])["0x20"] is None  # some trips lost: no equation


def test_digits_split_trip_counts_over_the_bodies_nvcc_unrolled_them_into():
    """t = 29 = 16 + 8 + 4 + 1 and t = 6 = 4 + 2 x 1, twice and once; t = 0 once. (runs, entries that ran it)."""
    assert digits([16, 8, 4, 1], {29: 2, 6: 1, 0: 1}) == {16: (2, 2), 8: (2, 2), 4: (3, 3), 1: (4, 3)}
    assert digits([4, 1], {10: 4}) == {4: (8, 4), 1: (8, 4)}  # 10 = 2 x 4 + 2


def test_an_unrolled_loops_bodies_run_as_its_trip_counts_say():
    """UNROLLED on 4 warps, of trip counts 29, 29, 6 and 0 (35 + 35 + 7 + 1 evaluations, 4 of them none; the store
    once per warp, no EXIT taken). By hand, following the SASS: t = 29 runs the 16 loop once (13 left), the 8 block
    (5 left), the 4 loop once, the 1 loop once; t = 6 skips the 16 and the 8 (4 > 12 and 4 > 4 fail), runs the 4 loop
    once and the 1 loop twice; t = 0 jumps past it all at the guard. So: 16 loop 2, its preheader (0x190) 2, 8
    block 2, 4 loop 3, 1 loop 4, the test before it (t mod 4 != 0, 0x420) 3, the guard's fall (0xc0) 3. Open: the
    checks at 0x120, 0x160, 0x2d0, 0x390, which the trip counts cannot tell apart (0x120's `R4 > 0` after t >= 4
    always holds, which only the compare says)."""
    found = parse_sass(UNROLLED)
    loop = Branch("unroll4", "k.cu", 5, 78, 78 * 32, 0, 0, 4, trips=((0, 1), (6, 1), (29, 2)))
    guard = Branch("unroll4", "k.cu", 6, 4, 128, 0, 0, 0)
    store = Line("unroll4", "k.cu", 6, "global", "store", 4, 16, 16, 512, 128)
    at = block_runs(found, [store], [loop, guard], 4, {"k.cu": [""] * 5 + ["  if (i < n) out[i] = a;"]}.get)
    runs = {hex(b.instructions[0].offset): at[b.instructions[0].offset] for b in blocks(found)}
    assert {o: r for o, (r, _) in runs.items()} == {
        "0x0": 4, "0xc0": 3, "0x120": None, "0x160": None, "0x190": 2, "0x1a0": 2, "0x2d0": None, "0x2f0": 2,
        "0x390": None, "0x3b0": 3, "0x420": 3, "0x440": 4, "0x480": 4, "0x4b0": 4,
    }  # fmt: skip
    assert runs["0x120"][1] == 3  # at most what its predecessor ran


def unrolled_runs(trips, warps):
    """{first offset of a block: its runs} of UNROLLED where each of `warps` warps ran line 5's loop `trips` times
    (none diverged) and stored once."""
    found = parse_sass(UNROLLED)
    loop = Branch("unroll4", "k.cu", 5, (trips + 1) * warps, (trips + 1) * warps * 32, 0, 0, warps,
                  trips=((trips, warps),))  # fmt: skip
    guard = Branch("unroll4", "k.cu", 6, warps, 32 * warps, 0, 0, 0)
    store = Line("unroll4", "k.cu", 6, "global", "store", warps, 4 * warps, 4 * warps, 128 * warps, 32 * warps)
    at = block_runs(found, [store], [loop, guard], warps, {"k.cu": [""] * 5 + ["  if (i < n) out[i] = a;"]}.get)
    return {hex(b.instructions[0].offset): at[b.instructions[0].offset][0] for b in blocks(found)}


def test_a_long_loops_runs_are_fixed_however_large_the_counts():
    """A loop of 4095 trips in each of 2^20 warps: 2.7e8 runs of the 16 loop, where lstsq's rounding alone leaves a
    residual above 1e-6, which the trip counts' equations must not be dropped for (siboehm's kernel 2 at 4096³, 4096
    trips in each of 524288 warps, had its main loop open for it, so never simulated). By hand for t = 4095 = 255 x
    16 + 8 + 4 + 3: the 16 loop 255 times per warp (4092 down to 12), 12 > 4 into the 8 block (4 left), 4 != 0 into
    the 4 loop once, t mod 4 = 3 runs of the 1 loop. The tests between them (0x120, 0x160, 0x2d0, 0x390) stay open,
    as with several trip counts above: the totals cannot tell which way each went."""
    w = 2**20
    expected = {
        "0x0": w, "0xc0": w, "0x120": None, "0x160": None, "0x190": w, "0x1a0": 255 * w, "0x2d0": None, "0x2f0": w,
        "0x390": None, "0x3b0": w, "0x420": w, "0x440": 3 * w, "0x480": w, "0x4b0": w,
    }  # fmt: skip
    got = unrolled_runs(4095, w)
    assert {o for o, r in got.items() if r is None} == {o for o, r in expected.items() if r is None}
    known = {o: r for o, r in got.items() if r is not None}
    assert known == pytest.approx({o: r for o, r in expected.items() if r is not None}, rel=1e-12)  # least squares


# nvcc 13.0's sm_90 SASS (nvdisasm -c -g) of kernels/colsum.cu's version 1 loop, `for (int64_t r = 0; r < R; ++r)
# sum += x[r * C + c];` (here line 29 of k.cu; the kernel's first lines, its `if (c >= C) return;` included, are
# replaced by plain MOVs at line 25): a loop of 4 copies (0x250: 4 LDG, 4 FADD and 6 IADD3 of address arithmetic)
# while 4 or more trips are left, then one of 1 copy (0x480: 1 LDG, 1 FADD, 1 IADD3) t mod 4 times.
COLSUM = """\
\t.section\t.text._Z6colsumPKfPfll,"ax",@progbits
\t//## File "k.cu", line 25
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   MOV R1, RZ ;
        /*0020*/                   MOV R2, RZ ;
        /*0030*/                   MOV R3, RZ ;
        /*0040*/                   MOV R4, RZ ;
        /*0050*/                   MOV R5, RZ ;
        /*0060*/                   MOV R6, RZ ;
        /*0070*/                   MOV R7, RZ ;
        /*0080*/                   MOV R8, RZ ;
        /*0090*/                   MOV R9, RZ ;
        /*00a0*/                   MOV R10, RZ ;
\t//## File "k.cu", line 29
        /*00b0*/                   LDC.64 R6, c[0x0][0x220] ;
        /*00c0*/                   ULDC.64 UR6, c[0x0][0x208] ;
        /*00d0*/                   IMAD.MOV.U32 R14, RZ, RZ, RZ ;
        /*00e0*/                   ISETP.GE.U32.AND P0, PT, R6, 0x1, PT ;
        /*00f0*/                   ISETP.GE.AND.EX P0, PT, R7, RZ, PT, P0 ;
        /*0100*/                  @!P0 BRA `(.L_x_93) ;
        /*0110*/                   IADD3 R4, P0, R6.reuse, -0x1, RZ ;
        /*0120*/                   IMAD.MOV.U32 R14, RZ, RZ, RZ ;
        /*0130*/                   LOP3.LUT R17, R6, 0x3, RZ, 0xc0, !PT ;
        /*0140*/                   CS2R R18, SRZ ;
        /*0150*/                   ISETP.GE.U32.AND P1, PT, R4, 0x3, PT ;
        /*0160*/                   IADD3.X R4, R7, -0x1, RZ, P0, !PT ;
        /*0170*/                   ISETP.NE.U32.AND P0, PT, R17, RZ, PT ;
        /*0180*/                   ISETP.GE.U32.AND.EX P1, PT, R4, RZ, PT, P1 ;
        /*0190*/                   ISETP.NE.AND.EX P0, PT, RZ, RZ, PT, P0 ;
        /*01a0*/                  @!P1 BRA `(.L_x_94) ;
        /*01b0*/                   ULDC.64 UR8, c[0x0][0x210] ;
        /*01c0*/                   IADD3 R23, P2, R17, -R6, RZ ;
        /*01d0*/                   IMAD.WIDE.U32 R4, R2, 0x4, RZ ;
        /*01e0*/                   LEA R10, P1, R15, UR8, 0x2 ;
        /*01f0*/                   CS2R R18, SRZ ;
        /*0200*/                   IMAD.SHL.U32 R21, R3, 0x4, RZ ;
        /*0210*/                   LEA.HI.X R11, R15, UR9, R0, 0x2, P1 ;
        /*0220*/                   IMAD.X R20, RZ, RZ, ~R7, P2 ;
        /*0230*/                   IMAD.MOV.U32 R14, RZ, RZ, RZ ;
        /*0240*/                   IMAD.IADD R21, R5, 0x1, R21 ;
.L_x_95:
        /*0250*/                   IADD3 R6, P1, R10, R4, RZ ;
        /*0260*/                   IMAD.X R7, R11, 0x1, R21.reuse, P1 ;
        /*0270*/                   IADD3 R8, P1, R6, R4.reuse, RZ ;
        /*0280*/                   LDG.E.CONSTANT R11, desc[UR6][R10.64] ;
        /*0290*/                   IMAD.X R9, R7, 0x1, R21.reuse, P1 ;
        /*02a0*/                   IADD3 R12, P1, R8, R4, RZ ;
        /*02b0*/                   LDG.E.CONSTANT R6, desc[UR6][R6.64] ;
        /*02c0*/                   IMAD.X R13, R9, 0x1, R21, P1 ;
        /*02d0*/                   LDG.E.CONSTANT R8, desc[UR6][R8.64] ;
        /*02e0*/                   LDG.E.CONSTANT R25, desc[UR6][R12.64] ;
        /*02f0*/                   IADD3 R18, P1, R18, 0x4, RZ ;
        /*0300*/                   IADD3 R22, P2, R18, R23, RZ ;
        /*0310*/                   IMAD.X R19, RZ, RZ, R19, P1 ;
        /*0320*/                   ISETP.NE.U32.AND P1, PT, R22, RZ, PT ;
        /*0330*/                   IMAD.X R10, R19, 0x1, R20, P2 ;
        /*0340*/                   ISETP.NE.AND.EX P1, PT, R10, RZ, PT, P1 ;
        /*0350*/                   IADD3 R10, P2, R12, R4, RZ ;
        /*0360*/                   FADD R11, R11, R14 ;
        /*0370*/                   FADD R11, R11, R6 ;
        /*0380*/                   FADD R8, R11, R8 ;
        /*0390*/                   IMAD.X R11, R13, 0x1, R21, P2 ;
        /*03a0*/                   FADD R14, R8, R25 ;
        /*03b0*/                   @P1 BRA `(.L_x_95) ;
.L_x_94:
        /*03c0*/                  @!P0 BRA `(.L_x_93) ;
        /*03d0*/                   IMAD.WIDE.U32 R4, R18, R2.reuse, UR4 ;
        /*03e0*/                   ULDC.64 UR8, c[0x0][0x210] ;
        /*03f0*/                   IADD3 R17, P2, RZ, -R17, RZ ;
        /*0400*/                   IMAD R19, R19, R2, RZ ;
        /*0410*/                   IADD3 R8, P0, R16, R4, RZ ;
        /*0420*/                   SHF.L.U64.HI R9, R2, 0x2, R3 ;
        /*0430*/                   IMAD R19, R18, R3, R19 ;
        /*0440*/                   LEA R7, P1, R8, UR8, 0x2 ;
        /*0450*/                   IMAD.X R6, RZ, RZ, -0x1, P2 ;
        /*0460*/                   IMAD.X R5, R5, 0x1, R19, P0 ;
        /*0470*/                   LEA.HI.X R8, R8, UR9, R5, 0x2, P1 ;
.L_x_96:
        /*0480*/                   IMAD.MOV.U32 R4, RZ, RZ, R7 ;
        /*0490*/                   IMAD.MOV.U32 R5, RZ, RZ, R8 ;
        /*04a0*/                   LDG.E.CONSTANT R3, desc[UR6][R4.64] ;
        /*04b0*/                   IADD3 R17, P0, R17, 0x1, RZ ;
        /*04c0*/                   LEA R7, P1, R2, R7, 0x2 ;
        /*04d0*/                   IMAD.X R6, RZ, RZ, R6, P0 ;
        /*04e0*/                   ISETP.NE.U32.AND P0, PT, R17, RZ, PT ;
        /*04f0*/                   IMAD.X R8, R8, 0x1, R9, P1 ;
        /*0500*/                   ISETP.NE.AND.EX P0, PT, R6, RZ, PT, P0 ;
        /*0510*/                   FADD R14, R3, R14 ;
        /*0520*/                   @P0 BRA `(.L_x_96) ;
.L_x_93:
\t//## File "k.cu", line 30
        /*0530*/                   ULDC.64 UR8, c[0x0][0x218] ;
        /*0540*/                   LEA R2, P0, R15, UR8, 0x2 ;
        /*0550*/                   LEA.HI.X R3, R15, UR9, R0, 0x2, P0 ;
        /*0560*/                   STG.E desc[UR6][R2.64], R14 ;
        /*0570*/                   EXIT ;
"""


def colsum_runs(trips, warps, listing=COLSUM):
    """{first offset of a block: its runs} of COLSUM, each of `warps` warps running the loop `trips` times."""
    loop = Branch("colsum", "k.cu", 29, (trips + 1) * warps, (trips + 1) * warps * 32, 0, 0, warps,
                  trips=((trips, warps),))  # fmt: skip
    loads = Line("colsum", "k.cu", 29, "global", "load", trips * warps, 4 * trips * warps, 4 * trips * warps,
                 128 * trips * warps, 32 * trips * warps)  # fmt: skip
    found = parse_sass(listing)
    at = block_runs(found, [loads], [loop], warps, {"k.cu": [""] * 28 + ["  for (int64_t r = 0; r < R; ++r) ..."]}.get)
    return {hex(b.instructions[0].offset): at[b.instructions[0].offset][0] for b in blocks(found)}


@pytest.mark.parametrize(("trips", "four", "one"), [(8192, 2048, 0), (10, 2, 2)])
def test_an_unrolled_loops_copies_are_counted_by_its_loads_not_its_address_arithmetic(trips, four, one):
    """colsum v1's loop: 6 IADD3 to 4 LDG in its 4-copy body, 1 to 1 in its remainder; counted by the IADD3, the
    copies would be 6 and 1 and the trip counts' equations wrong (the trace's 8192 loads then split 1365 x 4 + 2732,
    where 8192 = 2048 x 4). By hand, following the SASS: t = 8192 runs the 4 loop 2048 times and skips the remainder
    (t mod 4 = 0: 0x3c0 jumps past it); t = 10 runs it twice and the 1 loop twice."""
    w = 4
    runs = colsum_runs(trips, w)
    assert (runs["0x250"], runs["0x480"]) == (four * w, one * w)
    assert runs["0x3d0"] == (w if one else 0) and runs["0x530"] == w


def test_an_unrolled_loop_whose_loads_are_predicated_is_counted_by_its_arithmetic():
    """colsum's listing with its loads predicated (`@P3 LDG`: nvcc predicates `m[r] ? x[r * C + c] : 0`'s): they count
    no copies (a predicated one may not run), nor does the line's load equation hold; its FADDs (4 and 1) do. t = 10:
    the 4 loop twice, the 1 loop twice (before, every block of the loop open)."""
    predicated = COLSUM.replace("                   LDG.E.CONSTANT", "               @P3 LDG.E.CONSTANT")
    assert predicated.count("@P3 LDG") == 5
    runs = colsum_runs(10, 4, predicated)
    assert (runs["0x250"], runs["0x480"], runs["0x3d0"]) == (8, 8, 4)
