"""`perftrack servers pin`: record the digest or checksum of entries marked ``unpinned``.

A catalog entry whose image or archive could not be verified where it was written says so
explicitly (``digest: unpinned`` for docker, ``sha256: unpinned`` for a tarball); its
cells are skipped with that reason and its provider refuses it. On a runner that can reach
the registry or the download site, this command finds what to pin — trust on first use,
like the new-tags flow:

- docker: the Docker Hub digest of the image's tag (``hub.docker.com`` tag API, the digest
  ``docker pull`` records in RepoDigests, which the provider then checks the pulled image
  against);
- tarball: the sha256 of the downloaded archive (official URL pattern, or the entry's url).

With ``--write`` each marker is replaced in the file as text (every comment survives), the
result must load as a valid catalog whose entries are unchanged except for the pins, and
replaces the file atomically; the new-tags workflow then proposes it as a pull request
(scripts/new-tags-pr.sh). An entry that fails to pin is reported and left unpinned.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from perftrack.core import files
from perftrack.core.errors import ConfigError, PerftrackError
from perftrack.servers import catalog
from perftrack.servers.catalog import UNPINNED, Catalog, Entry

PINNABLE = ("docker", "tarball")
_ID_LINE = re.compile(r"^\s*-\s+id:\s*['\"]?([A-Za-z0-9][A-Za-z0-9_.+-]*)['\"]?\s*$")
_FLOW_ID = re.compile(r"^\s*-\s*\{\s*id:\s*['\"]?([A-Za-z0-9][A-Za-z0-9_.+-]*)['\"]?\s*,")


@dataclass(frozen=True)
class Pin:
    server_id: str
    key: str  # "digest" (docker) or "sha256" (tarball)
    value: str  # what replaces `unpinned`


@dataclass
class PinOutcome:
    pins: list[Pin]
    failed: list[tuple[str, str]]  # (server id, one-line reason)


def pending(cat: Catalog, ids: list[str], provider: str | None = None) -> list[Entry]:
    """The unpinned entries to pin: the named ones (each must exist and be unpinned), or
    every unpinned one (of ``provider``, if given)."""
    if provider is not None and provider not in PINNABLE:
        raise ConfigError(f"--provider {provider!r}: pinnable providers are {', '.join(PINNABLE)}")
    if ids:
        entries = [cat.get(i) for i in ids]
        done = [e.id for e in entries if not e.unpinned]
        if done:
            raise ConfigError(
                f"{', '.join(done)}: already pinned (or not a docker/tarball entry) in "
                f"{cat.path}; to re-pin, set the value back to '{UNPINNED}' first"
            )
        return entries
    return [e for e in cat if e.unpinned and provider in (None, e.provider)]


def resolve(entry: Entry, progress: Callable[[str], None]) -> Pin:
    """What to pin ``entry`` to, from its registry or download site."""
    if entry.provider == "docker":
        from perftrack.servers.providers import docker

        assert entry.image is not None
        progress(f"{entry.id}: asking Docker Hub for the digest of {entry.image}")
        return Pin(entry.id, "digest", docker.hub_digest(entry.image))
    if entry.provider == "tarball":
        from perftrack.servers.providers import tarball

        with tempfile.TemporaryDirectory(prefix="perftrack-pin-") as scratch:
            archive = tarball.download(
                entry, tarball.candidate_urls(entry), Path(scratch), progress
            )
            return Pin(entry.id, "sha256", files.sha256_file(archive))
    raise ConfigError(f"{entry.id}: provider {entry.provider} has nothing to pin")


def pin_all(entries: list[Entry], progress: Callable[[str], None]) -> PinOutcome:
    """Resolve every entry; one failing (network, missing tag) does not stop the others."""
    outcome = PinOutcome([], [])
    for entry in entries:
        try:
            outcome.pins.append(resolve(entry, progress))
        except PerftrackError as err:
            outcome.failed.append((entry.id, str(err)))
    return outcome


def write(path: Path, pins: list[Pin]) -> None:
    """Replace each pinned entry's ``unpinned`` marker in ``path``; atomic, validated."""
    if not pins:
        return
    old = catalog.read_catalog(path)
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    for p in pins:
        lines = _replace_marker(lines, p, path)
    files.replace_text(path, "".join(lines), check=lambda tmp: _verify(tmp, old, pins, path))


def _replace_marker(lines: list[str], pin: Pin, path: Path) -> list[str]:
    start = next((i for i, line in enumerate(lines) if _entry_id(line) == pin.server_id), None)
    if start is None:
        raise ConfigError(
            f"{path}: cannot find the entry {pin.server_id!r} as text; nothing written"
        )
    end = next(
        (i for i in range(start + 1, len(lines)) if _entry_id(lines[i]) is not None), len(lines)
    )
    marker = re.compile(rf"(\b{pin.key}:\s*)['\"]?{UNPINNED}['\"]?")
    value = f'"{pin.value}"' if pin.key == "digest" else pin.value
    for i in range(start, end):
        new, n = marker.subn(lambda m: m.group(1) + value, lines[i], count=1)
        if n:
            return [*lines[:i], new, *lines[i + 1 :]]
    raise ConfigError(
        f"{path}: entry {pin.server_id!r} has no '{pin.key}: {UNPINNED}' line; nothing written"
    )


def _entry_id(line: str) -> str | None:
    m = _ID_LINE.match(line) or _FLOW_ID.match(line)
    return m.group(1) if m else None


def _verify(tmp: Path, old: Catalog, pins: list[Pin], path: Path) -> None:
    try:
        new = catalog.read_catalog(tmp)
    except ConfigError as err:
        raise ConfigError(f"pinning would make {path} invalid ({err}); nothing written") from None
    by_id = {p.server_id: p for p in pins}
    expected = []
    for e in old.entries:
        p = by_id.get(e.id)
        if p is None:
            expected.append(e)
        elif p.key == "digest":
            expected.append(replace(e, digest=p.value, unpinned=False))
        else:
            assert e.tarball is not None
            expected.append(replace(e, tarball=replace(e.tarball, sha256=p.value), unpinned=False))
    if list(new.entries) != expected:
        raise ConfigError(f"pinning {path} changed more than the pins; nothing written")
