"""kp.display: what the notebooks show, and what they say when a tool to show it is missing."""

import pytest
import torch

import helpers
import kp.display
import kp.toolchain


def test_show_graph_without_graphviz_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` here
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(helpers.ToolchainError, match=r"apt-get install -y graphviz .*conda install graphviz"):
        helpers.show_graph((x * 2).sum())


def test_show_kernel_resources_without_nvcc_prints_the_fix_and_goes_on(monkeypatch, capsys):
    monkeypatch.setenv("CUDA_HOME", "/nonexistent")
    assert helpers.show_kernel_resources("add2") is None
    out = capsys.readouterr().out
    assert out.startswith("nvcc was not found") and "export CUDA_HOME=" in out


@pytest.mark.skipif(kp.toolchain.find_cuda_root() is None, reason="no CUDA toolkit here")
def test_show_kernel_resources_shows_the_table_once(monkeypatch):
    shown = []
    monkeypatch.setattr(kp.display, "show", lambda kind, data, text=None: shown.append((kind, data)))
    assert helpers.show_kernel_resources("add2") is None  # nothing for Jupyter to display a second time
    ((kind, markdown),) = shown
    assert kind == "Markdown" and markdown.count("| kernel file |") == 1 and "`add2_fwd_kernel<double>`" in markdown
