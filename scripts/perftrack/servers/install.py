"""A server installation on disk: what a provider hands to the server lifecycle."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, kw_only=True)
class Install:
    """A ready basedir for one (product, version), as returned by a provider.

    ``install_db`` is the datadir-initialisation script (``mariadb-install-db`` /
    ``mysql_install_db``) when the product has one; ``None`` means the server binary
    initialises itself (``mysqld --initialize-insecure``). Which one is used is decided
    by the version rules (`perftrack.servers.rules`), not here.
    """

    server_id: str
    product: str
    version: str
    provider: str
    basedir: Path
    mysqld: Path
    share_dir: Path
    install_db: Path | None = None
    lib_dirs: tuple[Path, ...] = ()
    source_sha256: str | None = None
    stand_in: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
    # Prefix of every command run from this install (the init script and mysqld), e.g. a
    # `docker run` wrapper (docker).
    launcher: tuple[str, ...] = ()
    # [mysqld] options this install needs on every start: paths its compiled-in defaults
    # get wrong (e.g. a chroot's plugin and charset dirs). The cell's options override them.
    server_options: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        """Process environment for running this install's binaries."""
        env = dict(os.environ)
        if self.lib_dirs:
            paths = [str(p) for p in self.lib_dirs]
            if env.get("LD_LIBRARY_PATH"):
                paths.append(env["LD_LIBRARY_PATH"])
            env["LD_LIBRARY_PATH"] = os.pathsep.join(paths)
        return env


def first_file(base: Path, candidates: tuple[str, ...]) -> Path | None:
    """The first of `candidates` (paths relative to `base`) that is a file, or None."""
    for candidate in candidates:
        path = base / candidate
        if path.is_file():
            return path
    return None
