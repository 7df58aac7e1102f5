"""add2 (c = a + b) on the CPU stand-in: against torch on irregular sizes, and every bad input."""

import pytest
import torch

import helpers


@pytest.fixture(scope="module")
def add2():
    return helpers.load_kernel("add2", target="cpu", quiet=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(0,), (1,), (1023,), (1025,), (2**20 + 3,), (3, 0, 5), (7, 11, 13)])
def test_matches_torch(add2, shape, dtype):
    a, b = torch.randn(shape, dtype=dtype), torch.randn(shape, dtype=dtype)
    c = add2.add2(a, b)
    assert c.shape == a.shape and c.dtype == dtype
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)  # one rounding, as torch does


def test_non_contiguous_inputs(add2):
    a, b = torch.randn(64, 33).t(), torch.randn(33, 64)
    torch.testing.assert_close(add2.add2(a, b), a + b, rtol=0, atol=0)


@pytest.mark.parametrize(
    "a, b, message",
    [
        (
            torch.ones(3, dtype=torch.int32),
            torch.ones(3, dtype=torch.int32),
            "add2: a must be float32 or float64, got Int",
        ),
        (torch.ones(3), torch.ones(3, dtype=torch.float16), "add2: b must be float32 or float64, got Half"),
        (torch.ones(3), torch.ones(3, dtype=torch.float64), "add2: b has dtype Double but a has Float"),
        (torch.ones(3), torch.ones(4), r"add2: b has shape \[4\] but a has \[3\]"),
        (torch.ones(2, 3), torch.ones(3, 2), r"add2: b has shape \[3, 2\] but a has \[2, 3\]"),
        (
            torch.ones(3, device="meta"),
            torch.ones(3, device="meta"),
            "add2: a is on a device other than cpu and cuda, but this build takes cpu tensors",
        ),
        (
            torch.ones(3),
            torch.ones(3, device="meta"),
            "add2: b is on a device other than cpu and cuda, but this build takes cpu tensors",
        ),
    ],
)
def test_bad_inputs_raise_a_runtime_error_naming_the_argument(add2, a, b, message):
    with pytest.raises(RuntimeError, match=message):
        add2.add2(a, b)


def test_a_bad_call_loses_nothing(add2):
    a = torch.randn(5)
    with pytest.raises(RuntimeError):
        add2.add2(a, torch.ones(6))
    torch.testing.assert_close(add2.add2(a, a), 2 * a)
