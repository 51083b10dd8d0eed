"""`perftrack tags check`: new MySQL releases from Docker Hub and GitHub into the catalog.

Two independent sources must agree before a version is added: a release tag ``X.Y.Z`` of
the official Docker Hub image (``library/mysql``, which the docker provider runs) and a
release tag ``mysql-X.Y.Z`` of the MySQL server repository on GitHub. Every tag is
hostile input: anything that is not exactly a release tag or a known alias form (``8.4``,
``lts``, ``8.4.3-oracle``, ``mysql-cluster-8.4.3``) is refused with a reason, and a
version that is added passes the catalog's own validation before the file is replaced.

Which versions are new, and in which order (the release table, configs/releases.yaml,
servers/releases.py): a release both sources agree on that the catalog has no docker
``mysql`` entry of, on a line of the table. Within the per-run cap, newest first:

1. the newest innovation release and the newest patch of each supported LTS line (the
   releases users upgrade to), newest line first;
2. the last release of each line past its end of life (the nightly's anchors; its older
   patches are never added);
3. back-fill, round-robin over the lines: each line's second-newest missing release, then
   its third, … (older patches of the supported lines; innovation releases newer than the
   oldest catalogued one — older ones were superseded before perftrack tracked them).

A release on no line of the table is reported, not added (a new line is a row there). A
tag list announcing more than ``MAX_NEW_AT_ONCE`` new releases is a broken or hostile
source: the run stops with one line and adds nothing. Aliases (``lts``, ``innovation``,
``latest``, ``9.7``, ``26.10``, ``…-oraclelinux9``) are recognised as aliases, never as
versions.

``--write`` appends one entry per new version after the catalog's last entry as text, so
every comment of the file survives: image ``mysql:X.Y.Z`` pinned by the Docker Hub tag's
digest (the entry's ``digest``, which the docker provider checks against the pulled
image's RepoDigests). The result is re-loaded with `perftrack.catalog.read_catalog` and must hold
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
from perftrack.servers import catalog, releases, rules
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
MAX_NEW_PER_RUN = 10  # entries one run (one pull request) adds; the rest wait for the next
# Oracle ships ~12 MySQL releases a year over all its lines (four quarterly patches of each
# LTS line, four innovation releases): more unseen releases than this at once is a broken
# or hostile tag list, not news.
MAX_NEW_AT_ONCE = 60
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


@dataclass(frozen=True, kw_only=True)
class Release:
    """A release tag both sources agree on."""

    version: str
    digest: str  # the Docker Hub tag's digest (sha256:…): the entry's `digest`
    github_tag: str
    server_id: str = ""  # the catalog id: mysql-VERSION (…-docker when another entry has it)
    why: str = ""  # why it is added in this place of the order, in words

    def __post_init__(self) -> None:
        if not self.server_id:
            object.__setattr__(self, "server_id", f"{PRODUCT}-{self.version}")

    @property
    def image(self) -> str:
        return f"{DOCKER_REPOSITORY}:{self.version}"


@dataclass(kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class _Wanted:
    version: str
    tier: int  # 1: newest of a line users upgrade to; 2: an end-of-life line's last; 3: back-fill
    rank: int  # 0: the line's newest missing release, 1: the one before, …
    why: str


def wanted(
    versions: set[str], have: set[str], table: releases.Releases, today: dt.date, check: Check
) -> list[_Wanted]:
    """The releases of ``versions`` to add (not in ``have``), newest first by the module's
    order; releases on no line are reported in ``check.skipped``."""
    by_line: dict[releases.Line, list[str]] = {}
    for version in versions:
        line = table.line_of(PRODUCT, version)
        if line is None:
            check.skipped.append((version, f"on no release line of {table.path.name}"))
            continue
        by_line.setdefault(line, []).append(version)
    have_v = {rules.parse_version(v) for v in have}
    out: list[_Wanted] = []
    for line, found in by_line.items():
        found.sort(key=rules.parse_version, reverse=True)
        # the line's newest release either source or the catalog knows
        top = max([rules.parse_version(found[0]), *(v for v in have_v if line.holds(v))])
        if line.ended(today):
            last = found[0]
            if rules.parse_version(last) == top and top not in have_v:
                why = f"the last {line.label} ({line.label} ended {line.eol})"
                out.append(_Wanted(version=last, tier=2, rank=0, why=why))
            older = [v for v in found[1:] if rules.parse_version(v) not in have_v]
            if older:
                check.skipped.append(
                    (
                        f"{len(older)} older {line.label} release(s)",
                        f"{line.label} ended on {line.eol}: only its last release is tracked",
                    )
                )
            continue
        missing = [v for v in found if rules.parse_version(v) not in have_v]
        if line.kind == releases.INNOVATION:
            # not before the oldest catalogued one: those were superseded before perftrack
            # tracked the track (a floor that adding newer releases never moves)
            tracked = [v for v in have_v if line.holds(v)]
            floor = min(tracked) if tracked else None
            missing = [v for v in missing if floor is None or rules.parse_version(v) > floor]
        for rank, version in enumerate(missing):
            newest = rank == 0 and rules.parse_version(version) == top
            what = "release" if line.kind == releases.INNOVATION else "patch"
            why = f"the newest {line.label} {what}" if newest else f"back-fill of {line.label}"
            out.append(
                _Wanted(
                    version=version,
                    tier=1 if newest else 3,
                    rank=rank,
                    why=why,
                )
            )
    # Within a tier and rank, the newer line first (its release is the newer version).
    out.sort(key=lambda w: (w.tier, w.rank, tuple(-p for p in rules.parse_version(w.version))))
    return out


def new_releases(
    cat: catalog.Catalog,
    hub: dict[str, str],
    github: dict[str, str],
    check: Check,
    today: dt.date | None = None,
) -> None:
    """Fill ``check.new`` (in the order to add them: newest first) from the two sources and
    the catalog, and ``check.deferred`` with what is over the per-run cap."""
    table = releases.read_releases(releases.beside(cat.path))
    today = today or dt.date.today()
    have = {e.version for e in cat if e.product == PRODUCT and e.provider == PROVIDER}
    scratch = Check()  # one-sided releases are reported, their line reasons are not
    one_sided = {w.version for w in wanted(set(hub) ^ set(github), have, table, today, scratch)}
    check.hub_only = sorted(one_sided & set(hub), key=rules.parse_version)
    check.github_only = sorted(one_sided & set(github), key=rules.parse_version)
    order = wanted(set(hub) & set(github), have, table, today, check)
    if len(order) > MAX_NEW_AT_ONCE:
        raise FetchError(
            f"the tag lists announce {len(order)} new MySQL releases at once (more than "
            f"{MAX_NEW_AT_ONCE}): a broken or hostile source; nothing added"
        )
    taken = set(cat.ids)
    found = []
    for w in order:
        server_id = f"{PRODUCT}-{w.version}"
        if server_id in taken:  # another provider's entry of this version (mysql-9.7.4)
            server_id = f"{server_id}-{PROVIDER}"
        if server_id in taken:
            check.skipped.append((w.version, f"the ids {PRODUCT}-{w.version}(-docker) are taken"))
            continue
        found.append(
            Release(
                version=w.version,
                digest=hub[w.version],
                github_tag=github[w.version],
                server_id=server_id,
                why=w.why,
            )
        )
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


def append(path: Path, added: list[Release], today: str | None = None) -> None:
    """Append ``added`` to the catalog file at ``path``; atomic, validated, or nothing."""
    if not added:
        return
    old = catalog.read_catalog(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror}") from None
    today = today or dt.datetime.now(dt.UTC).date().isoformat()
    indent = _indent(text)
    block = f"\n{indent}# --- added by `perftrack tags check` (Docker Hub + GitHub release tags)\n"
    block += "".join(entry_text(r, indent, today) for r in added)
    new_text = _insert(text, block)
    files.replace_text(path, new_text, check=lambda tmp: _verify(tmp, old, added, path))


def _verify(tmp: Path, old: catalog.Catalog, added: list[Release], path: Path) -> None:
    try:
        new = catalog.read_catalog(tmp)
    except ConfigError as err:
        raise ConfigError(
            f"appending to {path} would make it invalid ({err}); nothing written: check that "
            "'servers:' is the file's last key"
        ) from None
    n = len(old.entries)
    expected = [(r.server_id, PRODUCT, r.version, PROVIDER, r.image, r.digest) for r in added]
    got = [(e.id, e.product, e.version, e.provider, e.image, e.digest) for e in new.entries[n:]]
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
        why = f": {r.why}" if r.why else ""
        say(f"{verb}: {r.server_id} (image {r.image}, {r.digest}){why}")
    if not result.new:
        say("no new MySQL releases")
