""".github/workflows/new-tags.yml run for real with act (host mode): Docker Hub and the
GitHub API replayed by a local server on 127.0.0.1 (unreachable from here; hand-written
responses in the documented formats), a real git push to a local bare repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from act_run import ACT, GIT_ID, STANDINS, ActRun, git, mapped_actions, work_repo

from perftrack.servers import catalog
from replay import Replay, hub_tag

WORKFLOW = ".github/workflows/new-tags.yml"
REPOSITORY = "perftrack/perftrack"
BRANCH = "perftrack/new-tags-mysql-27.1.0"
D2710 = "sha256:" + "27" * 32
D843 = "sha256:" + "84" * 32  # Docker Hub's digest of mysql:8.4.3 (the catalog: unpinned)
TAG_DETAIL = "/v2/namespaces/library/repositories/mysql/tags/{tag}"
PULLS = f"/repos/{REPOSITORY}/pulls"
DISPATCH = f"/repos/{REPOSITORY}/actions/workflows/pr-check.yml/dispatches"
ACT_TIMEOUT_S = 600


def _replay(api: Replay, new_release: bool = True, pin_843: bool = True) -> None:
    api.load_docker_hub(extra=[hub_tag("27.1.0", D2710)] if new_release else [])
    api.load_github_tags(extra=["mysql-27.1.0"] if new_release else [])
    if pin_843:  # the one unpinned catalog image Docker Hub answers for: pinned in the PR
        api.add("GET", TAG_DETAIL.format(tag="8.4.3"), {"name": "8.4.3", "digest": D843})
    api.add(
        "POST", PULLS, {"number": 7, "html_url": f"https://github.com/{REPOSITORY}/pull/7"}, 201
    )
    api.add("POST", DISPATCH, None, 204)


def _act(work: Path, tmp: Path, api: str, secrets: dict[str, str]) -> ActRun:
    if not ACT.is_file():
        raise AssertionError(f"{ACT} is missing: run `make act` (make test builds it)")
    (tmp / "xdg").mkdir()
    event = tmp / "event.json"
    event.write_text(
        json.dumps({"repository": {"full_name": REPOSITORY, "default_branch": "main"}})
    )
    cmd = [str(ACT), "workflow_dispatch", "-e", str(event), "-W", WORKFLOW]
    cmd += ["-P", "ubuntu-latest=-self-hosted", "--env", f"GITHUB_REPOSITORY={REPOSITORY}"]
    for k, v in {"GITHUB_TOKEN": "act-test-token", **secrets}.items():
        cmd += ["-s", f"{k}={v}"]
    for m in mapped_actions(work / WORKFLOW):
        cmd += ["--local-repository", m]
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "LANG": "C.UTF-8",
        "XDG_CACHE_HOME": str(tmp / "xdg"),
        "PERFTRACK_VENV": sys.prefix,
        "PERFTRACK_ACT_ARTIFACTS": str(tmp / "artifacts"),  # the check job's catalog
        "PERFTRACK_ACT_STANDIN": str(STANDINS / "artifacts.py"),
        "PERFTRACK_DOCKER_HUB_URL": api,
        "PERFTRACK_GITHUB_API_URL": api,
        **GIT_ID,
    }
    p = subprocess.run(
        cmd, cwd=work, env=env, capture_output=True, text=True, timeout=ACT_TIMEOUT_S, check=False
    )
    (tmp / "act.log").write_text(p.stdout + p.stderr)
    return ActRun(p.returncode, p.stdout + p.stderr, tmp)


def _branch_catalog(bare: Path, tmp: Path) -> catalog.Catalog:
    out = tmp / "branch-versions.yaml"
    out.write_text(git(bare, "show", f"{BRANCH}:configs/versions.yaml"))
    return catalog.read_catalog(out)


@pytest.mark.parametrize("with_pr_token", [False, True], ids=["dispatch", "pr-token"])
def test_replayed_new_release_opens_a_pr(tmp_path: Path, with_pr_token: bool) -> None:
    work, bare = work_repo(tmp_path)
    secrets = {"PERFTRACK_PR_TOKEN": "pr-app-token"} if with_pr_token else {}
    with Replay() as api:
        _replay(api)
        run = _act(work, tmp_path, api.url, secrets)
    assert run.returncode == 0, run.log[-5000:]
    # The branch on the remote holds the catalog with the new entry, comments kept.
    cat = _branch_catalog(bare, tmp_path)
    new = cat.get("mysql-27.1.0")
    assert new.image == "mysql:27.1.0" and new.digest == D2710
    # the pin step recorded what Docker Hub answered; the others stay unpinned (exit 3 kept
    # the job green: a tag Hub lacks is not a failed night)
    assert cat.get("mysql-8.4.3").digest == D843 and not cat.get("mysql-8.4.3").unpinned
    assert cat.get("mysql-8.0.40").unpinned
    assert "# --- a basedir you already have" in git(
        bare, "show", f"{BRANCH}:configs/versions.yaml"
    )
    assert git(bare, "rev-parse", "main") == git(work, "rev-parse", "HEAD")  # main untouched
    posts = [r for r in api.requests if r.method == "POST"]
    token = "pr-app-token" if with_pr_token else "act-test-token"
    assert posts[0].path == PULLS
    assert posts[0].headers["Authorization"] == f"Bearer {token}"
    assert (posts[0].body["head"], posts[0].body["base"]) == (BRANCH, "main")
    assert "mysql-27.1.0" in posts[0].body["title"]
    assert (
        "`mysql-8.4.3`" in posts[0].body["body"] and "trust on first use" in posts[0].body["body"]
    )
    if with_pr_token:
        assert len(posts) == 1  # the PR triggers pr-check itself
    else:
        assert [p.path for p in posts] == [PULLS, DISPATCH]
        assert posts[1].body == {"ref": BRANCH, "inputs": {"pr": "7", "base": "origin/main"}}
    # The token never reached the process list or the log.
    assert "act-test-token" not in run.log.replace("***", "")
    if not with_pr_token:
        return
    # The next day, the PR not merged yet: the branch exists, nothing new is opened.
    shutil.rmtree(tmp_path / "xdg")
    shutil.rmtree(tmp_path / "artifacts", ignore_errors=True)
    with Replay() as api:
        _replay(api)
        again = _act(work, tmp_path, api.url, secrets)
    assert again.returncode == 0, again.log[-5000:]
    assert f"branch {BRANCH} exists already" in again.log
    assert {r.method for r in api.requests} == {"GET"}


def test_replayed_no_new_release_and_nothing_to_pin_opens_nothing(tmp_path: Path) -> None:
    work, bare = work_repo(tmp_path)
    with Replay() as api:
        _replay(api, new_release=False, pin_843=False)
        run = _act(work, tmp_path, api.url, {})
    assert run.returncode == 0, run.log[-5000:]
    assert "no new MySQL releases" in run.log and "could not be pinned" in run.log
    assert {r.method for r in api.requests} == {"GET"}
    assert git(bare, "branch", "--list", "perftrack/*") == ""


def test_replayed_pins_alone_open_a_pr_on_a_pins_branch(tmp_path: Path) -> None:
    work, bare = work_repo(tmp_path)
    with Replay() as api:
        _replay(api, new_release=False)
        run = _act(work, tmp_path, api.url, {"PERFTRACK_PR_TOKEN": "pr-app-token"})
    assert run.returncode == 0, run.log[-5000:]
    (branch,) = git(bare, "branch", "--list", "perftrack/*").split()
    assert branch.startswith("perftrack/pins-")
    out = tmp_path / "pins.yaml"
    out.write_text(git(bare, "show", f"{branch}:configs/versions.yaml"))
    assert catalog.read_catalog(out).get("mysql-8.4.3").digest == D843
    (post,) = [r for r in api.requests if r.method == "POST"]
    assert post.body["title"] == "catalog: pin 1 image digest(s)"
