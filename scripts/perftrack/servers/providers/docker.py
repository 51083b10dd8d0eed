"""``docker`` provider: the server of an image (``mysql:TAG``, ``mariadb:TAG``,
``percona/percona-server:TAG``), run by the image's own ``mysqld``, not its entrypoint.

fetch: the image must be in the Docker engine (``$DOCKER_HOST`` or the default socket) or
be pulled. Before a pull from Docker Hub, the tag is looked up in Docker Hub's API; a tag
that does not exist is a one-line error naming the nearest known tags. One short
container then probes the image: which ``mysqld`` / install script it has, the version
``mysqld --verbose --help`` reports (checked against the catalog) and its compiled-in
``lc-messages-dir``. The image digest is recorded as the install's ``source_sha256``
(the pinned digest it was verified against; unpinned, the registry's manifest digest when
the image came from a registry, else the image id).

Digest pinning: an entry's ``digest: sha256:…`` must be one of the image's digests — a
registry manifest digest in its ``RepoDigests`` (a pulled image) or its image id (an image
built or imported locally, which has no RepoDigests). The digest is the catalog's, or the
night plan's for an entry the catalog marks ``unpinned`` (pinned when the night was
planned, trust on first use: servers/planpins.py). It is checked right after ``docker
image inspect``, before the probe: a mismatch is a one-line `FetchError` and nothing from
the image is run. The server then runs by image id, so a tag moved afterwards cannot swap
the image under a run; the verified digest is the install's ``source_sha256``.

run: the install's ``launcher`` is the `perftrack.servers.providers.docker_run` wrapper
(``python -m perftrack.servers.providers.docker_run IMAGE -- CMD…``), so the Server lifecycle runs
unchanged: the wrapper starts ``docker run --rm --network host --user 0:0`` with the
server's directory (datadir, my.cnf, socket, logs — all under the directory of
``--defaults-file``) bind-mounted at the same path, ``--entrypoint CMD[0]`` and a unique
container name. The datadir is therefore on the runner's own disk, the socket and port
are the host's, and the health wait is the Server's usual one (socket, then SQL).

Stopping: SIGTERM/SIGINT/SIGHUP to the wrapper → ``docker stop`` (SIGTERM to mysqld, a
clean InnoDB shutdown); the container is removed (``--rm``, then ``docker rm -f`` to be
sure). If perftrack dies, even by SIGKILL, the wrapper gets SIGTERM (PR_SET_PDEATHSIG) and
does the same; the wrapper's own ``docker run`` client gets SIGTERM if the wrapper dies.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from perftrack.core.errors import ConfigError, FetchError
from perftrack.servers.catalog import IMAGE_DIGEST_RE, Entry
from perftrack.servers.install import Install
from perftrack.servers.providers.docker_run import CONTAINER_PREFIX

NAME = "docker"
RUN_MODULE = "perftrack.servers.providers.docker_run"  # the launcher: see that module
ENV_HUB_URL = "PERFTRACK_DOCKER_HUB_URL"
HUB_URL = "https://hub.docker.com"
HUB_NAMESPACE = "library"  # official images: mysql = library/mysql
# A Docker Hub repository: NAME or NAMESPACE/NAME (docker/distribution reference grammar).
IMAGE_NAME_RE = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)?$")
HUB_REGISTRIES = ("docker.io", "index.docker.io", "registry-1.docker.io")
# Docker Hub API: GET /v2/namespaces/{namespace}/repositories/{repository}/tags[/{tag}]
# (docs.docker.com/reference/api/hub/latest/, "List repository tags"); page_size max 100.
HUB_TAGS_PATH = "/v2/namespaces/{namespace}/repositories/{repository}/tags"
HUB_PAGE_SIZE = 100
HUB_MAX_PAGES = 100  # 10,000 tags: library/mysql has a few thousand
HUB_TIMEOUT_S = 30  # seconds per request (`perftrack plan` asks with a shorter bound)
HTTP_NOT_FOUND = 404
NEAREST_TAGS = 5
NEAREST_CUTOFF = 0.5
DOCKER_TIMEOUT_S = 120  # `docker image inspect` / `docker version`: seconds
PROBE_TIMEOUT_S = 300  # one container running mysqld --help: ~1 s here
PULL_TIMEOUT_S = 3600  # an image is 200-600 MB
# Printed by the probe: the first server binary and install script found, then the
# server's `--verbose --help` (its version line and its compiled-in paths).
PROBE_SCRIPT = """
for b in /usr/sbin/mysqld /usr/sbin/mariadbd /usr/bin/mysqld /usr/bin/mariadbd \
         /usr/local/mysql/bin/mysqld; do
  if [ -x "$b" ]; then server="$b"; break; fi
done
[ -n "$server" ] || { echo "perftrack-probe: no mysqld"; exit 3; }
echo "perftrack-probe mysqld=$server"
for s in /usr/bin/mariadb-install-db /usr/bin/mysql_install_db \
         /usr/local/mysql/scripts/mysql_install_db; do
  if [ -x "$s" ]; then echo "perftrack-probe install_db=$s"; break; fi
done
exec "$server" --no-defaults --verbose --help
"""
PROBE_FIELD_RE = re.compile(r"^perftrack-probe (\w+)=(\S+)$", re.MULTILINE)
VERSION_RE = re.compile(r"\bVer (\d+\.\d+\.\d+)")
HELP_VALUE_RE = r"^{name}\s+(/\S*)\s*$"
DIGEST_RE = re.compile(r"sha256:([0-9a-f]{64})")


class HubUnreachable(FetchError):
    """Docker Hub (or ``$PERFTRACK_DOCKER_HUB_URL``) did not answer at all: no route, a
    refused connection, a timeout. Any further request would fail the same way."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason  # the network's words alone ("[Errno 111] Connection refused")


@dataclass(frozen=True)
class Tag:
    """One tag of a Docker Hub repository."""

    name: str
    digest: str | None


# --- fetch ---------------------------------------------------------------------------------


def fetch(
    entry: Entry, cache_dir: Path | None = None, progress: Callable[[str], None] | None = None
) -> Install:
    """The install for ``entry``'s image (pulled if absent); nothing is cached on disk."""
    del cache_dir  # images live in the Docker engine
    report = progress or (lambda _message: None)
    if entry.image is None:
        raise ConfigError(f"server {entry.id!r} has no 'image' for the docker provider")
    if entry.unpinned:
        raise ConfigError(
            f"server {entry.id!r}: the image {entry.image} is {entry.skip_reason()}; "
            "nothing unpinned is benchmarked"
        )
    docker = docker_binary()
    _check_engine(docker)
    info = _inspect(docker, entry.image)
    if info is None:
        if is_docker_hub(entry.image):
            check_tag(entry.image)
        report(f"pulling {entry.image}")
        _docker(docker, ["pull", "--quiet", entry.image], PULL_TIMEOUT_S, "pull")
        info = _inspect(docker, entry.image)
        if info is None:
            raise FetchError(f"`docker pull {entry.image}` succeeded but the image is not there")
    else:
        report(f"using image {entry.image} ({info['Id'][:19]})")
    image_id = str(info["Id"])
    verify_digest(entry, info)
    probe = _probe(docker, image_id, entry)
    version = _check_version(entry, probe)
    repo_digest = _repo_digest(info)
    return Install(
        server_id=entry.id,
        product=entry.product,
        version=version,
        provider=NAME,
        basedir=Path(probe.get("basedir", "/usr")),
        mysqld=Path(probe["mysqld"]),
        share_dir=Path(probe["lc-messages-dir"]),
        install_db=Path(probe["install_db"]) if "install_db" in probe else None,
        lib_dirs=(),
        source_sha256=_digest_hex(entry.digest or repo_digest or image_id),
        stand_in=entry.stand_in,
        extra={"image": entry.image, "image_id": image_id, "repo_digest": repo_digest or ""},
        launcher=(sys.executable, "-m", RUN_MODULE, image_id, "--"),
    )


def docker_binary() -> str:
    found = shutil.which("docker")
    if found is None:
        raise FetchError(
            "docker not found on PATH: install the Docker client (apt-get install docker.io) "
            "or use another provider"
        )
    return found


def _docker(docker: str, args: list[str], timeout_s: float, what: str) -> str:
    try:
        done = subprocess.run(
            [docker, *args],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise FetchError(f"`docker {what}` took longer than {timeout_s:.0f} s") from None
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise FetchError(f"`docker {' '.join(args[:2])}` failed: {reason}")
    return done.stdout


def _check_engine(docker: str) -> None:
    try:
        _docker(docker, ["version", "--format", "{{.Server.Version}}"], DOCKER_TIMEOUT_S, "version")
    except FetchError as err:
        where = os.environ.get("DOCKER_HOST") or "the default socket"
        raise FetchError(
            f"cannot reach a Docker engine at {where} ({err}): start dockerd or set "
            "DOCKER_HOST to its socket"
        ) from None


def _inspect(docker: str, image: str) -> dict | None:
    try:
        out = _docker(docker, ["image", "inspect", image], DOCKER_TIMEOUT_S, "image inspect")
    except FetchError as err:
        if "No such image" in str(err) or "no such image" in str(err).lower():
            return None
        raise
    data = json.loads(out)
    return data[0] if data else None


def _repo_digest(info: dict) -> str | None:
    """The registry's manifest digest (``mysql@sha256:…``) of a pulled image, if any."""
    for item in info.get("RepoDigests") or []:
        if DIGEST_RE.search(str(item)):
            return str(item)
    return None


def image_digests(info: dict) -> list[str]:
    """Every ``sha256:…`` the image answers to: its RepoDigests' digests, then its id."""
    found = [
        f"sha256:{m.group(1)}"
        for item in info.get("RepoDigests") or []
        for m in [DIGEST_RE.search(str(item))]
        if m
    ]
    image_id = DIGEST_RE.search(str(info.get("Id", "")))
    if image_id:
        found.append(f"sha256:{image_id.group(1)}")
    return found


def verify_digest(entry: Entry, info: dict) -> None:
    """`FetchError` unless the image has the digest the catalog records (if it records one)."""
    if entry.digest is None:
        return
    digests = image_digests(info)
    if entry.digest in digests:
        return
    have = ", ".join(d[:19] + "…" for d in digests) or "none"
    if entry.pinned_by == "plan":
        where = "the night plan (pinned when the night was planned)"
        todo = (
            f"the tag moved since, or another image is tagged {entry.image} in this engine: "
            "remove it (`docker image rm`) or plan the night again"
        )
    else:
        where = "configs/versions.yaml"
        todo = "pull the recorded image or, if this image is the one you trust, record its digest"
    raise FetchError(
        f"{entry.id}: the image {entry.image} has digest {have}, but {where} records "
        f"{entry.digest}: refused (nothing from it is used); {todo}"
    )


def _digest_hex(text: str) -> str | None:
    m = DIGEST_RE.search(text)
    return m.group(1) if m else None


def _probe(docker: str, image_id: str, entry: Entry) -> dict[str, str]:
    """What the image holds: server and install script paths, version, compiled-in dirs."""
    name = f"{CONTAINER_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"  # the sweep's handle
    isolated = ["--rm", "--name", name, "--network", "none", "--user", "0:0"]
    isolated += ["--entrypoint", "/bin/sh"]
    out = _docker(
        docker,
        ["run", *isolated, image_id, "-c", PROBE_SCRIPT],
        PROBE_TIMEOUT_S,
        "run (probe)",
    )
    found = dict(PROBE_FIELD_RE.findall(out))
    if "mysqld" not in found:
        raise FetchError(f"{entry.id}: the image {entry.image} has no mysqld or mariadbd")
    m = VERSION_RE.search(out)
    if m:
        found["version"] = m.group(1)
    for name in ("lc-messages-dir", "basedir"):
        hit = re.search(HELP_VALUE_RE.format(name=re.escape(name)), out, re.MULTILINE)
        if hit:
            found[name] = hit.group(1).rstrip("/") or "/"
    if "version" not in found or "lc-messages-dir" not in found:
        raise FetchError(
            f"{entry.id}: `{found['mysqld']} --verbose --help` in {entry.image} printed no "
            "version or lc-messages-dir: is it a MySQL-family server image?"
        )
    return found


def _check_version(entry: Entry, probe: dict[str, str]) -> str:
    version = probe["version"]
    if version != entry.version and not version.startswith(entry.version + "."):
        raise ConfigError(
            f"{entry.id}: the image {entry.image} has {entry.product} {version}, but "
            f"configs/versions.yaml says {entry.version}: fix the entry's version or image"
        )
    return version


# --- Docker Hub tags -----------------------------------------------------------------------


def split_image(image: str) -> tuple[str | None, str, str | None]:
    """(registry or None, repository, tag or None) of an image reference."""
    name = image.split("@", 1)[0]
    registry = None
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, name = first, rest
    last = name.rsplit("/", 1)[-1]
    tag = None
    if ":" in last:
        name, tag = name.rsplit(":", 1)
    return registry, name, tag


def is_docker_hub(image: str) -> bool:
    registry, _, _ = split_image(image)
    return registry is None or registry in HUB_REGISTRIES


def _hub_path(repository: str) -> str:
    namespace, _, name = repository.rpartition("/")
    return HUB_TAGS_PATH.format(
        namespace=urllib.parse.quote(namespace or HUB_NAMESPACE, safe=""),
        repository=urllib.parse.quote(name, safe=""),
    )


def hub_url() -> str:
    return (os.environ.get(ENV_HUB_URL) or HUB_URL).rstrip("/")


def _get_json(url: str, timeout_s: float = HUB_TIMEOUT_S) -> dict | None:
    """GET a Docker Hub API URL; None on 404; `HubUnreachable` when nothing answers,
    `FetchError` on anything else going wrong."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            data = json.load(response)
    except urllib.error.HTTPError as err:
        if err.code == HTTP_NOT_FOUND:
            return None
        raise FetchError(f"Docker Hub answered HTTP {err.code} for {url}") from None
    except ValueError as err:
        raise FetchError(f"Docker Hub's answer for {url} is not JSON ({err})") from None
    except (urllib.error.URLError, OSError) as err:
        reason = str(getattr(err, "reason", None) or err)
        raise HubUnreachable(
            f"cannot read Docker Hub at {url}: {reason}; check the network (or {ENV_HUB_URL})",
            reason,
        ) from None
    if not isinstance(data, dict):
        raise FetchError(f"Docker Hub's answer for {url} is not a JSON object")
    return data


def hub_digest(image: str, *, timeout_s: float = HUB_TIMEOUT_S, suggest: bool = True) -> str:
    """The Docker Hub digest (``sha256:…``) of ``image``'s tag: what ``docker pull`` records
    in RepoDigests, so `verify_digest` accepts the pulled image. `ConfigError` if the tag is
    not on Docker Hub (naming the nearest tags if ``suggest``: that lists every tag),
    `HubUnreachable` if nothing answers, `FetchError` if Hub gives no usable digest."""
    _, repository, tag = split_image(image)
    if tag is None:
        raise ConfigError(f"image {image!r} has no tag to pin")
    path = f"{_hub_path(repository)}/{urllib.parse.quote(tag, safe='')}"
    data = _get_json(hub_url() + path, timeout_s)
    if data is None:
        if suggest:
            check_tag(image)  # names the nearest tags
        raise ConfigError(f"no tag {tag!r} of {repository} on Docker Hub")
    digest = data.get("digest")
    if not isinstance(digest, str) or not IMAGE_DIGEST_RE.match(digest):
        raise FetchError(f"Docker Hub gives no sha256 digest for {image}: got {digest!r}")
    return digest


def list_tags(repository: str) -> list[Tag]:
    """Every tag of a Docker Hub repository (``mysql``, ``percona/percona-server``)."""
    base = hub_url()
    url: str | None = f"{base}{_hub_path(repository)}?page_size={HUB_PAGE_SIZE}"
    tags: list[Tag] = []
    for _page in range(HUB_MAX_PAGES):
        if url is None:
            return tags
        data = _get_json(url)
        if data is None:
            raise ConfigError(f"no repository {repository!r} on Docker Hub ({base})")
        for item in data.get("results") or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                tags.append(Tag(item["name"], item.get("digest")))
        url = data.get("next") or None
        if url is not None and not str(url).startswith(base + "/"):
            raise FetchError(f"Docker Hub's next page {url!r} is not on {base}: refused")
    raise FetchError(f"{repository} has more than {HUB_MAX_PAGES} pages of tags: refused")


def tag_exists(repository: str, tag: str) -> bool:
    path = f"{_hub_path(repository)}/{urllib.parse.quote(tag, safe='')}"
    return _get_json(hub_url() + path) is not None


def nearest_tags(tag: str, known: list[str]) -> list[str]:
    """The known tags closest to ``tag`` (difflib), best first."""
    return difflib.get_close_matches(tag, known, NEAREST_TAGS, NEAREST_CUTOFF)


def check_tag(image: str) -> None:
    """`ConfigError` naming the nearest known tags if ``image``'s tag is not on Docker Hub."""
    _, repository, tag = split_image(image)
    if tag is None or tag_exists(repository, tag):
        return
    names = [t.name for t in list_tags(repository)]
    near = nearest_tags(tag, names)
    hint = f"; nearest known tags: {', '.join(near)}" if near else ""
    raise ConfigError(
        f"no tag {tag!r} of {repository} on Docker Hub{hint} (`perftrack servers tags "
        f"{repository}` lists them); fix the image in configs/versions.yaml"
    )
