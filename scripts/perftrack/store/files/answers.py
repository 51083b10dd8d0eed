"""Answers kept on disk from one command to the next: the nightly's `detect` and `site build`.

The nightly publish asks `detect` and then `site build` one question of the same history:
each server's newest values per series, the comparisons' window (compare.RECENT_VALUES),
1.0 s of each at 1,000 nights (docs/benchmarks.md). An answer depends only on the SQL
asked and on what the store's views read: the night files (immutable, each listed with its
sha256 in `data_files`, checked at open) through the views' SQL. So it is kept under the
digest of the three, in the read cache's directory (`data/.results-cache/answers/`:
derived, git-ignored, never committed or published), as JSON (rows of strings, numbers,
booleans, nulls and lists; an answer with any other value is not kept), written atomically
with its sha256 in a sidecar. A file that is missing, does not match its sidecar or does
not parse is asked again; a cache that cannot be written is skipped: never an error.
The store keeps the answers its writer asks (detect) and reads them in any command: an
answer only a reader asks (the heatmap's other metrics, in the site build) would be
written for nobody, the next night's files being others (~0.25 s of JSON each, ~2 s of
the build at the nightly's size).
Writing an answer deletes the question's other answers and every answer over other data:
the directory holds answers over the files of its newest write only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb

from perftrack.store.files import readcache

FORMAT = 1  # in every digest: a change of how answers are kept renames them all
SUBDIR = readcache.ANSWERS
SIDECAR = readcache.SIDECAR
Rows = list[tuple[Any, ...]]


def _sha(*parts: str) -> str:
    return hashlib.sha256("\n\x00".join(parts).encode()).hexdigest()


def what_is_read(con: duckdb.DuckDBPyConnection) -> str:
    """The digest of what the connection's views read: their SQL and every listed file's
    path and sha256."""
    views = con.execute(
        "SELECT view_name, sql FROM duckdb_views() WHERE temporary ORDER BY view_name"
    ).fetchall()
    files = con.execute("SELECT path, sha256 FROM data_files ORDER BY path").fetchall()
    return _sha(
        f"perftrack answers {FORMAT}",
        f"duckdb {duckdb.__version__}",
        json.dumps(views),
        json.dumps(files),
    )


def kept(
    db: Path,
    con: duckdb.DuckDBPyConnection,
    sql: str,
    args: Sequence[Any],
    ask: Callable[[], Rows],
    *,
    keep: bool = True,
) -> Rows:
    """`ask()`'s rows for `sql` with `args` over `con`'s views: the kept answer when there
    is one for what the views read now, else asked, and kept if `keep`."""
    question = _sha(sql, json.dumps(list(args), default=str))[:24]
    data = what_is_read(con)[:24]
    path = readcache.cache_dir(db) / SUBDIR / f"{question}-{data}.json"
    rows = _read(path)
    if rows is not None:
        return rows
    rows = ask()
    if keep:
        _write(path, rows, question, data)
    return rows


def _read(path: Path) -> Rows | None:
    data = readcache.read_trusted(path)
    if data is None:
        return None
    try:
        return [tuple(r) for r in json.loads(data)]
    except (UnicodeError, ValueError, TypeError):
        return None


def _stale(name: str, question: str, data: str) -> bool:
    """An answer to delete when this question's answer over `data` is written: the
    question's other answers, and every answer over other data (temp files are others')."""
    if name.startswith("."):
        return False
    return name.startswith(f"{question}-") or f"-{data}.json" not in name


def _write(path: Path, rows: Rows, question: str, data: str) -> None:
    try:
        text = json.dumps(rows, allow_nan=True, separators=(",", ":")).encode()
    except (TypeError, ValueError):  # a value JSON does not give back as it was: not kept
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        sidecar = path.name + SIDECAR
        for old in path.parent.iterdir():
            if old.name not in (path.name, sidecar) and _stale(old.name, question, data):
                old.unlink(missing_ok=True)
        readcache.write_with_sidecar(path, lambda tmp: tmp.write_bytes(text))
    except OSError:
        return
