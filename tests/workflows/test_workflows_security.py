"""Security rules over every .github/workflows/*.yml (issues #11 item 7, #23), and negative
tests: a small synthetic workflow breaking each rule must be caught, so these checks can
fail.

These are lint for the files on the default branch. They are not what keeps a fork's
code off the benchmark runners — a pull request can edit or delete any of these files for
its own run — that is the runners' job-started hook and the runner controller, which
accept only the trusted workflow files on the default branch (runners/trust.py,
tests/runners/test_runners_controller.py, tests/workflows/test_runner_gate_act.py).

Rules:
- no ``pull_request_target`` trigger (it runs with a write token next to PR code);
- a job whose ``runs-on`` is not a GitHub-hosted image (``ubuntu-*``, ``windows-*``,
  ``macos-*``): self-hosted, a bare runner label such as ``[mysql-bench]``, a runner
  group, or an expression (which may name self-hosted labels, e.g.
  ``fromJSON(matrix…)``) is in a workflow file the runners trust
  (``DEFAULT_WORKFLOWS`` of runners/provision) whose triggers are only ``schedule``,
  ``workflow_dispatch`` and ``workflow_run``; no ``if:`` guard makes one acceptable in a
  workflow a pull request triggers (the PR's own copy of the file is what runs);
- a job that reads a secret (other than the workflow token) names its GitHub
  environment (``ENVIRONMENT_OF``; the environments allow the default branch only);
- a job with a write scope, and every job that may run on a self-hosted runner, installs
  Python packages hash-locked only (``pip install`` with ``--require-hashes``, or
  ``scripts/ci-setup.sh`` with no option or ``--bench``), never ``make setup`` (dev extras,
  a pip upgrade, apt-get);
- a job that parses a registry's answers (``perftrack tags check``, ``perftrack servers
  pin --provider``: Docker Hub, GitHub) holds no write scope and no secret: the catalog
  it writes goes to a job that does, as data, validated there;
- an Actions cache is restored only under an exact key (no ``restore-keys``: any job that
  can write the scope could save the newest entry of a prefix), in a job with no write
  scope and no secret (restoring extracts an archive its writer made), and never holds
  the site (the site is built from the DB every night);
- a job that publishes run records (``perftrack publish``) is in no concurrency group
  shared by the runs of a workflow: GitHub cancels a pending job of such a group when a
  newer run queues one, and the bench jobs have deleted their copies by then (a night
  lost);
- a job that deploys Pages has a concurrency group that is never cancelled;
- every ``uses:`` is a local path or pinned to a full 40-hex commit SHA (docker: a digest);
- top-level ``permissions`` is ``{}`` or read-only; a job may hold a write scope only when
  ALLOWED_WRITE lists it for that workflow and job; never ``write-all``;
- no ``${{`` inside a ``run:`` (values reach scripts through ``env:``);
- secrets are never echoed: no ``echo``/``printf`` of an env var that holds a secret or
  the token, and no ``set -x`` in a step that has one.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.y*ml"))

# (workflow file, job) -> the write scopes that job needs, and why.
ALLOWED_WRITE: dict[tuple[str, str], set[str]] = {
    ("nightly.yml", "publish"): {"contents"},  # commits data/results.duckdb back
    ("nightly.yml", "deploy"): {"pages", "id-token"},  # actions/deploy-pages
    # the one PR comment and the perftrack/pr-check commit status
    ("pr-bench.yml", "conclude"): {"pull-requests", "statuses"},
    # commits the catalog to a branch, opens the PR, dispatches pr-check on it
    ("new-tags.yml", "pr"): {"contents", "pull-requests", "actions"},
    # the same for the digests the nightly's plan pinned (trust on first use)
    ("nightly.yml", "pins"): {"contents", "pull-requests", "actions"},
}
# (workflow file, job) -> the GitHub environment holding the secrets it reads. Each is
# limited to the default branch (deployment branch rule; docs/workflows.md).
ENVIRONMENT_OF: dict[tuple[str, str], str] = {
    ("nightly.yml", "publish"): "results",  # PERFTRACK_PUSH_TOKEN
    ("new-tags.yml", "pr"): "new-tags",  # PERFTRACK_PR_TOKEN
    ("nightly.yml", "pins"): "new-tags",  # PERFTRACK_PR_TOKEN
}
# Events whose workflow file is a branch's of this repository (never a PR's copy).
BENCH_TRIGGERS = {"schedule", "workflow_dispatch", "workflow_run"}
PROVISION = REPO / "runners" / "provision"
TRUSTED_RE = re.compile(r'^DEFAULT_WORKFLOWS="([^"]+)"$', re.M)
SECRET_RE = re.compile(r"\bsecrets\.(?!GITHUB_TOKEN\b)[A-Za-z_][A-Za-z0-9_]*")
PIP_INSTALL_RE = re.compile(r"\bpip3?\s+install\b")
CI_SETUP = REPO / "scripts" / "ci-setup.sh"
SHA_PIN_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$")
DOCKER_PIN_RE = re.compile(r"^docker://[^@\s]+@sha256:[0-9a-f]{64}$")
SECRET_VALUE_RE = re.compile(r"\$\{\{[^}]*\b(secrets\.|github\.token)")
# GitHub-hosted runner images (a job with any other runs-on may reach a self-hosted runner).
HOSTED_RE = re.compile(r"^(ubuntu|windows|macos)-[A-Za-z0-9.-]+$")
CI_SETUP_RE = re.compile(r"\bci-setup\.sh\b(.*)$")
# Commands that read Docker Hub's or GitHub's answers: never in a job holding a write token.
REGISTRY_COMMANDS = ("perftrack tags check", "perftrack servers pin --provider")
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


def trusted_workflows() -> set[str]:
    """The workflow files the runners accept (runners/provision's default)."""
    m = TRUSTED_RE.search(PROVISION.read_text())
    assert m, "DEFAULT_WORKFLOWS not found in runners/provision"
    return {w.rsplit("/", 1)[-1] for w in m.group(1).split(",")}


def may_be_self_hosted(runs_on: Any) -> bool:
    """Anything but GitHub-hosted images: self-hosted, a bare label (``[mysql-bench]``
    matches a self-hosted runner whatever else it lacks), a runner group, an expression."""
    if isinstance(runs_on, dict):  # {group:, labels:}: a runner group
        return True
    items = runs_on if isinstance(runs_on, list) else [runs_on]
    return not items or not all(isinstance(i, str) and HOSTED_RE.match(i) for i in items)


def _steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in job.get("steps") or [] if isinstance(s, dict)]


def _env_name(job: dict[str, Any]) -> str | None:
    env = job.get("environment")
    return env.get("name") if isinstance(env, dict) else env


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
        if may_be_self_hosted(job.get("runs-on")):
            if on - BENCH_TRIGGERS:
                found.append(
                    f"{where}: self-hosted/expression runs-on in a workflow triggered by "
                    f"{sorted(on - BENCH_TRIGGERS)} (reachable by pull requests; an if: "
                    "guard in a file a PR can edit protects nothing)"
                )
            if name not in trusted_workflows():
                found.append(f"{where}: self-hosted runs-on in {name}, not a trusted workflow")
        job_text = yaml.safe_dump(job)
        if SECRET_RE.search(job_text) and ENVIRONMENT_OF.get((name, job_id)) != _env_name(job):
            found.append(f"{where}: reads a secret outside its environment (ENVIRONMENT_OF)")
        writes = (
            bool(_write_scopes(job.get("permissions")) or set())
            or job.get("permissions") == "write-all"
        )
        if writes or may_be_self_hosted(job.get("runs-on")):
            for step in _steps(job):
                run = str(step.get("run") or "")
                for line in run.splitlines():
                    if PIP_INSTALL_RE.search(line) and "--require-hashes" not in line:
                        found.append(
                            f"{where}: pip install without --require-hashes: {line.strip()}"
                        )
                    setup = CI_SETUP_RE.search(line)
                    if setup and setup.group(1).strip() not in ("", "--bench"):
                        found.append(
                            f"{where}: ci-setup.sh {setup.group(1).strip()} (not hash-locked)"
                        )
                    if re.search(r"\bmake\s+(setup|demo|test)\b", line):
                        found.append(f"{where}: make setup (unlocked dev install, apt-get)")
        if writes or SECRET_RE.search(job_text):
            for step in _steps(job):
                run = " ".join(str(step.get("run") or "").split())
                for command in REGISTRY_COMMANDS:
                    if command in run:
                        found.append(
                            f"{where}: `{command}` parses a registry's answers in a job "
                            "holding a write scope or a secret"
                        )
        for step in _steps(job):
            if not str(step.get("uses") or "").startswith("actions/cache"):
                continue
            given = step.get("with") or {}
            if "/restore@" in str(step.get("uses")) or "/save@" not in str(step.get("uses")):
                if given.get("restore-keys"):
                    found.append(f"{where}: cache restored by a key prefix (restore-keys)")
                if writes or SECRET_RE.search(job_text):
                    found.append(f"{where}: cache restored in a job with a write scope or a secret")
            if "build/site" in str(given.get("path") or ""):
                found.append(f"{where}: the site in a cache (build it from the DB)")
        if any("perftrack publish" in str(s.get("run") or "") for s in _steps(job)):
            for scope in (wf.get("concurrency"), job.get("concurrency")):
                group = scope.get("group") if isinstance(scope, dict) else scope
                if group and "github.run_id" not in str(group):
                    found.append(
                        f"{where}: publishes records in a concurrency group shared by runs "
                        "(a newer run cancels its pending job: a night lost)"
                    )
        if any("deploy-pages" in str(u) for u in [s.get("uses") for s in _steps(job)]):
            group = job.get("concurrency") or {}
            if not isinstance(group, dict) or group.get("cancel-in-progress") is not False:
                found.append(f"{where}: deploys Pages without a never-cancelled concurrency group")
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

GOOD = """
name: t
on:
  schedule:
    - cron: "17 2 * * *"
  workflow_dispatch:
permissions: {}
jobs:
  bench:
    runs-on: [self-hosted, linux, x64, mysql-bench]
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683
      - uses: ./.github/actions/local
      - run: scripts/ci-setup.sh --bench
      - name: run
        env:
          INPUT: ${{ inputs.x }}
          GH_TOKEN: ${{ github.token }}
        run: |
          echo "input: $INPUT"
          gh api /user
  publish:
    runs-on: ubuntu-latest
    permissions:
      contents: write
    environment: results
    steps:
      - run: scripts/ci-setup.sh
      - run: pip install --require-hashes -r requirements/ci.lock
      - env:
          GITHUB_TOKEN: ${{ secrets.PERFTRACK_PUSH_TOKEN || github.token }}
        run: perftrack publish incoming
  deploy:
    runs-on: ubuntu-latest
    permissions:
      pages: write
      id-token: write
    concurrency:
      group: pages
      cancel-in-progress: false
    steps:
      - uses: actions/deploy-pages@d6db90164ac5ed86f2b6aed7e0febac5b3c0c03e
"""
GUARD = "github.event.pull_request.head.repo.full_name == github.repository"


def check(text: str, name: str = "nightly.yml") -> list[str]:
    return problems(name, textwrap.dedent(text))


def test_the_good_synthetic_workflow_passes() -> None:
    assert check(GOOD) == []


def _pr_triggered(guard: str | None) -> str:
    text = GOOD.replace("  workflow_dispatch:\n", "  workflow_dispatch:\n  pull_request:\n", 1)
    if guard is not None:
        text = text.replace("  bench:\n", f"  bench:\n    if: {guard}\n", 1)
    return text


@pytest.mark.parametrize(
    "guard",
    [
        None,
        GUARD,  # the old pr-check.yml guard: a PR's copy of the file can drop it
        f"${{{{ !({GUARD}) }}}}",  # an inversion: true exactly for forks
        f"github.event_name == 'workflow_dispatch' || !({GUARD})",
        "${{ !(github.event.pull_request.head.repo.full_name != github.repository) }}",
        "always()",
    ],
)
def test_no_self_hosted_job_in_a_workflow_a_pull_request_triggers(guard: str | None) -> None:
    found = check(_pr_triggered(guard))
    assert any("triggered by ['pull_request']" in p for p in found), found


@pytest.mark.parametrize(
    ("old", "new", "complaint"),
    [
        ("  schedule:\n", "  pull_request_target:\n", "pull_request_target"),
        ("  schedule:\n", "  push:\n", "triggered by ['push']"),
        ("  schedule:\n", "  issue_comment:\n", "triggered by ['issue_comment']"),
        (
            "    runs-on: [self-hosted, linux, x64, mysql-bench]\n",
            "    runs-on: ${{ fromJSON(inputs.runs_on) }}\n",
            "",  # an expression counts as self-hosted: fine here (trusted file, triggers)
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
        ("    environment: results\n", "", "reads a secret outside its environment"),
        ("    environment: results\n", "    environment: other\n", "outside its environment"),
        ("pip install --require-hashes -r", "pip install -r", "without --require-hashes"),
        (
            "      - run: scripts/ci-setup.sh\n",
            "      - run: scripts/ci-setup.sh --full\n",
            "--full",
        ),
        ("scripts/ci-setup.sh --bench", "make setup", "make setup (unlocked"),
        ("scripts/ci-setup.sh --bench", "pip install -e .", "without --require-hashes"),
        (
            "      - run: scripts/ci-setup.sh\n",
            "      - run: scripts/ci-setup.sh\n      - run: perftrack tags check --write\n",
            "parses a registry's answers",
        ),
        (
            "        run: perftrack publish incoming\n",
            "        run: perftrack publish incoming\n    concurrency:\n      group: publish\n",
            "a night lost",
        ),
        (
            "      - run: scripts/ci-setup.sh\n",
            "      - run: scripts/ci-setup.sh\n"
            "      - uses: actions/cache/restore@0057852bfaa89a56745cba8c7296529d2fc39830\n"
            "        with: {path: data/.results-cache, key: k}\n",
            "cache restored in a job with a write scope",
        ),
        (
            "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n",
            "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n"
            "      - uses: actions/cache/restore@0057852bfaa89a56745cba8c7296529d2fc39830\n"
            "        with: {path: x, key: k-1, restore-keys: k-}\n",
            "restore-keys",
        ),
        (
            "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n",
            "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n"
            "      - uses: actions/cache/save@0057852bfaa89a56745cba8c7296529d2fc39830\n"
            "        with: {path: build/site, key: k}\n",
            "the site in a cache",
        ),
        ("      cancel-in-progress: false\n", "      cancel-in-progress: true\n", "deploys Pages"),
        (
            "    concurrency:\n      group: pages\n      cancel-in-progress: false\n",
            "",
            "deploys Pages",
        ),
    ],
)
def test_each_rule_catches_its_violation(old: str, new: str, complaint: str) -> None:
    assert old in GOOD, old
    found = check(GOOD.replace(old, new, 1))
    if complaint:
        assert any(complaint in p for p in found), found
    else:
        assert found == [], found


@pytest.mark.parametrize(
    "runs_on",
    [
        "[mysql-bench]",  # a bare label: matches a self-hosted runner whatever it lacks
        "mysql-bench",
        "{group: bench-hosts}",  # a runner group
        "{group: larger, labels: [ubuntu-latest]}",
        "[ubuntu-latest, mysql-bench]",
        "${{ inputs.runner }}",
        "[]",
    ],
)
def test_any_runner_not_github_hosted_is_refused_where_a_pull_request_triggers(
    runs_on: str,
) -> None:
    text = _pr_triggered(None).replace(
        "    runs-on: [self-hosted, linux, x64, mysql-bench]\n", f"    runs-on: {runs_on}\n", 1
    )
    found = check(text)
    assert any("triggered by ['pull_request']" in p for p in found), (runs_on, found)
    assert check(text.replace(f"runs-on: {runs_on}", "runs-on: ubuntu-24.04", 1)) == []


def test_the_publish_job_may_be_in_a_group_of_its_own_run() -> None:
    text = GOOD.replace(
        "        run: perftrack publish incoming\n",
        "        run: perftrack publish incoming\n"
        "    concurrency:\n      group: publish-${{ github.run_id }}\n",
    )
    assert check(text) == []


def test_codeowners_guard_the_trusted_directories() -> None:
    """A change to the results, the configuration, the workflows or the runners' scripts
    needs a review by their owners (with "Require review from Code Owners" on main)."""
    lines = [
        ln.split()
        for ln in (REPO / ".github" / "CODEOWNERS").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    owned = {parts[0]: parts[1:] for parts in lines}
    for path in ("/data/", "/configs/", "/.github/", "/runners/"):
        assert owned.get(path), f"{path} has no code owner"
        assert all(o.startswith("@") for o in owned[path])


def test_self_hosted_only_in_the_workflows_the_runners_trust() -> None:
    assert trusted_workflows() == {"nightly.yml", "pr-bench.yml"}
    assert any("not a trusted workflow" in p for p in check(GOOD, name="ci.yml"))
    assert not any("not a trusted workflow" in p for p in check(GOOD, name="pr-bench.yml"))


def test_job_permissions_write_all_and_allowed_list() -> None:
    text = GOOD.replace("    permissions:\n      contents: read\n", "    permissions: write-all\n")
    assert any("write-all" in p for p in check(text))
    # the same write in a job not listed for it is refused
    assert any("write scopes" in p for p in check(GOOD, name="pr-bench.yml"))


def test_on_as_a_list_or_string_is_read() -> None:
    for on in ("on: [pull_request]\n", "on: pull_request\n"):
        text = re.sub(r"on:\n(  .*\n|    .*\n)+", on, GOOD, count=1)
        assert any("triggered by ['pull_request']" in p for p in check(text)), on
    text = re.sub(r"on:\n(  .*\n|    .*\n)+", "on: [schedule]\n", GOOD, count=1)
    assert check(text) == []


def test_ci_setup_installs_hash_locked() -> None:
    """scripts/ci-setup.sh's default (the write jobs') installs with --require-hashes."""
    text = CI_SETUP.read_text()
    default = text.split("else\n  # The Python half", 1)[1]
    installs = [ln for ln in default.splitlines() if PIP_INSTALL_RE.search(ln)]
    assert installs and all(
        "--require-hashes" in ln or "--no-deps --no-build-isolation -e ." in ln for ln in installs
    ), installs
    for lock in ("requirements/ci.lock",):
        body = (REPO / lock).read_text()
        pins = re.findall(r"^([A-Za-z0-9_.-]+)==\S+ \\$", body, re.M)
        assert pins, lock
        for pin in pins:
            block = body.split(f"\n{pin}==", 1)[1].split("\n\n", 1)[0]
            assert "--hash=sha256:" in block, (lock, pin)
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0].lower() for d in deps}
    locked = {
        p.lower()
        for p in re.findall(
            r"^([A-Za-z0-9_.-]+)==", (REPO / "requirements/ci.lock").read_text(), re.M
        )
    }
    assert names <= locked, names - locked


def test_ci_setup_for_a_bench_job_uses_only_what_provisioning_installed(tmp_path: Path) -> None:
    """`ci-setup.sh --bench` installs nothing but the locked Python packages: no apt-get,
    no sudo, no `make setup` (dev extras), no pip upgrade; a host without provision's tools
    is refused with one line naming them (tests/runners/test_fresh_host.py runs it on a
    freshly provisioned host)."""
    text = CI_SETUP.read_text()
    code = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith(("#", "echo")))
    for word in ("apt-get", "sudo", "make ", "--upgrade", ".[dev]"):
        assert word not in code, word
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("python3", "git", "dirname", "cat"):
        (bin_dir / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
    done = subprocess.run(
        ["/bin/bash", str(CI_SETUP), "--bench"],
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith(
        "error: this bench host lacks sysbench mariadb mariadb-slap docker"
    )
    assert ": run runners/provision on it" in done.stderr and done.stderr.count("\n") == 1
