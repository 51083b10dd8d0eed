"""The server catalog, ``configs/versions.yaml``: which servers exist and where they come from.

Every entry is validated strictly when the file is loaded (`catalog_file`), so a typo is
reported once, with the file and line, instead of surfacing as a failed download in the
middle of a run. Nothing here touches the network or the cache; providers
(`perftrack.servers.providers`) turn an `Entry` (`entries`) into an installed server. The
names other modules use are re-exported here: the catalog is the one door.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from perftrack.core import paths
from perftrack.core.errors import ConfigError
from perftrack.servers.catalog_file import (
    CATALOG_FILENAME,
    DEB_NAME_RE,
    DEB_VERSION_RE,
    ID_RE,
    IMAGE_DIGEST_RE,
    MAX_KNOWN_SHOWN,
    MAX_SUGGESTIONS,
    PRODUCT_NAMES,
    PRODUCTS,
    PROVIDER_SECTIONS,
    SUGGESTION_CUTOFF,
    display,
    parse_entries,
    read_yaml,
)
from perftrack.servers.entries import (
    UNPINNED,
    UNPINNED_REASON,
    DebianChroot,
    DebianPackage,
    Entry,
    MavenArtifact,
    Tarball,
)


@dataclass(frozen=True)
class Catalog:
    """All entries of one catalog file, in file order."""

    path: Path
    entries: tuple[Entry, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(entry.id for entry in self.entries)

    def get(self, server_id: str) -> Entry:
        """The entry called ``server_id``; `ConfigError` naming the known ids otherwise."""
        for entry in self.entries:
            if entry.id == server_id:
                return entry
        raise ConfigError(self._unknown_message(server_id))

    def __contains__(self, server_id: object) -> bool:
        return server_id in self.ids

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def _unknown_message(self, server_id: str) -> str:
        close = difflib.get_close_matches(server_id, self.ids, MAX_SUGGESTIONS, SUGGESTION_CUTOFF)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        known = ", ".join(self.ids[:MAX_KNOWN_SHOWN]) or "(none)"
        if len(self.ids) > MAX_KNOWN_SHOWN:
            known += f", … ({len(self.ids) - MAX_KNOWN_SHOWN} more: `perftrack servers list`)"
        return f"unknown server {server_id!r}{hint}; known: {known} (see {display(self.path)})"


def default_path() -> Path:
    """``versions.yaml`` in the configs directory `perftrack.paths.config_dir` finds.

    That is ``$PERFTRACK_CONFIG_DIR`` when set, else the nearest ``configs/`` holding a
    ``versions.yaml`` at or above the cwd, else the checkout this package runs from; the
    same directory the matrices and profiles are read from.
    """
    return paths.config_dir() / CATALOG_FILENAME


def read_catalog(path: Path | None = None) -> Catalog:
    """Read and validate a catalog file (default: `default_path`)."""
    path = default_path() if path is None else Path(path)
    data = read_yaml(path)
    return Catalog(path=path, entries=parse_entries(data, path))


__all__ = [
    "CATALOG_FILENAME",
    "DEB_NAME_RE",
    "DEB_VERSION_RE",
    "ID_RE",
    "IMAGE_DIGEST_RE",
    "PRODUCTS",
    "PRODUCT_NAMES",
    "PROVIDER_SECTIONS",
    "UNPINNED",
    "UNPINNED_REASON",
    "Catalog",
    "DebianChroot",
    "DebianPackage",
    "Entry",
    "MavenArtifact",
    "Tarball",
    "default_path",
    "read_catalog",
]
