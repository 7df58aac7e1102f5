"""A kernel that reads or writes outside a tensor, at any distance, fails its launch on the CPU stand-in's normal build
with a RuntimeError naming the op, the kernel, the tensor, the side and the element (and, beyond its redzone, the
thread, how far in bytes and the `.cu` line), every time; nothing else is touched and the process stays sound.

Near a tensor its redzones catch writes after the launch; farther, every tensor lives in a mapping of its own between
64 MiB of unmapped memory on each side, where a read or write faults (kernels/common/cuda_cpu_redzones.cpp). Before
the guards, measured on main (2026-11-27): `x[i + shift] = 1` on 1000 floats died of SIGSEGV at shift 200, raised
for elements [1000] to [1135] only and then died at exit at shift 1000, and overwrote memory silently at 100000.

Each case runs in a child process that, after the faulting calls, allocates, frees, launches a correct kernel and
exits 0 (tests/cuda_cpu/overrun.cu). CPU only: on a GPU such an access is compute-sanitizer's to find."""

import json
import re
import subprocess
import sys

import pytest

import kp.files

OVERRUN = kp.files.ROOT / "tests" / "cuda_cpu" / "overrun.cu"
LINES = OVERRUN.read_text().splitlines()
N = 1000  # floats in the tensor the kernels overrun: 4000 bytes, not a multiple of a page


def line_of(text):
    return next(i for i, line in enumerate(LINES, 1) if text in line)


# The child: `calls` times `op(x, shift)` on a fresh x between neighbours; the messages, whether the neighbours
# were left as they were; then a sound process: allocations, frees, a correct launch, exit 0.
CHILD = f"""
import gc, json, sys, torch, helpers
k = helpers.load_kernel(sys.argv[1], target="cpu", quiet=True)
op, shift, calls = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
messages, intact = [], True
for _ in range(calls):
    before = [torch.full((n,), float(n)) for n in (1, 100, 1000, 5000)]
    x = torch.zeros({N})
    after = [torch.full((n,), float(n)) for n in (1, 100, 1000, 5000)]
    try:
        getattr(k, op)(x, shift)
        messages.append("no error")
    except RuntimeError as e:
        messages.append(str(e))
    intact &= all(bool((t == t.numel()).all()) for t in before + after)
kept = [torch.randn(n) for n in (1, 1000, 10**6, 3 * 10**6)]
del kept
gc.collect()
assert (k.shift_write(torch.zeros(10), 0) == 1).all()
print(json.dumps({{"messages": messages, "intact": intact}}))
"""


def run_child(op, shift, calls=3):
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(OVERRUN), op, str(shift), str(calls)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, (run.returncode, run.stdout[-2000:], run.stderr[-3000:])
    out = json.loads(run.stdout.splitlines()[-1])
    assert out["intact"], "a neighbour changed"
    return out["messages"]


@pytest.mark.parametrize("shift, side, element", [(1, "past the end of", N), (-1, "before the start of", -1)])
def test_a_near_miss_is_caught_by_the_redzone_every_time(shift, side, element):
    for message in run_child("shift_write", shift):
        assert (
            f"an illegal memory access was encountered: op 'shift_write': kernel 'shift_write_kernel' wrote {side} "
            f"'x' ({N} elements of 4 bytes): element [{element}]. Nothing else was touched"
        ) in message, message


def test_beyond_the_redzone_the_first_unmapped_element_is_named_with_what_the_redzone_took():
    """shift 200 (800 bytes past the end): died of SIGSEGV before the guards. Elements [1000] to [1135] fill the
    redzone (rounded up to 64 bytes, plus 512); the first element past it faults, in block 3, thread 168."""
    n = line_of("x[i + shift] = 1.0f;")
    for message in run_child("shift_write", 200):
        assert (
            "an illegal memory access was encountered: op 'shift_write': kernel 'shift_write_kernel' thread "
            "(168,0,0) block (3,0,0) wrote past the end of 'x' (1000 elements of 4 bytes): element [1136], 544 bytes "
            f"past its end (and elements [1000] to [1135], in its redzone), at tests/cuda_cpu/overrun.cu:{n}\n"
            f"{n:5d} | {LINES[n - 1]}"
        ) in message, message


FAULT = re.compile(
    r"an illegal memory access was encountered: op '(?P<op>\w+)': kernel '(?P=op)_kernel' "
    r"thread \((?P<thread>\d+),0,0\) block \((?P<block>\d+),0,0\) (?P<verb>wrote|read) "
    r"(?P<side>past the end of|before the start of) 'x' \(1000 elements of 4 bytes\): "
    r"element \[(?P<element>-?\d+)\], (?P<far>\d+) bytes (past its end|before its start)"
    r"(?: \(and elements \[\d+\] to \[\d+\], in its redzone\))?, at tests/cuda_cpu/overrun.cu:(?P<line>\d+)\n"
)


@pytest.mark.parametrize(
    "op, shift",
    [
        ("shift_write", 1000),  # a whole row past the end of a 1000-column matrix
        ("shift_write", 4000),
        ("shift_write", 100_000),  # silently overwrote memory before the guards
        ("shift_write", 4_000_000),  # 16 MB away
        ("shift_write", -4000),
        ("shift_write", -100_000),
        ("shift_read", 100_000),
        ("shift_read", -100_000),
    ],
)
def test_a_far_access_faults_in_the_guard_and_names_tensor_side_element_and_distance(op, shift):
    """Whichever thread faults first is named (blocks run in parallel): its element is its own index plus the shift,
    beyond the tensor's mapped pages, and the distance in bytes is the element's."""
    past = shift > 0
    for message in run_child(op, shift):
        found = FAULT.search(message)
        assert found, message
        element, far = int(found["element"]), int(found["far"])
        assert found["op"] == op and found["verb"] == ("wrote" if op == "shift_write" else "read"), message
        assert found["side"] == ("past the end of" if past else "before the start of"), message
        assert element == int(found["block"]) * 256 + int(found["thread"]) + shift, message
        assert shift <= element < shift + N, message
        assert far == ((element - N) * 4 if past else -element * 4), message
        assert int(found["line"]) == line_of("x[i + shift] = 1.0f;" if op == "shift_write" else "= x[i + shift];"), (
            message
        )


def test_a_fault_in_the_guard_of_a_tensor_the_op_did_not_name_says_so():
    """x[shift] that lands 8 KiB past the end of another tensor y (in y's guard): named by y's size, not as x's."""
    code = (
        "import torch, helpers\n"
        f"k = helpers.load_kernel({str(OVERRUN)!r}, target='cpu', quiet=True)\n"
        "x, y = torch.zeros(1), torch.zeros(1000)\n"
        "shift = (y.data_ptr() + 4000 + 8192 - x.data_ptr()) // 4\n"
        "for _ in range(2):\n"
        "    try:\n"
        "        k.shift_write(x, shift)\n"
        "    except RuntimeError as e:\n"
        "        print(str(e).splitlines()[0])\n"
        "print((y == 0).all().item(), (x == 0).all().item())\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (run.returncode, run.stderr[-3000:])
    lines = run.stdout.splitlines()
    assert lines[-1] == "True True" and len(lines) == 3, lines
    for line in lines[:2]:
        assert (
            "op 'shift_write': kernel 'shift_write_kernel' thread (0,0,0) block (0,0,0) wrote 8192 bytes past the end "
            "of a tensor of 4000 bytes the op did not pass by name, at tests/cuda_cpu/overrun.cu:"
        ) in line, line


def test_the_guards_spend_at_most_half_the_map_entries_and_more_tensors_still_allocate():
    """50,000 live tensors: the first ~10,900 get mappings of their own (a sixth of vm.max_map_count, 65530 by
    default, two entries each), the rest come from torch's allocator with redzones alone; every one is usable, and
    the process ends well. Freed, 1024 of the mappings stay cached for reuse; tensors of another size take their
    place when the budget is spent, so that the last of a new budget's worth is still guarded."""
    code = (
        "import gc, torch, helpers\n"
        f"k = helpers.load_kernel({str(OVERRUN)!r}, target='cpu', quiet=True)\n"
        "limit = int(open('/proc/sys/vm/max_map_count').read())\n"
        "base = len(open('/proc/self/maps').readlines())\n"
        "kept = [torch.full((8,), float(i)) for i in range(50_000)]\n"
        "maps = len(open('/proc/self/maps').readlines())\n"
        "assert all(kept[i][7].item() == i for i in range(0, 50_000, 997))\n"
        "k.shift_write(kept[-1], 0)\n"
        "del kept\n"
        "gc.collect()\n"
        "print(limit, maps - base)\n"
        "more = [torch.empty(1000) for _ in range(limit // 6 - 50)]\n"  # less the few tensors torch holds itself
        "try:\n"
        "    k.shift_read(more[-1], 100_000)\n"
        "    print('no error')\n"
        "except RuntimeError as e:\n"
        "    print(str(e).splitlines()[0])\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (run.returncode, run.stdout, run.stderr[-3000:])
    counts, message = run.stdout.splitlines()
    limit, spent = map(int, counts.split())
    assert limit // 6 <= spent <= limit // 2, (limit, spent)
    # Whichever block faults first is named: its first thread's element.
    found = re.search(r"read past the end of 'x' \(1000 elements of 4 bytes\): element \[(\d+)\]", message)
    assert found and int(found[1]) in (100_000, 100_256, 100_512, 100_768), message


def test_a_large_tensor_freed_and_allocated_again_reuses_its_mapping_when_the_cache_is_full_of_small_ones():
    """The cache keeps 1024 freed mappings and unmaps the oldest past that: a loop that frees a 16 MiB output and
    allocates it again keeps its pages (a new mapping would touch 4096 pages afresh, which tripled add2's time on
    2^22 floats when the largest was unmapped first)."""
    code = (
        "import torch, helpers\n"
        f"k = helpers.load_kernel({str(OVERRUN)!r}, target='cpu', quiet=True)\n"
        "small = [torch.empty(1024) for _ in range(2000)]\n"
        "del small\n"  # the cache is full: 1024 mappings of 1024 floats
        "x = torch.empty(2**22)\n"
        "at = x.data_ptr()\n"
        "del x\n"
        "other = torch.empty(3 * 2**20)\n"  # a size not cached: a new mapping, in x's place if x's were unmapped
        "print(torch.empty(2**22).data_ptr() == at)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout == "True\n", (run.returncode, run.stdout, run.stderr[-3000:])


def test_a_launch_that_writes_on_both_sides_fails_once_and_leaves_both_redzones_whole():
    """x[-1] and x[n] in one launch: the message names the first side; both redzones are refilled, so the next,
    correct launch on the same tensor does not fail for the other."""
    code = (
        "import torch, helpers\n"
        f"k = helpers.load_kernel({str(OVERRUN)!r}, target='cpu', quiet=True)\n"
        "x = torch.zeros(1000)\n"
        "try:\n"
        "    k.both_ends(x)\n"
        "except RuntimeError as e:\n"
        "    print(\"wrote before the start of 'x' (1000 elements of 4 bytes): element [-1].\" in str(e))\n"
        "k.shift_write(x, 0)\n"
        "print((x == 1).all().item())\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout == "True\nTrue\n", (run.returncode, run.stdout, run.stderr[-3000:])
