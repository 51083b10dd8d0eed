"""Shared fixtures. Integration tests start real servers from the real catalog; downloads
go to the normal perftrack cache (~/.cache/perftrack or $PERFTRACK_CACHE) and are reused.

`make test` runs the suite in two parts: every file in parallel (pytest-xdist, one worker
per core), those that start servers but assert nothing a loaded machine changes
(`suitesplit.SHARED_SERVER_TEST_FILES`) among them; then the files of
`suitesplit.QUIET_TEST_FILES` (marked `quiet`: they assert what a measurement says) one
test at a time, so a measurement never shares the machine with another test. In a
parallel worker, a test that starts a database server, sysbench, act or docker from a
file on neither list fails, naming the lists (`_no_servers_in_parallel`).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaks import processes_mentioning
from suitesplit import POLL_S, QUIET_TEST_FILES, SHARED_SERVER_TEST_FILES, descendants_running

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"


def _listed(path: Path, files: frozenset[str]) -> bool:
    tests = REPO / "tests"
    return path.is_relative_to(tests) and path.relative_to(tests).as_posix() in files


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _listed(item.path, QUIET_TEST_FILES):
            item.add_marker(pytest.mark.quiet)
    # The files that start servers first (a stable sort: files keep their order otherwise):
    # they are the long ones, and the parallel part's workers take files in this order, so
    # the short ones fill in at the end instead of one worker finishing a long file alone.
    items.sort(key=lambda item: not _listed(item.path, SHARED_SERVER_TEST_FILES))


@pytest.fixture(autouse=True)
def _no_servers_in_parallel(request: pytest.FixtureRequest) -> Iterator[None]:
    """In a parallel worker (pytest-xdist), fail a test that starts a server program from a
    file not on SHARED_SERVER_TEST_FILES: it belongs on that list, or on QUIET_TEST_FILES
    (run one at a time) when it asserts what a measurement says."""
    if "PYTEST_XDIST_WORKER" not in os.environ or _listed(request.path, SHARED_SERVER_TEST_FILES):
        yield
        return
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(POLL_S):
            seen.update(descendants_running(os.getpid()))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
    if seen:
        pytest.fail(
            f"{request.node.nodeid} started {', '.join(sorted(seen))} in a parallel worker: "
            "add its file to tests/suitesplit.py: SHARED_SERVER_TEST_FILES, or QUIET_TEST_FILES "
            "(run one at a time) when it asserts what a measurement says"
        )


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    """A private copy of configs/ a test may add profiles or matrices to."""
    d = tmp_path / "configs"
    shutil.copytree(CONFIGS, d)
    return d


@pytest.fixture
def configs(config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`config_dir`, made the configs every perftrack command of the test reads."""
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(config_dir))
    return config_dir


@pytest.fixture
def workroot(tmp_path: Path):
    """Directory for server datadirs; after the test nothing may run from it or remain."""
    root = tmp_path / "w"
    root.mkdir()
    yield root
    assert processes_mentioning(str(root)) == [], "a server or sysbench process leaked"
    assert list(root.iterdir()) == [], "a server directory was left behind"
