"""A fresh Debian 12 bench host for the tests: built once into the normal perftrack cache
(like tests/mysql_sid.py's sid chroot), then used through an overlay per test, so a test
changes nothing in it.

The tree is what a freshly installed machine has after the package step of
runners/provision: ``debootstrap --variant=minbase bookworm`` and ``apt-get install`` of
provision's own ``PACKAGES`` list (read from the script, so the key changes with it). It
also holds ``/opt/wheels``: the files of requirements/ci.lock, downloaded from PyPI with
their hashes checked, standing in for PyPI inside the host (a bench job installs them
with ``--require-hashes`` all the same). ~60 s and ~800 MB the first time; where it
cannot be built (no root, no debootstrap, no Debian mirror) the test is skipped with the
reason, never silently.

`session` runs a bash script inside that host: private mount and PID namespaces
(``unshare``), the overlay mounted, ``/proc``, ``/dev`` (with a private ``/dev/shm``) and
the test's directory on ``/srv``; when the script ends, every process of the host and
every mount goes with the namespaces. The overlay's upper directory keeps what the host
wrote, for the test to inspect.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perftrack.core.errors import FetchError, PerftrackError
from perftrack.core.files import sha256_file
from perftrack.servers import cache

REPO = Path(__file__).resolve().parents[1]
PROVISION = REPO / "runners" / "provision"
LOCK = REPO / "requirements" / "ci.lock"
SUITE, MIRROR = "bookworm", "http://deb.debian.org/debian"
KIND = "hosts"  # beside servers/ and datasets/ in the cache
WHEELS = "opt/wheels"
BUILD_TIMEOUT_S = 1800
POLICY_RC_D = "#!/bin/sh\n# tests/fresh_host.py: never start daemons while building\nexit 101\n"
_built: dict[str, Path | str] = {}


def packages() -> list[str]:
    m = re.search(r"^PACKAGES=\(([^)]*)\)$", PROVISION.read_text(), re.M)
    assert m, "PACKAGES=(…) not found in runners/provision"
    return m.group(1).split()


def _key() -> str:
    lock = sha256_file(LOCK)
    return cache.entry_key(f"fresh-{SUITE}", [SUITE, " ".join(packages()), lock, "v1"])


def _run(argv: list[str], what: str, **kw) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, **kw)
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["?"]
        raise FetchError(f"{what} failed: {tail[0]}")


def _build(tree: Path, scratch: Path) -> None:
    debootstrap = cache.find_tool("debootstrap", "apt-get install debootstrap")
    _run([debootstrap, "--variant=minbase", SUITE, str(tree), MIRROR], "debootstrap")
    (tree / "usr/sbin/policy-rc.d").write_text(POLICY_RC_D)
    (tree / "usr/sbin/policy-rc.d").chmod(0o755)
    script = (
        'set -e; mount -t proc proc "$1/proc"; trap \'umount "$1/proc"\' EXIT; '
        'chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin '
        "DEBIAN_FRONTEND=noninteractive "
        'sh -c \'apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@" '
        '&& apt-get clean\' sh "${@:2}"'
    )
    _run(
        ["unshare", "--mount", "--pid", "--fork", "--kill-child", "bash", "-c", script, "bash",
         str(tree), *packages()],
        "apt-get install of provision's packages",
    )  # fmt: skip
    (tree / "usr/sbin/policy-rc.d").unlink()
    _run(
        [sys.executable, "-m", "pip", "download", "-q", "--require-hashes", "--only-binary",
         ":all:", "--no-deps", "-r", str(LOCK), "-d", str(tree / WHEELS)],
        "pip download of requirements/ci.lock",
    )  # fmt: skip


def rootfs_or_skip() -> Path:
    """The fresh host's tree (built on first use, then reused), or `pytest.skip`."""
    key = "tree"
    if key not in _built:
        try:
            if os.geteuid() != 0:
                raise FetchError("building a Debian tree needs root")
            _built[key], _ = cache.ensure_tree(cache.cache_dir(), _key(), _build, kind=KIND)
        except PerftrackError as exc:
            _built[key] = f"cannot build a fresh Debian 12 host here: {exc}"
    found = _built[key]
    if isinstance(found, str):
        pytest.skip(found)
    return found


SESSION = r"""set -euo pipefail
lower=$1 upper=$2 work=$3 srv=$4 mnt=$5 sock=$6; shift 6
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$upper,workdir=$work" "$mnt"
mount -t proc proc "$mnt/proc"
mount --bind /dev "$mnt/dev"
mount -t tmpfs -o mode=1777 tmpfs "$mnt/dev/shm"
mkdir -p "$mnt/srv"
mount --bind "$srv" "$mnt/srv"
mount --bind "$srv/origin.git" "$mnt/srv/origin.git"  # "GitHub": no job writes there
mount -o remount,bind,ro "$mnt/srv/origin.git"
if [ -n "$sock" ]; then  # the engine the docker helper talks to (/var/run -> /run)
  touch "$mnt/run/docker.sock"
  mount --bind "$sock" "$mnt/run/docker.sock"
fi
cp /etc/resolv.conf "$mnt/etc/resolv.conf"
printf '127.0.1.1 %s\n' "$(hostname)" >>"$mnt/etc/hosts"
exec chroot "$mnt" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
"""


def session(
    tree: Path, tmp: Path, srv: Path, argv: list[str], timeout_s: float, docker_socket: str = ""
) -> str:
    """Run ``argv`` (inside the host, as root) over an overlay of ``tree`` with ``srv`` on
    /srv and, if given, a Docker engine's socket as the host's /run/docker.sock; its output
    (stdout and stderr). The overlay's upper directory: ``tmp/upper``."""
    for d in ("upper", "work", "mnt"):
        (tmp / d).mkdir(exist_ok=True)
    done = subprocess.run(
        ["unshare", "--mount", "--pid", "--fork", "--kill-child", "bash", "-c", SESSION, "bash",
         str(tree), str(tmp / "upper"), str(tmp / "work"), str(srv), str(tmp / "mnt"),
         docker_socket, *argv],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout_s,
        check=False,
    )  # fmt: skip
    return done.stdout + f"\n[session exit {done.returncode}]\n"


def remove(tmp: Path) -> None:
    """The overlay's directories (root-owned files of the host's users)."""
    for d in ("upper", "work", "mnt"):
        shutil.rmtree(tmp / d, ignore_errors=True)
