"""The device API that kernels in the wild use, on every target: each result of tests/cuda_cpu/device_api.cu
against CUDA's documented semantics (the CUDA C++ Programming Guide and the CUDA Math API), computed here in
Python. The same tests run the nvcc build where there is a GPU."""

import fractions
import math

import numpy as np
import pytest
import torch
from conftest import DEVICE, TARGETS, TARGETS_BUILT

import helpers
import kp.build
import kp.files

DEVICE_API = kp.files.ROOT / "tests" / "cuda_cpu" / "device_api.cu"


@pytest.fixture(scope="module", params=TARGETS)
def k(request):
    return helpers.load_kernel(DEVICE_API, target=request.param, quiet=True), DEVICE[request.param]


def u32(values):
    """uint32 values as the int32 bits the ops take and return."""
    return torch.tensor(np.array(values, dtype=np.uint32).view(np.int32))


def as_u32(t):
    return t.cpu().numpy().view(np.uint32).astype(np.int64)


@pytest.mark.parametrize("threads", [1, 31, 200, 1024])
def test_syncthreads_count_and_or(k, threads):
    ext, device = k
    g = torch.Generator().manual_seed(threads)
    for pred in [torch.randint(0, 2, (threads,), generator=g), torch.ones(threads), torch.zeros(threads)]:
        pred = pred.int() * torch.randint(1, 5, (threads,), generator=g, dtype=torch.int32)  # any nonzero is true
        out = ext.vote_barrier(pred.to(device)).cpu()
        true = int((pred != 0).sum())
        expected = torch.tensor([true, int(true == threads), int(true > 0), threads - true], dtype=torch.int32)
        assert (out == expected).all(), (out[0], expected)


def brev(x, bits=32):
    return int(f"{x:0{bits}b}"[::-1], 2)


def byte_perm(x, y, s):
    both = y << 32 | x
    return sum(((both >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))


def test_bit_intrinsics(k):
    ext, device = k
    rng = np.random.default_rng(0)
    x = [*rng.integers(0, 2**32, 300, dtype=np.uint64).tolist(), 0, 0xFFFFFFFF, 1, 0x80000000]
    y = [*rng.integers(0, 2**32, 300, dtype=np.uint64).tolist(), 0xFFFFFFFF, 0, 0x12345678, 1]
    s = [*rng.integers(0, 2**32, 300, dtype=np.uint64).tolist(), 0x3210, 0x7654, 31, 32]
    out = as_u32(ext.bits(u32(x).to(device), u32(y).to(device), u32(s).to(device)))
    for i, (a, b, c) in enumerate(zip(x, y, s)):
        wide = brev(b << 32 | a, 64)
        shift, clamped = (c & 63) & 31, min(c & 63, 32)
        expected = [
            brev(a),
            wide & 0xFFFFFFFF,
            wide >> 32,
            byte_perm(a, b, c),
            ((b << 32 | a) << shift >> 32) & 0xFFFFFFFF,  # __funnelshift_l: the high word, shift mod 32
            ((b << 32 | a) << clamped >> 32) & 0xFFFFFFFF,  # _lc: shift clamped to 32
            ((b << 32 | a) >> shift) & 0xFFFFFFFF,  # __funnelshift_r: the low word
            ((b << 32 | a) >> clamped) & 0xFFFFFFFF,
        ]
        assert out[i].tolist() == expected, (i, hex(a), hex(b), hex(c), [hex(v) for v in out[i]])


@pytest.mark.parametrize("limit", [0, 1, 6, 1000])
def test_atomic_inc_and_dec_wrap_at_the_limit(k, limit):
    ext, device = k
    blocks, threads = 7, 96  # 672 calls of each
    calls = blocks * threads
    counters = ext.inc_dec(u32([0, 0]).to(device), limit, blocks, threads)
    inc, dec = as_u32(counters).tolist()
    # atomicInc: ((old >= limit) ? 0 : old + 1); atomicDec: ((old == 0) || (old > limit)) ? limit : old - 1.
    assert inc == calls % (limit + 1)
    assert dec == (limit + 1 - calls % (limit + 1)) % (limit + 1)


def test_clock64_increases(k):
    ext, device = k
    ticks = ext.clock(torch.zeros(1, device=device), 64).cpu()
    assert (ticks > 0).all(), ticks


def test_match_and_reduce_within_a_warp(k):
    ext, device = k
    keys = torch.tensor([3, -7, 3, 12, -7, 3] * 5 + [100, -(2**31)], dtype=torch.int32)
    out = as_u32(ext.match_reduce(keys.to(device)))
    values = keys.tolist()
    bits = [v & 0xFFFFFFFF for v in values]
    for lane, key in enumerate(values):
        same = sum(1 << j for j, other in enumerate(values) if other == key)
        assert out[lane, 0] == same
        assert out[lane, 1:3].tolist() == [0, 0]  # not all equal: 0, and pred 0
        # Lanes 0-15 pass 7 under the mask 0x0000ffff: all equal, so the mask and pred 1.
        if lane < 16:
            assert out[lane, 3] == 0x0000FFFF | 1 << 31
        assert out[lane, 4] == sum(bits) & 0xFFFFFFFF
        assert out[lane, 5] == min(values) & 0xFFFFFFFF and out[lane, 6] == max(values) & 0xFFFFFFFF  # signed
        assert out[lane, 7] == np.bitwise_and.reduce(bits) and out[lane, 8] == np.bitwise_or.reduce(bits)
        assert out[lane, 9] == np.bitwise_xor.reduce(bits)


@pytest.mark.parametrize("n", [1, 127, 128, 1000])
def test_cooperative_groups_block_tiles_shuffles_ballots_and_reduce(k, n):
    ext, device = k
    x = torch.randn(n, generator=torch.Generator().manual_seed(n))
    sums, after, ballots = (t.cpu() for t in ext.groups(x.to(device)))
    padded = torch.cat([x, torch.zeros(-n % 128)])
    torch.testing.assert_close(sums, padded.view(-1, 128).sum(1), rtol=1e-5, atol=1e-5)
    tiles = padded.view(-1, 16)
    expected_next = torch.cat([tiles[:, 1:], tiles[:, -1:]], 1).flatten()[:n]  # shfl_down by 1: own at the end
    assert torch.equal(after, expected_next)
    weights = 2 ** torch.arange(16, dtype=torch.int64)
    expected_ballots = ((tiles > 0).long() * weights).sum(1).repeat_interleave(16)[:n]
    assert torch.equal(torch.from_numpy(as_u32(ballots)), expected_ballots)


def round_f32(exact, mode):
    """The float32 that `exact` (a Fraction) rounds to: nearest even, toward zero, up or down."""
    near = np.float32(float(exact))  # nearest even (float() rounds the exact value once: no double rounding here)
    down = near if fractions.Fraction(float(near)) <= exact else np.nextafter(near, np.float32(-np.inf))
    up = near if fractions.Fraction(float(near)) >= exact else np.nextafter(near, np.float32(np.inf))
    return {"rn": near, "rz": down if exact >= 0 else up, "ru": up, "rd": down}[mode]


def test_rounding_mode_intrinsics(k):
    ext, device = k
    rng = np.random.default_rng(1)
    a = np.concatenate([rng.standard_normal(200) * 10.0 ** rng.integers(-3, 4, 200), [2.5, -2.5, 3.5, 0.5, -0.5, 1e10]])
    b = np.concatenate([rng.standard_normal(200), [1.0, 3.0, 7.0, -3.0, 3.0, 3.0]])
    c = rng.standard_normal(len(a))
    a, b, c = (v.astype(np.float32) for v in (a, b, c))
    out, ints = ext.rounding(*(torch.from_numpy(v).to(device) for v in (a, b, c)))
    out, ints = out.cpu().numpy(), ints.cpu().numpy()
    F = fractions.Fraction
    for i in range(len(a)):
        exact = {
            "add": F(float(a[i])) + F(float(b[i])),
            "mul": F(float(a[i])) * F(float(b[i])),
            "fma": F(float(a[i])) * F(float(b[i])) + F(float(c[i])),
            "div": F(float(a[i])) / F(float(b[i])),
        }
        for j, (op, mode) in enumerate((op, mode) for op in exact for mode in ("rn", "rz", "ru", "rd")):
            assert out[i, j] == round_f32(exact[op], mode), (i, op, mode, a[i], b[i], c[i], out[i, j])
        # __float2int_rn: nearest even; _rz: toward zero; _ru: up; _rd: down; saturating.
        v = float(a[i])
        expected = [round(v), math.trunc(v), math.ceil(v), math.floor(v)]
        expected = [max(-(2**31), min(2**31 - 1, e)) for e in expected]
        assert ints[i].tolist() == expected, (v, ints[i])


@pytest.mark.parametrize("target", TARGETS_BUILT)
def test_the_device_api_kernels_build_with_nvcc_too(target):
    """What the GPU machine runs above: the same file compiles with nvcc (here without a GPU)."""
    assert kp.build.build_kernel(DEVICE_API, target=target).library.exists()


def s32(v):
    """The int32 that the low 32 bits of `v` are."""
    v &= 0xFFFFFFFF
    return v - 2**32 if v >= 2**31 else v


def sext24(v):
    v &= 0xFFFFFF
    return v - 2**24 if v >= 2**23 else v


def test_integer_intrinsics(k):
    ext, device = k
    rng = np.random.default_rng(2)
    x = [*rng.integers(-(2**31), 2**31, 300).tolist(), 0, -1, 2**31 - 1, -(2**31), 0x01020304]
    y = [*rng.integers(-(2**31), 2**31, 300).tolist(), 5, -1, 2**31 - 1, -(2**31), -0x05060708]
    out = ext.integer(torch.tensor(x, dtype=torch.int32).to(device), torch.tensor(y, dtype=torch.int32).to(device))
    for i, (a, b) in enumerate(zip(x, y)):
        ua, ub = a & 0xFFFFFFFF, b & 0xFFFFFFFF
        sbytes = [[(v >> s & 0xFF) - (256 if v >> s & 0x80 else 0) for s in (0, 8, 16, 24)] for v in (ua, ub)]
        ubytes = [[v >> s & 0xFF for s in (0, 8, 16, 24)] for v in (ua, ub)]
        d = np.float64(a) / 7.0
        bits = int(np.array([d]).view(np.uint64)[0])
        expected = [
            s32(sext24(a) * sext24(b)),  # __mul24: the low 32 bits of the 24-bit operands' product
            s32((ua & 0xFFFFFF) * (ub & 0xFFFFFF)),
            s32((a * b) >> 32),  # __mulhi: the high 32 bits of the 64-bit product
            s32((ua * ub) >> 32),
            s32(((a << 20) * (b << 20)) >> 64),  # __mul64hi: the high 64 bits of the 128-bit product
            s32(abs(a - b) + 7),  # __sad: |a - b| + z
            s32(abs(ua - ub) + 7),
            (a + b) >> 1,  # __hadd: (a + b) >> 1 without overflow
            (a + b + 1) >> 1,
            s32((ua + ub) >> 1),
            s32((ua + ub + 1) >> 1),
            s32(sum(p * q for p, q in zip(*sbytes)) + 5),  # __dp4a: four byte products, plus c
            s32(sum(p * q for p, q in zip(*ubytes)) + 5),
            s32((bits >> 32) ^ (bits & 0xFFFFFFFF)),  # __double2hiint ^ __double2loint
        ]
        assert out[i].tolist() == expected, (i, a, b, out[i].tolist(), expected)


def to_bits(t):
    """The 16 bits of a float16/bfloat16 tensor, as int64 (NaNs as one canonical 0x7fff)."""
    bits = t.view(torch.int16).long() & 0xFFFF
    return torch.where(t.isnan(), 0x7FFF, bits)


@pytest.mark.parametrize("dtype, column", [(torch.float16, 0), (torch.bfloat16, 9)], ids=["half", "bfloat16"])
def test_half_and_bfloat16_round_as_the_gpu_does(k, dtype, column):
    """Each result: the float32 operation on the rounded operands, rounded to nearest even (what torch's own
    float16/bfloat16 ops give on a CPU: they compute in float32 and round once). NaN compares as NaN: CUDA gives
    0x7fff, torch another quiet NaN. (On a GPU, hsqrt goes through an approximate float sqrt: the cuda case may
    show it one unit off where a result lies next to a halfway point.)"""
    ext, device = k
    g = torch.Generator().manual_seed(3)
    a = torch.cat(
        [
            torch.randn(500, generator=g) * 10 ** torch.randint(-6, 6, (500,), generator=g).float(),
            torch.tensor([65504.0, 65520.0, 1e-8, -0.0, float("inf"), float("nan"), 3e38, 5.96e-8]),
        ]
    )
    b = torch.cat([torch.randn(500, generator=g), torch.tensor([1.0, 1.0, 3.0, 2.0, 1.0, 1.0, 2.0, 0.5])])
    c = torch.randn(len(a), generator=g)
    out, pairs = (t.cpu() for t in ext.half(*(v.to(device) for v in (a, b, c))))
    A, B, C = (v.to(dtype) for v in (a, b, c))
    f = torch.float32
    expected = [
        A,
        (A.to(f) + B.to(f)).to(dtype),
        (A.to(f) - B.to(f)).to(dtype),
        (A.to(f) * B.to(f)).to(dtype),
        (A.to(f) / B.to(f)).to(dtype),
        torch.addcmul(C.to(f), A.to(f), B.to(f)).to(dtype),  # fma in float32, rounded once
        torch.fmax(A.to(f), B.to(f)).to(dtype),
        # numpy's float32 sqrt, correctly rounded (torch's vectorised one was seen to round 65504's up)
        torch.from_numpy(np.sqrt(np.abs(A.to(f).numpy()))).to(dtype),
        -A,
    ]
    for j, e in enumerate(expected):
        got = out[:, column + j].long() & 0xFFFF
        assert torch.equal(torch.where(e.isnan(), 0x7FFF, got), to_bits(e)), (j, (got != to_bits(e)).nonzero()[:5])
    if dtype == torch.float16:
        half_sum = (torch.stack([A, B], 1).to(f) + C.to(f)[:, None]).to(dtype).to(f)
        torch.testing.assert_close(pairs, half_sum, rtol=0, atol=0, equal_nan=True)
