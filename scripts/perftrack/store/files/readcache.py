"""A local read cache of the night files: one Parquet file per table and closed month.

A history has one file per table per night, and every query of a view over them opens
and binds each one: at 1,000 nights `SELECT count(*), sum(tps) FROM results` cost 0.33 s
over 1,001 files and 0.04 s over the same rows in 23 (issue #19). So the store's TEMP
views read, for each table, one consolidated file per month of night files (by the
`<yyyy>/<yyyymm>…` of their names) but the newest month, and the newest month's files as
they are. The night files themselves stay as they are in git, never rewritten; the stored
views (plain `duckdb`) read them. docs/schema.md, "The read cache".

A cache file holds exactly the rows of its month's files, combined by column name
(`union_by_name`, as the views combine them) and otherwise as stored (the results' encoded
columns too, so the views' decode gives back the same values): it is derived data, in a
directory beside the DB that git ignores (`data/.results-cache/`), never committed or
published. Its name is a digest of its inputs (the files' paths, sha256s and schema
versions as `data_files` lists them, which `nightfiles.verify` checked at open, and the
DuckDB version that combines them), so a changed input means another name. It is written
atomically by whichever open first needs it (read-only opens too: two processes writing
the same name write the same rows), with its own sha256 in a sidecar; a file whose bytes
do not match its sidecar is rebuilt, never read. If the cache cannot be written (a
read-only checkout, a full disk), the views read the night files: never an error. Writers
delete the cache files no month needs any more (`prune`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from perftrack.core.files import KnownHashes, sha256_file
from perftrack.store.files.sqltext import sql_string

CACHE_FORMAT = 2  # in every digest: a change of how cache files are made renames them all
# (2: rows in the order of the table's key, as a night file's: a month of results sorted
# by series is 5% smaller, and the comparisons' window over it 25% faster at 1,000 nights)
# ZSTD level 1: a cache file is written when its month closes and when a clone first
# reads the history, so it is written fast rather than small. A month of the synthetic
# nightly matrix (31 results files, 7.1 MB) became 6.9 MB in 0.27 s at level 1, 6.7 MB in
# 0.36 s at level 3 (DuckDB's default), 8.7 MB in 0.28 s with snappy (shared machine).
COPY_OPTIONS = "FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1"
SIDECAR = ".sha256"  # `<cache file>.sha256`: the sha256 of its bytes, as written
MEMO = "hashes.json"  # the night and cache files' sha256s, by identity (KnownHashes)
WRITING = "writing"  # `.<name>.writing-<pid>`: being written (a writer deletes leftovers)
MONTH = re.compile(r"^\d{4}/(\d{6})\d\dT")  # `2026/20261125T…` -> 202611
FILENAME = "filename"  # runs: the night file each row came from, relative (see consolidate)
ANSWERS = "answers"  # the directory of store/files/answers.py (pruned there, not here)
ROLLING = "rolling"  # the directory of store/files/rolling.py (one state per question)


def cache_dir(db: Path) -> Path:
    """`data/.results-cache/` for `data/results.duckdb`."""
    return db.with_name(f".{Path(db.name).stem}-cache")


@dataclass(frozen=True)
class Listed:
    """A night file as `data_files` lists it."""

    path: str  # relative to the files' directory
    sha256: str
    version: int


@dataclass(frozen=True)
class Part:
    """What a view reads for some of a table's files: one cache file (`cached`) or one
    night file, and the listed files whose rows it holds."""

    read: Path
    files: tuple[Listed, ...]
    cached: bool


def month_of(path: str) -> str | None:
    """`202611` for `2026/20261125T…`; None for a name of another shape (never cached)."""
    found = MONTH.match(path)
    return found.group(1) if found else None


def _digest(table: str, files: Sequence[Listed]) -> str:
    lines = [f"perftrack read cache {CACHE_FORMAT}", f"duckdb {duckdb.__version__}", table]
    lines += [f"{f.path} {f.sha256} {f.version}" for f in files]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def cache_name(table: str, month: str, files: Sequence[Listed]) -> str:
    return f"{month}-{_digest(table, files)[:24]}.{table}.parquet"


def groups(files: Sequence[Listed]) -> list[tuple[str | None, list[Listed]]]:
    """The files in path order, in runs of one month: (month, files); the newest month's
    files, files of no month and a month of one file come one to a group (month None):
    read as they are."""
    ordered = sorted(files, key=lambda f: f.path)
    months = {m for f in ordered if (m := month_of(f.path))}
    newest = max(months, default=None)
    out: list[tuple[str | None, list[Listed]]] = []
    for f in ordered:
        month = month_of(f.path)
        if month is None or month == newest:
            out.append((None, [f]))
        elif out and out[-1][0] == month:
            out[-1][1].append(f)
        else:
            out.append((month, [f]))
    return [g if len(g[1]) > 1 else (None, g[1]) for g in out]


def known_hashes(db: Path) -> KnownHashes:
    """The sha256s `verify` and the cache's checks remember between opens (in the cache's
    directory: where there is no cache, every file is read at every open, as before)."""
    return KnownHashes(cache_dir(db) / MEMO)


def _trusted(path: Path, known: KnownHashes) -> bool:
    """Is `path` there, byte for byte as its sidecar says it was written?"""
    sidecar = path.with_name(path.name + SIDECAR)
    try:
        return known.sha256(path) == sidecar.read_text(encoding="ascii").strip()
    except (OSError, UnicodeError):
        return False


def read_trusted(path: Path) -> bytes | None:
    """`path`'s bytes if they are as its sidecar says they were written, else None
    (missing, unreadable, changed): for the small files read whole (store/files/answers.py,
    store/files/rolling.py's manifests)."""
    try:
        data = path.read_bytes()
        want = path.with_name(path.name + SIDECAR).read_text(encoding="ascii").strip()
    except (OSError, UnicodeError):
        return None
    return data if hashlib.sha256(data).hexdigest() == want else None


def rows_sql(root: Path, files: Sequence[Listed], *, filename: bool) -> str:
    """SQL of the files' rows combined by column name; with `filename`, a column of each
    row's file path relative to `root` (the runs view keeps the first file's values)."""
    source = "[" + ", ".join(sql_string(f"{root}/{f.path}") for f in files) + "]"
    if not filename:
        return f"SELECT * FROM read_parquet({source}, union_by_name = true)"
    return (
        f"SELECT * REPLACE (substr({FILENAME}, {len(str(root)) + 2}) AS {FILENAME}) "
        f"FROM read_parquet({source}, {FILENAME} = true, union_by_name = true)"
    )


def write_with_sidecar(target: Path, write: Callable[[Path], object]) -> None:
    """`write(tmp)` under a temp name beside `target`, renamed into place, then its sidecar
    (the sha256 of the bytes written), each by rename: a reader sees a whole file or
    none, and a file whose sidecar does not match is never trusted. Raises what `write`
    or the file system raises; leaves no temp file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{WRITING}-{os.getpid()}")
    sidecar = target.with_name(target.name + SIDECAR)
    tmp_sidecar = sidecar.with_name(f".{sidecar.name}.{WRITING}-{os.getpid()}")
    try:
        write(tmp)
        sha = sha256_file(tmp)
        os.replace(tmp, target)
        tmp_sidecar.write_text(sha + "\n", encoding="ascii")
        os.replace(tmp_sidecar, sidecar)
    finally:
        tmp.unlink(missing_ok=True)
        tmp_sidecar.unlink(missing_ok=True)


def _write(
    root: Path, target: Path, files: Sequence[Listed], *, filename: bool, order: str
) -> None:
    """Write the files' rows to `target` in `order`, with its sidecar. A separate
    connection: a failure here never touches the store's connection or transaction."""

    def copy(tmp: Path) -> None:
        con = duckdb.connect(":memory:")
        try:
            select = rows_sql(root, files, filename=filename)
            con.execute(
                f"COPY ({select} ORDER BY {order}) TO {sql_string(str(tmp))} ({COPY_OPTIONS})"
            )
        finally:
            con.close()

    write_with_sidecar(target, copy)


def _built(root: Path, target: Path, files: Sequence[Listed], filename: bool, order: str) -> bool:
    try:
        _write(root, target, files, filename=filename, order=order)
    except (OSError, duckdb.Error):
        return False
    return True


def consolidate(
    db: Path,
    root: Path,
    table: str,
    files: Sequence[Listed],
    *,
    filename: bool = False,
    known: KnownHashes | None = None,
    order: str = "ALL",
) -> list[Part]:
    """What the view of `table` reads, in path order: a trusted cache file for each closed
    month of more than one file (built if missing or untrusted), the night files for the
    rest and for any month whose cache file cannot be written. `root`: the night files'
    directory (absolute); `filename`: the cache keeps each row's file (runs)."""
    directory = cache_dir(db)
    known = known_hashes(db) if known is None else known
    parts: list[Part] = []
    for month, group in groups(files):
        if month is not None:
            target = directory / cache_name(table, month, group)
            if _trusted(target, known) or (
                _built(root, target, group, filename, order) and _trusted(target, known)
            ):
                parts.append(Part(read=target, files=tuple(group), cached=True))
                continue
        parts += [Part(read=root / f.path, files=(f,), cached=False) for f in group]
    return parts


def prune(db: Path, keep: set[str]) -> None:
    """Delete the cache files (and their sidecars, and temp files) not named in `keep`:
    for writers, who hold the exclusive lock. Never fails: the cache is optional."""
    directory = cache_dir(db)
    try:
        entries = list(directory.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name in (ANSWERS, ROLLING):
            continue
        name = entry.name.removesuffix(SIDECAR)
        if (name not in keep and name != MEMO) or entry.name.startswith("."):
            with contextlib.suppress(OSError):
                entry.unlink()
