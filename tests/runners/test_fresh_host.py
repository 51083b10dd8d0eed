"""A fresh bench host, provisioned by runners/provision, runs a nightly shard end to end; a
hostile job before it leaves nothing that reaches the next job or the next publish.

The host is a clean Debian 12 (tests/fresh_host.py: debootstrap and provision's own
package list, built once and cached; an overlay per test). Inside it, as root, the real
`runners/provision` installs the runner, the units and the root helpers from a root-owned
checkout. What cannot exist here is stood in for, and says so: the GitHub Actions runner
(github.com is unreachable: tests/fixtures/runner/, a listener that writes its JIT
registration files and runs the job-started hook and the job's steps as the real one
does), systemd and the controller (tests/fixtures/runner/start-unit: one start of the
unit provision wrote, delivering the configuration through accept-jit), GitHub's
artifacts (the act tests' stand-in) and PyPI (a wheelhouse of requirements/ci.lock's
files: the job installs them with --require-hashes all the same). The Debian archive is
real: the shard's server is downloaded and verified by the job; so is the Docker engine
(test_docker.py's, under the host's /run/docker.sock), which the runner user reaches only
through the installed docker helper.

Two jobs run, each one start of the unit (reset-job, wait-jit, run-ephemeral):

1. a hostile one (tests/fixtures/runner/hostile-job.sh), as if a compromised dependency
   ran inside a trusted nightly job (night 1001): it tries to patch the runner's files,
   plants a "downloaded" action, run records for tomorrow's night and an earlier one (some
   signed with its own record key), a poisoned server cache entry and a git hook, leaves
   a process and a container running and tries to start containers without perftrack's
   name or with a label of its own;
2. the real bench job of .github/workflows/nightly.yml (night 2002, one shard, one
   2-second cell of MariaDB 10.11.18 from the Debian archive).

Then the records job 2 uploaded are published (`perftrack publish`, into the test's git
remote): only job 2's measurement is in the DB.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

import fresh_host
from clirun import perftrack
from fixtures.records.synthetic import make_record
from perftrack.core import record
from perftrack.servers import cache, catalog
from perftrack.store.files import nightfiles

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflows"))
from act_run import GIT_ID, git, work_repo  # the act tests' copy of the repository

from servers.providers.test_docker import _docker
from servers.providers.test_docker import dockerd as _engine  # noqa: F401  (a fixture)

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
RUNNER = REPO / "tests" / "fixtures" / "runner"
SERVER = "mariadb-10.11.18"
HOSTILE_NIGHT, BENCH_NIGHT = "1001", "2002"
REPOSITORY = "perftrack/perftrack"
TINY = {
    "name": "fresh-host",
    "description": "tests/runners/test_fresh_host.py: one short cell",
    "servers": [SERVER],
    "workloads": ["oltp_point_select"],
    "charsets": ["latin1"],
    "threads": [1],
    "repeats": 1,
    "duration_s": 2,
    "warmup_s": 0,
    "tables": 1,
    "table_size": 1000,
    "profile": "default",
    "connection": "tcp",
}
SESSION_TIMEOUT_S = 900
JOBS = ("hostile", "bench")  # tests/fixtures/runner/inside.sh starts the unit once per job
PLANTED_TPS = 987654.0  # the planted records' throughput: never in the DB


def _runner_tarball(srv: Path) -> tuple[str, dict[str, str]]:
    """The stand-in runner as a release tarball: (its sha256, member -> sha256)."""
    buf = io.BytesIO()
    digests: dict[str, str] = {}
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for rel in ("run.sh", "bin/Runner.Listener", "bin/installdependencies.sh"):
            data = (RUNNER / rel).read_bytes()
            info = tarfile.TarInfo(rel)
            info.size, info.mode = len(data), 0o755
            tf.addfile(info, io.BytesIO(data))
            digests[rel] = hashlib.sha256(data).hexdigest()
    (srv / "runner.tar.gz").write_bytes(buf.getvalue())
    return hashlib.sha256(buf.getvalue()).hexdigest(), digests


def _jit_config() -> str:
    """A JIT configuration as generate-jitconfig returns it (base64 JSON of base64 files)."""
    files = {
        ".runner": json.dumps({"agentName": "fresh-host", "poolId": 1}),
        ".credentials": json.dumps({"scheme": "OAuth", "data": {"clientId": "test"}}),
        ".credentials_rsaparams": json.dumps({"d": "test-only"}),
    }
    inner = {k: base64.b64encode(v.encode()).decode() for k, v in files.items()}
    return base64.b64encode(json.dumps(inner).encode()).decode()


def _github(run_id: str, sha: str) -> dict[str, str]:
    """What GitHub's job message says of a scheduled nightly on main (the hook's input)."""
    return {
        "repository": REPOSITORY,
        "event_name": "schedule",
        "ref": "refs/heads/main",
        "workflow_ref": f"{REPOSITORY}/.github/workflows/nightly.yml@refs/heads/main",
        "run_id": run_id,
        "run_attempt": "1",
        "sha": sha,
    }


def _planted_run(nights: Path, night: str, name: str) -> None:
    run_id = f"{'29991231' if night == BENCH_NIGHT else '20000101'}T000000Z-{name}"
    run = nights / night / "shard-0" / run_id
    (run / "records").mkdir(parents=True)
    (run / "plan.json").write_text(json.dumps({"run_id": run_id, "cells": []}))
    (run / "run.json").write_text(json.dumps({"status": "running"}))
    rec = make_record(run_id=run_id, server_id=SERVER, version="10.11.18", tps=PLANTED_TPS)
    record.write(rec, run / "records")


def _srv(tmp: Path, sha: str, image: str) -> tuple[Path, str, dict[str, str]]:
    """/srv of the host: the remote to clone, the broker's jobs, the stand-ins, the plants."""
    srv = tmp / "srv"
    for d in ("broker", "standins", "artifacts", "plant"):
        (srv / d).mkdir(parents=True)
    (srv / "artifacts").chmod(0o1777)  # the stand-ins' artifact store, written by the job
    for name in ("start-unit", "inside.sh", "hostile-job.sh"):
        shutil.copy2(RUNNER / name, srv / "standins" / name)
    shutil.copy2(REPO / "tests" / "fixtures" / "actions" / "artifacts.py", srv / "standins")
    tar_sha, members = _runner_tarball(srv)
    (srv / "broker" / "jit.b64").write_text(_jit_config() + "\n")
    entry = catalog.load().get(SERVER)
    poison = cache.entry_key(entry.id, [p.sha256 for p in entry.packages])
    planted = ((BENCH_NIGHT, "plant0"), (BENCH_NIGHT, "plant1-signed"), ("0999", "plant2"))
    for night, name in planted:
        _planted_run(srv / "plant" / "nights", night, name)
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "nightly.yml").read_text())
    jobs = {
        "hostile": {
            "github": _github(HOSTILE_NIGHT, sha),
            "script": "bash /srv/standins/hostile-job.sh",
            "env": {"POISON_KEY": poison, "SLEEP_IMAGE": "IMAGE"},
        },
        "bench": {
            "github": _github(BENCH_NIGHT, sha),
            "matrix": {"shard": 0, "runner_class": "bench-default", "runs_on": ["self-hosted"]},
            "vars": {"PERFTRACK_PREFLIGHT": "key-only"},  # this shared VM is always "noisy"
            "env": {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "/opt/wheels"},  # PyPI, stood in
            "steps": workflow["jobs"]["bench"]["steps"],
        },
    }
    jobs["hostile"]["env"]["SLEEP_IMAGE"] = image
    for name, job in jobs.items():
        (srv / "broker" / f"{name}.json").write_text(json.dumps(job))
    for path in srv.rglob("*"):
        path.chmod(path.stat().st_mode | 0o044 | (0o011 if path.is_dir() else 0))
    return srv, tar_sha, members


def _night_plan(work: Path, srv: Path) -> None:
    """The plan job's artifact (GitHub-hosted, outside the bench host)."""
    matrix = work / "fresh-host.yaml"
    matrix.write_text(yaml.safe_dump(TINY))
    out = srv / "artifacts" / "night-plan" / "night-plan.json"
    done = perftrack("plan", str(matrix), "--out", str(out), "--db", str(work / "none.duckdb"))
    assert done.returncode == 0, done.stderr
    out.parent.chmod(0o755)
    out.chmod(0o644)  # the job reads it as the runner user


def _sleep_image() -> str:
    """An image that can only sleep (the host's /usr/bin/sleep and its libc), imported
    into the test's engine: for the hostile job's container; its id."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for src, name in (
            ("/usr/bin/sleep", "bin/sleep"),
            ("/lib/x86_64-linux-gnu/libc.so.6", "lib/x86_64-linux-gnu/libc.so.6"),
            ("/lib64/ld-linux-x86-64.so.2", "lib64/ld-linux-x86-64.so.2"),
        ):
            tf.add(os.path.realpath(src), arcname=name)
    done = subprocess.run(
        ["docker", "import", "-", "local/sleep:1"], input=buf.getvalue(), capture_output=True
    )
    assert done.returncode == 0, done.stderr
    return _docker("image", "inspect", "--format", "{{.Id}}", "local/sleep:1").strip()


def _upper(tmp: Path, path: str) -> Path:
    return tmp / "upper" / path.lstrip("/")


def test_a_fresh_host_runs_a_shard_and_a_hostile_job_reaches_neither_the_next_job_nor_publish(
    tmp_path: Path,
    _engine: str,  # noqa: F811  (the fixture imported above)
) -> None:
    tree = fresh_host.rootfs_or_skip()
    image = _sleep_image()
    work, bare = work_repo(tmp_path)
    srv, tar_sha, members = _srv(tmp_path, git(work, "rev-parse", "HEAD"), image)
    git(tmp_path, "clone", "--quiet", "--bare", str(bare), str(srv / "origin.git"))
    _night_plan(work, srv)
    try:
        log = fresh_host.session(
            tree,
            tmp_path,
            srv,
            ["env", f"RUNNER_SHA256={tar_sha}", "bash", "/srv/standins/inside.sh", *JOBS],
            SESSION_TIMEOUT_S,
            docker_socket=_engine.removeprefix("unix://"),  # the engine of test_docker.py
        )
        (tmp_path / "host.log").write_text(log)
        hostile, _, bench = log.partition("=== job bench")
        # provisioning a fresh host from its checkout: packages there, runner verified
        assert "unchanged: packages docker.io sysbench" in log, log[-3000:]
        assert f"verified: /srv/runner.tar.gz sha256 {tar_sha}" in log
        assert "no systemd running here: units written, not started" in log
        # 1. the hostile job ran (its hook bound it to night 1001) and failed at each attack
        assert "=== job hostile: succeeded" in hostile, hostile[-3000:]
        for line in (
            "cannot write /opt/actions-runner/run.sh",
            "cannot write /opt/actions-runner/bin/Runner.Listener",
            "cannot create /opt/actions-runner/evil",
            "cannot move /opt/actions-runner/bin",
            "cannot rebind the record key to night 2002",
            "docker: error: perftrack docker helper refused: run needs --rm, --name perftrack-",
            "docker: error: perftrack docker helper refused: --label 'other': only",
        ):
            assert f"HOSTILE {line}" in hostile, (line, hostile[-3000:])
        assert "signed /var/lib/ghrunner/.local/state/perftrack/nights/2002" in hostile
        assert "as v1 1001" in hostile  # its own key signs only for its own night
        # 2. before the next job, nothing of it is left: processes, work dir, home, caches
        assert "killed the processes ghrunner left" in bench
        # the container it left running (named and labelled by the helper) is removed
        (left,) = re.findall(r"HOSTILE left container (perftrack-\S+) running", hostile)
        assert re.search(r"removed container [0-9a-f]{64} of ghrunner", bench), bench[:3000]
        assert left not in _docker("ps", "--all", "--format", "{{.Names}}")
        assert "home: /var/lib/ghrunner emptied but for .local/state/perftrack/nights" in bench
        # its planted runs are refused by the signature check, whatever they claim
        for run, why in (
            ("29991231T000000Z-plant0", "its plan is not signed by the job that wrote it"),
            ("29991231T000000Z-plant1-signed", "its plan is signed for night 1001, not 2002"),
            ("20000101T000000Z-plant2", "its plan is not signed by the job that wrote it"),
        ):
            assert f"refused kept run {run} of night" in bench, (run, bench[-4000:])
            assert why in bench, (run, why)
        assert "=== job bench: succeeded" in bench, bench[-6000:]
        for step in ("Install perftrack", "Run the shard", "Upload the run records"):
            assert any(
                ln.startswith("##[step] " + step) and ": success (" in ln
                for ln in bench.splitlines()
            ), (step, bench[-6000:])
        # the runner's files are the release's, its work dir holds no planted action
        for rel, digest in members.items():
            path = _upper(tmp_path, f"/opt/actions-runner/{rel}")
            assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, rel
            assert path.stat().st_uid == 0
        assert not _upper(tmp_path, "/opt/actions-runner/evil").exists()
        actions = _upper(tmp_path, "/opt/actions-runner/_work/_actions")
        assert not actions.exists() or not any(actions.rglob("action.yml"))
        for marker in ("POISONED-server-ran", "POISONED-git-hook"):
            assert not _upper(tmp_path, f"/tmp/{marker}").exists(), marker
        assert "HOSTILE planted cache entry" in hostile
        # 3. what job 2 uploaded is its own measurement, from the real server, and only that
        artifacts = srv / "artifacts"
        recs = [
            json.loads(p.read_text())
            for p in sorted((artifacts / "records-shard-0").glob("*/records/*.json"))
        ]
        assert len(recs) == 1, recs
        (rec,) = recs
        assert rec["status"] == "ok" and rec["server"]["id"] == SERVER
        assert rec["server"]["version"].startswith("10.11.18")
        assert 0 < rec["result"]["tps"] != PLANTED_TPS
        salvaged = list((artifacts / "records-salvaged-shard-0").rglob("*.json"))
        assert salvaged == [], salvaged
        # 4. the next publish (the GitHub-hosted job) ingests exactly that record
        (artifacts / "records-salvaged-shard-0").mkdir(exist_ok=True)  # as the job's mkdir -p
        done = perftrack(
            "publish", str(artifacts / "records-shard-0"), "--earlier",
            str(artifacts / "records-salvaged-shard-0"), "--remote", "origin",
            env=GIT_ID, cwd=work,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        con = nightfiles.connect(work / "data" / "results.duckdb")
        try:
            rows = con.execute("SELECT record_id, tps FROM results").fetchall()
        finally:
            con.close()
        assert rows == [(rec["record_id"], rec["result"]["tps"])]
    finally:
        fresh_host.remove(tmp_path)
