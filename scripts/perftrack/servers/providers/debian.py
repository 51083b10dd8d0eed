"""``debian`` provider: pinned Debian packages, extracted with ``dpkg -x``, never installed.

Each package of the entry is fetched with ``apt-get download NAME=VERSION`` into a scratch
directory of the cache, its SHA-256 is checked against the catalog before anything is
extracted, and all packages are unpacked into one tree that is then moved into the cache.
A later call finds the tree complete and touches neither apt nor the network.

Layout of the tree (bookworm ``mariadb-server-core``)::

    usr/sbin/mariadbd (mysqld -> mariadbd)     usr/bin/mariadb-install-db, my_print_defaults
    usr/share/mysql/english/errmsg.sys         usr/lib/x86_64-linux-gnu/liburing.so.2
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from perftrack.core.errors import ConfigError, FetchError
from perftrack.servers import cache
from perftrack.servers.catalog import DebianPackage, Entry
from perftrack.servers.install import Install, first_file

NAME = "debian"
APT_TIMEOUT_S = 600
DPKG_TIMEOUT_S = 300
BASEDIR = "usr"
SERVER_BINARIES = ("sbin/mariadbd", "sbin/mysqld")  # relative to the basedir
INSTALL_DB_SCRIPTS = ("bin/mariadb-install-db", "bin/mysql_install_db")
SHARE_DIR = "share/mysql"
ERRMSG_FILE = "english/errmsg.sys"  # relative to the share dir (the lc-messages dir)
LIB_DIR_GLOB = "lib/*-linux-gnu"
APT_HINT = (
    "run `apt-get update` and check that bookworm and bookworm-security are in the apt "
    "sources; a version that has left the Debian archive must be re-pinned in "
    "configs/versions.yaml"
)


def fetch(
    entry: Entry, cache_dir: Path | None = None, progress: Callable[[str], None] | None = None
) -> Install:
    """Download, verify and extract ``entry``'s packages (or reuse the cached tree)."""
    if not entry.packages:
        raise ConfigError(f"server {entry.id!r} has no 'packages' for the debian provider")
    report = progress or cache.no_progress
    root = cache.cache_dir(cache_dir)
    key = cache.entry_key(entry.id, [package.sha256 for package in entry.packages])
    tree, built = cache.ensure_tree(root, key, partial(_build, entry, report), report)
    if not built:
        report(f"using cached {entry.id} in {tree}")
    return describe(entry, tree)


def describe(entry: Entry, tree: Path) -> Install:
    """The `Install` for an extracted tree; `FetchError` if the tree lacks the server."""
    basedir = tree / BASEDIR
    share_dir = basedir / SHARE_DIR
    if not (share_dir / ERRMSG_FILE).is_file():
        raise FetchError(_broken(entry, tree, f"{BASEDIR}/{SHARE_DIR}/{ERRMSG_FILE}"))
    server = entry.server_package
    return Install(
        server_id=entry.id,
        product=entry.product,
        version=entry.version,
        provider=NAME,
        basedir=basedir,
        mysqld=_server_binary(entry, tree),
        share_dir=share_dir,
        install_db=first_file(basedir, INSTALL_DB_SCRIPTS),
        lib_dirs=tuple(sorted(p for p in basedir.glob(LIB_DIR_GLOB) if p.is_dir())),
        source_sha256=server.sha256 if server else None,
        stand_in=entry.stand_in,
        extra={"packages": " ".join(package.spec for package in entry.packages)},
    )


def _build(entry: Entry, progress: cache.Progress, tree: Path, scratch: Path) -> None:
    apt_get = cache.find_tool("apt-get", "the debian provider needs a Debian-like host with apt")
    dpkg = cache.find_tool("dpkg", "the debian provider needs dpkg (apt-get install dpkg)")
    debs = [_download(apt_get, package, scratch, progress) for package in entry.packages]
    for deb in debs:
        progress(f"extracting {deb.name}")
        cache.run_tool(
            [dpkg, "-x", str(deb), str(tree)],
            cwd=scratch,
            timeout_s=DPKG_TIMEOUT_S,
            failure_hint="the package may be damaged; fetch again",
        )
    describe(entry, tree)  # refuse to mark a tree without a server as complete


def _download(
    apt_get: str, package: DebianPackage, scratch: Path, progress: cache.Progress
) -> Path:
    """``apt-get download`` one package into its own directory; the verified ``.deb``."""
    directory = scratch / package.name
    directory.mkdir()
    progress(f"downloading {package.name} {package.version}")
    cache.run_tool(
        [apt_get, "download", package.spec],
        cwd=directory,
        timeout_s=APT_TIMEOUT_S,
        failure_hint=APT_HINT,
    )
    debs = sorted(directory.glob("*.deb"))
    if len(debs) != 1:
        raise FetchError(
            f"`apt-get download {package.spec}` left {len(debs)} .deb files instead of one"
        )
    cache.verify(debs[0], package.sha256, f"{package.name} {package.version}")
    return debs[0]


def _server_binary(entry: Entry, tree: Path) -> Path:
    found = first_file(tree / BASEDIR, SERVER_BINARIES)
    if found is None:
        looked_for = " or ".join(f"{BASEDIR}/{name}" for name in SERVER_BINARIES)
        raise FetchError(_broken(entry, tree, looked_for))
    return found


def _broken(entry: Entry, tree: Path, missing: str) -> str:
    return (
        f"{entry.id!r} has no {missing} in {tree}: check that its packages in "
        "configs/versions.yaml include the server-core package (or remove that directory "
        "if it was modified by hand)"
    )
