"""Running a workflow of this checkout with act (host mode) in a throw-away repository.

`work_repo` copies the working tree (tracked and untracked, not ignored files) into a
temporary git repository whose `origin` is a local bare repository, so the publish job's
`git push` lands there and nowhere else. `run_act` runs one event with the third-party
actions mapped to the stand-ins in tests/fixtures/actions/, act's own files under the
test's tmp dir, and the checkout's virtualenv reused by the jobs (PERFTRACK_VENV, see
scripts/ci-setup.sh) instead of a pip install per job.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
ACT = REPO / ".venv" / "tools" / "act"  # `make act` (a prerequisite of `make pytest`)
STANDINS = REPO / "tests" / "fixtures" / "actions"
ACT_TIMEOUT_S = 900  # only guards a hang: a tiny night takes a minute or two
GIT_ID = {
    "GIT_AUTHOR_NAME": "perftrack act test",
    "GIT_AUTHOR_EMAIL": "act-test@example.invalid",
    "GIT_COMMITTER_NAME": "perftrack act test",
    "GIT_COMMITTER_EMAIL": "act-test@example.invalid",
}
# `actions/NAME@SHA` or `actions/NAME/SUBDIR@SHA` (act maps the repository, NAME@SHA)
USES_RE = re.compile(r"uses:\s*actions/([A-Za-z0-9_.-]+)(?:/[A-Za-z0-9_./-]+)?@([0-9a-f]{40})")
# Not mapped: act skips actions/checkout of the repository itself and uses the work dir.
NOT_MAPPED = {"checkout"}


def git(cwd: Path, *args: str) -> str:
    p = subprocess.run(
        ["git", "-C", str(cwd), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ID},
        check=True,
    )
    return p.stdout.strip()


def work_repo(
    tmp: Path, *, drop: tuple[str, ...] = ("data/results.duckdb", "data/results")
) -> tuple[Path, Path]:
    """(work tree, bare remote): a git repository of this checkout's files, origin = bare."""
    work, bare = tmp / "work", tmp / "remote.git"
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in listed:
        rel = raw.decode()
        src = REPO / rel
        dropped = rel in drop or any(rel.startswith(f"{d}/") for d in drop)
        if not rel or dropped or not src.is_file():  # deleted in the work tree
            continue
        dest = work / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    (work / "data").mkdir(exist_ok=True)
    git(work.parent, "init", "--quiet", "--initial-branch=main", str(work))
    git(work, "add", "--all")
    git(work, "commit", "--quiet", "-m", "act test: the checkout's files")
    git(tmp, "clone", "--quiet", "--bare", str(work), str(bare))
    git(work, "remote", "add", "origin", str(bare))
    git(work, "fetch", "--quiet", "origin")
    git(work, "branch", "--quiet", "--set-upstream-to=origin/main", "main")
    return work, bare


def add_matrix(work: Path, name: str, spec: dict[str, Any]) -> None:
    (work / "configs" / "matrices" / f"{name}.yaml").write_text(
        yaml.safe_dump({"name": name, **spec})
    )


def add_server(work: Path, entry: dict[str, Any]) -> None:
    path = work / "configs" / "versions.yaml"
    data = yaml.safe_load(path.read_text())
    data["servers"].append(entry)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def commit(work: Path, message: str) -> None:
    git(work, "add", "--all")
    git(work, "commit", "--quiet", "-m", message)
    git(work, "push", "--quiet", "origin", "main")


def mapped_actions(workflow: Path) -> list[str]:
    """--local-repository values for every pinned actions/* the workflow uses."""
    out = []
    for name, sha in sorted(set(USES_RE.findall(workflow.read_text()))):
        ref = f"actions/{name}@{sha}"
        if name in NOT_MAPPED:
            continue
        standin = STANDINS / name
        has = (standin / "action.yml").is_file() or any(standin.glob("*/action.yml"))
        assert has, f"no stand-in for {ref} in {STANDINS}"
        out.append(f"{ref}={standin}")
    return out


@dataclass
class ActRun:
    returncode: int
    log: str
    artifacts: Path

    def summaries(self) -> str:
        """What the jobs appended to $GITHUB_STEP_SUMMARY: act prints each step's summary
        in the log, its first line after "Summary - ", the rest unprefixed."""
        out, inside = [], False
        for ln in self.log.splitlines():
            if "⚙  Summary - " in ln:
                inside = True
                out.append(ln.split("⚙  Summary - ", 1)[1])
            elif inside and not ln.startswith("["):
                out.append(ln)
            else:
                inside = False
        return "\n".join(out)

    def jobs_started(self) -> set[str]:
        found = re.findall(r"^\[[^/\]]+/([^\]]+)\] ⭐ Run Set up job", self.log, re.M)
        return {name.strip() for name in found}  # act pads job names to one width


def run_act(
    work: Path,
    tmp: Path,
    workflow: str,
    event: str,
    inputs: dict[str, str],
    *,
    env: dict[str, str] | None = None,
    secrets: dict[str, str] | None = None,
    github: dict[str, str] | None = None,
) -> ActRun:
    """Run ``event`` of ``workflow`` in ``work``; ``env`` is added to the jobs' environment
    (host mode: they inherit act's), ``secrets`` become ``secrets.*`` (``GITHUB_TOKEN``
    also ``github.token``), ``github`` overrides GitHub's variables (``--env``), e.g.
    GITHUB_REPOSITORY for a job that talks to the (replayed) GitHub API."""
    if not ACT.is_file():
        raise AssertionError(f"{ACT} is missing: run `make act` (make test builds it)")
    artifacts, xdg = tmp / "artifacts", tmp / "xdg"
    artifacts.mkdir(exist_ok=True)  # a test may plant a cache entry there first
    xdg.mkdir()
    cmd = [
        str(ACT),
        event,
        "-W",
        workflow,
        "-P",
        "self-hosted=-self-hosted",
        "-P",
        "ubuntu-latest=-self-hosted",
    ]
    for k, v in inputs.items():
        cmd += ["--input", f"{k}={v}"]
    for k, v in (secrets or {}).items():
        cmd += ["-s", f"{k}={v}"]
    for k, v in (github or {}).items():
        cmd += ["--env", f"{k}={v}"]
    # The bench jobs' preflight prints the runner class key but skips the noise probe: this
    # shared 2-core VM is always "noisy" by the bare-metal limits (tests/host/test_preflight.py
    # covers the probe's decisions).
    cmd += ["--var", "PERFTRACK_PREFLIGHT=key-only"]
    for m in mapped_actions(work / workflow):
        cmd += ["--local-repository", m]
    job_env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "LANG": "C.UTF-8",
        "XDG_CACHE_HOME": str(xdg),  # act's job directories: under tmp, removed with it
        # the bench jobs' kept run records (host/salvage.py): one runner state per test
        "PERFTRACK_STATE_DIR": str(tmp / "runner-state"),
        "PERFTRACK_VENV": sys.prefix,
        "PERFTRACK_ACT_ARTIFACTS": str(artifacts),
        "PERFTRACK_ACT_STANDIN": str(STANDINS / "artifacts.py"),
        **GIT_ID,
        **(env or {}),
    }
    if "PERFTRACK_CACHE" in os.environ:
        job_env["PERFTRACK_CACHE"] = os.environ["PERFTRACK_CACHE"]
    if "PYTHONPATH" in os.environ:  # the jobs run the perftrack under test (a worktree's)
        job_env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    p = subprocess.run(
        cmd,
        cwd=work,
        env=job_env,
        capture_output=True,
        text=True,
        timeout=ACT_TIMEOUT_S,
        check=False,
    )
    return ActRun(p.returncode, p.stdout + p.stderr, artifacts)
