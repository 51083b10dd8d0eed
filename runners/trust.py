#!/usr/bin/env python3
"""Which GitHub Actions jobs may run on a perftrack benchmark runner (standard library only).

One rule, used in two places that a pull request cannot change:

- the runner's job-started hook (`runners/job-started.sh` → ``trust.py hook``), which the
  GitHub Actions runner runs before the first step of every job it is given; a non-zero
  exit means "the job will not run and will be marked as failed" (GitHub's docs,
  *Running scripts before or after a job*). The hook reads only values the runner puts
  in its environment from GitHub's job message (the ``github`` context: repository,
  event name, ref, workflow ref), never the job's ``env:`` (actions/runner,
  JobHookProvider.RunHook builds the hook's environment from the github/runner contexts
  only), and its configuration from the root-owned ``/etc/perftrack-runner/runner.env``;
- the runner controller (`runners/controller`), which registers a just-in-time runner only
  for a queued job of a run this rule accepts.

A job is trusted when it belongs to this repository, was started by ``schedule``,
``workflow_dispatch`` or ``workflow_run`` (events that run the workflow file of a branch
of this repository, never a fork's), on the default branch, from one of the listed
workflow files. Every ``pull_request`` run, whatever its workflow files say, is refused.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence

# Events whose workflow file comes from a branch of the repository itself: schedule and
# workflow_run always use the default branch's file; workflow_dispatch the chosen branch's
# (hence the ref check). pull_request* and every other event are refused.
ALLOWED_EVENTS = ("schedule", "workflow_dispatch", "workflow_run")
DEFAULT_CONFIG = "/etc/perftrack-runner/runner.env"
REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
WORKFLOW_RE = re.compile(r"^\.github/workflows/[A-Za-z0-9_.-]+\.ya?ml$")
BRANCH_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./-]{0,99}$")
ENV_LINE_RE = re.compile(r"^([A-Z_][A-Z0-9_]*)=(.*)$")


class Policy:
    """The trusted repository, its default branch and the workflow files that may bench."""

    def __init__(self, repository: str, default_branch: str, workflows: Sequence[str]) -> None:
        if not REPO_RE.match(repository):
            raise ValueError(f"repository {repository!r} is not OWNER/REPO")
        if not BRANCH_RE.match(default_branch) or ".." in default_branch:
            raise ValueError(f"default branch {default_branch!r} is not a branch name")
        bad = [w for w in workflows if not WORKFLOW_RE.match(w)]
        if bad or not workflows:
            raise ValueError(f"workflows must be .github/workflows/NAME.yml paths, got {bad}")
        self.repository = repository
        self.default_branch = default_branch
        self.workflows = tuple(workflows)

    @property
    def ref(self) -> str:
        return f"refs/heads/{self.default_branch}"

    def refuse(self, *, repository: str, event: str, ref: str, workflow_ref: str) -> str | None:
        """None when a job with this (GitHub-set) context may run here, else why not."""
        if repository.lower() != self.repository.lower():
            return f"repository {repository!r} is not {self.repository}"
        if event not in ALLOWED_EVENTS:
            return f"event {event!r} is not one of {', '.join(ALLOWED_EVENTS)}"
        if ref != self.ref:
            return f"ref {ref!r} is not {self.ref}"
        allowed = {f"{self.repository}/{w}@{self.ref}".lower() for w in self.workflows}
        if workflow_ref.lower() not in allowed:
            return f"workflow {workflow_ref!r} is not one of {', '.join(sorted(allowed))}"
        return None

    def refuse_run(self, run: Mapping) -> str | None:
        """The same rule over a workflow run object of GitHub's REST API."""
        try:
            repository = str(run["repository"]["full_name"])
            head_repository = str((run.get("head_repository") or {}).get("full_name") or "")
            event = str(run["event"])
            branch = str(run.get("head_branch") or "")
            path = str(run["path"]).split("@", 1)[0]
        except (KeyError, TypeError):
            return "not a workflow run object"
        if head_repository.lower() != repository.lower():
            return f"head repository {head_repository!r} is not {repository}"
        return self.refuse(
            repository=repository,
            event=event,
            ref=f"refs/heads/{branch}",
            workflow_ref=f"{repository}/{path}@refs/heads/{branch}",
        )


def read_env_file(path: str) -> dict[str, str]:
    """KEY=VALUE lines (runner.env); comments and blank lines skipped, no shell expansion."""
    out: dict[str, str] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            m = ENV_LINE_RE.match(line.strip())
            if m:
                out[m.group(1)] = m.group(2)
    return out


def policy_from_env_file(path: str) -> Policy:
    conf = read_env_file(path)
    workflows = [w for w in conf.get("TRUSTED_WORKFLOWS", "").split(",") if w]
    return Policy(conf.get("REPO", ""), conf.get("DEFAULT_BRANCH", "main"), workflows)


def hook(environ: Mapping[str, str], config: str) -> int:
    """The job-started hook: exit 0 to let the job run, 1 (one line) to refuse it."""
    try:
        policy = policy_from_env_file(config)
    except (OSError, ValueError) as err:
        print(f"::error::perftrack runner gate: bad configuration {config}: {err}")
        return 1
    context = {
        "repository": environ.get("GITHUB_REPOSITORY", ""),
        "event": environ.get("GITHUB_EVENT_NAME", ""),
        "ref": environ.get("GITHUB_REF", ""),
        "workflow_ref": environ.get("GITHUB_WORKFLOW_REF", ""),
    }
    reason = policy.refuse(**context)
    if reason:
        print(f"::error::perftrack runner gate: refused, not running this job: {reason}")
        return 1
    print(f"perftrack runner gate: allowed {context['workflow_ref']} ({context['event']})")
    return 0


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1 or argv[0] != "hook":
        print("usage: trust.py hook   (env: GITHUB_*, PERFTRACK_RUNNER_ENV)", file=sys.stderr)
        return 2
    return hook(os.environ, os.environ.get("PERFTRACK_RUNNER_ENV", DEFAULT_CONFIG))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
