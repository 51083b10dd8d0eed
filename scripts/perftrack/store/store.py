"""The results store: `data/results.duckdb`, written only by `perftrack ingest`.

`open_db` gives a `Store`: a DuckDB connection on the file, a lock shared with every
other perftrack process, and the schema brought up to date (write mode) or checked (read
mode). `Store.ingest` adds run records in one transaction, idempotently by record id.
Tables and columns are described in docs/schema.md; migrations live in migrations.py.

The file (and its night files) is committed to git, so it is kept small: variable sets are
stored once by content hash, interval series only as summaries plus a short downsample,
and every write-mode close ends with a CHECKPOINT (no `.wal` file left beside it).

The package in one room per concern: `lock` (the lock file), `dbfile` (create, open,
diagnose, migrate and compact the file), `intake` (record files read and prepared, on
every core), `nightfiles` (since schema v6 the growing tables live in immutable Parquet
files beside the DB; the views over them), `rows` (a record as rows, the write
transaction), `variables` (the server variables kept, sets hashed once), `migrations`
(schema versions), and this module, the door: `open_db`, `Store`, `compact`,
`read_prepared`, `ingest_paths`; the names other stages use are re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import duckdb

from perftrack.core import record
from perftrack.core.errors import ConfigError, DatabaseError
from perftrack.store.files import migrations, nightfiles
from perftrack.store.files.batch import stored_record_ids, write_records
from perftrack.store.files.dbfile import (
    check_version,
    connect,
    create,
    first_line,
    migrate_existing,
    read_every_column,
    remove_leftovers,
    rewrite,
    worth_compacting,
)
from perftrack.store.files.intake import read_prepared
from perftrack.store.files.lock import LOCK_TIMEOUT_S, Lock, lock_path
from perftrack.store.files.rows import (
    RESULT_COLUMNS,
    SERIES_POINTS,
    VALID_STATUSES,
    IntervalSummary,
    PreparedRecord,
    prepare,
    server_key,
    summarize_intervals,
)
from perftrack.store.files.variables import (
    KEY_HEX_DIGITS,
    VOLATILE_VARIABLES,
    VariableSets,
    stored_variables,
    varset_hash,
)
from perftrack.store.queries.alerts import ALERTS_TABLE, AlertQueries
from perftrack.store.queries.cells import CellQueries
from perftrack.store.queries.history import HistoryQueries
from perftrack.store.queries.pastruns import (
    DURATION_KEY,
    PLANNING_MIN_SCHEMA,
    SIMILAR_KEY,
    PastRunQueries,
    PastRuns,
)
from perftrack.store.queries.results import SITE_SERIES, ResultQueries
from perftrack.store.queries.runs import RunQueries
from perftrack.store.queries.series import SERIES_COLS, SeriesQueries
from perftrack.store.queries.servers import ServerQueries
from perftrack.store.queries.snapshot import SnapshotQueries
from perftrack.store.queries.verdicts import DERIVED_TABLES, NoiseKey, VerdictQueries


@dataclass(frozen=True)
class IngestResult:
    added: int  # records written by this call
    already: int  # records skipped because their record_id was already stored (or repeated)


def open_db(
    path: Path,
    *,
    write: bool,
    lock_timeout_s: float = LOCK_TIMEOUT_S,
    allow: Sequence[Path] = (),
) -> Store:
    """Open the results DB; use as a context manager (`with open_db(...) as store:`).

    write=True: take the exclusive lock (waiting up to `lock_timeout_s`), create the file
    if missing, migrate it forward. write=False: take a shared lock, open read-only, and
    refuse a missing file or one whose schema is not the current one. Either way a file
    holding code perftrack did not create is refused (store/files/codecheck.py), and the
    connection reads and writes files only in the DB's directory and the directories in
    `allow` (where the caller has the store write, e.g. a site being built).
    """
    path = _db_file(path)
    if not write and not path.exists():
        raise ConfigError(f"{path} does not exist: run `perftrack ingest` first to create it")
    if write:
        path.parent.mkdir(parents=True, exist_ok=True)
    lock = Lock(lock_path(path), exclusive=write)
    lock.acquire(path, lock_timeout_s)
    try:
        if write:
            remove_leftovers(path)
        applied: list[int] = []
        if not path.exists():
            if not write:
                raise ConfigError(f"{path} does not exist: run `perftrack ingest` first")
            applied = create(path)
        con, version = connect(path, read_only=not write, allow=allow)
        try:
            check_version(path, version, write=write)
            assert version is not None  # check_version refused None
            if write and version < migrations.CURRENT_VERSION:
                applied += migrate_existing(path, con, version)
        except BaseException:
            con.close()
            raise
    except BaseException:
        lock.release()
        raise
    return Store(path=path, con=con, write=write, lock=lock, migrated=applied)


def _db_file(path: Path) -> Path:
    """`path` as a DB file name; a directory (or ".") is a user's mistake, said so."""
    path = Path(path)
    if not path.name or path.is_dir():
        raise ConfigError(
            f"{path} is a directory: give the results DB file (e.g. {path}/results.duckdb)"
        )
    return path


def open_for_planning(
    path: Path, *, min_version: int = PLANNING_MIN_SCHEMA, lock_timeout_s: float = LOCK_TIMEOUT_S
) -> Store:
    """Read-only like `open_db(write=False)`, but a schema from `min_version` up to the
    current one is accepted: planning reads only what every schema since then has, so a
    DB one migration behind (migrated later by the publish job) still plans."""
    path = _db_file(path)
    if not path.exists():
        raise ConfigError(f"{path} does not exist: run `perftrack ingest` first to create it")
    lock = Lock(lock_path(path), exclusive=False)
    lock.acquire(path, lock_timeout_s)
    try:
        con, version = connect(path, read_only=True)
        if not version or version < min_version:
            con.close()
            raise DatabaseError(
                f"{path} has schema v{version}: run `perftrack db migrate` before planning"
            )
        if version > migrations.CURRENT_VERSION:
            con.close()
            check_version(path, version, write=False)
    except BaseException:
        lock.release()
        raise
    return Store(path=path, con=con, write=False, lock=lock, migrated=[])


# === the store =========================================================================


class Store(
    SeriesQueries,
    VerdictQueries,
    AlertQueries,
    ResultQueries,
    ServerQueries,
    HistoryQueries,
    RunQueries,
    PastRunQueries,
    SnapshotQueries,
    CellQueries,
):
    """An open results DB. Every read another stage makes is a named query inherited from
    the rooms of `store/queries/`; `con` is the connection, for the store's own modules
    and the tests (no other stage imports duckdb: a contract in pyproject.toml)."""

    def __init__(
        self,
        *,
        path: Path,
        con: duckdb.DuckDBPyConnection,
        write: bool,
        lock: Lock,
        migrated: list[int],
    ) -> None:
        self.path = path
        self.con = con
        self.write = write
        self.migrated = migrated  # schema versions applied while opening (write mode)
        # Rewrite the file compactly on close even if little space is free (`compact`).
        self.compact_on_close = False
        self._lock = lock
        self._closed = False

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return migrations.schema_version(self.con) or 0

    def close(self) -> None:
        """Write mode: CHECKPOINT (no .wal left), compact if worth it. Then close and unlock."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.write:
                self._finish_write()
            else:
                self.con.close()
        finally:
            self._lock.release()

    def _finish_write(self) -> None:
        try:
            self.con.execute("CHECKPOINT")
            free, total, block = self.con.execute(
                "SELECT free_blocks, total_blocks, block_size FROM pragma_database_size() "
                "WHERE database_name = current_database()"
            ).fetchone() or (0, 0, 0)
        except duckdb.Error as exc:
            self.con.close()
            raise DatabaseError(
                f"{self.path}: final CHECKPOINT failed ({first_line(exc)})"
            ) from None
        self.con.close()
        if self.compact_on_close or worth_compacting(free, total, block):
            rewrite(self.path)

    # --- ingest ---

    # edge: records in: run record JSON
    def ingest(self, records: Sequence[dict[str, Any]]) -> IngestResult:
        """Add validated run records in one transaction; records already stored are skipped.

        Records are validated again (~10 ms each with a full variable set) so no caller can
        write a row the schema forbids; `ingest_paths` validates once, while reading.
        """
        prepared, varsets = [], VariableSets()
        for i, rec in enumerate(records):
            where = rec.get("record_id", f"record #{i + 1}") if isinstance(rec, dict) else "?"
            prepared.append(prepare(record.validate(rec, where=str(where)), str(where), varsets))
        return self.ingest_prepared(prepared)

    def ingest_prepared(self, prepared: Sequence[PreparedRecord]) -> IngestResult:
        """Write prepared records, all or nothing; idempotent by record_id."""
        if not self.write:
            raise RuntimeError("ingest needs a store opened with write=True")
        unique: dict[str, PreparedRecord] = {}
        for p in prepared:  # a record_id repeated within the batch counts once
            unique.setdefault(p.record_id, p)
        self.con.begin()
        written: list[Path] = []  # the night files (nightfiles.py), deleted on failure
        try:
            stored = stored_record_ids(self.con, unique.values())
            new = [p for rid, p in unique.items() if rid not in stored]
            written = write_records(self.con, self.path, new)
            self.con.commit()
        except duckdb.Error as exc:
            self._roll_back(written)
            raise DatabaseError(
                f"{self.path}: ingest failed and was rolled back, nothing was written "
                f"({first_line(exc)})"
            ) from None
        except BaseException:
            self._roll_back(written)
            raise
        return IngestResult(added=len(new), already=len(prepared) - len(new))

    def _roll_back(self, written: Sequence[Path]) -> None:
        self.con.rollback()
        nightfiles.discard(written)
        if nightfiles.FILES_TABLE in migrations.user_tables(self.con):  # schema v6 on
            nightfiles.create_views(self.con, self.path, temp=True)  # the listed files again

    # --- inspection ---

    def _scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.con.execute(sql, list(params)).fetchone()
        return row[0] if row else None

    def server_ids(self, run_id: str | None = None) -> list[str]:
        """The ids of the servers with results (in one run, if given), sorted."""
        sql = "SELECT DISTINCT s.server_id FROM results r JOIN servers s USING (server_key)"
        rows = self.con.execute(
            sql + (" WHERE r.run_id = ?" if run_id else "") + " ORDER BY 1",
            [run_id] if run_id else [],
        ).fetchall()
        return [r[0] for r in rows]

    def run_ids(self) -> list[str]:
        """The ids of the stored runs, newest first."""
        rows = self.con.execute("SELECT run_id FROM runs ORDER BY run_id DESC").fetchall()
        return [r[0] for r in rows]

    # edge: CLI --json out: perftrack info --json
    def info(self) -> dict[str, Any]:
        """A summary for `perftrack db info`; times are ISO strings (UTC) or None."""
        tables = migrations.user_relations(self.con)
        counts = {t: self._scalar(f'SELECT count(*) FROM "{t}"') for t in migrations.TABLES}
        first, last = self.con.execute(
            "SELECT min(started_at), max(finished_at) FROM results"
        ).fetchone() or (None, None)
        by_status = self.con.execute(
            "SELECT status, count(*) FROM results GROUP BY status ORDER BY status"
        ).fetchall()
        hw_keys = self.con.execute("SELECT DISTINCT hw_key FROM runs ORDER BY hw_key").fetchall()
        files, file_bytes = (
            self.con.execute(
                f"SELECT count(*), coalesce(sum(bytes), 0) FROM {nightfiles.FILES_TABLE}"
            ).fetchone()
            if nightfiles.FILES_TABLE in tables
            else None
        ) or (0, 0)
        return {
            "path": str(self.path),
            "size_bytes": self.path.stat().st_size,
            "night_files": files,
            "night_files_bytes": int(file_bytes),
            "schema_version": self.schema_version,
            "tables": sorted(tables),
            "counts": counts,
            "runs": counts["runs"],
            "hardware_keys": [k for (k,) in hw_keys],
            "first_result_at": first.isoformat() if first else None,
            "last_result_at": last.isoformat() if last else None,
            "results_by_status": dict(by_status),
        }

    def check(self) -> list[str]:
        """Problems found in the DB, one line each; an empty list means healthy."""
        problems = self._check_tables()
        if problems:
            return problems
        problems += self._check_version()
        if nightfiles.FILES_TABLE in migrations.user_tables(self.con):
            problems += nightfiles.check(self.con, self.path)
        for sql, what in INTEGRITY_CHECKS:
            count, example = self.con.execute(sql).fetchone() or (0, None)
            if count:
                problems.append(f"{count} {what} (e.g. {example})")
        return problems

    def _check_tables(self) -> list[str]:
        """Every table of the schema exists and every column of it can be read."""
        present = migrations.user_relations(self.con)
        problems = [f"table {t} is missing" for t in migrations.TABLES if t not in present]
        for table in (t for t in migrations.TABLES if t in present):
            try:
                read_every_column(self.con, table)
            except duckdb.Error as exc:
                problems.append(f"table {table} cannot be read ({first_line(exc)})")
        return problems

    def _check_version(self) -> list[str]:
        rows = self.con.execute("SELECT version FROM schema_version").fetchall()
        versions = [v for (v,) in rows]
        if not versions:
            return ["schema_version has no rows"]
        if max(versions) != migrations.CURRENT_VERSION:
            return [f"schema is v{max(versions)}, expected v{migrations.CURRENT_VERSION}"]
        return []


# (SQL returning count and one example, what it means). Each is a consistency rule ingest
# keeps; a hit means the DB was written by something else or by a bug.
INTEGRITY_CHECKS: tuple[tuple[str, str], ...] = (
    (
        "SELECT count(*), min(r.record_id) FROM results r "
        "WHERE r.run_id NOT IN (SELECT run_id FROM runs)",
        "results have a run_id with no row in runs",
    ),
    (
        "SELECT count(*), min(r.record_id) FROM results r "
        "WHERE r.server_key NOT IN (SELECT server_key FROM servers)",
        "results have a server_key with no row in servers",
    ),
    (
        "SELECT count(*), min(r.record_id) FROM results r WHERE r.varset_hash IS NOT NULL "
        "AND r.varset_hash NOT IN (SELECT varset_hash FROM server_variables)",
        "results have a varset_hash with no rows in server_variables",
    ),
    (
        "SELECT count(*), min(r.record_id) FROM results r JOIN runs u USING (run_id) "
        "WHERE u.hw_key NOT IN (SELECT hw_key FROM hardware)",
        "results belong to a run whose hw_key has no row in hardware",
    ),
    (
        "SELECT count(*), min(record_id) FROM "
        "(SELECT record_id FROM results GROUP BY record_id HAVING count(*) > 1)",
        "record_ids appear more than once in results",
    ),
    (
        "SELECT count(*), min(record_id) FROM results WHERE status IS NULL OR status NOT IN ("
        + ", ".join(f"'{s}'" for s in VALID_STATUSES)
        + ")",
        f"results have a status other than {'/'.join(VALID_STATUSES)}",
    ),
    (
        "SELECT count(*), min(record_id) FROM results WHERE status = 'ok' AND tps IS NULL",
        "ok results have no tps",
    ),
)


def compact(db_path: Path, *, lock_timeout_s: float = LOCK_TIMEOUT_S) -> tuple[int, int]:
    """Rewrite the DB without free blocks (for `perftrack db compact`); (bytes before, after)."""
    db_path = Path(db_path)
    if not db_path.exists():
        raise ConfigError(f"{db_path} does not exist: run `perftrack ingest` first to create it")
    before = db_path.stat().st_size
    with open_db(db_path, write=True, lock_timeout_s=lock_timeout_s) as store:
        store.compact_on_close = True
    return before, db_path.stat().st_size


def ingest_paths(
    db_path: Path, paths: Iterable[Path], *, lock_timeout_s: float = LOCK_TIMEOUT_S
) -> IngestResult:
    """Read and validate every record file under `paths`, then ingest them in one transaction.

    Any invalid file raises RecordError (naming the file and field) before the DB is opened,
    so nothing is written. No record files at all returns IngestResult(0, 0) without opening
    the DB.
    """
    prepared = read_prepared(paths)
    if not prepared:
        return IngestResult(added=0, already=0)
    with open_db(db_path, write=True, lock_timeout_s=lock_timeout_s) as store:
        return store.ingest_prepared(prepared)


__all__ = [  # the store's door: what other stages and the tests use
    "ALERTS_TABLE",
    "DERIVED_TABLES",
    "DURATION_KEY",
    "KEY_HEX_DIGITS",
    "LOCK_TIMEOUT_S",
    "PLANNING_MIN_SCHEMA",
    "RESULT_COLUMNS",
    "SERIES_COLS",
    "SERIES_POINTS",
    "SIMILAR_KEY",
    "SITE_SERIES",
    "VOLATILE_VARIABLES",
    "IngestResult",
    "IntervalSummary",
    "NoiseKey",
    "PastRuns",
    "PreparedRecord",
    "Store",
    "compact",
    "ingest_paths",
    "lock_path",
    "open_db",
    "open_for_planning",
    "prepare",
    "read_prepared",
    "server_key",
    "stored_variables",
    "summarize_intervals",
    "varset_hash",
    "worth_compacting",
]
