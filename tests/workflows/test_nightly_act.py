""".github/workflows/nightly.yml run for real with act (host mode) on this machine.

Real servers (the cached MariaDB 10.11.18/19 from the catalog) on 127.0.0.1, real
sysbench, real DuckDB, real git: the publish job pushes to a local bare repository the
test made (tests/workflows/act_run.py). Artifacts and Pages go through the local
stand-ins in tests/fixtures/actions/. A few 2-second cells per night.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from act_run import add_matrix, add_server, commit, git, run_act, work_repo

from leaks import processes_mentioning
from perftrack.servers import catalog, providers
from perftrack.store import nightfiles

pytestmark = pytest.mark.integration

WORKFLOW = ".github/workflows/nightly.yml"
TINY = {
    "description": "act tests, two MariaDB releases, one short cell each",
    "servers": ["mariadb-10.11.18", "mariadb-10.11.19"],
    "workloads": ["oltp_point_select"],
    "charsets": ["latin1"],
    "threads": [1],
    "repeats": 1,
    "duration_s": 2,
    "warmup_s": 0,
    "tables": 1,
    "table_size": 1000,
    "profile": "default",
    "connection": "tcp",
}
MISFIT = "mysql-8.0.36-misfit"


@pytest.fixture
def repo(tmp_path: Path):
    # The servers come from the normal cache (fetched once, reused by every job).
    for sid in TINY["servers"]:
        providers.fetch(catalog.load().get(sid))
    work, bare = work_repo(tmp_path)
    add_matrix(work, "act-tiny", TINY)
    commit(work, "act test: a tiny matrix")
    yield work, bare
    assert processes_mentioning(str(tmp_path)) == [], "a server or sysbench process leaked"


def remote_results(bare: Path, tmp: Path) -> list[tuple[str, str, float | None]]:
    """(server id, status, tps) of every result in the DB on the bare remote's main."""
    check = tmp / "check"
    git(tmp, "clone", "--quiet", "--branch", "main", str(bare), str(check))
    con = nightfiles.connect(check / "data" / "results.duckdb")
    try:
        return con.execute(
            "SELECT s.server_id, r.status, r.tps FROM results r JOIN servers s USING (server_key) "
            "ORDER BY 1, 2"
        ).fetchall()
    finally:
        con.close()


def test_dispatch_runs_benches_publishes_and_deploys(repo: tuple[Path, Path], tmp_path: Path):
    work, bare = repo
    before = git(bare, "rev-parse", "main")
    run = run_act(
        work, tmp_path, WORKFLOW, "workflow_dispatch", {"matrix": "act-tiny", "shards": "2"}
    )
    assert run.returncode == 0, run.log[-6000:]
    # plan -> 2 shards -> records and logs of each, uploaded
    plan = json.loads((run.artifacts / "night-plan" / "night-plan.json").read_text())
    assert [s["shard"] for s in plan["shards"]] == [0, 1]
    for shard in (0, 1):
        records = list((run.artifacts / f"records-shard-{shard}").glob("*/records/*.json"))
        assert records, f"shard {shard} uploaded no records"
        assert list((run.artifacts / f"logs-shard-{shard}").glob("*/logs/*"))
    # publish: one new commit on the remote with both servers' results
    assert git(bare, "rev-list", "--count", f"{before}..main") == "1"
    rows = remote_results(bare, tmp_path)
    assert sorted(r[0] for r in rows) == ["mariadb-10.11.18", "mariadb-10.11.19"]
    assert all(status == "ok" and tps and tps > 0 for _, status, tps in rows)
    # the site was built, handed to Pages and "deployed"; the summary has the table
    assert (run.artifacts / "github-pages" / "index.html").is_file()
    assert (run.artifacts / "deployed-pages" / "index.html").is_file()
    # the next night's publish gets this night's site to build over (actions/cache stand-in)
    assert "no cache to restore" in run.log  # the first night: nothing saved before
    (saved,) = (run.artifacts / "caches").glob("perftrack-publish-*")
    assert (saved / "build" / "site" / ".perftrack-site").is_file()
    assert (saved / "build" / "site" / "index.html").is_file()
    summaries = run.summaries()
    assert "perftrack: nightly publish" in summaries
    assert "| mariadb-10.11.18 | 1 | 0 | 0 |" in summaries
    assert "![throughput trend](file://" in summaries


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"threads": "abc"}, "PT_THREADS: 'abc' must be a whole number"),
        (
            {"versions": "mariadb-9.9.9; rm -rf /"},
            "PT_VERSIONS: 'mariadb-9.9.9; rm -rf /' has characters other than",
        ),
    ],
    ids=["threads-not-a-number", "versions-shell-injection"],
)
def test_bad_input_fails_the_plan_with_the_message(
    repo: tuple[Path, Path], tmp_path: Path, inputs: dict[str, str], message: str
):
    work, bare = repo
    before = git(bare, "rev-parse", "main")
    run = run_act(work, tmp_path, WORKFLOW, "workflow_dispatch", {"matrix": "act-tiny", **inputs})
    assert run.returncode != 0
    assert f"error: {message}" in run.log  # the step's log
    # and the job summary (markdown-escaped there: PT\_THREADS)
    assert message in re.sub(r"\\(.)", r"\1", run.summaries())
    assert run.jobs_started() == {"plan the night"}, run.jobs_started()  # no bench, no publish
    assert git(bare, "rev-parse", "main") == before
    assert not (run.artifacts / "night-plan").exists()


def test_one_failed_shard_of_three_still_publishes_the_others(
    repo: tuple[Path, Path], tmp_path: Path
):
    """A third server that cannot start (a MariaDB binary catalogued as MySQL 8.0: its
    `--initialize-insecure` is refused) fails its shard; the other two are published."""
    work, bare = repo
    basedir = providers.fetch(catalog.load().get("mariadb-10.11.19")).basedir
    add_server(
        work,
        {
            "id": MISFIT,
            "product": "mysql",
            "version": "8.0.36",
            "provider": "path",
            "basedir": str(basedir),
            "notes": "act test: a MariaDB binary catalogued as MySQL 8.0, so it cannot start",
        },
    )
    commit(work, "act test: a server that cannot start")
    versions = ",".join([*TINY["servers"], MISFIT])
    run = run_act(
        work,
        tmp_path,
        WORKFLOW,
        "workflow_dispatch",
        {"matrix": "act-tiny", "versions": versions, "shards": "3"},
    )
    assert run.returncode != 0  # the failed shard makes the workflow run red
    plan = json.loads((run.artifacts / "night-plan" / "night-plan.json").read_text())
    by_server = {c["server_id"]: s["shard"] for s in plan["shards"] for c in s["cells"]}
    assert len(plan["shards"]) == 3 and len(set(by_server.values())) == 3
    assert {"publish results", "deploy the site"} <= run.jobs_started()
    rows = remote_results(bare, tmp_path)
    ok = sorted(sid for sid, status, _ in rows if status == "ok")
    assert ok == ["mariadb-10.11.18", "mariadb-10.11.19"]
    # the failed shard's cell has no result: failed attempts with no throughput, never 0
    assert {(sid, tps) for sid, status, tps in rows if status != "ok"} == {(MISFIT, None)}
    assert all(tps != 0 for _, _, tps in rows)
    summaries = run.summaries()
    assert f"| {by_server[MISFIT]} | bench-default | 1 | 0 | 1 cell(s) without a result |" in (
        summaries
    )
    assert "never as zero" in summaries
    assert (run.artifacts / "deployed-pages" / "index.html").is_file()
