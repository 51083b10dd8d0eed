"""Oracle MySQL from Debian sid for the tests: the real `mysql-sid` catalog entry, built once
into the normal perftrack cache (~1 min the first time), or a skip that says why not.

The chroot needs root, debootstrap and the Debian archive; where it cannot be built (no
network, not root) the tests that need it are skipped with the provider's own one-line
reason, never silently.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perftrack.core.errors import PerftrackError
from perftrack.servers import catalog, providers
from perftrack.servers.catalog import Entry
from perftrack.servers.install import Install

REPO = Path(__file__).resolve().parents[1]
SERVER_ID = "mysql-sid"
_built: dict[str, Install | str] = {}


def entry() -> Entry:
    return catalog.load(REPO / "configs" / "versions.yaml").get(SERVER_ID)


def install_or_skip() -> Install:
    """The sid chroot's install (built on first use, then reused), or `pytest.skip`."""
    if SERVER_ID not in _built:
        try:
            _built[SERVER_ID] = providers.fetch(entry())
        except PerftrackError as exc:
            _built[SERVER_ID] = f"cannot build the Debian sid chroot with MySQL here: {exc}"
    found = _built[SERVER_ID]
    if isinstance(found, str):
        pytest.skip(found)
    return found
