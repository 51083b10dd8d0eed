"""Reading `configs/versions.yaml`: a YAML loader that keeps line numbers and refuses
duplicate keys, and the strict validation of every entry (one-line errors with the file,
the line and the server)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import yaml

from perftrack.core import yamlfile
from perftrack.core.errors import ConfigError
from perftrack.servers import profiles, releases
from perftrack.servers.entries import (
    DEFAULT_DEBIAN_MIRROR,
    UNPINNED,
    DebianChroot,
    DebianPackage,
    Entry,
    MavenArtifact,
    Tarball,
)

CATALOG_FILENAME = "versions.yaml"

PRODUCTS = ("mysql", "mariadb", "percona")
# Each product as people write it ("MariaDB 10.2.11 for MySQL 5.7": a study's stand-ins).
PRODUCT_NAMES = {"mysql": "MySQL", "mariadb": "MariaDB", "percona": "Percona Server"}
# The provider-specific key every entry of that provider must carry (and no other may).
PROVIDER_SECTIONS = {
    "debian": "packages",
    "maven": "maven",
    "path": "basedir",
    "debian-chroot": "chroot",
    "tarball": "tarball",
    "docker": "image",
}
# Providers that were renamed: what to write instead.
RENAMED_PROVIDERS = {
    "debian-sid": (
        "provider 'debian-sid' is now 'debian-chroot', with pinned packages: "
        "chroot: {suite: sid, packages: [{name, version, sha256}]} (the header of "
        "configs/versions.yaml says how)"
    ),
}

# \Z, not $: `$` also matches before a final newline; [0-9], not \d: ASCII digits only.
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}\Z")
VERSION_RE = re.compile(r"^[0-9]+\.[0-9]+(\.[0-9]+)?\Z")
SHA256_RE = re.compile(r"^[0-9a-f]{64}\Z")
# A docker image digest: a registry manifest digest (RepoDigests) or an image id.
IMAGE_DIGEST_RE = re.compile(r"^sha256:[0-9a-f]{64}\Z")
# Debian policy 5.6.1 (package names) and 5.6.12 (versions); both must start with an
# alphanumeric, so neither can ever be mistaken for an option.
DEB_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9+.-]+\Z")
DEB_VERSION_RE = re.compile(r"^(?:[0-9]+:)?[0-9][A-Za-z0-9.+~-]*\Z")
MAVEN_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
MAVEN_VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")
DEB_SUITE_RE = re.compile(r"^[a-z][a-z0-9-]{0,30}\Z")
# An http(s) URL without spaces, quotes, credentials, query or fragment.
URL_RE = re.compile(r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%+-]+)*/?\Z")
TARBALL_SUFFIXES = (".tar.xz", ".tar.gz", ".tgz")
# A Docker image reference (docker/distribution's reference grammar, lowercase
# repository) with a tag or a digest: an untagged name would silently mean `latest`.
IMAGE_RE = re.compile(
    r"^(?:[a-z0-9][a-z0-9.-]*(?::[0-9]{1,5})?/)?[a-z0-9]+(?:[._-][a-z0-9]+)*"
    r"(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?\Z"
)
LEADING_VERSION_RE = re.compile(r"^(\d+\.\d+(?:\.\d+)?)(?:$|[^0-9.])")

TOP_KEYS = ("servers",)
REQUIRED_KEYS = ("id", "product", "version", "provider")
OPTIONAL_KEYS = ("stand_in", "notes", *PROVIDER_SECTIONS.values(), "digest", "server_options")
# Listener options (beyond profiles.RESERVED) an entry's server_options may not set: a
# catalog entry must not open another port or address (servers bind 127.0.0.1 only).
LISTENER_OPTIONS = frozenset(
    {"extra-port", "admin-address", "admin-port", "mysqlx-bind-address", "mysqlx-port"}
)
PACKAGE_KEYS = ("name", "version", "sha256")
MAVEN_KEYS = ("group", "artifact", "version", "sha256")
CHROOT_KEYS = ("suite", "packages")
CHROOT_OPTIONAL_KEYS = ("mirror",)
TARBALL_KEYS = ("sha256",)
TARBALL_OPTIONAL_KEYS = ("url",)

MAX_SUGGESTIONS = 3
MAX_KNOWN_SHOWN = 10  # an unknown-id message names this many known ids, then a count
SUGGESTION_CUTOFF = 0.6


# --- YAML reading ---------------------------------------------------------------------------


def read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise ConfigError(f"cannot read the server catalog {display(path)}: {reason}") from None
    try:
        return yamlfile.load_strict(text)
    except yaml.MarkedYAMLError as err:
        raise ConfigError(yamlfile.marked_message(display(path), err)) from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{display(path)}: malformed YAML: {_one_line(str(err))}") from None


# --- validation ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Where:
    """Where a value came from, for error messages: ``file:line (server 'id')``."""

    path: Path
    line: int
    server_id: str | None = None

    def fail(self, message: str) -> NoReturn:
        location = f"{display(self.path)}:{self.line}" if self.line else display(self.path)
        server = f" server {self.server_id!r}:" if self.server_id else ""
        raise ConfigError(f"{location}:{server} {message}")

    def at(self, value: Any) -> _Where:
        """The same place, moved to ``value``'s own line when it is a mapping."""
        line = value.line if isinstance(value, yamlfile.LineMapping) else self.line
        return _Where(self.path, line, self.server_id)


def parse_entries(
    data: Any, path: Path, lines: releases.Releases | None = None
) -> tuple[Entry, ...]:
    """The entries of a catalog file; each version must be on a release line of ``lines``
    (default: the release table beside ``path``, configs/releases.yaml)."""
    where = _Where(path, getattr(data, "line", 0))
    if data is None:
        where.fail("the file is empty; it needs a 'servers:' list")
    if not isinstance(data, dict):
        where.fail(f"expected a mapping with a 'servers:' list, got {_kind(data)}")
    _check_keys(data, TOP_KEYS, (), where, "the catalog")
    servers = data["servers"]
    if not isinstance(servers, list):
        where.fail(f"'servers' must be a list of entries, got {_kind(servers)}")
    lines = lines or releases.read_releases(releases.beside(path))
    entries = tuple(_parse_entry(raw, index, where, lines) for index, raw in enumerate(servers))
    _check_unique_ids(entries, servers, where)
    return entries


def _parse_entry(raw: Any, index: int, parent: _Where, lines: releases.Releases) -> Entry:
    where = parent.at(raw)
    if not isinstance(raw, dict):
        where.fail(f"servers[{index}] must be a mapping, got {_kind(raw)}")
    server_id = raw.get("id")
    if isinstance(server_id, str) and ID_RE.match(server_id):
        where = _Where(where.path, where.line, server_id)
    _check_keys(raw, REQUIRED_KEYS, OPTIONAL_KEYS, where, f"servers[{index}]")
    entry = Entry(
        id=_parse_id(raw["id"], where),
        product=_parse_choice(raw["product"], "product", PRODUCTS, where),
        version=_parse_version(raw["version"], where),
        provider=_parse_provider(raw["provider"], where),
        packages=_parse_packages(raw.get("packages"), where),
        maven=_parse_maven(raw.get("maven"), where),
        basedir=_parse_basedir(raw.get("basedir"), where),
        stand_in=_parse_text(raw.get("stand_in"), "stand_in", where),
        notes=_parse_text(raw.get("notes"), "notes", where),
        chroot=_parse_chroot(raw.get("chroot"), where),
        tarball=_parse_tarball(raw.get("tarball"), where),
        image=_parse_image(raw.get("image"), where),
        digest=_parse_digest(raw.get("digest"), raw.get("provider"), where),
        unpinned=UNPINNED in (raw.get("digest"), _tarball_sha(raw.get("tarball"))),
        server_options=_parse_server_options(raw.get("server_options"), where),
    )
    _check_provider_section(raw, entry.provider, where)
    _check_version_agrees(entry, where)
    _check_pin(raw, entry, where)
    if lines.refuses(entry.product, entry.version):
        where.fail(lines.no_line_message(entry.product, entry.version))
    return entry


def _check_keys(
    raw: dict, required: tuple[str, ...], optional: tuple[str, ...], where: _Where, what: str
) -> None:
    allowed = (*required, *optional)
    for key in raw:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, 1, SUGGESTION_CUTOFF)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            where.fail(f"unknown key {key!r} in {what}{hint}; allowed: {', '.join(allowed)}")
    for key in required:
        if key not in raw:
            where.fail(f"{what} is missing the required key {key!r}")


def _check_unique_ids(entries: tuple[Entry, ...], servers: list, where: _Where) -> None:
    first_line: dict[str, int] = {}
    for entry, raw in zip(entries, servers, strict=True):
        line = raw.line
        if entry.id in first_line:
            _Where(where.path, line).fail(
                f"duplicate server id {entry.id!r} (first defined on line {first_line[entry.id]})"
            )
        first_line[entry.id] = line


def _check_provider_section(raw: dict, provider: str, where: _Where) -> None:
    wanted = PROVIDER_SECTIONS[provider]
    if wanted not in raw:
        where.fail(f"provider {provider!r} needs a {wanted!r} key")
    for other_provider, key in PROVIDER_SECTIONS.items():
        if key in raw and other_provider != provider:
            where.fail(f"{key!r} belongs to provider {other_provider!r}, not {provider!r}")


def _check_pin(raw: dict, entry: Entry, where: _Where) -> None:
    """A docker image or a tarball is pinned (digest / sha256) or says it is not yet."""
    if entry.provider == "docker" and raw.get("digest") is None:
        where.fail(
            "a docker entry needs 'digest: sha256:…' or, until a runner pins it, "
            f"'digest: {UNPINNED}' (`perftrack servers pin {entry.id}`)"
        )
    if entry.provider == "tarball" and _tarball_sha(raw.get("tarball")) is None:
        where.fail(
            "a tarball entry needs 'sha256: <64 hex>' or, until a runner pins it, "
            f"'sha256: {UNPINNED}' (`perftrack servers pin {entry.id}`)"
        )


def _tarball_sha(raw: Any) -> Any:
    return raw.get("sha256") if isinstance(raw, dict) else None


def _check_version_agrees(entry: Entry, where: _Where) -> None:
    """The pinned artifact must be the version the entry claims (catches copy-paste slips)."""
    server = entry.server_package
    if server is not None and server.release != entry.version:
        where.fail(
            f"version {entry.version} but the server package {server.name} is "
            f"{server.release} ({server.version})"
        )
    artifact = entry.maven
    if artifact is not None and artifact.version.split("-", 1)[0] != entry.version:
        where.fail(f"version {entry.version} but the maven artifact is {artifact.version}")
    tarball = entry.tarball
    if tarball is not None and tarball.url is not None:
        filename = tarball.url.rsplit("/", 1)[-1]
        if f"-{entry.version}-" not in filename:
            where.fail(f"version {entry.version} but the tarball is {filename}")
    if entry.image is not None:
        tag = _image_tag(entry.image)
        m = LEADING_VERSION_RE.match(tag or "")
        if m and entry.version != m.group(1) and not entry.version.startswith(m.group(1) + "."):
            where.fail(f"version {entry.version} but the image tag is {tag}")


def _parse_id(value: Any, where: _Where) -> str:
    text = _require_str(value, "id", where)
    if not ID_RE.match(text):
        where.fail(
            f"bad id {text!r}: use letters, digits and . _ + - (starting with a letter or "
            "digit, at most 100 characters)"
        )
    return text


def _parse_choice(value: Any, key: str, choices: tuple[str, ...], where: _Where) -> str:
    text = _require_str(value, key, where)
    if text not in choices:
        where.fail(f"unknown {key} {text!r}; known: {', '.join(choices)}")
    return text


def _parse_provider(value: Any, where: _Where) -> str:
    text = _require_str(value, "provider", where)  # a list or a mapping is not hashable
    if text in RENAMED_PROVIDERS:
        where.fail(RENAMED_PROVIDERS[text])
    return _parse_choice(text, "provider", tuple(PROVIDER_SECTIONS), where)


def _parse_version(value: Any, where: _Where) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        where.fail(
            f"version was read as the number {value!r}; quote it, e.g. version: "
            '"10.10" (unquoted, YAML reads 10.10 as 10.1)'
        )
    text = _require_str(value, "version", where)
    if not VERSION_RE.match(text):
        where.fail(f"bad version {text!r}: expected MAJOR.MINOR or MAJOR.MINOR.PATCH")
    return text


def _parse_sha256(value: Any, where: _Where, what: str) -> str:
    text = _require_str(value, f"{what} sha256", where)
    if not SHA256_RE.match(text):
        where.fail(f"bad sha256 for {what}: expected 64 lowercase hex digits, got {text!r}")
    return text


def _parse_packages(value: Any, where: _Where) -> tuple[DebianPackage, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        where.fail("'packages' must be a non-empty list of {name, version, sha256}")
    packages = tuple(_parse_package(raw, index, where) for index, raw in enumerate(value))
    names = [package.name for package in packages]
    for name in names:
        if names.count(name) > 1:
            where.fail(f"package {name!r} is listed twice")
    return packages


def _parse_package(raw: Any, index: int, parent: _Where) -> DebianPackage:
    where = parent.at(raw)
    if not isinstance(raw, dict):
        where.fail(f"packages[{index}] must be a mapping {{name, version, sha256}}")
    _check_keys(raw, PACKAGE_KEYS, (), where, f"packages[{index}]")
    name = _require_str(raw["name"], "package name", where)
    if not DEB_NAME_RE.match(name):
        where.fail(f"bad Debian package name {name!r}: lowercase letters, digits and + . - only")
    version = _require_str(raw["version"], f"version of {name}", where, quote_hint=True)
    if not DEB_VERSION_RE.match(version):
        where.fail(
            f"bad Debian version {version!r} for {name}: [EPOCH:]VERSION[-REVISION] with "
            "letters, digits and . + ~ - only"
        )
    sha256 = _parse_sha256(raw["sha256"], where, f"package {name}")
    return DebianPackage(name=name, version=version, sha256=sha256)


def _parse_maven(raw: Any, parent: _Where) -> MavenArtifact | None:
    if raw is None:
        return None
    where = parent.at(raw)
    if not isinstance(raw, dict):
        where.fail("'maven' must be a mapping {group, artifact, version, sha256}")
    _check_keys(raw, MAVEN_KEYS, (), where, "maven")
    fields = {}
    for key in ("group", "artifact", "version"):
        text = _require_str(raw[key], f"maven {key}", where, quote_hint=True)
        pattern = MAVEN_VERSION_RE if key == "version" else MAVEN_NAME_RE
        if not pattern.match(text):
            where.fail(f"bad maven {key} {text!r}")
        fields[key] = text
    sha256 = _parse_sha256(raw["sha256"], where, "maven artifact")
    return MavenArtifact(sha256=sha256, **fields)


def _parse_chroot(raw: Any, parent: _Where) -> DebianChroot | None:
    if raw is None:
        return None
    where = parent.at(raw)
    if not isinstance(raw, dict):
        where.fail("'chroot' must be a mapping {suite, mirror, packages}")
    _check_keys(raw, CHROOT_KEYS, CHROOT_OPTIONAL_KEYS, where, "chroot")
    suite = _require_str(raw["suite"], "chroot suite", where)
    if not DEB_SUITE_RE.match(suite):
        where.fail(f"bad Debian suite {suite!r}: e.g. sid, trixie")
    mirror = _require_str(raw.get("mirror", DEFAULT_DEBIAN_MIRROR), "chroot mirror", where)
    if not URL_RE.match(mirror):
        where.fail(f"bad mirror {mirror!r}: an http(s) URL such as {DEFAULT_DEBIAN_MIRROR}")
    packages = _parse_packages(raw["packages"], where)
    if not packages:
        where.fail("'chroot.packages' must be a non-empty list of {name, version, sha256}")
    return DebianChroot(suite=suite, packages=packages, mirror=mirror)


def _parse_tarball(raw: Any, parent: _Where) -> Tarball | None:
    if raw is None:
        return None
    where = parent.at(raw)
    if not isinstance(raw, dict):
        where.fail("'tarball' must be a mapping {url, sha256}")
    _check_keys(raw, TARBALL_KEYS, TARBALL_OPTIONAL_KEYS, where, "tarball")
    url = raw.get("url")
    if url is not None:
        url = _require_str(url, "tarball url", where)
        if not URL_RE.match(url) or not url.endswith(TARBALL_SUFFIXES):
            where.fail(
                f"bad tarball url {url!r}: an http(s) URL of a {' / '.join(TARBALL_SUFFIXES)} file"
            )
    sha256 = raw["sha256"]
    if sha256 == UNPINNED:
        sha256 = None
    elif sha256 is not None:
        sha256 = _parse_sha256(sha256, where, "tarball")
    return Tarball(url=url, sha256=sha256)


def _parse_image(value: Any, where: _Where) -> str | None:
    if value is None:
        return None
    text = _require_str(value, "image", where)
    if not IMAGE_RE.match(text):
        where.fail(f"bad image {text!r}: use REPOSITORY:TAG (e.g. mysql:8.4.3), lowercase")
    if _image_tag(text) is None and "@" not in text:
        where.fail(f"image {text!r} has no tag: name one (e.g. mysql:8.4.3), not an implied latest")
    return text


def _parse_digest(value: Any, provider: Any, where: _Where) -> str | None:
    if value is None:
        return None
    if provider != "docker":
        where.fail(f"'digest' belongs to provider 'docker', not {provider!r}")
    text = _require_str(value, "digest", where)
    if text == UNPINNED:
        return None
    if not IMAGE_DIGEST_RE.match(text):
        where.fail(
            f"bad digest {text!r}: expected sha256: and 64 lowercase hex digits, or "
            f"{UNPINNED!r} (`docker image "
            "inspect --format '{{json .RepoDigests}}' IMAGE`, or its Id for an imported image)"
        )
    return text


def _image_tag(image: str) -> str | None:
    """The tag of an image reference (``mysql:8.4.3`` → ``8.4.3``), or None."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def _parse_server_options(value: Any, where: _Where) -> tuple[tuple[str, str | None], ...]:
    """``server_options: [NAME=VALUE | NAME, …]``, checked by the profile rules."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        where.fail("'server_options' must be a non-empty list of NAME=VALUE strings")
    out: list[tuple[str, str | None]] = []
    for index, item in enumerate(value):
        text = _require_str(item, f"server_options[{index}]", where, quote_hint=True)
        name, sep, val = (part.strip() for part in text.partition("="))
        if not profiles.OPTION_RE.match(name):
            where.fail(f"server_options[{index}]: {name!r} is not an option name")
        owned = profiles.reserved_as(name)
        bare = name.lower().replace("_", "-").removeprefix("loose-")
        if owned or bare in LISTENER_OPTIONS:
            where.fail(
                f"server_options[{index}]: {name!r} sets {owned or bare}, which a catalog "
                "entry may not set (perftrack owns paths, ports and the bind address)"
            )
        if sep and not profiles.VALUE_RE.match(val):
            where.fail(f"server_options[{index}]: the value of {name!r} has characters not allowed")
        if sep and profiles.path_outside(val):
            where.fail(
                f"server_options[{index}]: the value of {name!r} is a path outside the server's "
                f"datadir (a relative name is the datadir's; {profiles.NULL_DEVICE} discards)"
            )
        out.append((name, val if sep else None))
    return tuple(out)


def _parse_basedir(value: Any, where: _Where) -> Path | None:
    if value is None:
        return None
    text = _require_str(value, "basedir", where)
    path = Path(text).expanduser()
    if not path.is_absolute():
        where.fail(f"basedir {text!r} must be an absolute path")
    return path


def _parse_text(value: Any, key: str, where: _Where) -> str | None:
    if value is None:
        return None
    text = _require_str(value, key, where).strip()
    if not text:
        where.fail(f"{key!r} is empty; remove it or say something")
    return text


def _require_str(value: Any, what: str, where: _Where, quote_hint: bool = False) -> str:
    if isinstance(value, str):
        return value
    hint = " (quote it)" if quote_hint and isinstance(value, int | float) else ""
    where.fail(f"{what} must be a string, got {_kind(value)}{hint}")


# --- helpers --------------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def display(path: Path) -> str:
    """``path`` relative to the cwd when it is below it (shorter messages)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
