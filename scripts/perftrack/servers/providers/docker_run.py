"""The docker provider's launcher: run one server command in a container, then remove it.

``python -m perftrack.servers.providers.docker_run IMAGE -- CMD [ARGS…]`` is the prefix the
docker provider puts before every command the Server lifecycle runs (the install script,
``mysqld --initialize-insecure``, ``mysqld``). It runs::

    docker run --rm --name perftrack-PID-XXXXXXXX --network host --user 0:0
        --volume DIR:DIR --entrypoint CMD IMAGE ARGS… --user=root

where DIR is the directory of the command's ``--defaults-file`` (the Server's own
directory: datadir, my.cnf, socket, logs), mounted at the same path so every path in the
generated my.cnf is valid inside the container too.

Signals: SIGTERM, SIGINT or SIGHUP → ``docker stop --time 45`` (mysqld gets SIGTERM and
shuts down cleanly, then the container is removed). The wrapper asks for SIGTERM when its
parent dies (PR_SET_PDEATHSIG, replacing the Server's SIGKILL), so a killed perftrack still
stops and removes its container; the ``docker run`` client gets SIGTERM if the wrapper is
killed, which it passes to mysqld (docker's signal proxy). Finally ``docker rm --force``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import subprocess
import sys
from types import FrameType

USAGE = "usage: python -m perftrack.servers.providers.docker_run IMAGE -- CMD [ARGS…]"
CONTAINER_PREFIX = "perftrack-"
LABEL = "io.perftrack.server-dir"  # on every container: `docker ps --filter label=…`
STOP_GRACE_S = 45  # `docker stop --time`: below the Server's own 60 s stop bound
DOCKER_TIMEOUT_S = 120  # `docker rm` / the rest of `docker stop`
EXIT_USAGE = 2
PR_SET_PDEATHSIG = 1
ALWAYS_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def set_parent_death_signal(sig: int) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent dies."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, sig)


def container_command(docker: str, image: str, command: list[str], name: str) -> list[str]:
    """The ``docker run`` argv for a server command whose first option is --defaults-file."""
    cnf = next((a.split("=", 1)[1] for a in command if a.startswith("--defaults-file=")), None)
    if cnf is None or not os.path.isabs(cnf):
        raise ValueError("the command needs an absolute --defaults-file=PATH argument")
    server_dir = os.path.dirname(cnf)
    args = list(command[1:])
    if not any(a.startswith("--user=") for a in args):
        args.append("--user=root")  # the container runs as root; mysqld must be told so
    return [
        docker,
        "run",
        "--rm",
        "--name",
        name,
        "--label",
        f"{LABEL}={server_dir}",
        "--network",
        "host",
        "--user",
        "0:0",
        "--volume",
        f"{server_dir}:{server_dir}",
        "--entrypoint",
        command[0],
        image,
        *args,
    ]


def run_container(image: str, command: list[str]) -> int:
    """Run ``command`` in a container of ``image`` until it exits; its exit status."""
    set_parent_death_signal(signal.SIGTERM)
    docker = shutil.which("docker")
    if docker is None:
        print("error: docker not found on PATH", file=sys.stderr)
        return EXIT_USAGE
    name = f"{CONTAINER_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    try:
        argv = container_command(docker, image, command, name)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        if stopping:
            return
        stopping = True
        subprocess.run(
            [docker, "stop", "--time", str(STOP_GRACE_S), name],
            capture_output=True,
            check=False,
            timeout=STOP_GRACE_S + DOCKER_TIMEOUT_S,
        )

    for sig in ALWAYS_SIGNALS:
        signal.signal(sig, stop)
    try:
        client = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            preexec_fn=lambda: set_parent_death_signal(signal.SIGTERM),
        )
        return client.wait()
    finally:
        subprocess.run(
            [docker, "rm", "--force", name],
            capture_output=True,
            check=False,
            timeout=DOCKER_TIMEOUT_S,
        )


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[1] != "--":
        print(USAGE, file=sys.stderr)
        return EXIT_USAGE
    return run_container(args[0], args[2:])


if __name__ == "__main__":
    sys.exit(main())
