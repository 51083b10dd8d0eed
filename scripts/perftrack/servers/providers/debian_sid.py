"""``debian-sid`` provider: Oracle MySQL as Debian sid packages it, in a chroot built once.

Build (once per cache key; ~40 s of debootstrap + ~15 s of apt here, a ~700 MB tree):

1. ``debootstrap --variant=minbase SUITE TREE MIRROR``;
2. inside the tree, with a ``policy-rc.d`` that forbids starting daemons and ``/proc``
   mounted: ``apt-get update`` and ``apt-get install --no-install-recommends PACKAGE``;
3. record what was installed (``.perftrack-sid.json``: the package version, its ``.deb``
   SHA-256 from the archive's index, and the version ``mysqld --version`` reports), then
   drop the apt caches and lists.

Both steps run in private mount and PID namespaces (``unshare --mount --pid --fork
--kill-child``): the ``/proc`` and ``/sys`` they mount vanish with them and no process of
theirs outlives them, even when perftrack is killed. The tree is built in the cache's
staging directory and only a complete one is moved into place (`cache.ensure_tree`).

Run: nothing is chrooted. The chroot's own dynamic loader runs its ``mysqld`` with the
chroot's libraries (``Install.launcher``); the chroot's plugin and charset directories are
passed as options (``Install.server_options``). Datadirs, sockets and logs stay where the
Server lifecycle puts them, outside the tree.

Versions: sid moves. The catalog's ``version`` is the lowest version of the series the
plan is made for (``"9.0"`` = any MySQL 9.x); the version recorded is the one read from the
binary, and a binary of another major version is refused (the catalog must be updated).
A built chroot is reused until its cache directory is deleted (``perftrack servers list``
names the entry; ``rm -rf ~/.cache/perftrack/servers/mysql-sid-*`` gets today's sid).
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path

from perftrack.core.errors import ConfigError, FetchError
from perftrack.servers import cache, rules
from perftrack.servers.catalog import Entry
from perftrack.servers.install import Install

NAME = "debian-sid"
PRODUCT = "mysql"  # mysqld --initialize-insecure; MariaDB's install script needs a shell
DEBOOTSTRAP_TIMEOUT_S = 1800  # ~25-40 s here; a slow mirror can take minutes
APT_TIMEOUT_S = 900  # update + install ~15 s here
VERSION_TIMEOUT_S = 60  # mysqld --version: well under a second
METADATA_FILE = ".perftrack-sid.json"
PACKAGE_RECORD = ".perftrack-package"  # written inside the chroot by the install script
BASEDIR = "usr"
SERVER_BINARY = "usr/sbin/mysqld"
SHARE_DIR = "usr/share/mysql"
ERRMSG_FILE = "english/errmsg.sys"  # under the share dir
PLUGIN_DIR = "usr/lib/mysql/plugin"
CHARSETS_DIR = "usr/share/mysql/charsets"
POLICY_RC_D = "usr/sbin/policy-rc.d"
# exit status 101 = "action forbidden" (Debian policy's invoke-rc.d interface)
POLICY_RC_D_TEXT = "#!/bin/sh\n# perftrack: never start daemons in this chroot\nexit 101\n"
# The dynamic loader and multiarch library directory per machine (Debian's multiarch tuples).
LOADERS = {
    "x86_64": ("lib64/ld-linux-x86-64.so.2", "usr/lib/x86_64-linux-gnu"),
    "aarch64": ("lib/ld-linux-aarch64.so.1", "usr/lib/aarch64-linux-gnu"),
}
NAMESPACE_ARGS = ("--mount", "--pid", "--fork", "--kill-child")  # for unshare
# Runs inside the chroot as `sh -c SCRIPT sh PACKAGE`: the package name is an argument,
# never part of the script text.
INSTALL_SCRIPT = f"""set -e
export DEBIAN_FRONTEND=noninteractive LC_ALL=C
apt-get update -qq -o Acquire::Check-Valid-Until=false
apt-get install -y -qq --no-install-recommends "$1"
apt-cache show --no-all-versions "$1" > /{PACKAGE_RECORD}
apt-get clean
rm -rf /var/lib/apt/lists/*
"""
VERSION_RE = re.compile(r"\bVer (\d+\.\d+\.\d+)")
SHA256_FIELD_RE = re.compile(r"^SHA256: ([0-9a-f]{64})$", re.MULTILINE)
VERSION_FIELD_RE = re.compile(r"^Version: (\S+)$", re.MULTILINE)
MIRROR_HINT = (
    "check that {mirror} is reachable (the Debian archive is the only network access "
    "perftrack needs), or use another provider for MySQL (docker, tarball)"
)


def fetch(
    entry: Entry, cache_dir: Path | None = None, progress: Callable[[str], None] | None = None
) -> Install:
    """Build the chroot for ``entry`` (or reuse the cached one) and describe its server."""
    _check_entry(entry)
    report = progress or cache.no_progress
    chroot = entry.chroot
    assert chroot is not None  # _check_entry
    root = cache.cache_dir(cache_dir)
    key = cache.entry_key(entry.id, [chroot.suite, chroot.package, chroot.mirror])
    tree, built = cache.ensure_tree(root, key, partial(_build, entry, report), report)
    if not built:
        report(f"using cached {entry.id} in {tree}")
    return describe(entry, tree)


def describe(entry: Entry, tree: Path) -> Install:
    """The `Install` for a built chroot; `FetchError` if the tree is not one."""
    loader, _ = _loader()
    share_dir = tree / SHARE_DIR
    for relative in (SERVER_BINARY, f"{SHARE_DIR}/{ERRMSG_FILE}", loader, METADATA_FILE):
        if not (tree / relative).is_file():
            raise FetchError(
                f"{entry.id!r}: the chroot {tree} has no {relative}; delete that directory "
                "and fetch again"
            )
    try:
        meta = json.loads((tree / METADATA_FILE).read_text(encoding="utf-8"))
        version = str(meta["mysqld_version"])
        rules.parse_version(version)
    except (ValueError, KeyError, TypeError, ConfigError):
        raise FetchError(
            f"{entry.id!r}: {tree / METADATA_FILE} is damaged; delete {tree} and fetch again"
        ) from None
    _check_series(entry, version)
    return Install(
        server_id=entry.id,
        product=entry.product,
        version=version,
        provider=NAME,
        basedir=tree / BASEDIR,
        mysqld=tree / SERVER_BINARY,
        share_dir=share_dir,
        install_db=None,
        lib_dirs=(),
        source_sha256=meta.get("deb_sha256"),
        stand_in=entry.stand_in,
        extra={
            "package": f"{meta.get('package')}={meta.get('package_version')}",
            "suite": str(meta.get("suite")),
        },
        launcher=launcher(tree),
        server_options={
            "plugin-dir": str(tree / PLUGIN_DIR),
            "character-sets-dir": str(tree / CHARSETS_DIR),
        },
    )


def launcher(tree: Path) -> tuple[str, ...]:
    """The chroot's dynamic loader with the chroot's libraries: run a chroot binary as-is."""
    loader, libdir = _loader()
    return (str(tree / loader), "--library-path", str(tree / libdir))


def binary_version(tree: Path, binary: Path) -> tuple[str, str]:
    """(MAJOR.MINOR.PATCH, the whole first line) of ``binary --version`` run from ``tree``."""
    argv = [*launcher(tree), str(binary), "--version"]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=VERSION_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchError(f"cannot run {binary.name} --version from the chroot: {exc}") from None
    line = (done.stdout.strip().splitlines() or [""])[0]
    m = VERSION_RE.search(line)
    if done.returncode != 0 or not m:
        reason = (done.stderr.strip().splitlines() or [line or "no output"])[-1]
        raise FetchError(f"{binary.name} from the chroot does not run: {reason}")
    return m.group(1), f"{binary.name} {line[m.start() :]}"  # without the build's path


def _check_entry(entry: Entry) -> None:
    if entry.chroot is None:
        raise ConfigError(f"server {entry.id!r} has no 'chroot' for the debian-sid provider")
    if entry.product != PRODUCT:
        raise ConfigError(
            f"server {entry.id!r}: the debian-sid provider runs Oracle MySQL only (product "
            f"mysql, not {entry.product}); use the debian or maven provider for MariaDB"
        )


def _check_series(entry: Entry, version: str) -> None:
    """The binary must be of the catalog's major version and not older than it."""
    found, wanted = rules.parse_version(version), rules.parse_version(entry.version)
    if found[0] != wanted[0] or found < wanted:
        raise ConfigError(
            f"{entry.id!r}: the chroot has MySQL {version}, but configs/versions.yaml "
            f"expects {entry.version} or a later {wanted[0]}.x: update the entry's version "
            "(the plan's version rules depend on it)"
        )


def _loader() -> tuple[str, str]:
    machine = platform.machine()
    if machine not in LOADERS:
        raise FetchError(
            f"the debian-sid provider knows the dynamic loader of {', '.join(LOADERS)}, "
            f"not {machine}"
        )
    return LOADERS[machine]


def _build(entry: Entry, progress: cache.Progress, tree: Path, scratch: Path) -> None:
    chroot = entry.chroot
    assert chroot is not None
    if os.geteuid() != 0:
        raise FetchError(
            "building the sid chroot needs root (debootstrap, chroot, mount namespaces); "
            "run perftrack as root or use the docker or tarball provider"
        )
    debootstrap = cache.find_tool(
        "debootstrap", "apt-get install debootstrap (scripts/setup-system.sh installs it)"
    )
    unshare = cache.find_tool("unshare", "apt-get install util-linux")
    chroot_bin = cache.find_tool("chroot", "apt-get install coreutils")
    hint = MIRROR_HINT.format(mirror=chroot.mirror)
    progress(f"building a Debian {chroot.suite} chroot for {entry.id} (debootstrap, ~1 min)")
    bootstrap = [debootstrap, "--variant=minbase", chroot.suite, str(tree), chroot.mirror]
    cache.run_tool(
        [unshare, *NAMESPACE_ARGS, *bootstrap],
        cwd=scratch,
        timeout_s=DEBOOTSTRAP_TIMEOUT_S,
        failure_hint=hint,
    )
    policy = tree / POLICY_RC_D
    policy.write_text(POLICY_RC_D_TEXT, encoding="ascii")
    policy.chmod(0o755)
    progress(f"installing {chroot.package} in the {chroot.suite} chroot")
    install = [chroot_bin, str(tree), "/bin/sh", "-c", INSTALL_SCRIPT, "sh", chroot.package]
    cache.run_tool(
        [unshare, *NAMESPACE_ARGS, f"--mount-proc={tree / 'proc'}", *install],
        cwd=scratch,
        timeout_s=APT_TIMEOUT_S,
        failure_hint=hint,
    )
    _write_metadata(entry, tree)
    describe(entry, tree)  # refuse to mark a tree without a runnable server as complete


def _write_metadata(entry: Entry, tree: Path) -> None:
    chroot = entry.chroot
    assert chroot is not None
    record_path = tree / PACKAGE_RECORD
    record = record_path.read_text(encoding="utf-8", errors="replace")
    record_path.unlink()
    sha = SHA256_FIELD_RE.search(record)
    deb_version = VERSION_FIELD_RE.search(record)
    if not (tree / SERVER_BINARY).is_file():
        raise FetchError(
            f"{chroot.package} installed no {SERVER_BINARY} in the chroot: name the package "
            "holding mysqld in the entry's chroot.package (mysql-server-core)"
        )
    version, line = binary_version(tree, tree / SERVER_BINARY)
    meta = {
        "package": chroot.package,
        "package_version": deb_version.group(1) if deb_version else "unknown",
        "deb_sha256": sha.group(1) if sha else None,
        "mysqld_version": version,
        "version_line": line,
        "suite": chroot.suite,
        "mirror": chroot.mirror,
    }
    (tree / METADATA_FILE).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
