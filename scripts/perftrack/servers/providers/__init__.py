"""Server providers: each turns a catalog `Entry` into a ready `Install`.

One module per provider, each with
``fetch(entry, cache_dir=None, progress=None) -> Install``. Providers print nothing; long
steps are reported through ``progress`` ("downloading …", "extracting …").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from perftrack.core.errors import ConfigError
from perftrack.servers.catalog import Entry
from perftrack.servers.install import Install
from perftrack.servers.providers import debian, debian_chroot, docker, maven, path, tarball

Progress = Callable[[str], None]


class ProviderFetch(Protocol):
    """The signature every provider's ``fetch`` has."""

    def __call__(
        self, entry: Entry, cache_dir: Path | None = None, progress: Progress | None = None
    ) -> Install: ...


PROVIDERS: dict[str, ProviderFetch] = {
    debian.NAME: debian.fetch,
    debian_chroot.NAME: debian_chroot.fetch,
    docker.NAME: docker.fetch,
    maven.NAME: maven.fetch,
    path.NAME: path.fetch,
    tarball.NAME: tarball.fetch,
}


def known_providers() -> tuple[str, ...]:
    """The registered provider names, sorted."""
    return tuple(sorted(PROVIDERS))


def get_provider(name: str) -> ProviderFetch:
    """The ``fetch`` function of provider ``name``; `ConfigError` listing the known ones."""
    try:
        return PROVIDERS[name]
    except KeyError:
        raise ConfigError(
            f"unknown provider {name!r}; known: {', '.join(known_providers())}"
        ) from None


def fetch(entry: Entry, cache_dir: Path | None = None, progress: Progress | None = None) -> Install:
    """Get ``entry``'s server ready on disk with its provider (cached where possible)."""
    return get_provider(entry.provider)(entry, cache_dir=cache_dir, progress=progress)
