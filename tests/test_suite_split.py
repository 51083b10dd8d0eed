"""The two parts of `make test` (tests/conftest.py): the lists of test files that start
servers name real files, each on one list, and the guard of the parallel part sees a
server program."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import suitesplit

TESTS = Path(__file__).resolve().parent


def test_every_listed_server_test_file_exists_and_is_on_one_list():
    missing = sorted(f for f in suitesplit.SERVER_TEST_FILES if not (TESTS / f).is_file())
    assert missing == []
    assert not suitesplit.QUIET_TEST_FILES & suitesplit.SHARED_SERVER_TEST_FILES


def test_the_guard_sees_a_server_program_started_below_this_process(tmp_path: Path):
    # a program named like sysbench (a copy of sleep): its process name is what the guard reads
    fake = tmp_path / "sysbench"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", fake)
    assert suitesplit.descendants_running(os.getpid()) == set()
    proc = subprocess.Popen([str(fake), "5"])
    try:
        assert suitesplit.descendants_running(os.getpid()) == {"sysbench"}
    finally:
        proc.kill()
        proc.wait()
    assert suitesplit.descendants_running(os.getpid()) == set()
