"""One batch of records written as a new set of night files beside the DB (nightfiles):
only the rows not yet stored, in the one transaction of an ingest."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb

from perftrack.store.files import migrations, nightfiles
from perftrack.store.files.rows import RESULT_COLUMNS, PreparedRecord, insert_rows


def existing_ids(
    con: duckdb.DuckDBPyConnection, table: str, column: str, keys: Iterable[str]
) -> set[str]:
    wanted = sorted(set(keys))
    if not wanted:
        return set()
    rows = con.execute(
        f"SELECT DISTINCT {column} FROM {table} WHERE {column} IN (SELECT unnest(?::VARCHAR[]))",
        [wanted],
    ).fetchall()
    return {key for (key,) in rows}


def stored_record_ids(con: duckdb.DuckDBPyConnection, new: Iterable[PreparedRecord]) -> set[str]:
    """The record ids of `new` already in `results`. Looked up within the batch's runs
    only: a record id is `run_id:cell_id:attempt` and a run id has no ':', so an id can
    only be stored under its own run; the run filter reaches the files' row-group
    statistics (since v10 the id itself is recomputed by the view and cannot)."""
    batch = list(new)
    ids = sorted({p.record_id for p in batch})
    runs = sorted({p.run[0] for p in batch})
    if not ids:
        return set()
    rows = con.execute(
        "SELECT DISTINCT record_id FROM results WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
        "AND record_id IN (SELECT unnest(?::VARCHAR[]))",
        [runs, ids],
    ).fetchall()
    return {key for (key,) in rows}


def _merge_runs(new: Sequence[PreparedRecord]) -> list[tuple[Any, ...]]:
    """One row per run_id: earliest start, latest finish, first non-null perftrack version."""
    runs: dict[str, list[Any]] = {}
    for p in new:
        run_id, runner_class, hw_key, started, finished, version = p.run
        row = runs.setdefault(run_id, [run_id, runner_class, hw_key, started, finished, version])
        row[3], row[4] = min(row[3], started), max(row[4], finished)
        row[5] = row[5] or version
    return [tuple(row) for row in runs.values()]


HARDWARE_COLUMNS = (
    ("hw_key", "VARCHAR"),
    ("cpu_model", "VARCHAR"),
    ("cores", "INTEGER"),
    ("mem_gib", "DOUBLE"),
    ("kernel", "VARCHAR"),
)
SERVER_COLUMNS = (
    ("server_key", "VARCHAR"),
    ("server_id", "VARCHAR"),
    ("product", "VARCHAR"),
    ("version", "VARCHAR"),
    ("provider", "VARCHAR"),
    ("version_string", "VARCHAR"),
    ("source_sha256", "VARCHAR"),
    ("stand_in", "VARCHAR"),
)
RUN_COLUMNS = (
    ("run_id", "VARCHAR"),
    ("runner_class", "VARCHAR"),
    ("hw_key", "VARCHAR"),
    ("first_started_at", "TIMESTAMP"),
    ("last_finished_at", "TIMESTAMP"),
    ("perftrack_version", "VARCHAR"),
)
VARIABLE_COLUMNS = (("varset_hash", "VARCHAR"), ("name", "VARCHAR"), ("value", "VARCHAR"))


def write_records(
    con: duckdb.DuckDBPyConnection, db: Path, new: Sequence[PreparedRecord]
) -> list[Path]:
    """Rows of records not yet stored, as a new set of files beside the DB (nightfiles);
    the caller holds the transaction. Only what is new goes into the files: servers,
    machines and variable sets already stored are not written again. Returns the files,
    which the caller deletes if its transaction fails."""
    if not new:
        return []
    hardware = {p.hardware[0]: p.hardware for p in new}
    servers = {p.server[0]: p.server for p in new}
    known_hw = existing_ids(con, "hardware", "hw_key", hardware)
    known_servers = existing_ids(con, "servers", "server_key", servers)
    varsets = {p.varset_hash: p.variables for p in new if p.varset_hash}
    known_sets = existing_ids(con, "server_variables", "varset_hash", varsets)
    staged: dict[str, tuple[Sequence[tuple[str, str]], list[tuple[Any, ...]]]] = {
        "hardware": (HARDWARE_COLUMNS, [r for k, r in hardware.items() if k not in known_hw]),
        "servers": (SERVER_COLUMNS, [r for k, r in servers.items() if k not in known_servers]),
        "runs": (RUN_COLUMNS, _merge_runs(new)),
        "server_variables": (
            VARIABLE_COLUMNS,
            [(h, k, v) for h, vs in varsets.items() if h not in known_sets for k, v in vs.items()],
        ),
        "results": (RESULT_COLUMNS, [p.result for p in new]),
    }
    sources: dict[str, str] = {}
    try:
        for table, (columns, rows) in staged.items():
            if not rows:
                continue
            stage = f"{STAGE_PREFIX}{table}"
            # the view's own column types (JSON columns included): every file alike
            con.execute(f"CREATE OR REPLACE TEMP TABLE {stage} AS FROM {table} LIMIT 0")
            insert_rows(con, stage, columns, rows)
            sources[table] = stage
        written = nightfiles.write_batch(
            con, db, sources, ids=[p.record_id for p in new], version=migrations.CURRENT_VERSION
        )
        try:
            if not nightfiles.stored_views_current(con, db):
                nightfiles.create_views(con, db, temp=False)
            nightfiles.create_views(con, db, temp=True)
        except BaseException:
            nightfiles.discard(written)
            raise
        return written
    finally:
        for stage in sources.values():
            con.execute(f"DROP TABLE IF EXISTS {stage}")


STAGE_PREFIX = "_new_"  # TEMP tables holding a batch's rows until they are written
