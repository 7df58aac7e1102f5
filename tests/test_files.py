"""kp.files: content keys (the build cache's keys), OS-level locks and atomic writes."""

import multiprocessing
import os
import threading
import time
from pathlib import Path

from kp.files import content_key, locked, write_atomically, write_if_changed


def test_content_key_keeps_the_formula_of_every_warm_cache(tmp_path, monkeypatch):
    # The hex values were computed with the build key's formula as helpers.py wrote it before the split
    # into kp/ (46339f7): a change here would rebuild every kernel in every warm cache.
    monkeypatch.chdir(tmp_path)
    Path("a.cu").write_text("__global__ void k() {}\n")
    Path("b.h").write_text("#pragma once\n")
    params = ("cpu", "2.14.1+cu130", ["-O3"], [], ["-fuse-ld=gold"], ["/kernels/common"])
    assert content_key(params, [Path("a.cu"), Path("b.h")]) == "d74d0cde10e1c32d"
    assert content_key(("sm_90", "/usr/local/cuda"), [Path("a.cu")]) == "25d4b8f56d2a9607"  # ptxas's cache
    Path("b.h").write_text("#pragma once  \n")
    assert content_key(params, [Path("a.cu"), Path("b.h")]) != "d74d0cde10e1c32d"  # a byte changed


def test_write_if_changed_keeps_the_timestamp_of_the_same_content(tmp_path):
    path = tmp_path / "f.txt"
    write_atomically(path, "one")
    before = path.stat().st_mtime_ns
    time.sleep(0.01)
    write_if_changed(path, "one")
    assert path.stat().st_mtime_ns == before
    write_if_changed(path, "two")
    assert path.read_text() == "two" and list(tmp_path.iterdir()) == [path]  # no temporary file left


def _hold_and_die(path):
    with locked(path):
        os._exit(1)  # dies holding the lock, as a killed build does


def test_a_lock_whose_holder_died_is_free(tmp_path):
    path = tmp_path / "sub" / ".kp-lock"
    process = multiprocessing.get_context("fork").Process(target=_hold_and_die, args=(path,))
    process.start()
    process.join(30)
    taken = threading.Event()

    def take():
        with locked(path):  # waits for as long as the dead holder's lock stays
            taken.set()

    threading.Thread(target=take, daemon=True).start()
    assert taken.wait(30), "the lock of a dead holder was never released"
