"""A night that survives a dead runner (issue 23 item 3), made real: a `perftrack run` of a
night plan's shard on a real MariaDB is SIGKILLed after its first record; a real mariadbd
whose perftrack was SIGKILLed keeps running (as docker containers do); then what the next
job on that runner does — `perftrack runner sweep`, `salvage`, the resumed shard,
`forget` — and a publish of what was salvaged, which ingests the finished cells and shows
the others missing, never zero.

Integration: real MariaDB 10.11.18 (Debian package from the catalog, cache reused), real
sysbench, real DuckDB and git.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clirun import perftrack
from gitrepo import git
from leaks import processes_mentioning
from perftrack.core import dirlock
from perftrack.host import sweep
from perftrack.servers import catalog, providers
from perftrack.store.files import nightfiles

pytestmark = pytest.mark.integration

SERVER = "mariadb-10.11.18"
CELLS = 4  # one server, one workload, four repeats: one shard of four cells
NIGHT = "1001"  # the workflow run's id
FIRST_RECORD_S = 180.0  # fetch (cached), init, prepare and the first 2 s cell: ~10 s here
# Starts a server the way perftrack does, but without the parent-death signal (like a
# container, which lives in dockerd's cgroup), prints its pid and directory, then sleeps.
DETACHED = """
import sys, time
from pathlib import Path
from perftrack.run import server
from perftrack.servers import catalog, providers
server._die_with_parent = lambda: None
entry = catalog.read_catalog(Path(sys.argv[1]) / "versions.yaml").get(sys.argv[2])
srv = server.Server(install=providers.fetch(entry), options={}, workroot=Path(sys.argv[3]))
srv.__enter__()
print(srv.process.pid, srv.dir, flush=True)
time.sleep(600)
"""


def wait_until(condition, bound_s: float) -> bool:
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def server_dirs(temp: Path) -> list[Path]:
    return [d for d in temp.iterdir() if d.name.startswith("pt-")]


def records_in(d: Path) -> list[Path]:
    return sorted(d.glob("*/records/*.json")) if d.is_dir() else []


@pytest.fixture
def night(tmp_path: Path, config_dir: Path):
    providers.fetch(catalog.read_catalog(config_dir / "versions.yaml").get(SERVER))
    (config_dir / "matrices" / "killtest.yaml").write_text(
        f"name: killtest\nservers: [{SERVER}]\n"
        "workloads: [oltp_point_select]\ncharsets: [latin1]\nthreads: [1]\n"
        "repeats: 4\nduration_s: 2\nwarmup_s: 0\ntables: 1\ntable_size: 500\n"
    )
    temp = tmp_path / "temp"  # the runner's temp dir: server directories go here
    temp.mkdir()
    env = {
        "PERFTRACK_CONFIG_DIR": str(config_dir),
        "PERFTRACK_STATE_DIR": str(tmp_path / "state"),
        "TMPDIR": str(temp),
        "GITHUB_STEP_SUMMARY": "",
    }
    plan = tmp_path / "night-plan.json"
    res = perftrack("plan", "killtest", "--out", str(plan), env=env)
    assert res.returncode == 0, res.stderr
    yield env, plan, temp
    assert processes_mentioning(str(tmp_path)) == [], "a server or sysbench process leaked"


def test_a_killed_shard_is_swept_salvaged_published_and_resumed(tmp_path, night):
    env, plan, temp = night
    shard_dir = tmp_path / "state" / "nights" / NIGHT / "shard-0"

    # 1. the bench job: its perftrack is SIGKILLed once the first cell's record is written
    run = subprocess.Popen(
        [
            *(sys.executable, "-c", "import sys; from perftrack.cli import main; sys.exit(main())"),
            *("run", "--night-plan", str(plan), "--shard", "0", "--night-id", NIGHT),
        ],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        # killed while a server is up: between two cells no server directory exists
        assert wait_until(lambda: records_in(shard_dir) and server_dirs(temp), FIRST_RECORD_S), (
            "no record written while a server was up"
        )
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    finished = records_in(shard_dir)
    assert 1 <= len(finished) < CELLS
    (run_dir,) = shard_dir.iterdir()
    assert json.loads((run_dir / "run.json").read_text())["status"] == "running"  # no say
    assert dirlock.state(run_dir) == dirlock.FREE  # its owner is gone
    assert wait_until(lambda: processes_mentioning(str(temp)) == [], 30), "PDEATHSIG"
    assert server_dirs(temp), "the killed run's server directory stays behind"

    # 2. a server that outlived its perftrack (no parent-death signal, like a container)
    helper = subprocess.Popen(
        [sys.executable, "-c", DETACHED, env["PERFTRACK_CONFIG_DIR"], SERVER, str(temp)],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert helper.stdout is not None
    pid_text, server_dir = helper.stdout.readline().split()
    orphan = int(pid_text)
    helper.send_signal(signal.SIGKILL)
    helper.wait()
    time.sleep(0.5)
    assert not sweep._gone(orphan), "the detached mariadbd outlives its perftrack"
    assert Path(server_dir).is_dir()

    # 3. the next job on the runner: sweep first
    res = perftrack("runner", "sweep", "--root", str(temp), env=env)
    assert res.returncode == 0, res.stderr
    assert f"stopped process {orphan} (" in res.stdout
    assert wait_until(lambda: sweep._gone(orphan), 10)
    assert server_dirs(temp) == []
    assert f"removed stale server directory {server_dir}" in res.stdout
    res = perftrack("runner", "sweep", "--root", str(temp), env=env)
    assert res.returncode == 0 and "nothing to sweep" in res.stdout

    # 4. salvage (a job of the same night: the records are tonight's) and publish them
    work = tmp_path / "job"
    res = perftrack(
        *("runner", "salvage", "--night-id", NIGHT),
        *("--into", str(work / "runs"), "--earlier", str(work / "salvaged")),
        env=env,
    )
    assert res.returncode == 0, res.stderr
    salvaged = records_in(work / "runs")
    assert [p.name for p in salvaged] == [p.name for p in finished]
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "commit", "--quiet", "--allow-empty", "-m", "start")
    db, summary = repo / "data" / "results.duckdb", tmp_path / "summary.md"
    res = perftrack(
        *("publish", str(work / "runs"), "--plan", str(plan), "--no-push"),
        *("--db", str(db), "--summary", str(summary)),
        env=env,
        cwd=repo,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    con = nightfiles.connect(db)  # the DB's own night files, whatever the working directory
    try:
        rows = con.execute("SELECT status, tps FROM results").fetchall()
    finally:
        con.close()
    assert len(rows) == len(finished)  # the finished cells; none for the others, no zeros
    assert all(status == "ok" and tps > 0 for status, tps in rows)
    text = summary.read_text()
    missing = CELLS - len(finished)
    assert f"| {CELLS} | {len(finished)} | {missing} cell(s) without a result |" in text
    assert f"{missing} planned cell(s) have no result tonight" in text

    # 5. the shard re-run on this runner resumes the killed run: only the missing cells
    res = perftrack("run", "--night-plan", str(plan), "--shard", "0", "--night-id", NIGHT, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"run {run_dir.name}: an unfinished earlier attempt of shard 0, resumed" in res.stdout
    assert list(shard_dir.iterdir()) == [run_dir]
    assert len(records_in(shard_dir)) == CELLS
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"

    # 6. after the upload, forget: the state directory is empty again
    res = perftrack(
        *("runner", "salvage", "--night-id", NIGHT),
        *("--into", str(work / "runs"), "--earlier", str(work / "salvaged")),
        env=env,
    )
    assert len(records_in(work / "runs")) == CELLS
    res = perftrack("runner", "forget", str(work / "runs"), str(work / "salvaged"), env=env)
    assert res.returncode == 0, res.stderr
    assert f"forgot run {run_dir.name} of night {NIGHT} ({CELLS} record(s) uploaded)" in (
        res.stdout
    )
    assert list((tmp_path / "state" / "nights").iterdir()) == []
