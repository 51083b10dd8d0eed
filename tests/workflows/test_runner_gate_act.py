"""act: a workflow a pull request adds or edits cannot get a job onto the bench runners.

act runs the PR's own workflow files for the ``pull_request`` event, as GitHub would
(the PR's copy of .github/workflows/, a fork's head). Every job that would be sent to the
bench labels is run the way a bench runner runs it: the runner's job-started hook first
(runners/job-started.sh, the trusted copy installed on the host, not the PR's), and the
job's own steps only if the hook allows it (the runner skips them when the hook fails;
GitHub's *Running scripts before or after a job*). So this harness replaces the steps of
every bench job by the hook; GitHub-hosted jobs run as they are.

The hook reads the github context act gives the job (repository, event, ref); act v0.2.89
does not set GITHUB_WORKFLOW_REF, which the real runner does, so the harness sets it the
way GitHub forms it (OWNER/REPO/.github/workflows/FILE@REF). Refused: the PR's edited
pr-check.yml (guard deleted, or inverted), the PR's added workflow, a dispatch of the
nightly on a branch; allowed: the nightly dispatched on main.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from act_run import ACT, GIT_ID, REPO, STANDINS, git, mapped_actions, work_repo

pytestmark = pytest.mark.integration

REPOSITORY = "perftrack/perftrack"
FORK = "mallory/perftrack"
BENCH_LABELS = {"self-hosted", "mysql-bench"}
HOOK = REPO / "runners" / "job-started.sh"
ACT_TIMEOUT_S = 300
EVIL_STEP = {"name": "steal", "run": 'touch "$PWNED"; cat /etc/perftrack-runner/* || true'}


def _is_bench(job: dict) -> bool:
    runs_on = job.get("runs-on")
    labels = runs_on if isinstance(runs_on, list) else [runs_on]
    return any(str(x) in BENCH_LABELS or "${{" in str(x) for x in labels)


def as_the_bench_runner_runs_it(work: Path) -> list[str]:
    """Replace every bench job's steps by the runner's hook (its steps run only if the hook
    allows, and then the harness marks that); the bench jobs' names."""
    names = []
    for path in sorted((work / ".github" / "workflows").glob("*.yml")):
        wf = yaml.safe_load(path.read_text())
        if True in wf:  # YAML 1.1 reads a bare `on` as true: write it back as "on"
            wf = {("on" if k is True else k): v for k, v in wf.items()}
        changed = False
        for job_id, job in (wf.get("jobs") or {}).items():
            if not _is_bench(job):
                continue
            names.append(f"{path.name}:{job_id}")
            ref = f"{REPOSITORY}/.github/workflows/{path.name}@${{{{ github.ref }}}}"
            job["steps"] = [
                {
                    "name": "job-started hook (runners/job-started.sh)",
                    "env": {"GITHUB_WORKFLOW_REF": ref},
                    "run": f"bash -e {HOOK}",
                },
                {"name": "the job's own steps", "run": 'echo "job steps ran: $GITHUB_JOB"'},
            ]
            job.pop("container", None)
            job.pop("services", None)
            changed = True
        if changed:
            path.write_text(yaml.safe_dump(wf, sort_keys=False))
    return names


def _act(work: Path, tmp: Path, event: str, payload: dict, workflow: str | None = None):
    env_file = tmp / "runner.env"
    env_file.write_text(
        f"REPO={REPOSITORY}\nDEFAULT_BRANCH=main\n"
        "TRUSTED_WORKFLOWS=.github/workflows/nightly.yml,.github/workflows/pr-bench.yml\n"
    )
    (tmp / "event.json").write_text(json.dumps(payload))
    xdg = tmp / "xdg"
    xdg.mkdir(exist_ok=True)
    cmd = [str(ACT), event, "-e", str(tmp / "event.json")]
    cmd += ["-W", workflow] if workflow else []
    for label in ("self-hosted", "mysql-bench", "ubuntu-latest"):
        cmd += ["-P", f"{label}=-self-hosted"]
    cmd += ["--env", f"GITHUB_REPOSITORY={REPOSITORY}", "--env", f"PERFTRACK_RUNNER_ENV={env_file}"]
    cmd += ["--env", f"PWNED={tmp / 'pwned'}"]
    for name in ("pr-check.yml", "nightly.yml"):  # ci.yml's setup-go has no stand-in
        for mapping in mapped_actions(work / ".github" / "workflows" / name):
            if f"--local-repository={mapping}" not in cmd:
                cmd.append(f"--local-repository={mapping}")
    artifacts = tmp / "artifacts"
    artifacts.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "LANG": "C.UTF-8",
        "XDG_CACHE_HOME": str(xdg),
        "PERFTRACK_VENV": sys.prefix,
        "PERFTRACK_ACT_ARTIFACTS": str(artifacts),
        "PERFTRACK_ACT_STANDIN": str(STANDINS / "artifacts.py"),
        **GIT_ID,
    }
    p = subprocess.run(
        cmd, cwd=work, env=env, capture_output=True, text=True, timeout=ACT_TIMEOUT_S, check=False
    )
    return p.stdout + p.stderr


def _pr_event(head_repo: str) -> dict:
    return {
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "head": {"ref": "evil", "sha": "0" * 40, "repo": {"full_name": head_repo}},
            "base": {"ref": "main", "sha": "1" * 40, "repo": {"full_name": REPOSITORY}},
        },
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }


@pytest.fixture
def evil_pr(tmp_path: Path) -> Path:
    """A PR's work tree: pr-check.yml with a bench job (guard inverted) and an added
    workflow straight on the bench labels, both on pull_request."""
    work, _bare = work_repo(tmp_path)
    git(work, "switch", "--quiet", "-c", "evil")
    wfs = work / ".github" / "workflows"
    check = yaml.safe_load((wfs / "pr-check.yml").read_text())
    check = {("on" if k is True else k): v for k, v in check.items()}
    check["jobs"]["steal"] = {
        "if": "${{ !(github.event.pull_request.head.repo.full_name == github.repository) }}",
        "runs-on": ["self-hosted", "linux", "x64", "mysql-bench"],
        "steps": [EVIL_STEP],
    }
    (wfs / "pr-check.yml").write_text(yaml.safe_dump(check, sort_keys=False))
    added = {
        "name": "evil",
        "on": {"pull_request": None},
        "jobs": {"bench": {"runs-on": ["self-hosted", "mysql-bench"], "steps": [EVIL_STEP]}},
    }
    (wfs / "evil.yml").write_text(yaml.safe_dump(added, sort_keys=False))
    git(work, "add", "--all")
    git(work, "commit", "--quiet", "-m", "a PR reaching for the bench runners")
    return work


@pytest.mark.parametrize(
    ("head_repo", "expected"),
    # From a fork the inverted guard lets pr-check.yml's `steal` start too; from a branch
    # it skips it (act evaluates the PR's if:), and only the added workflow starts.
    [(FORK, 2), (REPOSITORY, 1)],
    ids=["fork", "branch"],
)
def test_pr_added_or_edited_workflow_gets_no_job_onto_the_bench(
    evil_pr, tmp_path, head_repo, expected
):
    bench_jobs = as_the_bench_runner_runs_it(evil_pr)
    assert {"pr-check.yml:steal", "evil.yml:bench"} <= set(bench_jobs)
    log = _act(evil_pr, tmp_path, "pull_request", _pr_event(head_repo))
    refusals = log.count(
        "perftrack runner gate: refused, not running this job: event 'pull_request'"
    )
    started = log.count("⭐ Run Main job-started hook")
    assert started == expected, log[-4000:]
    assert refusals == started, log[-4000:]
    assert "job steps ran" not in log
    assert "perftrack runner gate: allowed" not in log
    assert not (tmp_path / "pwned").exists()
    # The GitHub-hosted part of the PR's check still runs (no token, no bench).
    assert "record the request" in log


def test_nightly_dispatch_on_main_passes_the_gate_and_on_a_branch_does_not(tmp_path: Path):
    work, _bare = work_repo(tmp_path)
    as_the_bench_runner_runs_it(work)
    ok = tmp_path / "main"
    ok.mkdir()
    payload = {
        "ref": "refs/heads/main",
        "inputs": {"matrix": "smoke"},
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }
    log = _act(work, ok, "workflow_dispatch", payload, ".github/workflows/nightly.yml")
    assert "perftrack runner gate: allowed" in log, log[-4000:]
    assert "job steps ran: bench" in log
    branch = tmp_path / "branch"
    branch.mkdir()
    payload["ref"] = "refs/heads/evil"
    log = _act(work, branch, "workflow_dispatch", payload, ".github/workflows/nightly.yml")
    assert "refused, not running this job: ref 'refs/heads/evil'" in log, log[-4000:]
    assert "job steps ran" not in log
