""".github/workflows/pr-check.yml run for real with act (host mode) on this machine.

A pull request adds two servers to the catalog: mariadb-10.11.19 (the base has 10.11.18)
and `pr-slow`, a stand-in of the cached 10.11.18 basedir whose catalog entry turns on two
fsyncs per commit, next to the base's `pr-fast` (no fsync per commit; tests/standins.py:
more than 10x apart on oltp_update_index, so that verdict is a sure regression). The
bench job finds both pairs, benchmarks them in one tiny interleaved run on real servers
with real sysbench, ingests into a scratch DB; the verdict job posts the comment to the
GitHub API replayed by a local server on 127.0.0.1 (api.github.com is unreachable here)
and fails the check. A PR from a fork must not start the self-hosted job at all.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from act_run import ACT, GIT_ID, STANDINS, ActRun, git, mapped_actions, work_repo

from leaks import processes_mentioning
from perftrack import catalog, prcomment, providers
from replay import Replay
from standins import FAST, SLOW, WORKLOAD, basedir

pytestmark = pytest.mark.integration

WORKFLOW = ".github/workflows/pr-check.yml"
REPOSITORY = "perftrack/perftrack"
PR = 42
NEW, OLD = "mariadb-10.11.19", "mariadb-10.11.18"
SLOW_ID, FAST_ID = "pr-slow", "pr-fast"
TINY_PR = {
    "name": "pr",
    "description": "act test: one short cell per round",
    "servers": [OLD, NEW],
    "workloads": [WORKLOAD],
    "charsets": ["latin1"],
    "threads": [2],
    "repeats": 4,  # 4 vs 4 is the fewest a rank test can call significant (p = 0.029)
    "duration_s": 2,
    "warmup_s": 1,
    "tables": 1,
    "table_size": 1000,
    "profile": "default",
    "connection": "tcp",
}
ACT_TIMEOUT_S = 600


def _without_entry(text: str, server_id: str) -> str:
    """The catalog text without one entry (its lines up to the next blank line)."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.strip() == f"- id: {server_id}":
            skipping = True
        elif skipping and not line.strip():
            skipping = False
            continue
        if not skipping:
            out.append(line)
    return "".join(out)


def _stand_in(server_id: str, version: str, options: list[str]) -> str:
    return (
        f"\n  - id: {server_id}\n    product: mariadb\n    version: {version}\n"
        f"    provider: path\n    basedir: {basedir()}\n"
        f"    stand_in: act test stand-in (MariaDB 10.11.18, {server_id})\n"
        f"    server_options: [{', '.join(options)}]\n"
    )


@pytest.fixture
def pr_repo(tmp_path: Path):
    """(work tree, base sha, head sha): the head's catalog adds NEW and SLOW_ID."""
    for sid in (OLD, NEW):
        providers.fetch(catalog.load().get(sid))
    work, _bare = work_repo(tmp_path)
    (work / "configs" / "matrices" / "pr.yaml").write_text(yaml.safe_dump(TINY_PR))
    path = work / "configs" / "versions.yaml"
    head_text = path.read_text() + _stand_in(FAST_ID, "10.11.91", FAST)
    path.write_text(_without_entry(head_text, NEW))
    assert NEW not in catalog.load(path)
    git(work, "add", "--all")
    git(work, "commit", "--quiet", "-m", "base: tiny PR matrix, no 10.11.19, a fast stand-in")
    base = git(work, "rev-parse", "HEAD")
    git(work, "switch", "--quiet", "-c", "new-tags")
    path.write_text(head_text + _stand_in(SLOW_ID, "10.11.92", SLOW))
    git(work, "commit", "--quiet", "-am", "catalog: mariadb-10.11.19 and a slow stand-in")
    head = git(work, "rev-parse", "HEAD")
    yield work, base, head
    assert processes_mentioning(str(tmp_path)) == [], "a server or sysbench process leaked"


def _event(tmp: Path, base: str, head: str, head_repo: str) -> Path:
    event = {
        "action": "synchronize",
        "number": PR,
        "pull_request": {
            "number": PR,
            "head": {"ref": "new-tags", "sha": head, "repo": {"full_name": head_repo}},
            "base": {"ref": "main", "sha": base, "repo": {"full_name": REPOSITORY}},
        },
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }
    path = tmp / "event.json"
    path.write_text(json.dumps(event))
    return path


def _act(work: Path, tmp: Path, event: Path, api: str) -> ActRun:
    if not ACT.is_file():
        raise AssertionError(f"{ACT} is missing: run `make act` (make test builds it)")
    artifacts, xdg = tmp / "artifacts", tmp / "xdg"
    artifacts.mkdir()
    xdg.mkdir()
    cmd = [str(ACT), "pull_request", "-e", str(event), "-W", WORKFLOW]
    cmd += ["-P", "self-hosted=-self-hosted", "-P", "ubuntu-latest=-self-hosted"]
    cmd += ["-s", "GITHUB_TOKEN=act-test-token", "--env", f"GITHUB_REPOSITORY={REPOSITORY}"]
    # The bench job's preflight prints the runner class key but skips the noise probe: this
    # shared VM is always "noisy" by the bare-metal limits (tests/test_preflight.py).
    cmd += ["--var", "PERFTRACK_PREFLIGHT=key-only"]
    for m in mapped_actions(work / WORKFLOW):
        cmd += ["--local-repository", m]
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "LANG": "C.UTF-8",
        "XDG_CACHE_HOME": str(xdg),
        "PERFTRACK_VENV": sys.prefix,
        "PERFTRACK_ACT_ARTIFACTS": str(artifacts),
        "PERFTRACK_ACT_STANDIN": str(STANDINS / "artifacts.py"),
        "PERFTRACK_GITHUB_API_URL": api,  # the replayed GitHub API on 127.0.0.1
        **GIT_ID,
    }
    if "PERFTRACK_CACHE" in os.environ:
        env["PERFTRACK_CACHE"] = os.environ["PERFTRACK_CACHE"]
    p = subprocess.run(
        cmd, cwd=work, env=env, capture_output=True, text=True, timeout=ACT_TIMEOUT_S, check=False
    )
    (tmp / "act.log").write_text(p.stdout + p.stderr)  # kept with the test's tmp dir
    return ActRun(p.returncode, p.stdout + p.stderr, artifacts)


def test_replayed_pr_adding_servers_is_benchmarked_commented_and_red_on_regression(
    pr_repo: tuple[Path, str, str], tmp_path: Path
) -> None:
    work, base, head = pr_repo
    with Replay() as api:
        run = _act(work, tmp_path, _event(tmp_path, base, head, REPOSITORY), api.url)
    log = run.log
    assert run.jobs_started() >= {
        "new servers vs their predecessors",
        "PR comment and verdict",
    }, log[-6000:]
    assert "fork PR (not benchmarked)" not in run.jobs_started()
    assert f"added {NEW}: vs {OLD}" in log, log[-6000:]
    assert f"added {SLOW_ID}: vs {FAST_ID}" in log
    # The report artifact: both pairs compared in one interleaved run.
    report = json.loads((run.artifacts / "pr-check" / "verdicts.json").read_text())
    verdicts = {(x["new"], x["previous"]): x["verdict"] for x in report["lines"]}
    assert set(verdicts) == {(NEW, OLD), (SLOW_ID, FAST_ID)}
    assert verdicts[(SLOW_ID, FAST_ID)] == "regression"
    assert (run.artifacts / "pr-check-chart" / "chart.png").read_bytes()[:4] == b"\x89PNG"
    records = list((run.artifacts / "pr-check-runs").glob("*/records/*.json"))
    assert len(records) == 4 * TINY_PR["repeats"]
    # The comment reached the replayed API: listed, then created, once, with the marker.
    calls = [(r.method, r.path.split("?")[0]) for r in api.requests]
    verdict_log = "\n".join(ln for ln in log.splitlines() if "PR comment and verdict" in ln)
    assert calls == [
        ("GET", f"/repos/{REPOSITORY}/issues/{PR}/comments"),
        ("POST", f"/repos/{REPOSITORY}/issues/{PR}/comments"),
    ], verdict_log[-4000:]
    assert api.requests[1].headers["Authorization"] == "Bearer act-test-token"
    (comment,) = api.comments.values()
    body = comment["body"]
    assert body.startswith(prcomment.MARKER)
    assert f"| {SLOW_ID} | {FAST_ID} | {WORKLOAD} | 2 | latin1_swedish_ci |" in body
    assert f"| {NEW} | {OLD} | {WORKLOAD} | 2 | latin1_swedish_ci |" in body
    # The check is red: the slow stand-in is a confirmed, unacknowledged regression.
    assert report["regressions"] >= 1
    assert f"**Result: {report['regressions']} unacknowledged regression(s)**" in body
    assert run.returncode != 0
    assert "confirmed regression(s) not acknowledged in configs/annotations.yaml" in verdict_log


def test_fork_pr_never_reaches_the_self_hosted_job(
    pr_repo: tuple[Path, str, str], tmp_path: Path
) -> None:
    work, base, head = pr_repo
    with Replay() as api:
        run = _act(work, tmp_path, _event(tmp_path, base, head, "mallory/perftrack"), api.url)
    assert run.returncode == 0, run.log[-4000:]
    assert run.jobs_started() == {"fork PR (not benchmarked)"}
    assert api.requests == []
    assert not re.search(r"perftrack (run|tags diff)", run.log)


def test_self_hosted_jobs_are_guarded_against_forks() -> None:
    """Every job that can reach a self-hosted runner carries the same-repository guard."""
    wf = yaml.safe_load((Path(__file__).resolve().parents[2] / WORKFLOW).read_text())
    on = wf.get(True) or wf.get("on")
    assert "pull_request_target" not in on
    guard = "github.event.pull_request.head.repo.full_name == github.repository"
    for name, job in wf["jobs"].items():
        labels = job["runs-on"] if isinstance(job["runs-on"], list) else [job["runs-on"]]
        if "self-hosted" in labels:
            assert guard in job["if"], name
            assert job["permissions"] == {"contents": "read"}, name
        elif job.get("permissions", {}).get("pull-requests") == "write":
            assert name == "verdict" and job["needs"] == "bench"
