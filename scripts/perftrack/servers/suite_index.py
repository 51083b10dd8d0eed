"""A Debian suite's package index, read with the host's own apt in private directories.

The ``debian-chroot`` provider builds trees from suites the host does not use (sid,
trixie on a bookworm host). Before it spends a minute on debootstrap it asks the suite's
index, with ``apt-get`` given a configuration of its own (``APT_CONFIG``: a source list,
state and cache under the build's scratch directory; none of the host's apt sources,
settings or hooks, as debootstrap uses none of them), whether each pinned
``NAME=VERSION`` is still there, downloads it with ``apt-get download`` (apt checks it
against the signed index) and checks its SHA-256 against the catalog's pin. The index is
verified with the Debian archive keyring, as debootstrap verifies it.

A suite that moved on (sid replaces a version with the next one; a stable suite drops one
at a point release) is one `FetchError` line: the version the entry holds, what the suite
has now and what to do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from perftrack.core.errors import FetchError
from perftrack.servers import cache
from perftrack.servers.entries import DebianPackage

KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
UPDATE_TIMEOUT_S = 600  # ~3 s here (the suite's main Packages index, ~15 MB)
QUERY_TIMEOUT_S = 120  # apt-cache reads the local lists: well under a second
DOWNLOAD_TIMEOUT_S = 600  # a server .deb is 8-30 MB
CONFIG_FILE = "apt.conf"  # APT_CONFIG: read before anything else
MADISON_RE = re.compile(r"^\s*(\S+)\s*\|\s*(\S+)\s*\|", re.MULTILINE)


@dataclass(frozen=True)
class SuiteIndex:
    """The index of ``suite`` on ``mirror``, kept under ``directory`` (a scratch dir)."""

    suite: str
    mirror: str
    directory: Path

    def update(self) -> None:
        """Fetch the suite's index (``apt-get update`` on the private source list)."""
        apt_get = cache.find_tool("apt-get", "the debian-chroot provider needs a Debian host")
        if not KEYRING.is_file():
            raise FetchError(
                f"{KEYRING} is missing: apt-get install debian-archive-keyring (it verifies "
                f"Debian {self.suite}'s index)"
            )
        for sub in ("lists/partial", "cache/archives/partial", "debs", "parts"):
            (self.directory / sub).mkdir(parents=True, exist_ok=True)
        (self.directory / "sources.list").write_text(
            f"deb [signed-by={KEYRING}] {self.mirror} {self.suite} main\n", encoding="ascii"
        )
        (self.directory / CONFIG_FILE).write_text(self._config(), encoding="utf-8")
        cache.run_tool(
            [apt_get, *self._options(), "--error-on=any", "update"],  # else 0 on failure
            cwd=self.directory,
            timeout_s=UPDATE_TIMEOUT_S,
            env=self._env(),
            failure_hint=(
                f"check that {self.mirror} is reachable and serves Debian {self.suite} (the "
                "Debian archive is the only network access this provider needs)"
            ),
        )

    def versions(self, name: str) -> list[str]:
        """The versions of package ``name`` the suite's index has now (newest first)."""
        apt_cache = cache.find_tool("apt-cache", "the debian-chroot provider needs a Debian host")
        out = cache.run_tool(
            [apt_cache, *self._options(), "madison", name],
            cwd=self.directory,
            timeout_s=QUERY_TIMEOUT_S,
            env=self._env(),
            failure_hint="the private apt index may be damaged; fetch again",
        )
        return [m.group(2) for m in MADISON_RE.finditer(out) if m.group(1) == name]

    def download(self, package: DebianPackage, holder: str) -> Path:
        """``package``'s ``.deb``, downloaded and checked against its pinned SHA-256.

        ``holder`` (the catalog entry's id) names the entry in the error when the suite no
        longer has that version.
        """
        available = self.versions(package.name)
        if package.version not in available:
            raise FetchError(self.moved_on(package, available, holder))
        apt_get = cache.find_tool("apt-get", "the debian-chroot provider needs a Debian host")
        target = self.directory / "debs" / package.name
        target.mkdir(parents=True, exist_ok=True)
        cache.run_tool(
            [apt_get, *self._options(), "download", package.spec],
            cwd=target,
            timeout_s=DOWNLOAD_TIMEOUT_S,
            env=self._env(),
            failure_hint=f"check that {self.mirror} is reachable",
        )
        debs = sorted(target.glob("*.deb"))
        if len(debs) != 1:
            raise FetchError(
                f"`apt-get download {package.spec}` left {len(debs)} .deb files instead of one"
            )
        cache.verify(debs[0], package.sha256, f"{package.name} {package.version} ({holder})")
        return debs[0]

    def moved_on(self, package: DebianPackage, available: list[str], holder: str) -> str:
        """The one-line error for a pinned version the suite no longer has."""
        now = (
            f"{self.suite} now has {', '.join(available)}"
            if available
            else f"{self.suite} has no {package.name} now"
        )
        return (
            f"{holder!r} holds {package.name} {package.version} from Debian {self.suite}, but "
            f"{now}: the suite has moved on. Pin the new version as a new catalog entry in "
            f"configs/versions.yaml (its version and the SHA256 line of `apt-cache show "
            f"{package.name}` from {self.suite}); {package.version} itself stays on "
            "snapshot.debian.org"
        )

    def _options(self) -> list[str]:
        return ["-q"]

    def _env(self) -> dict[str, str]:
        return {"APT_CONFIG": str(self.directory / CONFIG_FILE)}

    def _config(self) -> str:
        """apt settings that confine apt to this directory: read first (``APT_CONFIG``), they
        point the host's configuration files and parts at nothing."""
        d = self.directory
        if '"' in str(d):
            raise FetchError(f"the cache directory {d} has a double quote, which apt cannot read")
        settings = {
            "Dir::Etc::Main": "/dev/null",
            "Dir::Etc::Parts": d / "parts",  # empty
            "Dir::Etc::SourceList": d / "sources.list",
            "Dir::Etc::SourceParts": d / "parts",
            "Dir::Etc::Preferences": "/dev/null",
            "Dir::Etc::PreferencesParts": d / "parts",
            "Dir::State::Lists": d / "lists",
            "Dir::Cache": d / "cache",
            "Dir::State::status": "/dev/null",
            "Acquire::Languages": "none",
            "Acquire::Retries": "1",  # apt's default 3 backs off for ~7 s on a dead mirror
            # sid's and trixie's Release files carry a Valid-Until a clock may be past
            "Acquire::Check-Valid-Until": "false",
            "APT::Sandbox::User": "root",  # the scratch dir is root's; _apt cannot write it
        }
        return "".join(f'{key} "{value}";\n' for key, value in settings.items())
