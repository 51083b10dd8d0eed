"""Shared fixtures. Integration tests start real servers from the real catalog; downloads
go to the normal perftrack cache (~/.cache/perftrack or $PERFTRACK_CACHE) and are reused.

`make test` runs the suite in two parts: the test files of `SERVER_TEST_FILES` (marked
`servers`) one test at a time, so a measurement never shares the machine with another
test, and every other file in parallel before them (pytest-xdist, one worker per core).
In a parallel worker, a test that starts a database server, sysbench, act or docker
fails, naming the list it belongs on (`_no_servers_in_parallel`).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaks import processes_mentioning

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"

# The test files that start database servers, sysbench, mysqlslap, act or docker (found
# by watching every test's processes; the guard below keeps the list complete).
SERVER_TEST_FILES = frozenset(
    {
        "cli/test_cli.py",
        "drivers/test_slap.py",
        "experiments/test_bisect.py",
        "experiments/test_conclude.py",
        "experiments/test_conclude_axis.py",
        "experiments/test_explain.py",
        "experiments/test_one_answer.py",
        "host/test_killed_run.py",
        "host/test_sweep.py",
        "planning/test_axes.py",
        "planning/test_schedule.py",
        "planning/test_workloads.py",
        "publish/test_study.py",
        "run/test_faults.py",
        "run/test_lifetime.py",
        "run/test_runner.py",
        "run/test_sampler.py",
        "run/test_steady.py",
        "runners/test_fresh_host.py",
        "servers/providers/test_debian.py",
        "servers/providers/test_debian_chroot.py",
        "servers/providers/test_docker.py",
        "servers/providers/test_maven.py",
        "servers/providers/test_path.py",
        "servers/providers/test_tarball.py",
        "servers/test_rules.py",
        "test_soak.py",
        "test_suite_split.py",  # the guard's own test starts a stand-in named sysbench
        "workflows/test_new_tags_act.py",
        "workflows/test_nightly_act.py",
        "workflows/test_pr_check_act.py",
        "workflows/test_runner_gate_act.py",
    }
)
# what such a test starts (a process's name, /proc/PID/comm: 15 characters at most)
SERVER_PROGRAMS = frozenset(
    {"mysqld", "mariadbd", "mysql_install_d", "mariadb-install", "sysbench", "mysqlslap"}
    | {"mariadb-slap", "act", "docker", "dockerd"}
)
POLL_S = 0.1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = REPO / "tests"
    for item in items:
        if not item.path.is_relative_to(tests):
            continue
        if item.path.relative_to(tests).as_posix() in SERVER_TEST_FILES:
            item.add_marker(pytest.mark.servers)


def _descendants_running(root: int) -> set[str]:
    """The SERVER_PROGRAMS among the processes descending from `root`."""
    parent: dict[int, int] = {}
    name: dict[int, str] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue  # ended meanwhile
        pid = int(entry.name)
        # pid (comm) state ppid ...: comm may hold spaces and parentheses
        name[pid] = stat[stat.index("(") + 1 : stat.rindex(")")]
        parent[pid] = int(stat[stat.rindex(")") + 2 :].split()[1])
    found = set()
    for pid, comm in name.items():
        if comm not in SERVER_PROGRAMS:
            continue
        up = parent.get(pid)
        while up and up != root:
            up = parent.get(up)
        if up == root:
            found.add(comm)
    return found


@pytest.fixture(autouse=True)
def _no_servers_in_parallel(request: pytest.FixtureRequest) -> Iterator[None]:
    """In a parallel worker (pytest-xdist), fail a test that starts a server program: it
    belongs in SERVER_TEST_FILES, which run one at a time."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(POLL_S):
            seen.update(_descendants_running(os.getpid()))

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
            "add its file to SERVER_TEST_FILES in tests/conftest.py (run one at a time)"
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
