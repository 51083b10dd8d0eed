"""Answers over the whole history, rolled forward by each night's files instead of asked again.

Some questions detect asks of every result: the comparisons' window (each server's newest
values of every series) and the nightly points (each run's median per series and server).
Asked of the whole history, each is a sort or a grouping of every result, the largest
parts of `perftrack detect` at 1,000 nights (docs/benchmarks.md). A night only adds files
(night files are immutable, each listed with its sha256 in `data_files`), so such an
answer after a night is the answer before it combined with the rows of the added files.
So the answer's rows are kept (Parquet) with the list of results files they were taken
from, beside the read cache (`data/.results-cache/rolling/`: derived, git-ignored, never
committed or published), and the next ask over those files and more reads only the others.

An answer is rolled forward only where that gives the rows the whole history would:
- the same question (its SQL, this module's FORMAT, DuckDB's version: the state's name)
  over results files that include every kept one, each with the same sha256 and schema
  version (files are only ever added; a migration or a repair rewrites them);
- the question's own check of the added rows (`Check`), e.g. that they hold no later
  attempt of a cell whose kept row they would replace, or no run the kept answer has.
Anything else (no state, a file changed or gone, a state whose bytes do not match their
sidecar) asks the whole history, and keeps that. A state that cannot be written is not
kept: never an error. The answers are asked under the store's lock, so every process that
asks one at the same time asks it of the same files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb

from perftrack.core.files import sha256_file
from perftrack.store.files import nightfiles, readcache
from perftrack.store.files.sqltext import sql_string

FORMAT = 1  # in every state's name: a change of how answers are kept renames them
SUBDIR = readcache.ROLLING
# A state not written for this long is deleted when a writer (the store's exclusive lock:
# no reader at the same time) writes another: a question no longer asked (another
# perftrack's SQL, another DuckDB) leaves no files behind for good.
STALE_S = 7 * 24 * 3600
# A question as SQL of its answer over a results source (`results`, or a subquery of the
# added files); the merge of answers as SQL over the rows of several (a source: the kept
# answer's and the added files'); and, if the question has one, its check that the added
# files' rows (second argument, SQL of results) may be rolled into the kept answer (first).
Query = Callable[[str], str]
Merge = Callable[[str], str]
Check = Callable[[str, str], bool]


def name(whole: str) -> str:
    """The answer's name: the digest of its question (`whole`, its SQL over every result;
    FORMAT; DuckDB's version). Its kept files and its TEMP table are named so."""
    question = "\n\x00".join((f"perftrack rolling {FORMAT}", f"duckdb {duckdb.__version__}", whole))
    return "_rolling_" + hashlib.sha256(question.encode()).hexdigest()[:24]


def advance(
    con: duckdb.DuckDBPyConnection,
    db: Path,
    query: Query,
    merge: Merge,
    check: Check | None = None,
    *,
    writer: bool = False,
) -> tuple[str, str]:
    """SQL of the answer's rows now, as a source to read them from, and how they were
    found: "kept", "rolled" (`merge` of the kept answer's rows and `query` of the added
    files) or "asked" (`query` of every result). Kept for the next ask when the cache can
    be written; else left in TEMP table `name(query("results"))`. `writer`: the caller
    holds the store's exclusive lock (stale states are deleted then)."""
    whole = query("results")
    files = con.execute(
        f"SELECT path, sha256, schema_version FROM {nightfiles.FILES_TABLE} "
        "WHERE table_name = 'results' ORDER BY path"
    ).fetchall()
    table = name(whole)
    here = readcache.cache_dir(db) / SUBDIR
    state, rows = here / f"{table}.json", here / f"{table}.parquet"
    kept = f"read_parquet({sql_string(str(rows))})"
    added = _added(_manifest(state, rows), files)
    if added == []:
        return kept, "kept"
    sql, how = whole, "asked"
    if added:
        source = f"({nightfiles.select_files(con, db, 'results', added)})"
        if check is None or check(kept, source):
            sql = merge(f"(SELECT * FROM {kept} UNION ALL BY NAME {query(source)})")
            how = "rolled"
    if _save(con, sql, state, rows, files):
        if writer:
            _forget_stale(here, time.time() - STALE_S)
        return kept, how
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {sql}")
    return table, how


def _manifest(state: Path, rows: Path) -> list[list[Any]] | None:
    """The files a kept answer was taken from, if its manifest and rows are whole."""
    data = readcache.read_trusted(state)
    if data is None:
        return None
    try:
        manifest = json.loads(data)
        if sha256_file(rows) != manifest["rows_sha256"]:
            return None
        return [list(f) for f in manifest["files"]]
    except (OSError, UnicodeError, ValueError, TypeError, KeyError):
        return None


def _added(kept: list[list[Any]] | None, files: Sequence[tuple[Any, ...]]) -> list[str] | None:
    """The results files listed now and not when the answer was kept ([]: none); None
    when a kept file is no longer listed as it was (or nothing is kept)."""
    if kept is None:
        return None
    now = {f[0]: list(f) for f in files}
    if any(now.get(f[0]) != f for f in kept):
        return None
    known = {f[0] for f in kept}
    return [path for path in now if path not in known]


def _save(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    state: Path,
    rows: Path,
    files: Sequence[tuple[Any, ...]],
) -> bool:
    """Keep the answer's rows and the files they were taken from; False if it cannot."""
    try:
        readcache.write_with_sidecar(
            rows,
            lambda tmp: con.execute(
                f"COPY ({sql}) TO {sql_string(str(tmp))} ({readcache.COPY_OPTIONS})"
            ),
        )
        manifest = {"rows_sha256": sha256_file(rows), "files": [list(f) for f in files]}
        text = json.dumps(manifest, separators=(",", ":")).encode()
        readcache.write_with_sidecar(state, lambda tmp: tmp.write_bytes(text))
        return True
    except (OSError, duckdb.Error):
        with contextlib.suppress(OSError):
            state.unlink()
        return False


def _forget_stale(here: Path, before: float) -> None:
    """Delete the states (and their sidecars, and temp files) last written before
    `before`. Never fails: the states are optional."""
    for entry in here.iterdir():
        with contextlib.suppress(OSError):
            if entry.stat().st_mtime < before:
                entry.unlink()
