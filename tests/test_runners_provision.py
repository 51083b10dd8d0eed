"""runners/provision: argument validation, --dry-run (prints every action, changes nothing),
the sha256 check of a runner tarball, and shellcheck over every script in runners/.

The real install needs github.com (the runner release) and a booted systemd, neither of
which this machine has: only --dry-run runs here; the checksum check runs for real on a
local tarball (`--runner-tarball`), which --dry-run verifies because verifying only reads.
`jit-config` runs for real against a local HTTPS server replaying GitHub's documented
generate-jitconfig answer (GitHub itself is unreachable from here).
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import shutil
import ssl
import subprocess
import tarfile
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUNNERS = REPO / "runners"
PROVISION = RUNNERS / "provision"
SCRIPTS = ["provision", "jit-config", "run-ephemeral", "tune", "preflight", "_perftrack.sh"]


@pytest.fixture
def token(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text("not-a-real-token\n")
    path.chmod(0o600)
    return path


def provision(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROVISION), *args], capture_output=True, text=True, check=False, timeout=60
    )


def base_args(token: Path) -> list[str]:
    return ["--repo", "acme/perftrack", "--class", "bench-epyc", "--token-file", str(token)]


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
    assert "ExecStartPre=+/usr/local/lib/perftrack-runner/jit-config" in out
    assert "would run: systemctl enable --now perftrack-runner.service" in out
    assert "would run: install -m 0600 -o root -g root" in out  # the token: root only
    assert "sysbench" in out and "docker" in out
    lines = [line for line in out.splitlines() if line and not line.startswith("    |")]
    prefixes = ("dry run", "runner ", "unchanged:", "would ", "verified:", "done:")
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
        (["--runner-group-id", "0"], "not a positive number"),
        (["--api-url", "http://api.github.com"], "must be an https URL"),
        (["--bogus"], "unknown argument '--bogus'"),
    ],
)
def test_bad_arguments_are_one_line_errors(token: Path, change, complaint) -> None:
    done = provision(*base_args(token), *change, "--dry-run")
    assert done.returncode == 2, done.stdout
    assert complaint in done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert done.stdout == ""


def test_required_arguments_and_token_mode(token: Path) -> None:
    done = provision("--class", "c", "--token-file", str(token), "--dry-run")
    assert done.returncode == 2 and "--repo OWNER/REPO is required" in done.stderr
    done = provision("--repo", "a/b", "--token-file", str(token), "--dry-run")
    assert done.returncode == 2 and "--class CLASS is required" in done.stderr
    done = provision("--repo", "a/b", "--class", "c", "--dry-run")
    assert done.returncode == 2 and "--token-file FILE is required" in done.stderr
    token.chmod(0o644)
    done = provision(*base_args(token), "--dry-run")
    assert done.returncode == 2 and "readable by others (mode 644): chmod 600" in done.stderr


def test_help() -> None:
    done = provision("--help")
    assert done.returncode == 0
    assert done.stdout.startswith("usage: runners/provision")


# --- jit-config against a replayed GitHub API -------------------------------------------------

JIT_RESPONSE = {
    "runner": {"id": 23, "name": "r1", "os": "unknown", "status": "offline", "busy": False},
    "encoded_jit_config": "eyJyZXBsYXllZCI6dHJ1ZX0=",  # the documented response's shape
}


@pytest.fixture
def replayed_github_api(tmp_path: Path):
    """A local HTTPS server on 127.0.0.1 (self-signed cert, trusted via CURL_CA_BUNDLE)
    replaying the documented 201 answer of POST .../actions/runners/generate-jitconfig."""
    if shutil.which("openssl") is None or shutil.which("curl") is None:
        pytest.skip("needs openssl and curl")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    seen: list[dict] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            seen.append(
                {
                    "path": self.path,
                    "auth": self.headers.get("Authorization"),
                    "body": json.loads(self.rfile.read(length)),
                }
            )
            data = json.dumps(JIT_RESPONSE).encode()
            self.send_response(201)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert, seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_replayed_jit_config_request_and_single_use_config_file(
    replayed_github_api, token: Path, tmp_path: Path
) -> None:
    url, cert, seen = replayed_github_api
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {
        "PATH": "/usr/bin:/bin",
        "CURL_CA_BUNDLE": str(cert),
        "RUNTIME_DIRECTORY": str(runtime),
        "REPO": "acme/perftrack",
        "RUNNER_NAME": "r1",
        "LABELS": "self-hosted,linux,x64,mysql-bench,bench-epyc",
        "RUNNER_DIR": "/opt/actions-runner",
        "RUNNER_USER": "root",
        "API_URL": url,
        "GROUP_ID": "1",
        "TOKEN_FILE": str(token),
    }
    done = subprocess.run(
        [str(RUNNERS / "jit-config")], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    (request,) = seen
    assert request["path"] == "/repos/acme/perftrack/actions/runners/generate-jitconfig"
    assert request["auth"] == "Bearer not-a-real-token"
    body = request["body"]
    assert body["labels"] == ["self-hosted", "linux", "x64", "mysql-bench", "bench-epyc"]
    assert body["runner_group_id"] == 1
    assert body["work_folder"] == "/opt/actions-runner/_work"
    assert body["name"].startswith("r1-")
    config = runtime / "jitconfig"
    assert config.read_text() == JIT_RESPONSE["encoded_jit_config"]
    assert config.stat().st_mode & 0o777 == 0o400
    assert sorted(p.name for p in runtime.iterdir()) == ["jitconfig"], "response removed"
    assert "not-a-real-token" not in done.stdout + done.stderr


def test_jit_config_without_its_environment_fails_before_any_request(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(RUNNERS / "jit-config")],
        env={"PATH": "/usr/bin:/bin", "RUNTIME_DIRECTORY": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "REPO" in done.stderr
    assert list(tmp_path.iterdir()) == []
