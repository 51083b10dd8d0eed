"""`perftrack tags check`: new MySQL releases from Docker Hub and GitHub into the catalog.

Two independent sources must agree before a version is added: a release tag ``X.Y.Z`` of
the official Docker Hub image (``library/mysql``, which the docker provider runs) and a
release tag ``mysql-X.Y.Z`` of the MySQL server repository on GitHub. Every tag is
hostile input: anything that is not exactly a release tag or a known alias form (``8.4``,
``lts``, ``8.4.3-oracle``, ``mysql-cluster-8.4.3``) is refused with a reason, and a
version that is added passes the catalog's own validation before the file is replaced.

Which versions are new: the catalog's docker ``mysql`` entries name the tracked series
(MAJOR.MINOR); a release newer than the newest catalogued one of its series, or of a
series newer than every tracked one, is new. Older releases are never back-filled.

``--write`` appends one entry per new version after the catalog's last entry as text, so
every comment of the file survives: image ``mysql:X.Y.Z`` pinned by the Docker Hub tag's
digest (the entry's ``digest``, which the docker provider checks against the pulled
image's RepoDigests). The result is re-loaded with `perftrack.catalog.load` and must hold
the old entries unchanged plus the new ones, then replaces the file atomically (nothing
half-written on any error).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from perftrack.core import files
from perftrack.core.errors import ConfigError, FetchError
from perftrack.servers import catalog, rules
from perftrack.servers.providers import docker

DOCKER_REPOSITORY = "mysql"  # library/mysql
PRODUCT = "mysql"
PROVIDER = "docker"
ENV_GITHUB_API_URL = "PERFTRACK_GITHUB_API_URL"
GITHUB_API_URL = "https://api.github.com"
GITHUB_REPOSITORY = "mysql/mysql-server"
GITHUB_TAGS_PATH = "/repos/{repository}/tags"
GITHUB_PAGE_SIZE = 100
GITHUB_MAX_PAGES = 50  # mysql-server has several hundred tags
GITHUB_TIMEOUT_S = 30
MAX_NEW_PER_RUN = 10  # a flood of "new releases" is a broken or hostile source, not news
MAX_TAG_CHARS = 128  # Docker's own limit for a tag
MAX_SHOWN_CHARS = 60

# A release: three ASCII-digit parts, no leading zeros, at most 4 digits each.
_PART = r"(?:0|[1-9][0-9]{0,3})"
RELEASE_RE = re.compile(rf"^({_PART}\.{_PART}\.{_PART})\Z")
GITHUB_RELEASE_RE = re.compile(rf"^mysql-({_PART}\.{_PART}\.{_PART})\Z")
# Looks like a three-part version but is not a valid one (leading zero, too many digits).
VERSIONISH_RE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+\Z")
# Alias forms on Docker Hub: words (latest, lts, innovation, oraclelinux9), partial
# versions (8, 8.4) and variants of a version (8.4-oracle, 8.0.40-debian, 8.4.3-oraclelinux9).
HUB_ALIAS_RES = (
    re.compile(r"^[a-z][a-z0-9]{0,30}(?:-[a-z0-9]{1,30}){0,3}\Z"),
    re.compile(r"^[0-9]{1,4}(?:\.[0-9]{1,4})?\Z"),
    re.compile(r"^[0-9]{1,4}(?:\.[0-9]{1,4}){0,2}(?:-[a-z][a-z0-9.]{0,30}){1,3}\Z"),
)
# Other tags of mysql-server: cluster releases and anything else in git's safe tag form.
GITHUB_OTHER_RE = re.compile(r"^(?!mysql-[0-9])[A-Za-z][A-Za-z0-9._-]{0,99}\Z")
DIGEST_RE = re.compile(r"^sha256:[0-9a-f]{64}\Z")
LINK_NEXT_RE = re.compile(r'<([^<>\s]+)>\s*;\s*rel="next"')


@dataclass(frozen=True)
class Release:
    """A release tag both sources agree on."""

    version: str
    digest: str  # the Docker Hub tag's digest (sha256:…): the entry's `digest`
    github_tag: str

    @property
    def server_id(self) -> str:
        return f"{PRODUCT}-{self.version}"

    @property
    def image(self) -> str:
        return f"{DOCKER_REPOSITORY}:{self.version}"


@dataclass
class Check:
    """What `check` found; `new` are the versions to add (or added, with --write)."""

    new: list[Release] = field(default_factory=list)
    refused: list[tuple[str, str, str]] = field(default_factory=list)  # source, tag, reason
    hub_only: list[str] = field(default_factory=list)  # release on Docker Hub, no GitHub tag
    github_only: list[str] = field(default_factory=list)  # GitHub tag, no Docker Hub image
    deferred: list[str] = field(default_factory=list)  # over MAX_NEW_PER_RUN: next run
    skipped: list[tuple[str, str]] = field(default_factory=list)  # version, reason


def shown(tag: str) -> str:
    """A hostile tag made safe to print on one line: ASCII-escaped, shortened."""
    text = ascii(tag)[1:-1]
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 3] + "..."


def _versionish_reason(text: str) -> str:
    parts = text.split(".")
    if any(len(p) > 1 and p.startswith("0") for p in parts):
        return "a version part has a leading zero"
    return "a version part has more than 4 digits"


def classify_hub_tag(name: object) -> tuple[str, str]:
    """("release", version) | ("alias", "") | ("refused", reason) for a Docker Hub tag."""
    if not isinstance(name, str):
        return "refused", "the tag name is not a string"
    if not name:
        return "refused", "empty tag name"
    if len(name) > MAX_TAG_CHARS:
        return "refused", f"longer than {MAX_TAG_CHARS} characters"
    if not name.isascii() or not name.isprintable():
        return "refused", "non-ASCII or control characters"
    m = RELEASE_RE.match(name)
    if m:
        return "release", m.group(1)
    if VERSIONISH_RE.match(name):
        return "refused", _versionish_reason(name)
    if any(r.match(name) for r in HUB_ALIAS_RES):
        return "alias", ""
    return "refused", "not a release tag (X.Y.Z) or a known alias form"


def classify_github_tag(name: object) -> tuple[str, str]:
    """("release", version) | ("alias", "") | ("refused", reason) for a mysql-server tag."""
    if not isinstance(name, str):
        return "refused", "the tag name is not a string"
    if not name or len(name) > MAX_TAG_CHARS:
        return "refused", f"empty or longer than {MAX_TAG_CHARS} characters"
    if not name.isascii() or not name.isprintable():
        return "refused", "non-ASCII or control characters"
    m = GITHUB_RELEASE_RE.match(name)
    if m:
        return "release", m.group(1)
    rest = name.removeprefix("mysql-")
    if rest != name and VERSIONISH_RE.match(rest):
        return "refused", _versionish_reason(rest)
    if GITHUB_OTHER_RE.match(name) or re.match(r"^mysql-[0-9][A-Za-z0-9._-]{0,99}\Z", name):
        return "alias", ""  # mysql-cluster-8.4.3, mysql-8.0.40-rc, clone-…: not a server release
    return "refused", "not a git tag name of the usual form"


# --- sources -------------------------------------------------------------------------------


def hub_releases(check: Check) -> dict[str, str]:
    """{version: digest} of the release tags of library/mysql on Docker Hub."""
    out: dict[str, str] = {}
    for tag in docker.list_tags(DOCKER_REPOSITORY):
        kind, detail = classify_hub_tag(tag.name)
        if kind == "refused":
            check.refused.append(("docker hub", shown(str(tag.name)), detail))
        elif kind == "release":
            digest = tag.digest
            if not isinstance(digest, str) or not DIGEST_RE.match(digest):
                check.refused.append(
                    ("docker hub", tag.name, "no digest of the form sha256:<64 hex digits>")
                )
                continue
            out[detail] = digest
    return out


def github_api_url() -> str:
    url = (os.environ.get(ENV_GITHUB_API_URL) or GITHUB_API_URL).rstrip("/")
    parsed = urllib.parse.urlsplit(url)
    loopback = parsed.hostname in ("127.0.0.1", "localhost", "::1")
    if parsed.scheme != "https" and not (parsed.scheme == "http" and loopback):
        raise ConfigError(
            f"{ENV_GITHUB_API_URL}={url!r} must be an https:// URL (http only on 127.0.0.1)"
        )
    return url


def _github_get(url: str) -> tuple[object, str | None]:
    """(JSON body, next page URL) of one GitHub API GET."""
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    token = os.environ.get("GITHUB_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=GITHUB_TIMEOUT_S) as response:
            data = json.load(response)
            link = response.headers.get("Link") or ""
    except urllib.error.HTTPError as err:
        raise FetchError(f"GitHub answered HTTP {err.code} for {url}") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or err
        raise FetchError(
            f"cannot read GitHub at {url}: {reason}; check the network (or {ENV_GITHUB_API_URL})"
        ) from None
    m = LINK_NEXT_RE.search(link)
    return data, (m.group(1) if m else None)


def github_releases(check: Check, repository: str = GITHUB_REPOSITORY) -> dict[str, str]:
    """{version: tag} of the server release tags (mysql-X.Y.Z) of mysql/mysql-server."""
    base = github_api_url()
    path = GITHUB_TAGS_PATH.format(repository=repository)
    url: str | None = f"{base}{path}?per_page={GITHUB_PAGE_SIZE}"
    out: dict[str, str] = {}
    for _page in range(GITHUB_MAX_PAGES):
        if url is None:
            return out
        data, url = _github_get(url)
        if not isinstance(data, list):
            raise FetchError(f"GitHub's answer for {repository} tags is not a JSON list")
        for item in data:
            name = item.get("name") if isinstance(item, dict) else None
            kind, detail = classify_github_tag(name)
            if kind == "refused":
                check.refused.append(("github", shown(str(name)), detail))
            elif kind == "release":
                out[detail] = str(name)
        if url is not None and not url.startswith(base + "/"):
            raise FetchError(f"GitHub's next page {shown(url)!r} is not on {base}: refused")
    raise FetchError(f"{repository} has more than {GITHUB_MAX_PAGES} pages of tags: refused")


# --- what is new ---------------------------------------------------------------------------


def _series(version: str) -> tuple[int, ...]:
    return rules.parse_version(version)[:2]


def new_releases(
    cat: catalog.Catalog, hub: dict[str, str], github: dict[str, str], check: Check
) -> None:
    """Fill ``check.new`` (oldest first) from the two sources and the catalog."""
    tracked = [e for e in cat if e.product == PRODUCT and e.provider == PROVIDER]
    newest: dict[tuple[int, ...], tuple[int, ...]] = {}
    for e in tracked:
        v = rules.parse_version(e.version)
        newest[v[:2]] = max(newest.get(v[:2], v), v)
    if not newest:
        return
    top = max(newest)

    def is_new(version: str) -> bool:
        v = rules.parse_version(version)
        series_newest = newest.get(v[:2])
        if series_newest is None:
            return v[:2] > top  # an older, untracked series is never back-filled
        return v > series_newest

    # One-sided releases that would be new: reported, not added (the sources must agree).
    check.hub_only = sorted(
        (v for v in set(hub) - set(github) if is_new(v)), key=rules.parse_version
    )
    check.github_only = sorted(
        (v for v in set(github) - set(hub) if is_new(v)), key=rules.parse_version
    )
    found = []
    for version in sorted(set(hub) & set(github), key=rules.parse_version):
        if not is_new(version):
            continue
        release = Release(version, hub[version], github[version])
        if release.server_id in cat:
            check.skipped.append((version, f"the id {release.server_id} is already taken"))
            continue
        found.append(release)
    check.new = found[:MAX_NEW_PER_RUN]
    check.deferred = [r.version for r in found[MAX_NEW_PER_RUN:]]


def check(cat: catalog.Catalog) -> Check:
    """Read both sources and decide what is new (no writing)."""
    result = Check()
    hub = hub_releases(result)
    github = github_releases(result)
    new_releases(cat, hub, github, result)
    return result


# --- writing -------------------------------------------------------------------------------


def entry_text(release: Release, indent: str, today: str) -> str:
    """The YAML text of one catalog entry (every value validated or fixed)."""
    notes = (
        f"added by perftrack tags check on {today}: Docker Hub {DOCKER_REPOSITORY}:"
        f"{release.version} and GitHub tag {release.github_tag}"
    )
    inner = indent + "  "
    return (
        f"{indent}- id: {release.server_id}\n"
        f"{inner}product: {PRODUCT}\n"
        f"{inner}version: {release.version}\n"
        f"{inner}provider: {PROVIDER}\n"
        f"{inner}image: {release.image}\n"
        f"{inner}digest: {release.digest}\n"
        f"{inner}notes: {json.dumps(notes)}\n"
    )


def _insert(text: str, block: str) -> str:
    """``text`` with ``block`` after its last line that is neither blank nor a comment."""
    lines = text.splitlines(keepends=True)
    last = max(
        (i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")),
        default=len(lines) - 1,
    )
    head = "".join(lines[: last + 1])
    if head and not head.endswith("\n"):
        head += "\n"
    tail = "".join(lines[last + 1 :])
    return head + block + tail


def _indent(text: str) -> str:
    found = re.findall(r"^( *)- id:", text, re.MULTILINE)
    return found[-1] if found else "  "


def append(path: Path, releases: list[Release], today: str | None = None) -> None:
    """Append ``releases`` to the catalog file at ``path``; atomic, validated, or nothing."""
    if not releases:
        return
    old = catalog.load(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror}") from None
    today = today or dt.datetime.now(dt.UTC).date().isoformat()
    indent = _indent(text)
    block = f"\n{indent}# --- added by `perftrack tags check` (Docker Hub + GitHub release tags)\n"
    block += "".join(entry_text(r, indent, today) for r in releases)
    new_text = _insert(text, block)
    files.replace_text(path, new_text, check=lambda tmp: _verify(tmp, old, releases, path))


def _verify(tmp: Path, old: catalog.Catalog, releases: list[Release], path: Path) -> None:
    try:
        new = catalog.load(tmp)
    except ConfigError as err:
        raise ConfigError(
            f"appending to {path} would make it invalid ({err}); nothing written: check that "
            "'servers:' is the file's last key"
        ) from None
    n = len(old.entries)
    added = new.entries[n:]
    expected = [(r.server_id, PRODUCT, r.version, PROVIDER, r.image, r.digest) for r in releases]
    got = [(e.id, e.product, e.version, e.provider, e.image, e.digest) for e in added]
    if new.entries[:n] != old.entries or got != expected:
        raise ConfigError(
            f"appending to {path} did not give the expected entries; nothing written: "
            "check that 'servers:' is the file's last key"
        )


def report(result: Check, wrote: bool, say: Callable[[str], None]) -> None:
    for source, tag, reason in result.refused:
        say(f"refused {source} tag '{tag}': {reason}")
    for version in result.github_only:
        say(f"mysql-{version}: tagged on GitHub, no Docker Hub image yet: not added")
    for version in result.hub_only:
        say(f"{version}: on Docker Hub but no GitHub tag mysql-{version}: not added")
    for version, reason in result.skipped:
        say(f"{version}: not added: {reason}")
    for version in result.deferred:
        say(f"{version}: more than {MAX_NEW_PER_RUN} new versions; left for the next run")
    verb = "added" if wrote else "new (use --write to add)"
    for r in result.new:
        say(f"{verb}: {r.server_id} (image {r.image}, {r.digest})")
    if not result.new:
        say("no new MySQL releases")
