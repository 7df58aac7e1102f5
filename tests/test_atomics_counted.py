"""Every CUDA atomic (int, unsigned, 64-bit, float, double, half, bfloat16, half2; add, sub, max, min, exchange, CAS,
or, inc, dec; global and shared) is one access of one thread, an atomic, in check mode's counts and the GPU model's
(Nsight Compute counts an atomic instruction as one request per warp), however the CPU stand-in does it on the host:
tests/cuda_cpu/atomics.cu, one block of 64 threads, each making one atomic on out[threadIdx.x % 4]."""

from collections import Counter

import pytest
import torch

import helpers
import kp.files
from kp.gpumodel.profile import profile

ATOMICS = kp.files.ROOT / "tests" / "cuda_cpu" / "atomics.cu"

# case: (its element type, its 4 slots after the launch: one value, or a set of values a slot may end with)
CASES = {
    "int_add": (torch.int32, [16] * 4),
    "int_sub": (torch.int32, [-16] * 4),
    "int_max": (torch.int32, [60, 61, 62, 63]),
    "int_min": (torch.int32, [-60, -61, -62, -63]),
    "int_exch": (torch.int32, [set(range(s, 64, 4)) for s in range(4)]),
    "int_cas": (torch.int32, [set(range(s + 1, 65, 4)) for s in range(4)]),
    "int_or": (torch.int32, [0xFFFF] * 4),
    "unsigned_inc": (torch.int32, [16] * 4),
    "unsigned_dec": (torch.int32, [85] * 4),  # 0 wraps to the limit 100, then 15 down
    "ull_add": (torch.int64, [16] * 4),
    "ull_max": (torch.int64, [60, 61, 62, 63]),
    "ull_cas": (torch.int64, [set(range(s + 1, 65, 4)) for s in range(4)]),
    "float_add": (torch.float32, [8.0] * 4),
    "float_exch": (torch.float32, [{t + 0.5 for t in range(s, 64, 4)} for s in range(4)]),
    "double_add": (torch.float64, [4.0] * 4),
    "half_add": (torch.float16, [16.0] * 4),
    "bfloat16_add": (torch.bfloat16, [16.0] * 4),
    "half2_add": (torch.float16, [16.0, 32.0] * 4),
    "shared_float_add": (torch.float32, [8.0] * 4),
}
NAMES = list(CASES)


@pytest.fixture(scope="module")
def checked():
    return helpers.load_kernel(ATOMICS, target="cpu", check=True, quiet=True)


def slots(out, name):
    dtype, _ = CASES[name]
    return out.view(dtype)[: len(CASES[name][1])].tolist()


def assert_values(got, expected):
    for g, e in zip(got, expected):
        assert g in e if isinstance(e, set) else g == e, (got, expected)


@pytest.mark.parametrize("name", NAMES)
def test_an_atomic_is_one_access_of_one_thread_and_one_request_per_warp(checked, name):
    out = torch.zeros(64, dtype=torch.uint8)
    p = profile(checked.run, NAMES.index(name), out)
    assert_values(slots(out, name), CASES[name][1])
    space = "shared" if name.startswith("shared") else "global"
    atomics = [ln for ln in p.lines if ln.kind == "atomic"]
    assert [(ln.space, ln.kernel) for ln in atomics] == [(space, name)], p.lines
    (line,) = atomics
    size = CASES[name][0].itemsize * (2 if name.startswith("half2") else 1)
    assert (line.requests, line.lanes, line.bytes) == (2, 64, 64 * size), line  # 2 warps of 32
    assert not [ln for ln in p.lines if ln.line == line.line and ln.kind != "atomic"], p.lines  # no load, no store
    arrays = {a.id: a.space for a in p.arrays}
    per_thread = Counter(t.tid for t in p.touches if arrays[t.array] == space and t.kind == 2)
    assert set(per_thread.values()) == {1} and len(per_thread) == 64, per_thread


@pytest.mark.parametrize("name", ["int_max", "float_add", "double_add", "half2_add", "unsigned_dec"])
def test_the_normal_build_gets_the_same_values(name):
    normal = helpers.load_kernel(ATOMICS, target="cpu", quiet=True)
    out = torch.zeros(64, dtype=torch.uint8)
    normal.run(NAMES.index(name), out)
    assert_values(slots(out, name), CASES[name][1])
