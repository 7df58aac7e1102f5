"""kp.contract: a lesson's op contract in one cell, on add2: opcheck, gradcheck and torch.compile answered as one
table (the graph drawn under it); a wrong backward stops it with gradcheck's own error."""

import pytest
import torch
from torch.autograd.gradcheck import GradcheckError

import helpers
import kp.contract


class WrongBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        return grad, 2 * grad  # dL/db is grad, not twice it


@pytest.fixture(scope="module")
def add2():
    return helpers.load_kernel("add2", target="cpu", quiet=True)


def test_the_contract_is_one_table_of_what_passed(add2, monkeypatch):
    shown = []
    monkeypatch.setattr(kp.contract, "show", lambda kind, data, text=None: shown.append((kind, data)))
    monkeypatch.setattr(kp.contract, "show_graph", lambda *args: shown.append(("graph", args)))
    a, b = (torch.randn(33, dtype=torch.float64, requires_grad=True) for _ in range(2))
    table = helpers.check_contract(
        ops=[(add2.add2, (a, b))],
        gradcheck_of=(lambda x, y: add2.add2(x, y), (a, b), "add2"),
        compiled=(add2.add2, a, b),
        graph=("tensor", {"a": a}),
    )
    assert [(r["check"], r["result"]) for r in table.rows] == [
        ("opcheck add2", "passed"),
        ("gradcheck", "passed"),
        ("torch.compile(fullgraph=True)", table.rows[2]["result"]),
    ]
    assert table.rows[0]["on"] == "(33,) float64, (33,) float64"
    assert table.rows[1]["on"] == "add2, gradients for (33,) float64, (33,) float64"
    assert table.rows[2]["result"].startswith("matches eager, max abs error 0.0e+00 (")
    assert shown[0] == ("Markdown", table.markdown()) and shown[1] == ("graph", ("tensor", {"a": a}))


def test_a_wrong_backward_stops_the_contract_with_gradchecks_error(monkeypatch):
    monkeypatch.setattr(kp.contract, "show", lambda *args, **kwargs: pytest.fail("a failed contract shows no table"))
    a, b = (torch.randn(5, dtype=torch.float64, requires_grad=True) for _ in range(2))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 1"):
        helpers.check_contract(gradcheck_of=(WrongBackward.apply, (a, b)))
