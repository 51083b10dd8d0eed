""".github/workflows/nightly.yml run for real with act (host mode) on this machine.

Real servers (the cached MariaDB 10.11.18/19 from the catalog) on 127.0.0.1, real
sysbench, real DuckDB, real git: the publish job pushes to a local bare repository the
test made (tests/workflows/act_run.py). Artifacts and Pages go through the local
stand-ins in tests/fixtures/actions/; Docker Hub and GitHub's API, where a night needs
them, are replayed by a local server on 127.0.0.1 (tests/replay.py). A few 2-second
cells per night.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from act_run import add_matrix, add_server, commit, git, run_act, work_repo

from leaks import processes_mentioning
from perftrack.servers import catalog, providers
from perftrack.store.files import nightfiles
from replay import Replay

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
TOFU = "mysql-8.4.3-tofu"  # a docker entry the catalog marks unpinned
D843 = "sha256:" + "84" * 32  # the replayed Docker Hub's digest of mysql:8.4.3
REPOSITORY = "perftrack/perftrack"
HUB_TAG = "/v2/namespaces/library/repositories/mysql/tags/8.4.3"
PULLS = f"/repos/{REPOSITORY}/pulls"
DISPATCH = f"/repos/{REPOSITORY}/actions/workflows/pr-check.yml/dispatches"


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


CACHE_SECRET = "k" * 64  # PERFTRACK_CACHE_KEY: the results environment's, publish's alone


def _plant_forged_cache(tmp: Path) -> None:
    """What a job able to write the default branch's cache scope could save under the exact
    key tonight's publish restores (the data/ tree checked out: none yet): a seal not made
    with the publish job's key, a forged answer for detect, a script for the site."""
    forged = tmp / "artifacts" / "caches" / "perftrack-publish-none"
    cache = forged / "data" / ".results-cache"
    (cache / "answers").mkdir(parents=True)
    (cache / "answers" / "forged.json").write_text('{"verdict": "forged"}\n')
    seal = {"version": 1, "key": "perftrack-publish-none", "mac": "0" * 64}
    (cache / "SEAL").write_text(json.dumps(seal) + "\n")
    (forged / "build" / "site").mkdir(parents=True)
    (forged / "build" / "site" / "evil.js").write_text("fetch('https://evil.example/')\n")


def test_dispatch_runs_benches_publishes_and_deploys(repo: tuple[Path, Path], tmp_path: Path):
    work, bare = repo
    before = git(bare, "rev-parse", "main")
    _plant_forged_cache(tmp_path)
    with Replay() as api:  # GitHub's release endpoints, for the records archive
        run = run_act(
            work,
            tmp_path,
            WORKFLOW,
            "workflow_dispatch",
            {"matrix": "act-tiny", "shards": "2"},
            env={"PERFTRACK_GITHUB_API_URL": api.url},
            secrets={"PERFTRACK_CACHE_KEY": CACHE_SECRET, "GITHUB_TOKEN": "act-test-token"},
            github={"GITHUB_REPOSITORY": REPOSITORY},
        )
    assert run.returncode == 0, run.log[-6000:]
    # the records archive, replayed: tonight's records are the month's one release asset,
    # listed (sha256) in the manifest committed with the night (issue 39)
    (month,) = json.loads(git(bare, "show", "main:data/archive/manifest.json"))["months"]
    (asset,) = [api.assets[i] for i in api.releases[month["tag"]]["assets"]]
    assert asset[0] == month["asset"] and hashlib.sha256(asset[1]).hexdigest() == month["sha256"]
    assert month["records"] == len(
        list((run.artifacts / "records-shard-0").glob("*/records/*.json"))
    )
    assert "data/archive/manifest.json" in git(bare, "show", "--name-only", "--format=", "main")
    # plan: 2 shards asked, 1 planned — the two servers are a version pair, which runs on
    # one runner (test_a_failed_shard_still_publishes_the_others runs two shards) -> its
    # records and logs, uploaded
    plan = json.loads((run.artifacts / "night-plan" / "night-plan.json").read_text())
    assert [s["shard"] for s in plan["shards"]] == [0]
    assert {c["server_id"] for c in plan["shards"][0]["cells"]} == set(TINY["servers"])
    for shard in (0,):
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
    # the forged cache entry was restored (exact key), refused by the publish job's seal
    # check, removed and reported; the site was built from the DB, without its script
    assert "restored cache perftrack-publish-none" in run.log
    refused = "restored read cache ignored and removed: its files are not the ones this job sealed"
    assert refused in run.log
    summaries = run.summaries()
    assert f"Read cache: {refused}" in summaries
    assert not list((run.artifacts / "deployed-pages").rglob("evil.js"))
    assert "forged" not in (run.artifacts / "deployed-pages" / "index.html").read_text()
    # the next night's publish gets this night's read cache, sealed, under its DB's key
    tree = git(bare, "rev-parse", "main:data")
    saved = run.artifacts / "caches" / f"perftrack-publish-{tree}"
    assert (saved / "data" / ".results-cache" / "SEAL").is_file()
    assert not (saved / "data" / ".results-cache" / "answers" / "forged.json").exists()
    assert not (saved / "build").exists(), "the site is never cached"
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


def test_a_failed_shard_still_publishes_the_others(repo: tuple[Path, Path], tmp_path: Path):
    """A third server that cannot start (a MariaDB binary catalogued as MySQL 8.0: its
    `--initialize-insecure` is refused) fails its shard; the other shard is published.
    Three shards are asked for; each version pair runs on one runner (the MariaDB pair on
    one, the MySQL pair on another), so the plan has two and drops the empty third.

    A fourth, a docker entry the catalog marks `digest: unpinned`, runs from its first
    night: the plan job pins it from Docker Hub (replayed), the night plan carries the pin
    to its bench job, whose records carry it (no Docker engine in this test: the cell fails
    there; tests/servers/providers/test_docker.py runs one for real), and the pins job
    proposes it as a catalog pull request (GitHub's API replayed, the branch pushed to the
    bare remote)."""
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
    add_server(
        work,
        {
            "id": TOFU,
            "product": "mysql",
            "version": "8.4.3",
            "provider": "docker",
            "image": "mysql:8.4.3",
            "digest": "unpinned",
            "notes": "act test: not yet pinned; the night's plan pins it",
        },
    )
    commit(work, "act test: a server that cannot start, and an unpinned image")
    versions = ",".join([*TINY["servers"], MISFIT, TOFU])
    with Replay() as api:
        api.add("GET", HUB_TAG, {"name": "8.4.3", "digest": D843})
        api.add("POST", PULLS, {"number": 7}, 201)
        api.add("POST", DISPATCH, None, 204)
        run = run_act(
            work,
            tmp_path,
            WORKFLOW,
            "workflow_dispatch",
            {"matrix": "act-tiny", "versions": versions, "shards": "3"},
            env={
                "PERFTRACK_DOCKER_HUB_URL": api.url,
                "PERFTRACK_GITHUB_API_URL": api.url,
                "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock",
            },
            secrets={"GITHUB_TOKEN": "act-test-token"},
            github={"GITHUB_REPOSITORY": REPOSITORY},
        )
    assert run.returncode != 0  # the failed shard makes the workflow run red
    plan = json.loads((run.artifacts / "night-plan" / "night-plan.json").read_text())
    by_server = {c["server_id"]: s["shard"] for s in plan["shards"] for c in s["cells"]}
    assert len(plan["shards"]) == 2 and "1 shard(s) left empty and dropped" in plan["notes"]
    assert by_server["mariadb-10.11.18"] == by_server["mariadb-10.11.19"]
    assert by_server[MISFIT] == by_server[TOFU] != by_server["mariadb-10.11.18"]
    assert plan["pairing"]["comparison_groups"] == 2 and plan["pairing"]["split_pairs"] == []
    assert {"publish results", "deploy the site", "propose tonight's pins"} <= (run.jobs_started())
    rows = remote_results(bare, tmp_path)
    ok = sorted(sid for sid, status, _ in rows if status == "ok")
    assert ok == ["mariadb-10.11.18", "mariadb-10.11.19"]
    # the failed shards' cells have no result: failed attempts with no throughput, never 0
    failed = {(sid, tps) for sid, status, tps in rows if status != "ok"}
    assert failed == {(MISFIT, None), (TOFU, None)}
    assert all(tps != 0 for _, _, tps in rows)
    summaries = run.summaries()
    shard = by_server[MISFIT]
    cells = [sid for sid, sh in by_server.items() if sh == shard]  # one cell per server
    fine = len([sid for sid in cells if sid.startswith("mariadb-")])
    without = f"{len(cells) - fine} cell(s) without a result"
    assert f"| {shard} | bench-default | {len(cells)} | {fine} | {without} |" in summaries
    assert "never as zero" in summaries
    assert (run.artifacts / "deployed-pages" / "index.html").is_file()
    # first-night pin: made by the plan job (Docker Hub asked twice), in the night plan ...
    pin = plan["pins"][TOFU]
    assert (pin["image"], pin["digest"], pin["pinned_by"]) == ("mysql:8.4.3", D843, "plan")
    hub = [r.path for r in api.requests if r.method == "GET" and "/releases" not in r.path]
    assert hub == [HUB_TAG, HUB_TAG]  # (the rest: the records archive's release look-up)
    assert TOFU in by_server  # planned with the rest, not skipped
    # ... carried by every record of the server ...
    shard_dir = run.artifacts / f"records-shard-{by_server[TOFU]}"
    recs = [json.loads(p.read_text()) for p in shard_dir.glob("*/records/*.json")]
    tofu = [r for r in recs if r["server"]["id"] == TOFU]
    assert tofu and all(
        (r["server"]["digest"], r["server"]["pinned_by"]) == (D843, "plan") for r in tofu
    )
    # ... and proposed after publishing: a branch with the catalog pinned, and its PR
    (branch,) = git(bare, "branch", "--list", "perftrack/pins-*").split()
    proposed = tmp_path / "proposed.yaml"
    proposed.write_text(git(bare, "show", f"{branch}:configs/versions.yaml"))
    entry = catalog.load(proposed).get(TOFU)
    assert entry.digest == D843 and not entry.unpinned
    posts = [r for r in api.requests if r.method == "POST" and "/releases" not in r.path]
    pull, dispatched = posts
    assert pull.path == PULLS and pull.body["head"] == branch
    assert pull.body["title"] == "catalog: pin 1 image digest(s)"
    assert (
        f"`{TOFU}`" in pull.body["body"]
        and "pinned when the nightly was planned" in (pull.body["body"])
    )
    assert dispatched.path == DISPATCH  # no PERFTRACK_PR_TOKEN: pr-check dispatched
    assert "act-test-token" not in run.log.replace("***", "")
