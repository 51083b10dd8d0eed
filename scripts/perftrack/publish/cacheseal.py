"""The publish job's read cache, sealed with a key only that job holds.

The nightly's publish job keeps the store's read cache (``data/.results-cache``: Parquet
months, the comparisons' answers, the rolled-forward state; docs/schema.md "The read
cache") in GitHub's Actions cache between nights. Anyone who can write the default
branch's cache scope (another workflow on main, a bench job holding the runtime token)
can save an entry there; a read cache file is checked against its sidecar, but both come
from the same entry. So the publish job trusts an entry only when it carries the job's own
seal:

- ``seal DIR --for KEY``: after the night's publish, ``DIR/SEAL`` lists every file of DIR
  with its sha256, and the exact cache key it is saved under (the tree id of ``data/`` it
  was made for), MACed (HMAC-SHA256) with ``PERFTRACK_CACHE_KEY``, a secret of the
  ``results`` environment: no other job has it;
- ``verify DIR --for KEY``: after the restore, the seal must be there, made with that key,
  for this cache key, and every file must be listed with its digest and nothing else be
  there. Otherwise the whole directory is removed (the store builds what it needs from the
  night files: slower, never wrong) and one line says why, also in the job summary.

Without ``PERFTRACK_CACHE_KEY`` nothing is sealed and every restored cache is removed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
from pathlib import Path

from perftrack.core import files
from perftrack.core.errors import ConfigError

ENV_KEY = "PERFTRACK_CACHE_KEY"
SEAL = "SEAL"
VERSION = 1
MIN_KEY_CHARS = 32  # a secret of at least 128 bits, e.g. `openssl rand -hex 32`


def _secret() -> bytes | None:
    value = os.environ.get(ENV_KEY, "")
    if not value:
        return None
    if len(value) < MIN_KEY_CHARS:
        raise ConfigError(
            f"{ENV_KEY} is shorter than {MIN_KEY_CHARS} characters: use a random secret"
        )
    return value.encode()


def _listing(directory: Path) -> dict[str, str]:
    """Every regular file under ``directory`` (relative path -> sha256), but the seal; a
    symlink or other non-file is listed as such, so it can never verify."""
    out: dict[str, str] = {}
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory).as_posix()
        if rel == SEAL or (path.is_dir() and not path.is_symlink()):
            continue
        out[rel] = files.sha256_file(path) if path.is_file() and not path.is_symlink() else "?"
    return out


def _mac(secret: bytes, cache_key: str, listing: dict[str, str]) -> str:
    body = json.dumps({"version": VERSION, "key": cache_key, "files": listing}, sort_keys=True)
    return hmac.new(secret, body.encode(), hashlib.sha256).hexdigest()


def seal(directory: Path, cache_key: str) -> str:
    """Seal ``directory`` for ``cache_key``; what was done, one line."""
    secret = _secret()
    if secret is None:
        return f"not sealed: {ENV_KEY} is not set, so the next night rebuilds the read cache"
    if not directory.is_dir():
        return f"not sealed: {directory} does not exist"
    listing = _listing(directory)
    if "?" in listing.values():
        raise ConfigError(f"{directory} holds something that is not a regular file: not sealed")
    text = json.dumps(
        {"version": VERSION, "key": cache_key, "mac": _mac(secret, cache_key, listing)}
    )
    files.replace_text(directory / SEAL, text + "\n")
    return f"sealed {directory} ({len(listing)} files) for {cache_key}"


def _problem(directory: Path, cache_key: str) -> str | None:
    secret = _secret()
    if secret is None:
        return f"{ENV_KEY} is not set, so no cache is trusted"
    try:
        data = json.loads((directory / SEAL).read_text(encoding="utf-8")[:4096])
        mac, key = str(data["mac"]), str(data["key"])
    except FileNotFoundError:
        return "it carries no seal of this job's"
    except (OSError, ValueError, KeyError, TypeError):
        return "its seal is not one this job writes"
    if key != cache_key:
        return f"it was sealed for {key[:80]!r}, not {cache_key!r}"
    if not hmac.compare_digest(mac, _mac(secret, cache_key, _listing(directory))):
        return "its files are not the ones this job sealed (added, changed or removed since)"
    return None


def verify(directory: Path, cache_key: str) -> str:
    """Keep ``directory`` only if this job sealed it for ``cache_key``; one line."""
    if not directory.exists():
        return f"no read cache restored for {cache_key}: the night files are read afresh"
    problem = _problem(directory, cache_key)
    if problem is None:
        return f"read cache {directory} verified: sealed by this workflow for {cache_key}"
    shutil.rmtree(directory, ignore_errors=True)
    if directory.exists() or directory.is_symlink():
        directory.unlink()
    return f"restored read cache ignored and removed: {problem}"
