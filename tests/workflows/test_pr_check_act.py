""".github/workflows/pr-check.yml then pr-bench.yml, run for real with act (host mode).

A pull request adds mariadb-10.11.19 to the catalog; the test's default branch gives its
predecessor mariadb-10.11.18 a fast configuration (no fsync per commit) and the PR's entry
asks for two fsyncs per commit (tests/standins.py: >10x apart on oltp_update_index), so the
verdict is a sure regression. pr-check.yml (the `pull_request` part, the PR's own file)
only records the request; pr-bench.yml (`workflow_run`, the default branch's file and
code) checks it against the GitHub API replayed on 127.0.0.1, reads the PR's catalog as a
blob from that API, benchmarks on real servers with real sysbench, and concludes: one PR
comment and the commit status perftrack/pr-check. Also: a preflight refusal is reported
as an infrastructure failure (status `error`), never as a regression; a fork's catalog
naming a server of its own (provider path) is refused and nothing is benchmarked.
"""

from __future__ import annotations

import base64
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
from perftrack.publish import prcomment
from perftrack.servers import catalog, providers
from replay import Replay
from standins import FAST, SLOW, WORKLOAD

pytestmark = pytest.mark.integration

PR_WORKFLOW = ".github/workflows/pr-check.yml"
BENCH_WORKFLOW = ".github/workflows/pr-bench.yml"
REPOSITORY = "perftrack/perftrack"
FORK = "mallory/perftrack"
PR = 42
NEW, OLD = "mariadb-10.11.19", "mariadb-10.11.18"
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


def _entry(text: str, server_id: str) -> str:
    """One entry's lines (up to the next blank line)."""
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        if line.strip() == f"- id: {server_id}":
            inside = True
        elif inside and not line.strip():
            break
        if inside:
            out.append(line)
    return "".join(out)


def _with_options(entry: str, options: list[str]) -> str:
    return entry.rstrip("\n") + f"\n    server_options: [{', '.join(options)}]\n"


@pytest.fixture
def pr_repo(tmp_path: Path):
    """(work tree, head sha, head catalog text): main has OLD (fast), the PR adds NEW (slow)."""
    for sid in (OLD, NEW):
        providers.fetch(catalog.read_catalog().get(sid))
    work, _bare = work_repo(tmp_path)
    (work / "configs" / "matrices" / "pr.yaml").write_text(yaml.safe_dump(TINY_PR))
    path = work / "configs" / "versions.yaml"
    original = path.read_text()
    new_entry = _entry(original, NEW)
    base_text = _without_entry(original, NEW).replace(
        _entry(original, OLD), _with_options(_entry(original, OLD), FAST)
    )
    path.write_text(base_text)
    assert NEW not in catalog.read_catalog(path)
    git(work, "add", "--all")
    git(work, "commit", "--quiet", "-m", "base: tiny PR matrix, no 10.11.19, 10.11.18 fast")
    git(work, "switch", "--quiet", "-c", "new-tags")
    head_text = base_text.rstrip("\n") + "\n\n" + _with_options(new_entry, SLOW)
    path.write_text(head_text)
    git(work, "commit", "--quiet", "-am", "catalog: mariadb-10.11.19")
    head = git(work, "rev-parse", "HEAD")
    git(work, "switch", "--quiet", "main")  # workflow_run runs the default branch's files
    yield work, head, head_text
    assert processes_mentioning(str(tmp_path)) == [], "a server or sysbench process leaked"


def _pr_event(tmp: Path, head: str, head_repo: str) -> Path:
    event = {
        "action": "synchronize",
        "number": PR,
        "pull_request": {
            "number": PR,
            "head": {"ref": "new-tags", "sha": head, "repo": {"full_name": head_repo}},
            "base": {"ref": "main", "sha": "1" * 40, "repo": {"full_name": REPOSITORY}},
        },
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }
    path = tmp / "pr-event.json"
    path.write_text(json.dumps(event))
    return path


def _run_event(tmp: Path, head: str, head_repo: str) -> Path:
    event = {
        "action": "completed",
        "workflow_run": {
            "id": 9001,
            "name": "pr-check",
            "event": "pull_request",
            "conclusion": "success",
            "head_sha": head,
            "head_branch": "new-tags",
            "head_repository": {"full_name": head_repo},
        },
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }
    path = tmp / "run-event.json"
    path.write_text(json.dumps(event))
    return path


def _act(work: Path, tmp: Path, event: str, payload: Path, workflow: str, api: str, **var):
    artifacts, xdg = tmp / "artifacts", tmp / "xdg"
    artifacts.mkdir(exist_ok=True)
    xdg.mkdir(exist_ok=True)
    cmd = [str(ACT), event, "-e", str(payload), "-W", workflow]
    cmd += ["-P", "self-hosted=-self-hosted", "-P", "ubuntu-latest=-self-hosted"]
    cmd += ["-s", "GITHUB_TOKEN=act-test-token", "--env", f"GITHUB_REPOSITORY={REPOSITORY}"]
    # The bench job's preflight prints the runner class key but skips the noise probe
    # unless a test asks for it: this shared VM is always "noisy" by bare-metal limits.
    for key, value in {"PERFTRACK_PREFLIGHT": "key-only", **var}.items():
        cmd += ["--var", f"{key}={value}"]
    for m in mapped_actions(work / workflow):
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
    (tmp / f"act-{Path(workflow).stem}.log").write_text(p.stdout + p.stderr)
    return ActRun(p.returncode, p.stdout + p.stderr, artifacts)


def _replay_pr(api: Replay, head: str, head_text: str) -> None:
    """GitHub's answers about the PR: open, on main, this head; its catalog at that head."""
    api.add(
        "GET",
        f"/repos/{REPOSITORY}/pulls/{PR}",
        {"number": PR, "state": "open", "head": {"sha": head}, "base": {"ref": "main"}},
    )
    api.add(
        "GET",
        f"/repos/{REPOSITORY}/pulls/{PR}/files?per_page=100&page=1",
        [{"filename": "configs/versions.yaml", "status": "modified"}],
    )
    content = base64.b64encode(head_text.encode()).decode()
    api.add(
        "GET",
        f"/repos/{REPOSITORY}/contents/configs/versions.yaml?ref={head}",
        {"type": "file", "encoding": "base64", "size": len(head_text), "content": content},
    )
    api.add("POST", f"/repos/{REPOSITORY}/statuses/{head}", {"state": "ok"}, status=201)


def _check(work: Path, tmp: Path, head: str, head_text: str, head_repo: str, **var):
    with Replay() as api:
        _replay_pr(api, head, head_text)
        first = _act(
            work, tmp, "pull_request", _pr_event(tmp, head, head_repo), PR_WORKFLOW, api.url
        )
        assert first.returncode == 0, first.log[-4000:]
        assert first.jobs_started() == {"record the request (pr-bench.yml benchmarks it)"}
        run = _act(
            work,
            tmp,
            "workflow_run",
            _run_event(tmp, head, head_repo),
            BENCH_WORKFLOW,
            api.url,
            **var,
        )
    statuses = [r.body for r in api.requests if "/statuses/" in r.path]
    return run, api, statuses


def test_replayed_pr_is_benchmarked_as_data_and_red_on_a_regression(pr_repo, tmp_path):
    work, head, head_text = pr_repo
    run, api, statuses = _check(work, tmp_path, head, head_text, FORK)
    log = run.log
    assert run.jobs_started() >= {
        "the PR's catalog, read as data",
        "new servers vs their predecessors",
        "PR comment and commit status",
    }, log[-6000:]
    assert f"pull request #{PR}: 1 server(s) added: {NEW}" in log
    assert f"added {NEW}: vs {OLD}" in log, log[-6000:]
    report = json.loads((run.artifacts / "pr-check" / "verdicts.json").read_text())
    verdicts = {(x["new"], x["previous"]): x["verdict"] for x in report["lines"]}
    assert verdicts == {(NEW, OLD): "regression"}
    records = list((run.artifacts / "pr-check-runs").glob("*/records/*.json"))
    assert len(records) == 2 * TINY_PR["repeats"]
    # The comment and the status: a regression, not an infrastructure failure.
    (comment,) = api.comments.values()
    body = comment["body"]
    assert body.startswith(prcomment.MARKER)
    assert "**perftrack PR check: ❌ 1 unacknowledged regression(s)**" in body
    assert "infrastructure failure" not in body
    assert f"| {NEW} | {OLD} | {WORKLOAD} | 2 | latin1_swedish_ci |" in body
    (status,) = statuses
    assert (status["state"], status["description"]) == ("failure", "1 unacknowledged regression(s)")
    assert status["context"] == "perftrack/pr-check"
    assert run.returncode != 0


def test_replayed_preflight_refusal_is_an_infrastructure_failure(pr_repo, tmp_path):
    work, head, head_text = pr_repo
    runners = work / "configs" / "runners.yaml"
    runners.write_text(runners.read_text().replace("max_loop_cv_pct: 3.0", "max_loop_cv_pct: 0.0"))
    git(work, "commit", "--quiet", "-am", "test: a preflight no host passes")
    run, api, statuses = _check(
        work, tmp_path, head, head_text, REPOSITORY, PERFTRACK_PREFLIGHT="full"
    )
    assert "the PR's catalog, read as data" in run.jobs_started()
    assert not (run.artifacts / "pr-check-runs").exists(), "nothing was benchmarked"
    (comment,) = api.comments.values()
    body = comment["body"]
    assert "⚠️ infrastructure failure: the benchmark job ended 'failure' in preflight" in body
    assert "regression" not in body.split("\n", 2)[1]
    assert "This is not a verdict on the change" in body
    (status,) = statuses
    assert status["state"] == "error"
    assert status["description"].startswith("infrastructure failure: ")
    assert run.returncode != 0


def test_replayed_fork_naming_its_own_server_is_refused_before_any_bench(pr_repo, tmp_path):
    work, head, head_text = pr_repo
    evil = head_text + (
        "\n  - id: mysql-9.7.9\n    product: mysql\n    version: 9.7.9\n"
        "    provider: path\n    basedir: /tmp/mallory\n"
    )
    run, api, statuses = _check(work, tmp_path, head, evil, FORK)
    assert "new servers vs their predecessors" not in run.jobs_started(), run.log[-4000:]
    assert not re.search(r"perftrack (run|tags diff)", run.log)
    (comment,) = api.comments.values()
    assert (
        "catalog refused: added entry 'mysql-9.7.9': provider 'path' is not allowed in a pull "
        "request" in comment["body"]
    )
    (status,) = statuses
    assert status["state"] == "failure" and status["description"].startswith("catalog refused")
