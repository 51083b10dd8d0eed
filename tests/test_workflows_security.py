"""Security rules over every .github/workflows/*.yml (issue #11 item 7), and negative
tests: a small synthetic workflow breaking each rule must be caught, so these checks can
fail.

Rules:
- no ``pull_request_target`` trigger (it runs with a write token next to PR code);
- in a workflow triggered by ``pull_request``, a job whose ``runs-on`` is self-hosted or an
  expression (which may name self-hosted labels, e.g. ``fromJSON(matrix…)``) has an
  ``if:`` where every ``||`` branch requires a same-repository PR
  (``github.event.pull_request.head.repo.full_name == github.repository``) or another
  event than ``pull_request``: fork code never reaches a self-hosted runner;
- every ``uses:`` is a local path or pinned to a full 40-hex commit SHA (docker: a digest);
- top-level ``permissions`` is ``{}`` or read-only; a job may hold a write scope only when
  ALLOWED_WRITE lists it for that workflow and job; never ``write-all``;
- no ``${{`` inside a ``run:`` (values reach scripts through ``env:``);
- secrets are never echoed: no ``echo``/``printf`` of an env var that holds a secret or
  the token, and no ``set -x`` in a step that has one.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.y*ml"))

# (workflow file, job) -> the write scopes that job needs, and why.
ALLOWED_WRITE: dict[tuple[str, str], set[str]] = {
    ("nightly.yml", "publish"): {"contents"},  # commits data/results.duckdb back
    ("nightly.yml", "deploy"): {"pages", "id-token"},  # actions/deploy-pages
    ("pr-check.yml", "verdict"): {"pull-requests"},  # the one PR comment
    # commits the catalog to a branch, opens the PR, dispatches pr-check on it
    ("new-tags.yml", "check"): {"contents", "pull-requests", "actions"},
}
SAME_REPO_RE = re.compile(
    r"github\.event\.pull_request\.head\.repo\.full_name\s*==\s*github\.repository\b"
)
OTHER_EVENT_RE = re.compile(r"^github\.event_name\s*==\s*'([a-z_]+)'$")
NOT_PR_RE = re.compile(r"^github\.event_name\s*!=\s*'pull_request'$")
PR_EVENTS = {
    "pull_request",
    "pull_request_target",
    "pull_request_review",
    "pull_request_review_comment",
}
SHA_PIN_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$")
DOCKER_PIN_RE = re.compile(r"^docker://[^@\s]+@sha256:[0-9a-f]{64}$")
SECRET_VALUE_RE = re.compile(r"\$\{\{[^}]*\b(secrets\.|github\.token)")
PRINTERS_RE = re.compile(r"\b(echo|printf|cat\s+<<<)\b")


# --- the checker -----------------------------------------------------------------------------


def load(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    assert isinstance(data, dict), "a workflow is a mapping"
    return data


def triggers(wf: dict[str, Any]) -> set[str]:
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` key as True
    if isinstance(on, str):
        return {on}
    if isinstance(on, list):
        return set(on)
    if isinstance(on, dict):
        return set(on)
    return set()


def _strip_expr(text: str) -> str:
    text = text.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    return " ".join(text.split())


def if_keeps_forks_out(condition: Any) -> bool:
    """True when every ``||`` branch needs a same-repository PR or another event."""
    if not isinstance(condition, str) or not condition.strip():
        return False
    for branch in _strip_expr(condition).split("||"):
        conjuncts = [c.strip().strip("()").strip() for c in branch.split("&&")]
        safe = any(
            SAME_REPO_RE.search(c)
            or NOT_PR_RE.match(c)
            or ((m := OTHER_EVENT_RE.match(c)) and m.group(1) not in PR_EVENTS)
            for c in conjuncts
        )
        if not safe:
            return False
    return True


def may_be_self_hosted(runs_on: Any) -> bool:
    items = runs_on if isinstance(runs_on, list) else [runs_on]
    if isinstance(runs_on, dict):  # {group:, labels:}
        items = [runs_on.get("group"), *(runs_on.get("labels") or [])]
    return any(isinstance(i, str) and ("self-hosted" in i or "${{" in i) for i in items)


def _steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in job.get("steps") or [] if isinstance(s, dict)]


def _write_scopes(permissions: Any) -> set[str] | None:
    """The write scopes of a permissions value; None for write-all."""
    if permissions in (None, {}, "read-all"):
        return set()
    if permissions == "write-all":
        return None
    if isinstance(permissions, dict):
        return {k for k, v in permissions.items() if v == "write"}
    return None


def problems(name: str, text: str) -> list[str]:
    """Every rule ``text`` (a workflow file called ``name``) breaks, one line each."""
    found: list[str] = []
    wf = load(text)
    on = triggers(wf)
    if "pull_request_target" in on or re.search(r"^\s*pull_request_target\s*:", text, re.M):
        found.append("pull_request_target trigger")
    top = wf.get("permissions", "missing")
    if top == "missing":
        found.append("no top-level permissions (set permissions: {})")
    elif _write_scopes(top) != set():
        found.append(f"top-level permissions grant write: {top!r}")
    for job_id, job in (wf.get("jobs") or {}).items():
        where = f"job {job_id}"
        guarded = if_keeps_forks_out(job.get("if"))
        if "pull_request" in on and may_be_self_hosted(job.get("runs-on")) and not guarded:
            found.append(f"{where}: self-hosted/expression runs-on reachable by fork PRs")
        scopes = _write_scopes(job.get("permissions"))
        allowed = ALLOWED_WRITE.get((name, job_id), set())
        if scopes is None:
            found.append(f"{where}: permissions write-all")
        elif scopes - allowed:
            found.append(f"{where}: write scopes {sorted(scopes - allowed)} not allowed")
        uses = [job.get("uses")] + [s.get("uses") for s in _steps(job)]
        for ref in (u for u in uses if isinstance(u, str)):
            if not (ref.startswith("./") or SHA_PIN_RE.match(ref) or DOCKER_PIN_RE.match(ref)):
                found.append(f"{where}: uses {ref} is not pinned to a commit SHA")
        secret_env = {
            k
            for scope in (wf.get("env"), job.get("env"))
            for k, v in (scope or {}).items()
            if SECRET_VALUE_RE.search(str(v))
        }
        for step in _steps(job):
            run = step.get("run")
            if not isinstance(run, str):
                continue
            label = f"{where} step {step.get('name') or step.get('id') or '?'}"
            if "${{" in run:
                found.append(f"{label}: ${{{{ }}}} inside run:")
            names = secret_env | {
                k for k, v in (step.get("env") or {}).items() if SECRET_VALUE_RE.search(str(v))
            }
            for line in run.splitlines():
                if names and re.search(r"\bset\s+-[a-z]*x", line):
                    found.append(f"{label}: set -x with a secret in env")
                if PRINTERS_RE.search(line) and any(
                    re.search(rf"\$\{{?{re.escape(n)}\b", line) for n in names
                ):
                    found.append(f"{label}: prints a secret: {line.strip()}")
                if PRINTERS_RE.search(line) and re.search(r"\$\{?[A-Z_]*(TOKEN|SECRET)", line):
                    found.append(f"{label}: prints a token-like variable: {line.strip()}")
    return found


# --- the real workflows ----------------------------------------------------------------------


def test_there_are_workflows() -> None:
    assert WORKFLOWS, "no .github/workflows/*.yml found"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_follows_the_security_rules(path: Path) -> None:
    assert problems(path.name, path.read_text()) == []


def test_allowed_write_scopes_name_real_jobs() -> None:
    """Stale entries would silently allow writes to a job added later under that name."""
    jobs = {(p.name, j) for p in WORKFLOWS for j in (load(p.read_text()).get("jobs") or {})}
    present = {p.name for p in WORKFLOWS}
    stale = [key for key in ALLOWED_WRITE if key[0] in present and key not in jobs]
    assert stale == []


# --- negative tests: each rule can fail ------------------------------------------------------

IF_LINE = (
    "    if: github.event_name == 'workflow_dispatch' || "
    "github.event.pull_request.head.repo.full_name == github.repository\n"
)
GOOD = (
    """
name: t
on:
  pull_request:
  workflow_dispatch:
permissions: {}
jobs:
  bench:
"""
    + IF_LINE
    + """    runs-on: [self-hosted, linux, x64, mysql-bench]
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683
      - uses: ./.github/actions/local
      - name: run
        env:
          INPUT: ${{ inputs.x }}
          GH_TOKEN: ${{ secrets.TOKEN }}
        run: |
          echo "input: $INPUT"
          gh api /user
"""
)


def check(text: str, name: str = "t.yml") -> list[str]:
    return problems(name, textwrap.dedent(text))


def test_the_good_synthetic_workflow_passes() -> None:
    assert check(GOOD) == []


@pytest.mark.parametrize(
    ("old", "new", "complaint"),
    [
        ("  pull_request:\n", "  pull_request_target:\n", "pull_request_target"),
        (
            "    if: github.event_name == 'workflow_dispatch' || github.event.pull_request"
            ".head.repo.full_name == github.repository\n",
            "",
            "reachable by fork PRs",
        ),
        (
            "github.event_name == 'workflow_dispatch' ||",
            "always() ||",
            "reachable by fork PRs",
        ),
        (
            "github.event_name == 'workflow_dispatch' ||",
            "github.event_name == 'pull_request' ||",
            "reachable by fork PRs",
        ),
        (
            "full_name == github.repository",
            "full_name != github.repository",
            "reachable by fork PRs",
        ),
        (
            "    runs-on: [self-hosted, linux, x64, mysql-bench]\n    permissions",
            "    runs-on: ${{ fromJSON(matrix.runs_on) }}\n    if: true\n    permissions",
            "reachable by fork PRs",
        ),
        (
            "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683",
            "actions/checkout@v4",
            "not pinned",
        ),
        (
            "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683",
            "actions/checkout@11bd719",
            "not pinned",
        ),
        ("permissions: {}\n", "permissions: write-all\n", "top-level permissions grant write"),
        ("permissions: {}\n", "", "no top-level permissions"),
        ("      contents: read\n", "      contents: write\n", "write scopes ['contents']"),
        ('echo "input: $INPUT"', 'echo "input: ${{ inputs.x }}"', "inside run:"),
        ("gh api /user", 'echo "$GH_TOKEN"', "prints a secret"),
        ("gh api /user", "printf '%s' ${GH_TOKEN}", "prints a secret"),
        ("gh api /user", "set -x; gh api /user", "set -x with a secret"),
        ("gh api /user", 'echo "$MY_TOKEN" > f', "token-like variable"),
    ],
)
def test_each_rule_catches_its_violation(old: str, new: str, complaint: str) -> None:
    assert old in GOOD, old
    found = check(GOOD.replace(old, new, 1))
    assert any(complaint in p for p in found), found


def test_job_permissions_write_all_and_allowed_list() -> None:
    text = GOOD.replace("    permissions:\n      contents: read\n", "    permissions: write-all\n")
    assert any("write-all" in p for p in check(text))
    allowed = GOOD.replace("      contents: read\n", "      contents: write\n")
    assert any("write scopes" in p for p in check(allowed, name="nightly.yml"))  # job bench
    # the same write in the one job allowed to have it passes
    publish = allowed.replace("  bench:\n", "  publish:\n")
    assert not any("write scopes" in p for p in check(publish, name="nightly.yml"))


def test_on_as_a_list_or_string_is_read() -> None:
    text = GOOD.replace("on:\n  pull_request:\n  workflow_dispatch:\n", "on: [pull_request]\n")
    text = text.replace(
        "    if: github.event_name == 'workflow_dispatch' || github.event.pull_request"
        ".head.repo.full_name == github.repository\n",
        "",
    )
    assert any("fork PRs" in p for p in check(text))
    text = text.replace("on: [pull_request]\n", "on: pull_request\n")
    assert any("fork PRs" in p for p in check(text))
    text = text.replace("on: pull_request\n", "on: [schedule]\n")
    assert not any("fork PRs" in p for p in check(text)), "no PR trigger: nothing to guard"


def test_unreachable_on_pull_request_is_accepted() -> None:
    for guard in ("github.event_name != 'pull_request'", "github.event_name == 'schedule'"):
        text = re.sub(r"    if: .*\n", f"    if: {guard}\n", GOOD, count=1)
        assert check(text) == [], guard
