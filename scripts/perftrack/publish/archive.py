"""The monthly archive of run records (issue 39): GitHub Release assets + a manifest in git.

The committed history leaves out what no analysis reads (`tps_series`); the run records
keep everything and are archived outside git, one asset per month: `records-YYYY-MM.tar.gz`
attached to the release tagged `records-YYYY-MM`. The asset is reproducible (members sorted,
mtime 0, gzip header without name or time), so the same records give the same sha256.
`data/archive/manifest.json` lists each month: asset, tag, sha256, bytes, record count,
first/last night. As nights arrive during a month the asset is rebuilt (the month's
earlier records, fetched and verified, plus tonight's) and replaced.

GitHub REST API (base URL from PERFTRACK_GITHUB_API_URL or GITHUB_API_URL, http only on
127.0.0.1; token GITHUB_TOKEN; repository GITHUB_REPOSITORY): get/create a release by tag,
delete an asset, upload to the release's `upload_url`, download an asset.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from perftrack.core import record
from perftrack.core.errors import ConfigError, EnvironmentProblem
from perftrack.publish.prcomment import api_url

MANIFEST = Path("data/archive/manifest.json")
MONTH_RE = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])$")
REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
TIMEOUT_S = 60


class RemoteError(EnvironmentProblem):
    """The GitHub API refused or could not be reached (exit 3)."""


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One month of the manifest."""

    month: str
    asset: str
    tag: str
    sha256: str
    bytes: int
    records: int
    first_night: str
    last_night: str


@dataclass(frozen=True, kw_only=True)
class Remote:
    """Where the releases live."""

    api: str
    repository: str
    token: str


def names(month: str) -> tuple[str, str]:
    """(asset name, release tag) of `month`."""
    return f"records-{month}.tar.gz", f"records-{month}"


def check_month(month: str) -> str:
    if not MONTH_RE.match(month):
        raise ConfigError(f"month {month!r} is not YYYY-MM")
    return month


# --- the manifest ------------------------------------------------------------------------


def load_manifest(path: Path) -> dict[str, Entry]:
    if not path.exists():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {e["month"]: Entry(**e) for e in raw["months"]}
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not an archive manifest ({exc})") from None


def save_manifest(path: Path, entries: dict[str, Entry]) -> None:
    """Written whole to a temporary file, then renamed (never half-written)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"months": [asdict(entries[m]) for m in sorted(entries)]}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def entry(path: Path, month: str) -> Entry:
    found = load_manifest(path).get(check_month(month))
    if found is None:
        raise ConfigError(f"month {month} is not in {path}")
    return found


# --- the asset ---------------------------------------------------------------------------


def month_of(rec: dict[str, Any]) -> str:
    return str(rec["started_at"])[:7]


def pack(files: dict[str, bytes]) -> bytes:
    """A reproducible tar.gz of `files` (name -> bytes): sorted, mtime 0, no owners."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(files[name]), 0, 0o644
            tar.addfile(info, io.BytesIO(files[name]))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def unpack(blob: bytes, where: str) -> dict[str, bytes]:
    """The files of an asset; ConfigError naming `where` for a damaged one."""
    try:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            out: dict[str, bytes] = {}
            for m in tar.getmembers():
                if not m.isfile() or "/" in m.name or m.name.startswith("."):
                    raise ConfigError(f"{where}: unexpected member {m.name!r}")
                fh = tar.extractfile(m)
                out[m.name] = fh.read() if fh else b""
            return out
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ConfigError(f"{where}: not a records archive ({exc})") from None


def describe(month: str, files: dict[str, bytes], blob: bytes) -> Entry:
    nights = sorted(json.loads(b)["started_at"][:10] for b in files.values())
    asset, tag = names(month)
    return Entry(
        month=month,
        asset=asset,
        tag=tag,
        sha256=hashlib.sha256(blob).hexdigest(),
        bytes=len(blob),
        records=len(files),
        first_night=nights[0],
        last_night=nights[-1],
    )


def records_by_month(sources: Iterable[Path]) -> dict[str, dict[str, bytes]]:
    """The record files under `sources` (validated), by month of their start."""
    out: dict[str, dict[str, bytes]] = {}
    for path in record.find(list(sources)):
        rec = record.read(path)
        out.setdefault(month_of(rec), {})[f"{rec['record_id'].replace(':', '_')}.json"] = (
            path.read_bytes()
        )
    return out


# --- the GitHub API ----------------------------------------------------------------------


def remote_from_env(env: dict[str, str] | None = None) -> Remote:
    env = dict(os.environ if env is None else env)
    repository = env.get("GITHUB_REPOSITORY", "")
    if not REPO_RE.match(repository):
        raise ConfigError(f"GITHUB_REPOSITORY={repository!r} is not OWNER/NAME")
    token = env.get("GITHUB_TOKEN", "")
    if not token:
        raise ConfigError("GITHUB_TOKEN is not set: the archive needs `contents: write`")
    api = api_url(env.get("PERFTRACK_GITHUB_API_URL") or env.get("GITHUB_API_URL"))
    return Remote(api=api, repository=repository, token=token)


class _NoTokenElsewhere(urllib.request.HTTPRedirectHandler):
    """Follows a redirect (an asset download goes to a storage host) without sending the
    token to another host (which would also refuse a second authentication)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urllib.parse.urlsplit(newurl).netloc != req.host:
            new.headers.pop("Authorization", None)
            new.unredirected_hdrs.pop("Authorization", None)
        return new


_OPENER = urllib.request.build_opener(_NoTokenElsewhere)


def _call(
    remote: Remote, method: str, url: str, data: bytes | None = None, kind: str = "application/json"
) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", f"Bearer {remote.token}")
    req.add_header("X-GitHub-Api-Version", "2022-11-28")
    req.add_header("Accept", kind if method == "GET" else "application/vnd.github+json")
    if data is not None:
        req.add_header("Content-Type", kind)
    try:
        with _OPENER.open(req, timeout=TIMEOUT_S) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return 404, b""
        raise RemoteError(f"{method} {url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise RemoteError(f"{method} {url}: {exc}") from None


def _json(remote: Remote, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    status, raw = _call(remote, method, f"{remote.api}/repos/{remote.repository}{path}", data)
    return None if status == 404 else json.loads(raw or b"null")


def release(remote: Remote, tag: str, create: bool) -> dict[str, Any] | None:
    found: dict[str, Any] | None = _json(remote, "GET", f"/releases/tags/{tag}")
    if found is None and create:
        body = {"tag_name": tag, "name": tag, "body": f"Run records of {tag[8:]} (perftrack)"}
        found = _json(remote, "POST", "/releases", body)
    return found


def download(remote: Remote, entry: Entry) -> bytes:
    """The month's asset, its sha256 checked against the manifest's entry."""
    rel = release(remote, entry.tag, create=False)
    asset = next((a for a in (rel or {}).get("assets", []) if a["name"] == entry.asset), None)
    if asset is None:
        raise ConfigError(f"{entry.month}: asset {entry.asset} is missing from release {entry.tag}")
    url = f"{remote.api}/repos/{remote.repository}/releases/assets/{asset['id']}"
    _status, blob = _call(remote, "GET", url, kind="application/octet-stream")
    got = hashlib.sha256(blob).hexdigest()
    if got != entry.sha256:
        raise ConfigError(
            f"{entry.month}: asset {entry.asset} has sha256 {got}, manifest says {entry.sha256}"
        )
    return blob


def upload(remote: Remote, month: str, blob: bytes) -> None:
    """Attach `blob` as the month's asset, replacing the one there."""
    asset, tag = names(month)
    rel = release(remote, tag, create=True) or {}
    for old in rel.get("assets", []):
        if old["name"] == asset:
            _call(
                remote,
                "DELETE",
                f"{remote.api}/repos/{remote.repository}/releases/assets/{old['id']}",
            )
    base = str(rel["upload_url"]).split("{", 1)[0]
    url = f"{base}?{urllib.parse.urlencode({'name': asset})}"
    _call(remote, "POST", url, blob, kind="application/gzip")


# --- the three commands ------------------------------------------------------------------


def archive(
    remote: Remote, sources: Iterable[Path], manifest: Path, *, fresh: bool = False
) -> list[Entry]:
    """Add the records under `sources` to their months' assets; the manifest updated.
    `fresh`: the records are each month's whole content (the month's asset is not read:
    the way to put right an asset that no longer matches the manifest)."""
    entries = load_manifest(manifest)
    done: list[Entry] = []
    for month, new in sorted(records_by_month(sources).items()):
        files: dict[str, bytes] = {}
        if month in entries and not fresh:
            files = unpack(download(remote, entries[month]), entries[month].asset)
        if not fresh and all(files.get(k) == v for k, v in new.items()):
            continue  # nothing new this month
        files.update(new)
        blob = pack(files)
        upload(remote, month, blob)
        entries[month] = describe(month, files, blob)
        done.append(entries[month])
        save_manifest(manifest, entries)  # month by month: each entry names what is uploaded
    return done


def verify(remote: Remote, manifest: Path, month: str) -> Entry:
    """Download and check one month (sha256, every record valid); nothing written."""
    e = entry(manifest, month)
    files = unpack(download(remote, e), e.asset)
    if len(files) != e.records:
        raise ConfigError(f"{e.month}: {e.asset} holds {len(files)} records, manifest {e.records}")
    for name, raw in files.items():
        record.validate(json.loads(raw), f"{e.asset}:{name}")
    return e


def fetch(remote: Remote, manifest: Path, month: str, out: Path) -> Entry:
    """Verify one month and unpack its records into `out` (a new directory: a month is
    never fetched over an existing one), written to a temporary directory, then renamed."""
    if out.exists():
        raise ConfigError(f"{out} already exists: not overwritten (month {month} fetched?)")
    e = entry(manifest, month)
    files = unpack(download(remote, e), e.asset)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, raw in files.items():
            (tmp / name).write_bytes(raw)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return e


__all__ = [
    "MANIFEST",
    "Entry",
    "Remote",
    "RemoteError",
    "archive",
    "fetch",
    "load_manifest",
    "names",
    "pack",
    "remote_from_env",
    "verify",
]
