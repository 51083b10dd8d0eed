"""runners/provision: argument validation, --dry-run (prints every action, changes nothing),
the sha256 check of a runner tarball, and shellcheck over every script in runners/.

The real install needs github.com (the runner release) and a booted systemd, neither of
which this machine has: only --dry-run runs here; the checksum check runs for real on a
local tarball (`--runner-tarball`), which --dry-run verifies because verifying only reads.
Registration (controller, accept-jit, wait-jit) is tested against a replayed GitHub API in
tests/runners/test_runners_controller.py, the docker helper in
tests/runners/test_runners_docker_helper.py.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUNNERS = REPO / "runners"
PROVISION = RUNNERS / "provision"
SCRIPTS = [
    "provision",
    "wait-jit",
    "accept-jit",
    "run-ephemeral",
    "job-started.sh",
    "docker",
    "tune",
    "preflight",
    "_perftrack.sh",
    "reset-job",
    "sign-record",
]
KEY_LINE = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyOnlyForTests perftrack-controller"


@pytest.fixture
def token(tmp_path: Path) -> Path:
    """The controller's ssh public key (the name is kept for the tests' signatures)."""
    path = tmp_path / "controller.pub"
    path.write_text(KEY_LINE + "\n")
    return path


def provision(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROVISION), *args], capture_output=True, text=True, check=False, timeout=60
    )


def base_args(token: Path) -> list[str]:
    return ["--repo", "acme/perftrack", "--class", "bench-epyc", "--controller-key", str(token)]


def test_shellcheck_is_clean_on_every_runner_script() -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("needs shellcheck")
    done = subprocess.run(
        ["shellcheck", "-x", *SCRIPTS], cwd=RUNNERS, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout


def test_every_script_is_strict_bash() -> None:
    for name in SCRIPTS:
        text = (RUNNERS / name).read_text()
        if name.endswith(".sh"):
            continue  # sourced, not run
        assert text.startswith("#!/usr/bin/env bash\n"), name
        assert "set -euo pipefail" in text, name


def test_dry_run_prints_every_action_and_changes_nothing(token: Path) -> None:
    before = {p: p.exists() for p in (Path("/etc/perftrack-runner"), Path("/opt/actions-runner"))}
    done = provision(*base_args(token), "--name", "r1", "--dry-run")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "labels self-hosted,linux,x64,mysql-bench,bench-epyc" in out
    assert "LABELS=self-hosted,linux,x64,mysql-bench,bench-epyc" in out
    assert "https://github.com/actions/runner/releases/download/v2.329.0/" in out
    assert "then verify sha256 194f1e1e" in out
    assert "ExecStartPre=+/usr/local/lib/perftrack-runner/wait-jit" in out
    hook = "ACTIONS_RUNNER_HOOK_JOB_STARTED=/usr/local/lib/perftrack-runner/job-started.sh"
    assert f"Environment={hook}" in out
    assert "Environment=PATH=/usr/local/lib/perftrack-runner/bin:" in out
    assert "would run: systemctl enable --now perftrack-runner.service" in out
    assert "sudo" in out  # the docker helper runs through sudo
    # No GitHub credential on the host, the runner user not in the docker group, its only
    # root command the docker helper, the controller's key limited to accept-jit.
    assert "token" not in out.replace("/etc/perftrack-runner/token", "")
    assert "usermod -aG docker" not in out
    lib = "/usr/local/lib/perftrack-runner"
    assert f"ghrunner ALL=(root) NOPASSWD: {lib}/docker-helper, {lib}/record-signer" in out
    # Nothing a job can change survives it: the runner install is root's, the host is
    # reset before every job, the job's records are signed for its night.
    assert "would run: chown -R root:root /opt/actions-runner" in out
    assert "chown -R ghrunner" not in out
    reset, wait = f"ExecStartPre=+{lib}/reset-job", f"ExecStartPre=+{lib}/wait-jit"
    assert reset in out and out.index(reset) < out.index(wait)
    assert f"Environment=PERFTRACK_RECORD_SIGNER={lib}/bin/perftrack-record-signer" in out
    assert (
        "would write: /var/lib/perftrack-runner/record-key (32 random bytes, mode 600, root)" in out
    )
    assert "RuntimeDirectory" not in out  # the JIT handoff is in a root-only directory
    assert 'restrict,command="env PERFTRACK_JIT_SPOOL=' in out and KEY_LINE in out
    assert "TRUSTED_WORKFLOWS=.github/workflows/nightly.yml,.github/workflows/pr-bench.yml" in out
    assert "rm -f /usr/local/lib/perftrack-runner/jit-config /etc/perftrack-runner/token" in out
    lines = [line for line in out.splitlines() if line and not line.startswith("    |")]
    prefixes = ("dry run", "runner ", "unchanged:", "would ", "verified:", "done:", "    ")
    assert all(line.startswith(prefixes) for line in lines), lines
    after = {p: p.exists() for p in before}
    assert after == before


def test_dry_run_options(token: Path) -> None:
    done = provision(
        *base_args(token),
        *("--extra-labels", "nvme,big", "--no-tune", "--dir", "/srv/runner", "--dry-run"),
    )
    assert done.returncode == 0, done.stderr
    assert "LABELS=self-hosted,linux,x64,mysql-bench,bench-epyc,nvme,big" in done.stdout
    assert "RUNNER_DIR=/srv/runner" in done.stdout
    assert "would write: /etc/systemd/system/perftrack-tune.service" not in done.stdout
    assert "enable --now perftrack-tune.service" not in done.stdout


def _tarball(path: Path) -> str:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        data = b"#!/bin/sh\n"
        info = tarfile.TarInfo("run.sh")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buffer.getvalue())
    return hashlib.sha256(buffer.getvalue()).hexdigest()


def test_local_tarball_with_the_wrong_sha256_is_refused(token: Path, tmp_path: Path) -> None:
    tarball = tmp_path / "actions-runner-linux-x64-9.9.9.tar.gz"
    _tarball(tarball)
    done = provision(
        *base_args(token),
        *("--runner-version", "9.9.9", "--runner-sha256", "0" * 64),
        *("--runner-tarball", str(tarball), "--dry-run"),
    )
    assert done.returncode == 1
    assert "not the pinned " + "0" * 64 + ": refused, nothing extracted" in done.stderr
    assert done.stderr.count("\n") == 1
    assert "would extract" not in done.stdout


def test_local_tarball_with_the_right_sha256_is_accepted(token: Path, tmp_path: Path) -> None:
    tarball = tmp_path / "actions-runner-linux-x64-9.9.9.tar.gz"
    digest = _tarball(tarball)
    done = provision(
        *base_args(token),
        *("--runner-version", "9.9.9", "--runner-sha256", digest),
        *("--runner-tarball", str(tarball), "--dry-run"),
    )
    assert done.returncode == 0, done.stderr
    assert f"verified: {tarball} sha256 {digest}" in done.stdout
    assert f"would extract: {tarball}" in done.stdout


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (["--repo", ""], "--repo needs a value"),
        (["--repo", "acme"], "is not OWNER/REPO"),
        (["--repo", "acme/x;rm -rf /"], "is not OWNER/REPO"),
        (["--class", "$(id)"], "is not a runner label"),
        (["--class", "a b"], "is not a runner label"),
        (["--extra-labels", "ok,${{ github.token }}"], "is not a runner label"),
        (["--name", "../x"], "--name"),
        (["--user", "Root Evil"], "is not a user name"),
        (["--dir", "relative/dir"], "must be an absolute path"),
        (["--dir", "/opt/../etc"], "must be an absolute path"),
        (["--runner-version", "2.329.0"], "go together"),
        (["--runner-version", "2.x", "--runner-sha256", "a" * 64], "is not X.Y.Z"),
        (["--runner-version", "2.1.0", "--runner-sha256", "A" * 64], "64 lowercase hex"),
        (["--runner-tarball", "/nonexistent.tar.gz"], "does not exist"),
        (["--token-file", "/root/runner-token"], "--token-file is gone"),
        (["--controller-key", "/nonexistent.pub"], "does not exist"),
        (["--workflows", ".github/workflows/ci.yml,../x.yml"], "is not a .github/workflows"),
        (["--default-branch", "a..b"], "is not a branch name"),
        (["--bogus"], "unknown argument '--bogus'"),
    ],
)
def test_bad_arguments_are_one_line_errors(token: Path, change, complaint) -> None:
    done = provision(*base_args(token), *change, "--dry-run")
    assert done.returncode == 2, done.stdout
    assert complaint in done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert done.stdout == ""


def test_required_arguments_and_controller_key(token: Path, tmp_path: Path) -> None:
    done = provision("--class", "c", "--dry-run")
    assert done.returncode == 2 and "--repo OWNER/REPO is required" in done.stderr
    done = provision("--repo", "a/b", "--dry-run")
    assert done.returncode == 2 and "--class CLASS is required" in done.stderr
    bad = tmp_path / "bad.pub"
    bad.write_text('ssh-ed25519 AAAA" command="sh\n')
    done = provision("--repo", "a/b", "--class", "c", "--controller-key", str(bad), "--dry-run")
    assert done.returncode == 2 and "is not one ssh public key line" in done.stderr
    local = provision("--repo", "a/b", "--class", "c", "--dry-run")  # controller on this host
    assert local.returncode == 0, local.stderr
    assert "perftrack-jit" not in local.stdout
    assert "deliver = env PERFTRACK_JIT_SPOOL=/var/lib/perftrack-runner/spool" in local.stdout


def test_help() -> None:
    done = provision("--help")
    assert done.returncode == 0
    assert done.stdout.startswith("usage: runners/provision")
