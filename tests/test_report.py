"""kp.report: a notebook's records (helpers.record) go to the file KP_REPORT names, under its lock, and are read
back whole, leaving no lock behind. (The page made of them: test_run_notebooks.py.)"""

import json

import helpers
from kp import report


def test_record_appends_to_the_file_named_by_kp_report(tmp_path, monkeypatch):
    path = tmp_path / "nb.json"
    monkeypatch.setenv("KP_REPORT", str(path))
    helpers.record("metric", "loss 0.1")
    helpers.record("metric", "loss 0.05")
    helpers.record("bench", "add2 0.5x torch.add")
    assert json.loads(path.read_text()) == {"metric": ["loss 0.1", "loss 0.05"], "bench": ["add2 0.5x torch.add"]}


def test_read_records_gives_what_was_recorded_and_leaves_no_lock(tmp_path, monkeypatch):
    path = tmp_path / "nb.json"
    assert report.read_records(path) == {}  # the notebook recorded nothing
    monkeypatch.setenv(report.ENV, str(path))
    helpers.record("metric", "loss 0.1")  # helpers.record is kp.report's
    assert (tmp_path / "nb.json.lock").exists()
    assert report.read_records(path) == {"metric": ["loss 0.1"]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nb.json"]


def test_record_without_kp_report_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("KP_REPORT", raising=False)
    monkeypatch.chdir(tmp_path)
    helpers.record("metric", "loss 0.1")
    assert list(tmp_path.iterdir()) == []
