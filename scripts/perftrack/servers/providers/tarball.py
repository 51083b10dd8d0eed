"""``tarball`` provider: official generic Linux tarballs, checksum verified, extracted once.

The entry's ``tarball.url`` is downloaded, or, without one, the official URL for the
version (file name from the version rules, `rules.Rule.tarball_file`):

- current releases: ``https://dev.mysql.com/get/Downloads/MySQL-8.4/mysql-8.4.3-linux-glibc2.28-x86_64.tar.xz``
- archived ones:    ``https://downloads.mysql.com/archives/get/p/23/file/mysql-8.4.3-linux-glibc2.28-x86_64.tar.xz``

tried in that order (a 404 moves to the next). ``$PERFTRACK_TARBALL_MIRROR`` replaces both
hosts with one base URL serving the same paths (a runner's local mirror; the tests' local
HTTP server). A redirect is followed only to the origin asked first or, over https, to one
of MySQL's download hosts (dev.mysql.com redirects to cdn.mysql.com); any other hop is
refused with one line before it is requested. The download must match ``tarball.sha256``
before anything is extracted; an entry without a checksum is refused (fill it in on a
machine that can download the file).
Extraction refuses members that would land outside the tree (`cache.safe_extract_tar`)
and happens in the cache's staging directory: a failure leaves nothing behind.

Layout (MySQL 8.0+)::

    mysql-8.4.3-linux-glibc2.28-x86_64/bin/mysqld     share/english/errmsg.sys
                                       lib/private/   lib/plugin/
"""

from __future__ import annotations

import errno
import http.client
import os
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from functools import partial
from pathlib import Path

from perftrack.core.errors import ConfigError, FetchError
from perftrack.servers import cache, rules
from perftrack.servers.catalog import Entry
from perftrack.servers.entries import TARBALL_HOSTS
from perftrack.servers.install import Install, first_file
from perftrack.servers.providers.path import (
    ERRMSG_FILE,
    INSTALL_DB_SCRIPTS,
    LIB_DIRS,
    SERVER_BINARIES,
)

NAME = "tarball"
ENV_MIRROR = "PERFTRACK_TARBALL_MIRROR"
CURRENT_URL = "https://dev.mysql.com/get/Downloads/MySQL-{series}/{file}"
ARCHIVE_URL = "https://downloads.mysql.com/archives/get/p/23/file/{file}"
# The same paths under a mirror's base URL.
MIRROR_PATHS = ("/get/Downloads/MySQL-{series}/{file}", "/archives/get/p/23/file/{file}")
CONNECT_TIMEOUT_S = 60  # per socket operation; a stalled mirror fails instead of hanging
CHUNK_BYTES = 1 << 20
# The largest official generic tarball (8.0 with debug binaries and tests) is ~1.3 GB:
# anything beyond this is not a server tarball.
MAX_DOWNLOAD_BYTES = 4 << 30
PROGRESS_EVERY_BYTES = 100 << 20
HTTP_NOT_FOUND = 404
SHARE_DIRS = ("share", "share/mysql")  # the first holding english/errmsg.sys
VERSION_TIMEOUT_S = 60
VERSION_RE = re.compile(r"\bVer (\d+\.\d+\.\d+)")
USER_AGENT = "perftrack-tarball-provider"


def fetch(
    entry: Entry, cache_dir: Path | None = None, progress: Callable[[str], None] | None = None
) -> Install:
    """Download, verify and extract ``entry``'s tarball (or reuse the cached tree)."""
    sha256 = _checked_sha256(entry)
    urls = candidate_urls(entry)
    report = progress or cache.no_progress
    root = cache.cache_dir(cache_dir)
    key = cache.entry_key(entry.id, [sha256])
    tree, built = cache.ensure_tree(root, key, partial(_build, entry, urls, report), report)
    if not built:
        report(f"using cached {entry.id} in {tree}")
    return describe(entry, tree)


def candidate_urls(entry: Entry) -> list[str]:
    """The URLs to try, in order: the entry's own, else the official current and archive."""
    assert entry.tarball is not None  # _checked_sha256
    if entry.tarball.url is not None:
        return [entry.tarball.url]
    pattern = rules.rules_for(entry.product, entry.version).tarball_file
    if pattern is None:
        raise ConfigError(
            f"server {entry.id!r}: perftrack knows no official tarball name for "
            f"{entry.product} {entry.version}; give tarball.url in configs/versions.yaml"
        )
    fields = {
        "series": ".".join(entry.version.split(".")[:2]),
        "file": pattern.format(version=entry.version),
    }
    mirror = os.environ.get(ENV_MIRROR, "").rstrip("/")
    if mirror:
        return [mirror + path.format(**fields) for path in MIRROR_PATHS]
    return [CURRENT_URL.format(**fields), ARCHIVE_URL.format(**fields)]


def describe(entry: Entry, tree: Path) -> Install:
    """The `Install` for an extracted tarball; `FetchError` if it holds no server."""
    basedir = _basedir(entry, tree)
    lib_dirs = tuple(basedir / name for name in LIB_DIRS if (basedir / name).is_dir())
    assert entry.tarball is not None
    return Install(
        server_id=entry.id,
        product=entry.product,
        version=entry.version,
        provider=NAME,
        basedir=basedir,
        mysqld=_server_binary(entry, basedir),
        share_dir=_share_dir(entry, basedir),
        install_db=first_file(basedir, INSTALL_DB_SCRIPTS),
        lib_dirs=lib_dirs,
        source_sha256=entry.tarball.sha256,
        stand_in=entry.stand_in,
        extra={"archive": (entry.tarball.url or candidate_urls(entry)[0]).rsplit("/", 1)[-1]},
    )


def _checked_sha256(entry: Entry) -> str:
    if entry.tarball is None:
        raise ConfigError(f"server {entry.id!r} has no 'tarball' for the tarball provider")
    if entry.tarball.sha256 is None:
        raise ConfigError(
            f"server {entry.id!r}: the tarball is {entry.skip_reason() or 'not yet pinned'}; "
            "perftrack never extracts an unverified download"
        )
    return entry.tarball.sha256


def _build(
    entry: Entry, urls: list[str], progress: cache.Progress, tree: Path, scratch: Path
) -> None:
    assert entry.tarball is not None and entry.tarball.sha256 is not None
    archive = download(entry, urls, scratch, progress)
    cache.verify(archive, entry.tarball.sha256, f"{entry.id} ({archive.name})")
    progress(f"extracting {archive.name}")
    cache.safe_extract_tar(archive, tree)
    archive.unlink()
    install = describe(entry, tree)  # refuse to mark a tree without a server as complete
    _check_binary_version(entry, install)


def download(entry: Entry, urls: list[str], scratch: Path, progress: cache.Progress) -> Path:
    """The first URL that exists, downloaded into ``scratch``."""
    missing: list[str] = []
    for url in urls:
        target = scratch / url.rsplit("/", 1)[-1]
        progress(f"downloading {url}")
        try:
            _copy_url(url, target, progress)
        except urllib.error.HTTPError as err:
            target.unlink(missing_ok=True)
            if err.code == HTTP_NOT_FOUND:
                missing.append(url)
                continue
            raise FetchError(f"cannot download {url}: HTTP {err.code} {err.reason}") from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
            target.unlink(missing_ok=True)
            if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
                raise  # the cache reports a full disk with its own hint
            reason = getattr(err, "reason", None) or err
            raise FetchError(
                f"cannot download {url}: {reason}; check the network, or set {ENV_MIRROR} "
                "to a mirror of dev.mysql.com / downloads.mysql.com"
            ) from None
        return target
    raise FetchError(
        f"no tarball for {entry.id} at {' or '.join(missing)} (HTTP 404): check the version "
        "in configs/versions.yaml, or give tarball.url"
    )


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


def redirect_refused(first: str, hop: str) -> str | None:
    """Why a download of ``first`` may not follow a redirect to ``hop``, or None: a hop
    stays on the origin asked first (the catalog's URL or the mirror) or goes, over https,
    to one of MySQL's download hosts (`entries.TARBALL_HOSTS`)."""
    scheme, host, port = _origin(hop)
    if (scheme, host, port) == _origin(first):
        return None
    if scheme != "https":
        return "only https redirects are followed"
    if host not in TARBALL_HOSTS or port not in (None, 443):
        return f"{host or hop!r} is not one of {', '.join(TARBALL_HOSTS)}"
    return None


class _CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """Every hop checked (`redirect_refused`) before it is requested."""

    def __init__(self, first: str) -> None:
        self.first = first

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        reason = redirect_refused(self.first, newurl)
        if reason:
            raise FetchError(
                f"refusing the redirect of {req.full_url} to {newurl[:200]}: {reason}; "
                "nothing was downloaded from it"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _copy_url(url: str, target: Path, progress: cache.Progress) -> None:
    if not url.startswith(("https://", "http://")):
        raise FetchError(f"refusing to download {url!r}: only http(s) URLs")
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    opener = urllib.request.build_opener(_CheckedRedirects(url))
    copied = 0
    next_report = PROGRESS_EVERY_BYTES
    with (
        opener.open(request, timeout=CONNECT_TIMEOUT_S) as response,
        open(target, "wb") as sink,
    ):
        while chunk := response.read(CHUNK_BYTES):
            copied += len(chunk)
            if copied > MAX_DOWNLOAD_BYTES:
                raise FetchError(
                    f"{url} is larger than {MAX_DOWNLOAD_BYTES >> 30} GiB: not a server "
                    "tarball; check the URL"
                )
            sink.write(chunk)
            if copied >= next_report:
                progress(f"downloaded {copied >> 20} MiB of {target.name}")
                next_report += PROGRESS_EVERY_BYTES


def _basedir(entry: Entry, tree: Path) -> Path:
    """The tarball's one top-level directory (official tarballs have exactly one)."""
    tops = [p for p in tree.iterdir() if p.name != cache.COMPLETE_MARKER]
    if len(tops) != 1 or not tops[0].is_dir():
        names = ", ".join(sorted(p.name for p in tops)[:5]) or "nothing"
        raise FetchError(
            f"{entry.id}: the tarball should hold one top-level directory, it holds {names}"
        )
    return tops[0]


def _server_binary(entry: Entry, basedir: Path) -> Path:
    found = first_file(basedir, SERVER_BINARIES)
    if found is None:
        raise FetchError(
            f"{entry.id}: the tarball has no server binary ({', '.join(SERVER_BINARIES)}) "
            f"under {basedir.name}/: is the URL a server tarball?"
        )
    return found


def _share_dir(entry: Entry, basedir: Path) -> Path:
    for name in SHARE_DIRS:
        if (basedir / name / ERRMSG_FILE).is_file():
            return basedir / name
    raise FetchError(
        f"{entry.id}: the tarball has no error messages ({ERRMSG_FILE} under "
        f"{' or '.join(SHARE_DIRS)})"
    )


def _check_binary_version(entry: Entry, install: Install) -> None:
    """The extracted mysqld must report the catalog's version (catches a wrong URL)."""
    mysqld = install.mysqld
    if not os.access(mysqld, os.X_OK):
        raise FetchError(f"{entry.id}: {mysqld.name} in the tarball is not executable")
    try:
        done = subprocess.run(
            [str(mysqld), "--version"],
            env=install.env(),
            capture_output=True,
            text=True,
            errors="replace",
            timeout=VERSION_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchError(f"{entry.id}: cannot run {mysqld.name} --version: {exc}") from None
    m = VERSION_RE.search(done.stdout)
    if done.returncode != 0 or not m:
        reason = (done.stderr.strip().splitlines() or ["no version in its output"])[-1]
        raise FetchError(f"{entry.id}: {mysqld.name} --version failed: {reason}")
    if m.group(1) != entry.version and not m.group(1).startswith(entry.version + "."):
        raise FetchError(
            f"{entry.id}: the tarball's {mysqld.name} is version {m.group(1)}, not "
            f"{entry.version}: fix the URL or the version in configs/versions.yaml"
        )
