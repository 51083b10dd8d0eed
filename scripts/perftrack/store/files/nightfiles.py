"""The immutable half of the results DB: one set of ZSTD Parquet files per ingest.

Since schema v6 the tables that grow with every night (`results`, `runs`, `servers`,
`hardware`, `server_variables`) are not stored in `data/results.duckdb` but in files
beside it, `data/results/<yyyy>/<stamp>-<ids>.<table>.parquet`, written once by the
ingest that added the rows and never rewritten. The DuckDB file lists them in
`data_files` (path, rows, bytes, sha256, schema version) and has a view of each table over
its files, so every query sees the whole history as before. docs/schema.md, "Night files".

Paths in the views: DuckDB resolves a relative path against the process's working
directory, so the views stored in the file read `data/results/*/*.<table>.parquet` (the
DB's directory and stem, relative to the directory above it): `duckdb data/results.duckdb`
run from the checkout's root sees the history, and the stored views never change when a
night is added. perftrack never depends on the working directory: every connection the
store opens gets TEMP views of the same names over exactly the files `data_files` lists,
with absolute paths, which shadow the stored ones.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from perftrack.core.errors import DatabaseError
from perftrack.core.files import KnownHashes, fsync_path, sha256_file
from perftrack.store.files import nightformat, readcache
from perftrack.store.files.sqltext import sql_string

FILES_TABLE = "data_files"
# The tables kept as files, and the order each file's rows are written in (the key; the
# results by series, then run and round: neighbouring values are alike, 6% smaller than
# by time, docs/benchmarks.md "Budgets"): deterministic files that compress well.
FILE_TABLES: dict[str, str] = {
    "hardware": "hw_key",
    "servers": "server_key",
    "runs": "run_id",
    "server_variables": "varset_hash, name",
    "results": 'workload, threads, "collation", server_key, run_id, "repeat", record_id',
}
# zstd level 19: a file is written once and read for years. One synthetic night of the
# nightly matrix (3,960 results) is 294 KB at level 19 and 332 KB at DuckDB's default
# level 3; writing it takes 0.33 s instead of 0.06 s (docs/benchmarks.md).
COPY_OPTIONS = "FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 19"
KV_SCHEMA = "perftrack_schema"  # key-value metadata of every file: the schema that wrote it
KV_TABLE = "perftrack_table"
WRITING = "writing"  # `.<name>.writing-<pid>`: a file being written (deleted if left over)
# A run's rows can arrive in several ingests (more of its records later): each file holds
# the bounds of that ingest's records, the view widens them, the first values win.
RUNS_VIEW = (
    "SELECT run_id, arg_min(runner_class, filename) AS runner_class, "
    "arg_min(hw_key, filename) AS hw_key, min(first_started_at) AS first_started_at, "
    "max(last_finished_at) AS last_finished_at, "
    "arg_min(perftrack_version, filename) FILTER (WHERE perftrack_version IS NOT NULL) "
    "AS perftrack_version FROM {source} GROUP BY run_id"
)


def files_dir(db: Path) -> Path:
    """The directory of a DB's files: `data/results/` for `data/results.duckdb`."""
    return db.with_name(Path(db.name).stem)


def view_prefix(db: Path) -> str:
    """How the stored views name the files' directory: relative to the DB's parent's
    parent, i.e. `data/results` for `data/results.duckdb` in a checkout."""
    return f"{db.resolve().parent.name}/{Path(db.name).stem}"


def db_path_of(con: duckdb.DuckDBPyConnection) -> Path:
    """The file behind the connection's current database (migrations know only `con`)."""
    row = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    if not row or not row[0]:
        raise DatabaseError("schema v6 needs a DB file: its tables are stored beside it")
    return Path(row[0])


def _utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


# === writing ===========================================================================


def batch_name(ids: Sequence[str], now: datetime) -> str:
    """`<yyyy>/<yyyymmddTHHMMSSffffffZ>-<12 hex of the batch's record ids>`."""
    digest = hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:12]
    return f"{now:%Y}/{now:%Y%m%dT%H%M%S%fZ}-{digest}"


def write_batch(
    con: duckdb.DuckDBPyConnection,
    db: Path,
    sources: Mapping[str, str],
    *,
    ids: Sequence[str],
    version: int,
) -> list[Path]:
    """Write each `table -> relation` of `sources` as a new file and list it in
    `data_files`; the caller holds the transaction and refreshes the views.

    Each file is written under a temp name, fsynced and renamed; an existing file is never
    replaced. On any failure every file of the batch is deleted before the error goes on
    (the caller rolls the DB back), so nothing is left half-written.
    """
    now = _utc_now()
    name = batch_name(ids, now)
    root = files_dir(db)
    written: list[Path] = []
    try:
        for table, relation in sources.items():
            rel = f"{name}.{table}.parquet"
            final = root / rel
            final.parent.mkdir(parents=True, exist_ok=True)
            if final.exists():
                raise DatabaseError(f"{final} exists already: refusing to replace a night file")
            tmp = final.with_name(f".{final.name}.{WRITING}-{os.getpid()}")
            kv = f"KV_METADATA {{{KV_SCHEMA}: '{version}', {KV_TABLE}: '{table}'}}"
            select = "*"
            if table == "results" and version >= nightformat.FORMAT_VERSION:
                select = nightformat.encoded_select(con, relation, version)
            try:
                # the key of the rows as staged (a select-list alias may hide a column)
                order = ", ".join(f"staged.{k.strip()}" for k in FILE_TABLES[table].split(","))
                con.execute(
                    f"COPY (SELECT {select} FROM {relation} AS staged ORDER BY {order}) "
                    f"TO {sql_string(str(tmp))} ({COPY_OPTIONS}, {kv})"
                )
                fsync_path(tmp)
                os.replace(tmp, final)
            finally:
                tmp.unlink(missing_ok=True)
            written.append(final)
            (rows,) = con.execute(f"SELECT count(*) FROM {relation}").fetchone() or (0,)
            con.execute(
                f"INSERT INTO {FILES_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)",
                [rel, table, rows, final.stat().st_size, sha256_file(final), version, now],
            )
        for directory in {p.parent for p in written}:
            fsync_path(directory, directory=True)
    except BaseException:
        discard(written)
        raise
    return written


def discard(paths: Sequence[Path]) -> None:
    """Delete files of a batch whose transaction did not commit."""
    for path in paths:
        path.unlink(missing_ok=True)


def remove_leftovers(db: Path) -> None:
    """Delete temp files a killed writer left (the caller holds the exclusive lock)."""
    root = files_dir(db)
    if root.is_dir():
        for leftover in root.glob(f"*/.*.{WRITING}-*"):
            leftover.unlink(missing_ok=True)


# === views =============================================================================


def _listed(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, int]]]:
    """table -> [(path relative to the files' directory, schema version)], oldest first."""
    out: dict[str, list[tuple[str, int]]] = {t: [] for t in FILE_TABLES}
    for path, table, version in con.execute(
        f"SELECT path, table_name, schema_version FROM {FILES_TABLE} ORDER BY path"
    ).fetchall():
        out.setdefault(table, []).append((path, version))
    return out


def _by_name(table: str, versions: set[int]) -> bool:
    """Combine the files by column name? Files written by different schema versions (a
    column a later version added is null in older files), and results files since v10
    (each file stores a column in the type that holds its values exactly: nightformat)."""
    return len(versions) > 1 or (table == "results" and max(versions) >= nightformat.FORMAT_VERSION)


def view_sql(
    table: str,
    source: str,
    versions: set[int],
    *,
    combine: bool = False,
    runs_source: str | None = None,
) -> str:
    """The view over the files `source` names (a list or a pattern); `combine`: by column
    name whatever the versions; `runs_source`: the runs' rows, each with its `filename`."""
    by_name = ", union_by_name = true" if combine or _by_name(table, versions) else ""
    if table == "runs":
        runs = runs_source or f"read_parquet({source}, filename = true{by_name})"
        return RUNS_VIEW.format(source=runs)
    if table == "results" and max(versions) >= nightformat.FORMAT_VERSION:
        decode = nightformat.decoded_select(max(versions))
        return f"SELECT {decode} FROM read_parquet({source}{by_name})"
    return f"SELECT * FROM read_parquet({source}{by_name})"


def select_files(con: duckdb.DuckDBPyConnection, db: Path, table: str, paths: Sequence[str]) -> str:
    """SQL of `table`'s rows stored in some of its listed files (paths relative to the
    files' directory, as `data_files` lists them): what the view reads, for that subset."""
    versions = dict(
        con.execute(
            f"SELECT path, schema_version FROM {FILES_TABLE} WHERE table_name = ?", [table]
        ).fetchall()
    )
    unknown = [p for p in paths if p not in versions]
    if unknown or not paths:
        raise ValueError(f"not listed files of {table}: {unknown or 'none given'}")
    base = str(files_dir(db).resolve())
    source = "[" + ", ".join(sql_string(f"{base}/{p}") for p in paths) + "]"
    return view_sql(table, source, {versions[p] for p in paths})


def _glob(db: Path, table: str) -> str:
    """The stored views' file pattern: constant, so the view is not rewritten every night."""
    return sql_string(f"{view_prefix(db)}/*/*.{table}.parquet")


def _cached_view_sql(table: str, root: Path, parts: Sequence[readcache.Part]) -> str:
    """The TEMP view's SQL over the read cache's parts (readcache.consolidate): the files'
    rows as `view_sql` reads them, but from fewer files. Always combined by column name (a
    cache file holds a month's union, whose types may differ from a night file's); the runs
    view orders by each row's night file, relative to `root` in the cache and here alike."""
    versions = {f.version for part in parts for f in part.files}
    source = "[" + ", ".join(sql_string(str(part.read)) for part in parts) + "]"
    if not any(part.cached for part in parts):
        return view_sql(table, source, versions)
    cached = [p.read for p in parts if p.cached]
    night = [f for p in parts if not p.cached for f in p.files]
    runs = None
    if table == "runs":
        cache_rows = "SELECT * FROM read_parquet([{}], union_by_name = true)".format(
            ", ".join(sql_string(str(p)) for p in cached)
        )
        night_rows = readcache.rows_sql(root, night, filename=True)
        runs = f"({cache_rows} UNION ALL BY NAME {night_rows})"
    return view_sql(table, source, versions, combine=True, runs_source=runs)


def create_views(
    con: duckdb.DuckDBPyConnection, db: Path, *, temp: bool, known: KnownHashes | None = None
) -> set[str]:
    """(Re)create one view per file table over its files; the names of the read cache's
    files the views read.

    temp=True: TEMP views over exactly the rows of the files `data_files` lists, with
    absolute paths, for this connection only (they shadow the stored ones): what perftrack
    reads. The closed months of more than one file are read from the read cache
    (readcache, built here when missing), the rest from the night files.
    temp=False: the views stored in the file, for a plain `duckdb data/results.duckdb`
    from the checkout's root: a pattern relative to the directory above the DB's (see the
    module's doc), which every later file matches; the caller holds the transaction.
    """
    listed = _listed(con)
    if not temp:  # binding a view opens its first file: resolve the relative pattern here
        con.execute(f"SET file_search_path = {sql_string(str(db.resolve().parent.parent))}")
    root = files_dir(db).resolve()
    shas = dict(con.execute(f"SELECT path, sha256 FROM {FILES_TABLE}").fetchall()) if temp else {}
    kind = "TEMP VIEW" if temp else "VIEW"
    used: set[str] = set()
    for table, files in listed.items():
        if not files:  # every DB since v6 has at least one (maybe empty) file per table
            raise DatabaseError(f"{db}: no file of table {table} is listed in {FILES_TABLE}")
        if temp:
            entries = [readcache.Listed(p, shas[p], v) for p, v in files]
            parts = readcache.consolidate(
                db,
                root,
                table,
                entries,
                filename=table == "runs",
                known=known,
                order=FILE_TABLES.get(table, "ALL"),  # as its night files are written
            )
            used |= {p.read.name for p in parts if p.cached}
            sql = _cached_view_sql(table, root, parts)
        else:
            sql = view_sql(table, _glob(db, table), {v for _, v in files})
        con.execute(f"CREATE OR REPLACE {kind} {table} AS {sql}")
    return used


def stored_views_current(con: duckdb.DuckDBPyConnection, db: Path) -> bool:
    """Do the stored views name this DB's directory and stem, and combine the files as
    their schema versions need? (No after the DB and its files moved to a directory of
    another name, or after a migration wrote files of a new version.)"""
    for table, files in _listed(con).items():
        row = con.execute(
            "SELECT sql FROM duckdb_views() WHERE database_name = current_database() "
            "AND schema_name = 'main' AND view_name = ?",
            [table],
        ).fetchone()
        if row is None or not files or _glob(db, table) not in row[0]:
            return False
        versions = {v for _, v in files}
        if ("union_by_name" in row[0]) != _by_name(table, versions):
            return False
        decoded = table == "results" and max(versions) >= nightformat.FORMAT_VERSION
        if ("coalesce(record_id" in row[0].lower()) != decoded:
            return False
        seconds = table == "results" and max(versions) >= nightformat.SECONDS_VERSION
        if ("started_s" in row[0].lower()) != seconds:
            return False
    return True


# === verifying =========================================================================


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _file_schema(path: Path) -> int | None:
    """The schema version in a Parquet file's key-value metadata; None if unreadable."""
    try:
        con = duckdb.connect(":memory:")
        try:
            rows = con.execute(
                "SELECT value FROM parquet_kv_metadata(?) WHERE key = ?", [str(path), KV_SCHEMA]
            ).fetchall()
        finally:
            con.close()
        return int(rows[0][0]) if rows else None
    except (duckdb.Error, ValueError):
        return None


def verify(
    con: duckdb.DuckDBPyConnection,
    db: Path,
    current: int,
    restore_hint: Callable[[Path, Callable[[Path], bool]], str],
    known: KnownHashes | None = None,
) -> None:
    """Every listed file is there, byte for byte as written (size and sha256), listed once.

    Raises DatabaseError naming the first bad file and how to restore it; `restore_hint`
    (dbfile) walks the file's git history for the newest revision that passes a test.
    Reads every byte of every file it does not know unchanged (`known`: the sha256s the
    read cache's directory remembers by file identity, as git's index does; a file
    written since is read again): ~300 MB at 1,000 nights of the nightly matrix, 0.4 s of
    sha256 on the 2-core VM (docs/schema.md, "Night files"), once per clone.
    """
    known = KnownHashes(None) if known is None else known
    root = files_dir(db)
    listed = con.execute(f"SELECT path, bytes, sha256 FROM {FILES_TABLE} ORDER BY path").fetchall()
    seen: dict[str, Path] = {}
    for rel, size, sha in listed:
        path = root / rel
        # Two results files with the same bytes hold the same record ids: one is a copy.
        # (Other tables may legitimately repeat: a run's bounds, written again.)
        if sha in seen and rel.endswith(".results.parquet"):
            raise DatabaseError(
                f"{_display(path)} is listed in {db} a second time "
                f"(the same bytes as {_display(seen[sha])}): "
                "its records would count twice; "
                + restore_hint(db, lambda candidate: _no_duplicates(candidate))
            )
        if rel.endswith(".results.parquet"):
            seen[sha] = path

        def good(candidate: Path, sha: str = sha) -> bool:
            return sha256_file(candidate) == sha

        if not path.is_file():
            raise DatabaseError(
                f"{_display(path)} is missing (listed in {db}); " + restore_hint(path, good)
            )
        if path.stat().st_size != size or known.sha256(path) != sha:
            newer = _file_schema(path)
            if newer is not None and newer > current:
                why = f"was written by schema v{newer} but this perftrack knows v{current}"
                what = "upgrade perftrack, or "
            else:
                why = "differs from what was written (hand-edited or truncated)"
                what = ""
            raise DatabaseError(f"{_display(path)} {why}; {what}" + restore_hint(path, good))


def _no_duplicates(candidate: Path) -> bool:
    try:
        con = duckdb.connect(str(candidate), read_only=True)
    except duckdb.Error:
        return False
    try:
        row = con.execute(f"SELECT count(*) - count(DISTINCT sha256) FROM {FILES_TABLE}").fetchone()
        return row is not None and row[0] == 0
    except duckdb.Error:
        return False
    finally:
        con.close()


def check(con: duckdb.DuckDBPyConnection, db: Path) -> list[str]:
    """Problems `db check` reports about the files: files under the directory that the DB
    does not list (a copy, or a file from another clone), and record ids in two files."""
    root = files_dir(db)
    listed = {p for (p,) in con.execute(f"SELECT path FROM {FILES_TABLE}").fetchall()}
    on_disk = {p.relative_to(root).as_posix() for p in root.glob("*/*.parquet")}
    problems = [
        f"{_display(root / p)} is not listed in {db}: a copy or a file from another "
        "clone; its rows are not read (move it away)"
        for p in sorted(on_disk - listed)
    ]
    results = [root / p for p in sorted(listed) if p.endswith(".results.parquet")]
    files = ", ".join(sql_string(str(p)) for p in results)
    row = con.execute(
        f"SELECT coalesce(record_id, {nightformat.RECORD_ID}) AS rid, "
        "list(DISTINCT filename ORDER BY filename) "
        f"FROM read_parquet([{files}], filename = true, union_by_name = true) "
        "GROUP BY rid HAVING count(*) > 1 LIMIT 1"
    ).fetchone()
    if row:
        where = ", ".join(_display(Path(f)) for f in row[1])
        problems.append(f"record_id {row[0]} is stored more than once, in {where}")
    return problems


def listed_paths(db: Path) -> list[Path]:
    """The files a DB lists (read without the store: for tests and tools)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(f"SELECT path FROM {FILES_TABLE} ORDER BY path").fetchall()
    finally:
        con.close()
    return [files_dir(db) / p for (p,) in rows]


def connect(db: Path, *, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """A plain DuckDB connection on `db` that sees the night files from any working
    directory (TEMP views with absolute paths), without the store's lock or checks: for
    tests and one-off tools. perftrack itself opens the DB with `store.open_db`."""
    con = duckdb.connect(str(db), read_only=read_only)
    try:
        tables = con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
        ).fetchall()
        if (FILES_TABLE,) in tables:
            create_views(con, db, temp=True)
    except BaseException:
        con.close()
        raise
    return con


def copy_db(src: Path, dst: Path) -> Path:
    """Copy a DB file and its night files (`<stem>/` beside it) to `dst` and `<dst stem>/`."""
    import shutil

    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    if files_dir(src).is_dir():
        shutil.copytree(files_dir(src), files_dir(dst), dirs_exist_ok=True)
    return dst
