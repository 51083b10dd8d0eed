"""runners/docker-helper: the runner user's narrow way to Docker (instead of the docker group).

The calls perftrack's docker provider really makes (built by its own code) pass, each
container then runs as the calling user with no capabilities; everything that would make
the runner user root on the host (privileged containers, other mounts, other images,
capabilities, other commands) is refused with one line before Docker is called.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from perftrack.servers.providers import docker_run

REPO = Path(__file__).resolve().parents[2]
HELPER = REPO / "runners" / "docker-helper"
UID, GID = 1000, 1000
IMAGE_ID = "sha256:" + "ab" * 32


def _load() -> object:
    name = "perftrack_docker_helper"
    loader = importlib.machinery.SourceFileLoader(name, str(HELPER))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


helper = _load()


def owned_by_caller(path: str) -> os.stat_result:
    """lstat as if the runner user (uid 1000) owned every real directory here."""
    real = os.lstat(path)
    values = list(real)
    values[4] = UID  # st_uid
    return os.stat_result(values)


def plan(argv: list[str]) -> list[str]:
    return helper.plan(argv, UID, GID, owned_by_caller)  # type: ignore[attr-defined]


def server_dir(tmp_path: Path) -> str:
    d = tmp_path / "pt-server"
    d.mkdir()
    return str(d)


def test_the_providers_server_command_runs_as_the_caller_without_capabilities(tmp_path):
    d = server_dir(tmp_path)
    argv = docker_run.container_command(
        "docker",
        IMAGE_ID,
        ["/usr/sbin/mysqld", f"--defaults-file={d}/my.cnf"],
        "perftrack-7-0a1b2c3d",
    )
    out = plan(argv[1:])
    assert out[:6] == ["run", "--rm", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
    assert out[out.index("--user") + 1] == f"{UID}:{GID}"
    assert "0:0" not in out, "the provider's --user 0:0 is replaced"
    assert out.count("--user") == 1
    assert f"{d}:{d}" in out and "host" in out
    assert out[-3:] == [IMAGE_ID, f"--defaults-file={d}/my.cnf", "--user=root"]


def test_the_providers_other_calls_pass(tmp_path: Path) -> None:
    probe = ["run", "--rm", "--name", "perftrack-7-0a1b2c3d", "--network", "none"]
    probe += ["--user", "0:0", "--entrypoint", "/bin/sh"]
    assert plan([*probe, IMAGE_ID, "-c", "mysqld --verbose --help"])[-3:] == [
        IMAGE_ID,
        "-c",
        "mysqld --verbose --help",
    ]
    assert plan(["version", "--format", "{{.Server.Version}}"])
    assert plan(["image", "inspect", "mysql:8.4.3"]) == ["image", "inspect", "mysql:8.4.3"]
    assert plan(["image", "inspect", IMAGE_ID])
    assert plan(["pull", "--quiet", "percona/percona-server:8.0.39"])
    assert plan(["stop", "--time", "45", "perftrack-7-0a1b2c3d"])
    assert plan(["rm", "--force", "perftrack-7-0a1b2c3d"])
    assert plan(["ps", "--all", "--quiet", "--filter", f"label={docker_run.LABEL}"])


UNNAMED = ["run", "--rm", "--network", "host", "--entrypoint", "/usr/sbin/mysqld"]
BASE = [*UNNAMED, "--name", "perftrack-7-0a1b2c3d"]


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["run", "--privileged", *BASE[1:], IMAGE_ID], "--privileged: not allowed"),
        ([*BASE, "--volume", "/:/host", IMAGE_ID], "mounts at its own path only"),
        ([*BASE, "--volume", "/etc:/etc", IMAGE_ID], None),  # checked below: not owned
        ([*BASE, "--cap-add", "SYS_ADMIN", IMAGE_ID], "--cap-add: not allowed"),
        ([*BASE, "--pid", "host", IMAGE_ID], "--pid: not allowed"),
        ([*BASE, "--group-add", "docker", IMAGE_ID], "--group-add: not allowed"),
        ([*BASE, "--security-opt", "seccomp=unconfined", IMAGE_ID], "not allowed"),
        ([*BASE, "-v", "/:/host", IMAGE_ID], "the image must be an image id"),
        (["run", "--rm", "--network", "bridge", "--entrypoint", "/x", IMAGE_ID], "host or none"),
        ([*BASE, "mysql:8.4.3"], "the image must be an image id"),
        ([*UNNAMED, "--name", "evil", IMAGE_ID], "not a perftrack container name"),
        # an unnamed container would escape the sweep (it removes perftrack-… names only)
        ([*UNNAMED, IMAGE_ID], "run needs --rm, --name perftrack-…"),
        ([*BASE, "--label", "other=1", IMAGE_ID], "only io.perftrack.server-dir"),
        (["run", "--network", "host", "--entrypoint", "/x", IMAGE_ID], "run needs --rm"),
        ([*BASE, "--entrypoint", "../x", IMAGE_ID], "given twice"),
        (["exec", "perftrack-7-0a1b2c3d", "sh"], "not one of perftrack's calls"),
        (["build", "."], "not one of perftrack's calls"),
        (["stop", "--time", "1", "mysql-prod"], "only perftrack's containers"),
        (["rm", "--force", "--volumes", "x"], "not one of perftrack's calls"),
        (["ps", "--filter", "name=x"], "only label=io.perftrack"),
        (["pull", "--quiet", "mysql:8.4;id"], "not an image reference"),
        (["version"], "not one of perftrack's calls"),
        ([], "not one of perftrack's calls"),
    ],
)
def test_refused(argv: list[str], complaint: str | None) -> None:
    with pytest.raises(helper.Refused) as info:  # type: ignore[attr-defined]
        helper.plan(argv, UID, GID)  # type: ignore[attr-defined]  # the real lstat
    if complaint:
        assert complaint in str(info.value)


def test_mounts_only_real_directories_of_the_caller(tmp_path: Path) -> None:
    d = server_dir(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(d)
    for source, complaint in (
        (str(link), "goes through a symlink"),
        (str(tmp_path / "nosuch"), "no such directory"),
        ("/etc", "not a directory owned by the calling user"),
        (f"{d}/../pt-server", "not a plain absolute path"),
    ):
        with pytest.raises(helper.Refused, match=complaint):  # type: ignore[attr-defined]
            helper.plan([*BASE, "--volume", f"{source}:{source}", IMAGE_ID], UID, GID)  # type: ignore[attr-defined]
    with pytest.raises(helper.Refused, match="must name the mounted directory"):  # type: ignore[attr-defined]
        plan([*BASE, "--volume", f"{d}:{d}", "--label", f"{docker_run.LABEL}=/tmp", IMAGE_ID])


def test_not_for_root_and_only_through_sudo() -> None:
    with pytest.raises(helper.Refused, match="not for root"):  # type: ignore[attr-defined]
        helper.plan(["version", "--format", "x"], 0, 0)  # type: ignore[attr-defined]
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, str(HELPER), "version", "--format", "x"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "run through sudo" in done.stderr
    done = subprocess.run(
        [sys.executable, str(HELPER), "run", "--privileged", IMAGE_ID],
        env={**env, "SUDO_UID": "1000", "SUDO_GID": "1000"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: perftrack docker helper refused:")
    assert done.stderr.count("\n") == 1
