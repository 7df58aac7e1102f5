"""kp.binding: the fakes' argument checks raise RuntimeError with the binding's words (c10's dtype names, the op
and the argument named), and pass what the binding takes. (That every op's fake and binding agree on a bad call:
test_op_contract.py.)"""

import pytest
import torch

from kp.binding import dtype_name, require_floating, require_like, require_same_kind


def test_dtype_names_are_c10s():
    assert [dtype_name(d) for d in (torch.float32, torch.float64, torch.int32, torch.bool)] == [
        "Float",
        "Double",
        "Int",
        "Bool",
    ]
    assert dtype_name(torch.uint16) == "uint16"  # one c10 has no short name for here: torch's own


@pytest.mark.parametrize(
    "check, args, message",
    [
        (require_floating, (torch.ones(2, dtype=torch.int64),), "op: x must be float32 or float64, got Long"),
        (
            require_same_kind,
            (torch.ones(2), "y", torch.ones(2, dtype=torch.float64)),
            "op: x has dtype Float but y has Double",
        ),
        (require_same_kind, (torch.ones(2, device="meta"), "y", torch.ones(2)), "op: x is on meta but y is on cpu"),
        (
            require_like,
            (torch.ones(2, dtype=torch.float16), "y", torch.ones(2)),
            "op: x must be float32 or float64, got Half",
        ),
        (require_like, (torch.ones(3), "y", torch.ones(2)), r"op: x has shape \[3\] but y has \[2\]"),
        (
            lambda *a: require_floating(*a, half=True),  # an op whose kernels take the half types too
            (torch.ones(2, dtype=torch.int32),),
            "op: x must be float32, float64, float16 or bfloat16, got Int",
        ),
        (
            lambda *a: require_like(*a, half=True),
            (torch.ones(2, dtype=torch.bfloat16), "y", torch.ones(2, dtype=torch.float16)),
            "op: x has dtype BFloat16 but y has Half",
        ),
    ],
)
def test_a_failed_requirement_is_a_runtime_error_naming_the_op_and_the_argument(check, args, message):
    with pytest.raises(RuntimeError, match=f"^{message}$"):
        check("op", "x", *args)


def test_what_the_binding_takes_passes():
    x = torch.ones(2, 3, dtype=torch.float64)
    require_floating("op", "x", x)
    require_same_kind("op", "x", x, "y", torch.zeros(7, dtype=torch.float64))
    require_like("op", "x", x, "y", torch.zeros(2, 3, dtype=torch.float64))
    for dtype in (torch.float16, torch.bfloat16):
        require_like("op", "x", torch.ones(2, dtype=dtype), "y", torch.ones(2, dtype=dtype), half=True)
