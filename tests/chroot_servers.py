"""Servers from newer Debian suites for the tests: the real `mysql-9.7.4` (sid) and
`mariadb-11.8.9` (trixie) catalog entries, each built once into the normal perftrack cache
(~35 s the first time), or a skip that says why not.

A chroot needs root, debootstrap and the Debian archive; where it cannot be built (no
network, not root) the tests that need it are skipped with the provider's own one-line
reason, never silently. So is a suite that moved on past a pinned version (the reason then
says to pin the new version as a new entry): that is the archive's state, not the code's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perftrack.core.errors import PerftrackError
from perftrack.servers import catalog, providers
from perftrack.servers.catalog import Entry
from perftrack.servers.install import Install
from perftrack.servers.providers import debian_chroot

REPO = Path(__file__).resolve().parents[1]
MYSQL = "mysql-9.7.4"
MARIADB = "mariadb-11.8.9"
_built: dict[str, Install | str] = {}


def entry(server_id: str = MYSQL) -> Entry:
    return catalog.read_catalog(REPO / "configs" / "versions.yaml").get(server_id)


def tree(install: Install) -> Path:
    """The chroot an install of the debian-chroot provider runs from."""
    return Path(install.extra["chroot"])


def install_or_skip(server_id: str = MYSQL) -> Install:
    """The chroot's install (built on first use, then reused), or `pytest.skip`."""
    if server_id not in _built:
        try:
            _built[server_id] = providers.fetch(entry(server_id))
        except PerftrackError as exc:
            suite = entry(server_id).chroot
            where = f"Debian {suite.suite}" if suite else debian_chroot.NAME
            _built[server_id] = f"cannot build the {where} chroot of {server_id} here: {exc}"
    found = _built[server_id]
    if isinstance(found, str):
        pytest.skip(found)
    return found
