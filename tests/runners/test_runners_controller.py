"""runners/controller, runners/trust.py, accept-jit and wait-jit against a replayed GitHub API.

GitHub is unreachable from here: a local HTTP server on 127.0.0.1 replays the documented
responses (tests/fixtures/github/runners/, shapes from GitHub's REST reference) and keeps a
small model of what GitHub does with them: App JWTs are checked (RS256 signature with the
App's public key via openssl, ``exp`` at most 10 minutes ahead), installation tokens expire
one hour after they are minted (401 "Bad credentials" afterwards), workflow runs and jobs
are queued and finished on a simulated clock shared with the controller. The hosts are
real `accept-jit`/`wait-jit` scripts on spool directories.
"""

from __future__ import annotations

import base64
import copy
import http.server
import importlib.machinery
import importlib.util
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from replay import POLL_S

REPO = Path(__file__).resolve().parents[2]
RUNNERS = REPO / "runners"
FIXTURES = REPO / "tests" / "fixtures" / "github" / "runners"
REPOSITORY = "perftrack/perftrack"
FORK = "mallory/perftrack"
APP_ID = "123456"
INSTALLATION = "7890123"
TOKEN_LIFETIME_S = 3600  # GitHub: installation tokens expire one hour after creation
JWT_MAX_AHEAD_S = 600  # GitHub: an App JWT may not expire more than 10 minutes ahead
CLASS_LABELS = ["self-hosted", "linux", "x64", "mysql-bench", "bench-epyc"]
TRUSTED = [".github/workflows/nightly.yml", ".github/workflows/pr-bench.yml"]
DAY = 86400


def _load(name: str, path: Path) -> Any:
    loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    loader.exec_module(module)
    return module


controller = _load("perftrack_runner_controller", RUNNERS / "controller")
trust = controller.trust


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Clock:
    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


class GitHubReplay:
    """The replayed API: documented shapes, GitHub's token rules, a queue of runs."""

    def __init__(self, clock: Clock, public_key: Path) -> None:
        self.clock, self.public_key = clock, public_key
        self.tokens: dict[str, float] = {}  # token -> expires (simulated time)
        self.runs: dict[int, dict[str, Any]] = {}
        self.jobs: dict[int, dict[str, Any]] = {}
        self.jit: dict[int, dict[str, Any]] = {}  # runner id -> {job name, labels, config}
        self.deleted: list[int] = []
        self.requests: list[tuple[str, str, int]] = []
        self.jwts: list[dict[str, Any]] = []
        self._next = 1000
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        # shutdown() waits for the loop to look: every 20 ms, not the default 0.5 s
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(POLL_S,), daemon=True
        )

    def __enter__(self) -> GitHubReplay:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def new_id(self) -> int:
        self._next += 1
        return self._next

    # --- the world --------------------------------------------------------------------------

    def queue_run(
        self,
        *,
        path: str,
        event: str,
        branch: str,
        head_repo: str = REPOSITORY,
        jobs: list[list[str]],
    ) -> list[int]:
        run = copy.deepcopy(fixture("workflow-run.json"))
        run_id = self.new_id()
        run.update(id=run_id, path=path, event=event, head_branch=branch, status="queued")
        run["repository"]["full_name"] = REPOSITORY
        run["head_repository"]["full_name"] = head_repo
        self.runs[run_id] = run
        ids = []
        for labels in jobs:
            job = copy.deepcopy(fixture("workflow-job.json"))
            job.update(id=self.new_id(), run_id=run_id, labels=labels, status="queued")
            self.jobs[job["id"]] = job
            ids.append(job["id"])
        return ids

    def start(self, job_id: int, runner_name: str) -> None:
        job = self.jobs[job_id]
        job.update(status="in_progress", runner_name=runner_name)
        self.runs[job["run_id"]]["status"] = "in_progress"

    def finish(self, job_id: int) -> None:
        job = self.jobs[job_id]
        job.update(status="completed", conclusion="success")
        run = self.runs[job["run_id"]]
        if all(j["status"] == "completed" for j in self.jobs.values() if j["run_id"] == run["id"]):
            run["status"] = "completed"

    # --- HTTP ---------------------------------------------------------------------------------

    def _verify_jwt(self, jwt: str) -> bool:
        try:
            header, payload, signature = jwt.split(".")
            claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            sig = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
        except ValueError:
            return False
        with tempfile.TemporaryDirectory() as tmp:
            sig_file = Path(tmp) / "sig"
            sig_file.write_bytes(sig)
            ok = (
                subprocess.run(
                    [
                        "openssl",
                        "dgst",
                        "-sha256",
                        "-verify",
                        str(self.public_key),
                        "-signature",
                        sig_file,
                    ],
                    input=f"{header}.{payload}".encode(),
                    capture_output=True,
                    check=False,
                ).returncode
                == 0
            )
        now = self.clock()
        self.jwts.append(claims)
        return (
            ok
            and claims.get("iss") == APP_ID
            and claims["iat"] <= now
            and now < claims["exp"] <= now + JWT_MAX_AHEAD_S
        )

    def answer(self, method: str, path: str, auth: str, body: Any) -> tuple[int, Any]:
        url = urlparse(path)
        parts = url.path.strip("/").split("/")
        bearer = auth.removeprefix("Bearer ")
        if url.path == f"/app/installations/{INSTALLATION}/access_tokens" and method == "POST":
            if not self._verify_jwt(bearer):
                return 401, fixture("bad-credentials.json")
            token = f"ghs_{secrets.token_hex(18)}"
            self.tokens[token] = self.clock() + TOKEN_LIFETIME_S
            out = fixture("installation-token.json")
            out.update(token=token, expires_at=iso(self.tokens[token]))
            return 201, out
        if self.tokens.get(bearer, 0) <= self.clock():
            return 401, fixture("bad-credentials.json")
        if parts[:3] != ["repos", *REPOSITORY.split("/")]:
            return 404, {"message": "Not Found"}
        rest = parts[3:]
        query = parse_qs(url.query)
        if rest == ["actions", "runs"] and method == "GET":
            status = query.get("status", [""])[0]
            runs = [r for r in self.runs.values() if r["status"] == status]
            return 200, {"total_count": len(runs), "workflow_runs": runs}
        if len(rest) == 4 and rest[:2] == ["actions", "runs"] and rest[3] == "jobs":
            jobs = [j for j in self.jobs.values() if j["run_id"] == int(rest[2])]
            return 200, {"total_count": len(jobs), "jobs": jobs}
        if rest == ["actions", "runners", "generate-jitconfig"] and method == "POST":
            out = fixture("generate-jitconfig.json")
            runner_id = self.new_id()
            config = base64.b64encode(f"jit-{runner_id}-{body['name']}".encode()).decode()
            out["runner"].update(id=runner_id, name=body["name"])
            out["encoded_jit_config"] = config
            self.jit[runner_id] = {**body, "config": config}
            return 201, out
        if len(rest) == 3 and rest[:2] == ["actions", "runners"] and method == "DELETE":
            self.deleted.append(int(rest[2]))
            return 204, None
        return 404, {"message": "Not Found"}

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        replay = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                with replay._lock:
                    status, out = replay.answer(
                        self.command, self.path, self.headers.get("Authorization", ""), body
                    )
                    replay.requests.append((self.command, self.path, status))
                data = b"" if out is None else json.dumps(out).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _serve

            def log_message(self, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def app_key(tmp_path: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    key, pub = tmp_path / "app.pem", tmp_path / "app.pub.pem"
    subprocess.run(["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True)
    subprocess.run(
        ["openssl", "rsa", "-in", str(key), "-pubout", "-out", str(pub)],
        check=True,
        capture_output=True,
    )
    key.chmod(0o600)
    return key, pub


class BenchHost:
    """A bench host's spool, driven by the real accept-jit and wait-jit scripts."""

    def __init__(self, root: Path, name: str) -> None:
        self.name = name
        self.spool = root / name / "spool"
        self.runtime = root / name / "run"
        self.spool.mkdir(parents=True)
        self.runtime.mkdir()
        self.job: int | None = None
        self.until = 0.0
        self.ran: list[int] = []

    def deliver_command(self) -> str:
        return f"env PERFTRACK_JIT_SPOOL={self.spool} {RUNNERS / 'accept-jit'}"

    def wait(self) -> None:
        """perftrack-runner.service (re)started: wait-jit waits for a configuration."""
        (self.spool / "waiting").touch()

    def take(self) -> str | None:
        """wait-jit, once a configuration is there: hands it to the runtime directory."""
        if not (self.spool / "jitconfig").exists():
            return None
        env = {
            "PATH": "/usr/bin:/bin",
            "RUNNER_USER": str(os.getuid()),
            "PERFTRACK_JIT_SPOOL": str(self.spool),
            "PERFTRACK_JIT_DIR": str(self.runtime),
        }
        done = subprocess.run(
            [str(RUNNERS / "wait-jit")], env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        config = (self.runtime / "jitconfig").read_text()
        (self.runtime / "jitconfig").unlink()  # reset-job deletes it before the next job
        return config


def write_config(tmp: Path, api: str, key: Path, hosts: list[BenchHost]) -> Path:
    lines = [
        "[github]",
        f"api_url = {api}",
        f"repository = {REPOSITORY}",
        "default_branch = main",
        f"workflows = {','.join(TRUSTED)}",
        f"app_id = {APP_ID}",
        f"installation_id = {INSTALLATION}",
        f"private_key = {key}",
        "runner_group_id = 1",
        f"state = {tmp / 'controller-state.json'}",
    ]
    for host in hosts:
        lines += [
            f"[host:{host.name}]",
            f"labels = {','.join(CLASS_LABELS)}",
            f"deliver = {host.deliver_command()}",
        ]
    path = tmp / "controller.ini"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_replayed_app_registers_runners_for_three_weeks_unattended(app_key, tmp_path: Path):
    """21 simulated days: every trusted bench job gets one runner, minted from the App key
    when needed; no job of a pull request (fork or branch, edited or added workflow) ever
    causes a runner registration."""
    key, pub = app_key
    start = datetime(2026, 3, 1, tzinfo=UTC).timestamp()
    clock = Clock(start)
    hosts = [BenchHost(tmp_path, "bench-a"), BenchHost(tmp_path, "bench-b")]
    with GitHubReplay(clock, pub) as api:
        ctl = controller.Controller(
            controller.load_config(str(write_config(tmp_path, api.url, key, hosts))),
            clock=clock,
            log=lambda msg: None,
        )
        trusted_jobs: list[int] = []
        untrusted_jobs: list[int] = []
        for host in hosts:
            host.wait()
        step = 30 * 60
        for tick in range(int(21 * DAY / step)):
            clock.now = start + tick * step
            second_of_day = (clock.now - start) % DAY
            day = int((clock.now - start) // DAY)
            if second_of_day == 2 * 3600:  # the nightly: a plan job, then two bench shards
                trusted_jobs += api.queue_run(
                    path=".github/workflows/nightly.yml",
                    event="schedule",
                    branch="main",
                    jobs=[CLASS_LABELS, CLASS_LABELS],
                )
            if second_of_day == 14 * 3600:  # pull requests trying to reach the bench
                untrusted_jobs += api.queue_run(
                    path=".github/workflows/pr-check.yml",
                    event="pull_request",
                    branch="patch-1",
                    head_repo=FORK,
                    jobs=[CLASS_LABELS],
                )
                untrusted_jobs += api.queue_run(
                    path=".github/workflows/evil.yml",
                    event="pull_request",
                    branch="evil",
                    jobs=[["self-hosted", "mysql-bench"]],
                )
                untrusted_jobs += api.queue_run(  # dispatched on a branch, not main
                    path=".github/workflows/nightly.yml",
                    event="workflow_dispatch",
                    branch="evil",
                    jobs=[CLASS_LABELS],
                )
                if day % 3 == 0:  # a catalog PR's benchmark, from main's pr-bench.yml
                    trusted_jobs += api.queue_run(
                        path=".github/workflows/pr-bench.yml",
                        event="workflow_run",
                        branch="main",
                        jobs=[CLASS_LABELS],
                    )
            ctl.tick()
            for host in hosts:  # the hosts: take a delivered runner, run its job for 2 h
                if host.job is not None and clock.now >= host.until:
                    api.finish(host.job)
                    host.job = None
                    host.wait()
                config = host.take()
                if config is None:
                    continue
                runner_id = next(r for r, j in api.jit.items() if j["config"] == config)
                job_id = int(api.jit[runner_id]["name"].split("-")[-2])
                api.start(job_id, api.jit[runner_id]["name"])
                host.job, host.until = job_id, clock.now + 2 * 3600
                host.ran.append(job_id)

    served = sorted(j for h in hosts for j in h.ran)
    assert served == sorted(trusted_jobs), "every trusted job ran exactly once"
    assert len(trusted_jobs) == 21 * 2 + 7
    registered_for = {int(j["name"].split("-")[-2]) for j in api.jit.values()}
    assert registered_for == set(trusted_jobs)
    assert not registered_for & set(untrusted_jobs)
    assert all(api.jobs[j]["status"] == "queued" for j in untrusted_jobs)
    assert all(j["labels"] == CLASS_LABELS for j in api.jit.values())
    assert api.deleted == []
    # Tokens: minted from the key when needed (the controller polls, so about once an
    # hour, each kept until just before its expiry), never used after expiry.
    minted = ctl.tokens.minted
    assert 21 * 24 * 0.9 <= minted <= 21 * 24 + 1
    assert len(api.requests) > 2 * minted
    assert not [r for r in api.requests if r[2] == 401]
    assert len(api.jwts) == minted
    assert all(0 < c["exp"] - c["iat"] <= JWT_MAX_AHEAD_S + 60 for c in api.jwts)
    state = json.loads((tmp_path / "controller-state.json").read_text())
    assert state, "the controller keeps which jobs it served (no credential in it)"
    assert "ghs_" not in (tmp_path / "controller-state.json").read_text()


def test_replayed_revoked_token_gets_401_then_a_new_token(app_key, tmp_path: Path) -> None:
    key, pub = app_key
    clock = Clock(datetime(2026, 3, 1, tzinfo=UTC).timestamp())
    host = BenchHost(tmp_path, "bench-a")
    host.wait()
    with GitHubReplay(clock, pub) as api:
        ctl = controller.Controller(
            controller.load_config(str(write_config(tmp_path, api.url, key, [host]))),
            clock=clock,
            log=lambda msg: None,
        )
        ctl.tick()
        assert ctl.tokens.minted == 1
        api.tokens.clear()  # GitHub no longer accepts it (revoked, or clocks disagree)
        (job,) = api.queue_run(
            path=".github/workflows/nightly.yml",
            event="workflow_dispatch",
            branch="main",
            jobs=[CLASS_LABELS],
        )
        assert ctl.tick() == [(job, "bench-a")]
    assert ctl.tokens.minted == 2
    assert [r[2] for r in api.requests].count(401) == 1


def test_replayed_stored_installation_token_stops_registration_after_an_hour(
    app_key, tmp_path: Path
) -> None:
    """The finding: a stored installation token (the old runners/README advice) works for
    an hour, then generate-jitconfig answers 401 and no runner can be registered."""
    key, pub = app_key
    clock = Clock(datetime(2026, 3, 1, tzinfo=UTC).timestamp())
    with GitHubReplay(clock, pub) as api:
        minted = controller.InstallationTokens(api.url, APP_ID, INSTALLATION, str(key), clock)
        stored = minted.get()
        static = controller.Api(api.url, lambda: stored)
        body = {"name": "r", "runner_group_id": 1, "labels": CLASS_LABELS}
        path = f"/repos/{REPOSITORY}/actions/runners/generate-jitconfig"
        assert "encoded_jit_config" in static.call("POST", path, body)
        clock.now += TOKEN_LIFETIME_S + 60
        with pytest.raises(controller.Unauthorized, match="401 Bad credentials"):
            static.call("POST", path, body)
        # The App key mints a fresh one instead.
        fresh = controller.Api(api.url, minted.get)
        assert "encoded_jit_config" in fresh.call("POST", path, body)


def test_replayed_host_refusing_the_delivery_gets_the_runner_removed(app_key, tmp_path):
    key, pub = app_key
    clock = Clock(datetime(2026, 3, 1, tzinfo=UTC).timestamp())
    host = BenchHost(tmp_path, "bench-a")
    flaky = tmp_path / "flaky-host"
    flaky.write_text('#!/bin/sh\n[ "$1" = probe ] && { echo idle; exit 0; }\necho busy; exit 75\n')
    flaky.chmod(0o755)
    host.deliver_command = lambda: str(flaky)  # type: ignore[method-assign]
    with GitHubReplay(clock, pub) as api:
        ctl = controller.Controller(
            controller.load_config(str(write_config(tmp_path, api.url, key, [host]))),
            clock=clock,
            log=lambda msg: None,
        )
        api.queue_run(
            path=".github/workflows/nightly.yml",
            event="schedule",
            branch="main",
            jobs=[CLASS_LABELS],
        )
        assert ctl.tick() == []
    assert list(api.deleted) == list(api.jit)


# --- the trust rule --------------------------------------------------------------------------

POLICY = trust.Policy(REPOSITORY, "main", TRUSTED)
NIGHTLY_REF = f"{REPOSITORY}/.github/workflows/nightly.yml@refs/heads/main"


@pytest.mark.parametrize(
    ("context", "complaint"),
    [
        ({}, None),
        ({"event": "workflow_dispatch"}, None),
        (
            {
                "event": "workflow_run",
                "workflow_ref": f"{REPOSITORY}/.github/workflows/pr-bench.yml@refs/heads/main",
            },
            None,
        ),
        ({"event": "pull_request", "ref": "refs/pull/7/merge"}, "event 'pull_request'"),
        ({"event": "pull_request_target"}, "event 'pull_request_target'"),
        ({"event": "push"}, "event 'push'"),
        ({"event": "issue_comment"}, "event 'issue_comment'"),
        ({"event": "workflow_dispatch", "ref": "refs/heads/evil"}, "ref 'refs/heads/evil'"),
        ({"repository": FORK}, "repository"),
        ({"workflow_ref": f"{REPOSITORY}/.github/workflows/ci.yml@refs/heads/main"}, "workflow"),
        ({"workflow_ref": f"{FORK}/.github/workflows/nightly.yml@refs/heads/main"}, "workflow"),
        ({"workflow_ref": ""}, "workflow"),
    ],
)
def test_trust_rule(context: dict[str, str], complaint: str | None) -> None:
    full = {
        "repository": REPOSITORY,
        "event": "schedule",
        "ref": "refs/heads/main",
        "workflow_ref": NIGHTLY_REF,
        **context,
    }
    reason = POLICY.refuse(**full)
    assert (reason is None) if complaint is None else (complaint in reason), reason


def test_trust_rule_over_api_runs() -> None:
    run = fixture("workflow-run.json")
    run.update(path=".github/workflows/nightly.yml@main", event="schedule", head_branch="main")
    run["repository"]["full_name"] = run["head_repository"]["full_name"] = REPOSITORY
    assert POLICY.refuse_run(run) is None
    fork = copy.deepcopy(run)
    fork["head_repository"]["full_name"] = FORK
    assert "head repository" in POLICY.refuse_run(fork)
    assert POLICY.refuse_run({"id": 1}) == "not a workflow run object"


def _hook(tmp_path: Path, **github: str) -> subprocess.CompletedProcess[str]:
    conf = tmp_path / "runner.env"
    conf.write_text(
        f"REPO={REPOSITORY}\nDEFAULT_BRANCH=main\nTRUSTED_WORKFLOWS={','.join(TRUSTED)}\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PERFTRACK_RUNNER_ENV": str(conf), **github}
    return subprocess.run(
        [str(RUNNERS / "job-started.sh")], env=env, capture_output=True, text=True, check=False
    )


def test_job_started_hook_allows_the_nightly_and_refuses_a_pull_request(tmp_path: Path):
    base = {
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_REF": "refs/heads/main",
        "GITHUB_WORKFLOW_REF": NIGHTLY_REF,
    }
    ok = _hook(tmp_path, GITHUB_EVENT_NAME="schedule", **base)
    assert ok.returncode == 0, ok.stdout
    assert ok.stdout.startswith("perftrack runner gate: allowed")
    pr = _hook(
        tmp_path, **{**base, "GITHUB_EVENT_NAME": "pull_request", "GITHUB_REF": "refs/pull/7/merge"}
    )
    assert pr.returncode == 1
    assert pr.stdout.count("\n") == 1
    assert "refused, not running this job: event 'pull_request'" in pr.stdout
    missing = _hook(tmp_path)
    assert missing.returncode == 1


def test_hook_with_a_broken_configuration_refuses(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PERFTRACK_RUNNER_ENV": str(tmp_path / "missing.env")}
    done = subprocess.run(
        [str(RUNNERS / "job-started.sh")], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert "bad configuration" in done.stdout


# --- the host's scripts ----------------------------------------------------------------------


def _accept(spool: Path, verb: str, data: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(RUNNERS / "accept-jit"), verb],
        input=data,
        env={"PATH": "/usr/bin:/bin", "PERFTRACK_JIT_SPOOL": str(spool)},
        capture_output=True,
        check=False,
    )


def test_accept_jit_takes_one_configuration_only_while_a_runner_waits(tmp_path: Path):
    spool = tmp_path / "spool"
    spool.mkdir()
    assert _accept(spool, "probe").returncode == 75  # no runner waiting
    assert _accept(spool, "deliver", b"YWJj").returncode == 75
    (spool / "waiting").touch()
    assert _accept(spool, "probe").stdout == b"idle\n"
    assert _accept(spool, "deliver", b"not base64; rm -rf /").returncode == 2
    assert _accept(spool, "deliver", b"A" * 70000).returncode == 2
    assert not (spool / "jitconfig").exists()
    assert sorted(p.name for p in spool.iterdir()) == ["waiting"], "no temporary file left"
    assert _accept(spool, "deliver", b"YWJj\n").returncode == 0
    assert (spool / "jitconfig").stat().st_mode & 0o777 == 0o600
    assert _accept(spool, "deliver", b"ZGVm").returncode == 75  # one pending at a time
    assert _accept(spool, "rm").returncode == 2


def test_controller_bad_configuration_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "c.ini"
    bad.write_text("[github]\nrepository = not a repo\n")
    done = subprocess.run(
        [str(RUNNERS / "controller"), "--config", str(bad), "once"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: bad configuration") and done.stderr.count("\n") == 1
    usage = subprocess.run(
        [str(RUNNERS / "controller")], capture_output=True, text=True, check=False
    )
    assert usage.returncode == 2


def test_wait_jit_hands_over_only_in_a_directory_only_root_may_write(tmp_path: Path) -> None:
    """Root never sets an owner or mode through a path the runner user could replace: the
    handoff directory must be root's and not group/other-writable, else nothing is taken
    (a symlink planted there would have redirected the old chown/chmod)."""
    spool, out = tmp_path / "spool", tmp_path / "jit"
    spool.mkdir()
    (spool / "jitconfig").write_text("YWJj\n")
    victim = tmp_path / "victim"
    victim.write_text("root's file\n")
    victim.chmod(0o600)
    env = {
        "PATH": "/usr/bin:/bin",
        "RUNNER_USER": "65534",
        "PERFTRACK_JIT_SPOOL": str(spool),
        "PERFTRACK_JIT_DIR": str(out),
    }

    def wait_jit() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(RUNNERS / "wait-jit")], env=env, capture_output=True, text=True, check=False
        )

    out.mkdir()
    os.chown(out, 65534, 65534)  # the runner user's directory (the old RuntimeDirectory)
    (out / "jitconfig").symlink_to(victim)
    for bad in ("owner", "mode", "symlink"):
        if bad == "mode":
            os.chown(out, 0, 0)
            out.chmod(0o777)
        if bad == "symlink":
            (out / "jitconfig").unlink()
            out.rmdir()
            out.symlink_to(tmp_path)
        done = wait_jit()
        assert done.returncode == 1, bad
        assert (
            done.stderr
            == f"error: {out} must be a directory only root may write (reset-job makes it)\n"
        )
        assert (spool / "jitconfig").exists(), "the configuration is left in the spool"
    assert victim.stat().st_uid == 0 and victim.stat().st_mode & 0o777 == 0o600
    out.unlink()
    out.mkdir(mode=0o755)
    done = wait_jit()
    assert done.returncode == 0, done.stderr
    handed = out / "jitconfig"
    assert (handed.stat().st_uid, handed.stat().st_mode & 0o777) == (65534, 0o400)
    assert handed.read_text() == "YWJj\n" and not (spool / "jitconfig").exists()
