"""The two parts of `make test` (tests/conftest.py): which test files start servers, which
of them must run alone, and how a parallel worker sees that a test started one."""

from __future__ import annotations

import os

# The two kinds of test files that start database servers, sysbench, mysqlslap, act or
# docker (found by watching every test's processes; the guard below keeps the lists
# complete).
#
# QUIET_TEST_FILES run one test at a time after everything else, nothing beside them:
# they assert what a measurement says (a verdict or ratio of an effect of ~20%, a flagged
# trend, what the host sampler reads).
QUIET_TEST_FILES = frozenset(
    {
        "experiments/test_explain.py",
        "experiments/test_one_answer.py",
        "run/test_sampler.py",
        "run/test_steady.py",
    }
)
# SHARED_SERVER_TEST_FILES start servers but assert nothing another test's load can change
# (a record written, a charset verified, a fetch pinned, a workflow's jobs, the verdict of
# an effect of several times, which other tests' load does not hide): they run in the
# parallel part with the files that start none. Each server on its own free port, under
# its own temporary directory; the caches take their locks.
SHARED_SERVER_TEST_FILES = frozenset(
    {
        "cli/test_cli.py",
        "drivers/test_slap.py",
        "experiments/test_bisect.py",  # stand-ins: fsync and binlog a commit, or neither
        "experiments/test_conclude.py",  # the same stand-ins
        "experiments/test_conclude_axis.py",  # durability strict against relaxed: several x
        "host/test_killed_run.py",
        "host/test_sweep.py",
        "planning/test_axes.py",
        "planning/test_schedule.py",
        "planning/test_workloads.py",
        "publish/test_study.py",
        "run/test_faults.py",
        "run/test_lifetime.py",
        "run/test_runner.py",
        "runners/test_fresh_host.py",  # a Docker engine of its own, as test_docker.py's
        "servers/providers/test_debian.py",
        "servers/providers/test_debian_chroot.py",
        "servers/providers/test_docker.py",  # its own engine: private socket, data and exec roots
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
SERVER_TEST_FILES = QUIET_TEST_FILES | SHARED_SERVER_TEST_FILES
# what such a test starts (a process's name, /proc/PID/comm: 15 characters at most)
SERVER_PROGRAMS = frozenset(
    {"mysqld", "mariadbd", "mysql_install_d", "mariadb-install", "sysbench", "mysqlslap"}
    | {"mariadb-slap", "act", "docker", "dockerd"}
)
POLL_S = 0.1


def descendants_running(root: int) -> set[str]:
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
