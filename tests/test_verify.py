"""kp.verify: the verifications that print and assert (gradcheck, check_compiled) fail when they should, and
record their verdicts."""

import json

import pytest
import torch
from torch.autograd.gradcheck import GradcheckError

import helpers


class WrongBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return grad  # should be 2x * grad


def test_gradcheck_raises_and_records_a_wrong_backward(tmp_path, monkeypatch):
    monkeypatch.setenv("KP_REPORT", str(tmp_path / "r.json"))
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    with pytest.raises(GradcheckError):
        helpers.gradcheck(WrongBackward.apply, (x,))
    assert json.loads((tmp_path / "r.json").read_text())["gradcheck"][0].startswith("FAILED: WrongBackward: ")


def test_check_compiled_catches_a_model_that_compiles_differently():
    def model(x):
        return x + 1 if torch.compiler.is_compiling() else x

    x = torch.randn(4, requires_grad=True)
    with pytest.raises(AssertionError):
        helpers.check_compiled(model, x)
    compiled = helpers.check_compiled(lambda x: x.sin() * 2, x)
    torch.testing.assert_close(compiled(x), x.sin() * 2)
