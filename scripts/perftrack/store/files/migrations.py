"""Forward-only schema migrations for the results DB (`data/results.duckdb`).

Each migration is a version number, a one-line description and a list of SQL statements.
`migrate` applies the pending ones in order, each in its own transaction together with its
`schema_version` row, so a failed migration leaves the DB at the previous version.

To change the schema, append a `Migration(N + 1, ...)` to `MIGRATIONS`; never edit or
reorder one that has shipped (the DB in git was built by it). See docs/schema.md for the
procedure, including the fixture DB each version must leave behind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from perftrack import __version__
from perftrack.store.files import nightfiles
from perftrack.store.files.rows import V4_COST_COLUMNS


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]
    # Work SQL cannot do (v6: write files), run after the statements in the same
    # transaction; returns the files it wrote, deleted again if the transaction fails.
    then: Callable[[duckdb.DuckDBPyConnection, int], list[Path]] | None = None


# Column lists mirror the run record (schemas/run-record.v1.json); docs/schema.md explains
# every column. "collation" is a keyword in DuckDB's SQL, so that column is always quoted.
V1_STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE schema_version (
        version INTEGER NOT NULL,
        applied_at TIMESTAMP NOT NULL,
        perftrack_version VARCHAR
    )
    """,
    """
    CREATE TABLE hardware (
        hw_key VARCHAR PRIMARY KEY,
        cpu_model VARCHAR,
        cores INTEGER,
        mem_gib DOUBLE,
        kernel VARCHAR
    )
    """,
    """
    CREATE TABLE servers (
        server_key VARCHAR PRIMARY KEY,
        server_id VARCHAR NOT NULL,
        product VARCHAR NOT NULL,
        version VARCHAR NOT NULL,
        provider VARCHAR NOT NULL,
        version_string VARCHAR,
        source_sha256 VARCHAR,
        stand_in VARCHAR
    )
    """,
    """
    CREATE TABLE runs (
        run_id VARCHAR PRIMARY KEY,
        runner_class VARCHAR NOT NULL,
        hw_key VARCHAR NOT NULL,
        first_started_at TIMESTAMP NOT NULL,
        last_finished_at TIMESTAMP NOT NULL,
        perftrack_version VARCHAR
    )
    """,
    """
    CREATE TABLE results (
        record_id VARCHAR PRIMARY KEY,
        run_id VARCHAR NOT NULL,
        cell_id VARCHAR NOT NULL,
        attempt INTEGER NOT NULL,
        status VARCHAR NOT NULL,
        reason VARCHAR,
        server_key VARCHAR NOT NULL,
        workload VARCHAR NOT NULL,
        threads INTEGER NOT NULL,
        charset VARCHAR NOT NULL,
        "collation" VARCHAR NOT NULL,
        profile VARCHAR NOT NULL,
        tables INTEGER NOT NULL,
        table_size BIGINT NOT NULL,
        duration_s INTEGER NOT NULL,
        warmup_s INTEGER NOT NULL,
        repeat INTEGER NOT NULL,
        round INTEGER,
        connection VARCHAR NOT NULL,
        tps DOUBLE,
        qps DOUBLE,
        latency_avg_ms DOUBLE,
        latency_pct_ms DOUBLE,
        latency_pct DOUBLE,
        latency_max_ms DOUBLE,
        errors_per_s DOUBLE,
        reconnects_per_s DOUBLE,
        total_time_s DOUBLE,
        events BIGINT,
        tps_p5 DOUBLE,
        tps_p50 DOUBLE,
        tps_p95 DOUBLE,
        tps_cv DOUBLE,
        tps_series DOUBLE[],
        varset_hash VARCHAR,
        effective JSON,
        error_log_tail VARCHAR,
        tool_name VARCHAR NOT NULL,
        tool_version VARCHAR NOT NULL,
        started_at TIMESTAMP NOT NULL,
        finished_at TIMESTAMP NOT NULL
    )
    """,
    """
    CREATE TABLE server_variables (
        varset_hash VARCHAR NOT NULL,
        name VARCHAR NOT NULL,
        value VARCHAR,
        PRIMARY KEY (varset_hash, name)
    )
    """,
)

# Derived statistics (perftrack detect): recomputed from `results` on every detect and
# replaced whole, so they never disagree with the measurements they summarise.
_SERIES_COLS = """
        hw_key VARCHAR NOT NULL,
        runner_class VARCHAR NOT NULL,
        workload VARCHAR NOT NULL,
        threads INTEGER NOT NULL,
        "collation" VARCHAR NOT NULL,
        profile VARCHAR NOT NULL,
        tables INTEGER NOT NULL,
        table_size BIGINT NOT NULL,
        duration_s INTEGER NOT NULL,
        connection VARCHAR NOT NULL,
        metric VARCHAR NOT NULL,"""
V2_STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE noise (
        runner_class VARCHAR NOT NULL,
        hw_key VARCHAR NOT NULL,
        workload VARCHAR NOT NULL,
        metric VARCHAR NOT NULL,
        series INTEGER NOT NULL,
        samples INTEGER NOT NULL,
        cv_median DOUBLE NOT NULL,
        cv_p90 DOUBLE NOT NULL,
        computed_at TIMESTAMP NOT NULL,
        PRIMARY KEY (runner_class, hw_key, workload, metric)
    )
    """,
    f"""
    CREATE TABLE verdicts (
        verdict_id VARCHAR PRIMARY KEY,{_SERIES_COLS}
        base_server VARCHAR NOT NULL,
        new_server VARCHAR NOT NULL,
        base_version_string VARCHAR,
        new_version_string VARCHAR,
        n_base INTEGER NOT NULL,
        n_new INTEGER NOT NULL,
        median_base DOUBLE NOT NULL,
        median_new DOUBLE NOT NULL,
        ratio DOUBLE NOT NULL,
        ci_low DOUBLE NOT NULL,
        ci_high DOUBLE NOT NULL,
        p_value DOUBLE NOT NULL,
        threshold DOUBLE NOT NULL,
        verdict VARCHAR NOT NULL,
        acknowledged VARCHAR,
        variables_diff JSON,
        last_result_at TIMESTAMP,
        computed_at TIMESTAMP NOT NULL
    )
    """,
    f"""
    CREATE TABLE change_points (
        series_key VARCHAR NOT NULL,{_SERIES_COLS}
        server_id VARCHAR NOT NULL,
        run_id VARCHAR NOT NULL,
        at_time TIMESTAMP NOT NULL,
        before_value DOUBLE,
        after_value DOUBLE,
        rel_change DOUBLE,
        p_value DOUBLE,
        is_control BOOLEAN NOT NULL,
        environment BOOLEAN NOT NULL,
        acknowledged VARCHAR,
        computed_at TIMESTAMP NOT NULL,
        PRIMARY KEY (series_key, run_id)
    )
    """,
)

V4_STATEMENTS: tuple[str, ...] = tuple(
    f"ALTER TABLE results ADD COLUMN {name} {sql_type}" for name, sql_type in V4_COST_COLUMNS
)

# Schema v5 (issues #5 and #12).
# - Series split by every configuration axis: the last three axes become columns of
#   `results`, and `verdicts` / `change_points` get all six, in series order (before
#   `metric`), since detect writes their rows positionally. Rows computed before v5 keep
#   null axes; the next `detect` replaces them.
# - `results` loses its PRIMARY KEY: DuckDB's ART index on record_id was ~3/4 of the
#   file at scale (30 MB of 40 MB for 400,000 ids, measured) and is rewritten whole at
#   every checkpoint, which git cannot delta. Ingest stays idempotent by record_id
#   (store/files/batch.py stored_record_ids) and `db check` reports any record_id stored twice.
# FROZEN COPY of core/record.OPTIONAL_CELL_FIELDS as it was when v5 shipped: a shipped
# migration must build the same tables whatever the record's field list becomes later
# (tests/store/files/test_migrations.py checks the two still agree today).
V5_AXES: tuple[str, ...] = (
    "engine",
    "isolation",
    "durability",
    "handshake",
    "dataset_size",
    "phase",
)
V1_RESULTS_NOT_NULL: tuple[str, ...] = (
    "record_id",
    "run_id",
    "cell_id",
    "attempt",
    "status",
    "server_key",
    "workload",
    "threads",
    "charset",
    '"collation"',
    "profile",
    "tables",
    "table_size",
    "duration_s",
    "warmup_s",
    "repeat",
    "connection",
    "tool_name",
    "tool_version",
    "started_at",
    "finished_at",
)
_SERIES_COLS_V5 = _SERIES_COLS.replace(
    "        metric VARCHAR NOT NULL,",
    "".join(f"        {axis} VARCHAR,\n" for axis in V5_AXES) + "        metric VARCHAR NOT NULL,",
)


def _rebuild(table: str, ddl: str) -> tuple[str, ...]:
    """Recreate a derived table with a new column layout, keeping its rows (by name)."""
    return (
        ddl.replace(f"CREATE TABLE {table} (", f"CREATE TABLE {table}_v5 (", 1),
        f"INSERT INTO {table}_v5 BY NAME SELECT * FROM {table}",
        f"DROP TABLE {table}",
        f"ALTER TABLE {table}_v5 RENAME TO {table}",
    )


V5_STATEMENTS: tuple[str, ...] = (
    "CREATE TABLE results_v5 AS SELECT *, NULL::VARCHAR AS handshake, "
    "NULL::VARCHAR AS dataset_size, json_extract_string(effective, '$.phase') AS phase "
    "FROM results ORDER BY started_at, record_id",
    *(f"ALTER TABLE results_v5 ALTER COLUMN {c} SET NOT NULL" for c in V1_RESULTS_NOT_NULL),
    "DROP TABLE results",
    "ALTER TABLE results_v5 RENAME TO results",
    *_rebuild("verdicts", V2_STATEMENTS[1].replace(_SERIES_COLS, _SERIES_COLS_V5)),
    *_rebuild("change_points", V2_STATEMENTS[2].replace(_SERIES_COLS, _SERIES_COLS_V5)),
)

# Schema v6 (issue 19): the tables that grow every night move out of the DuckDB file into
# immutable ZSTD Parquet files beside it (nightfiles.py); the file keeps a list of them
# (`data_files`), a view of each table over its files, and the small tables recomputed
# every night (noise, verdicts, change_points). The move writes every row of each table
# into one file (a table with no rows still gets one: it carries the column types), then
# drops the table; all in the migration's transaction.
V6_STATEMENTS: tuple[str, ...] = (
    f"""
    CREATE TABLE {nightfiles.FILES_TABLE} (
        path VARCHAR PRIMARY KEY,
        table_name VARCHAR NOT NULL,
        rows BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        sha256 VARCHAR NOT NULL,
        schema_version INTEGER NOT NULL,
        added_at TIMESTAMP NOT NULL
    )
    """,
)

# Schema v8 (issue 22 item 5): a change point is one cause, not one series: an environment
# change once per runner class, a server's change over a workload's thread counts and
# charsets once. Rows computed before v8 keep nulls; the next `detect` replaces them.
V8_STATEMENTS: tuple[str, ...] = (
    "ALTER TABLE change_points ADD COLUMN rel_low DOUBLE",
    "ALTER TABLE change_points ADD COLUMN rel_high DOUBLE",
    "ALTER TABLE change_points ADD COLUMN scope VARCHAR",
    "ALTER TABLE change_points ADD COLUMN series_count INTEGER",
)


def _v6_move(con: duckdb.DuckDBPyConnection, version: int) -> list[Path]:
    db = nightfiles.db_path_of(con)
    ids = [rid for (rid,) in con.execute("SELECT record_id FROM results").fetchall()]
    sources = {t: t for t in nightfiles.FILE_TABLES}
    written = nightfiles.write_batch(con, db, sources, ids=ids, version=version)
    try:
        for table in nightfiles.FILE_TABLES:
            con.execute(f"DROP TABLE {table}")
        nightfiles.create_views(con, db, temp=False)
    except BaseException:
        nightfiles.discard(written)
        raise
    return written


# Schema v7 (issue 20, item 4): the alert lifecycle. One row per change detect has ever
# reported (a regression verdict or a nightly change point), kept across detects so a change
# is reported once: its identity, state (new / acknowledged / false_positive / fixed /
# expired), when it was first and last seen. Self-contained: a table of its own, nothing
# else changes (analysis/alerts.py, docs/alerts.md).
V7_STATEMENTS: tuple[str, ...] = (
    f"""
    CREATE TABLE alerts (
        alert_id VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,{_SERIES_COLS_V5}
        server_id VARCHAR NOT NULL,
        base_server VARCHAR,
        run_id VARCHAR,
        change_at TIMESTAMP,
        ratio DOUBLE,
        before_value DOUBLE,
        after_value DOUBLE,
        state VARCHAR NOT NULL,
        reason VARCHAR,
        link VARCHAR,
        fixed_by VARCHAR,
        first_seen_at TIMESTAMP NOT NULL,
        last_seen_at TIMESTAMP NOT NULL,
        news_at TIMESTAMP NOT NULL,
        state_since TIMESTAMP NOT NULL,
        checked_at TIMESTAMP NOT NULL,
        PRIMARY KEY (alert_id, metric)
    )
    """,
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "hardware, servers, runs, results, content-hashed server_variables",
        V1_STATEMENTS,
    ),
    Migration(2, "derived statistics: noise, verdicts, change_points", V2_STATEMENTS),
    Migration(
        3,
        "results: nullable engine, isolation, durability axis columns",
        (
            "ALTER TABLE results ADD COLUMN engine VARCHAR",
            "ALTER TABLE results ADD COLUMN isolation VARCHAR",
            "ALTER TABLE results ADD COLUMN durability VARCHAR",
        ),
    ),
    Migration(
        4,
        "results: cost per operation (CPU, context switches, IO, RSS, perf counters) and "
        "host-noise columns",
        V4_STATEMENTS,
    ),
    Migration(
        5,
        "series split by every axis (results: handshake, dataset_size, phase; verdicts and "
        "change_points: all six axes); results without its record_id index",
        V5_STATEMENTS,
    ),
    Migration(
        6,
        "results, runs, servers, hardware, server_variables as immutable Parquet files "
        "beside the DB (data_files lists them; a view of each)",
        V6_STATEMENTS,
        then=_v6_move,
    ),
    Migration(
        7,
        "alerts: each reported change (regression verdict or change point) once, with its "
        "state (new, acknowledged, false_positive, fixed, expired)",
        V7_STATEMENTS,
    ),
    Migration(
        8,
        "change_points: the size's 95% interval (rel_low, rel_high), the scope (class, "
        "workload, series) and how many series the change spans",
        V8_STATEMENTS,
    ),
    Migration(
        9,
        "noise: the paired A/A spread (paired_spread, pairs) the paired thresholds use",
        (
            "ALTER TABLE noise ADD COLUMN paired_spread DOUBLE",
            "ALTER TABLE noise ADD COLUMN pairs INTEGER",
        ),
    ),
    Migration(
        10,
        "results files written since store record_id only where it is not "
        "run_id:cell_id:attempt and each DOUBLE column as the narrowest exact DECIMAL "
        "(store/nightformat.py); the files already written are read as they are",
        (
            f"COMMENT ON TABLE {nightfiles.FILES_TABLE} IS 'since schema v10 results files "
            "store record_id only where it is not run_id:cell_id:attempt, and DOUBLE "
            "columns as exact DECIMALs (store/nightformat.py)'",
        ),
    ),
    Migration(
        11,
        "results files written since store whole-second started_at/finished_at as seconds "
        "(started_s, elapsed_s: store/nightformat.py); the files already written are read "
        "as they are",
        (
            f"COMMENT ON TABLE {nightfiles.FILES_TABLE} IS 'since schema v10 results files "
            "store record_id only where it is not run_id:cell_id:attempt, and DOUBLE "
            "columns as exact DECIMALs; since v11 whole-second timestamps as seconds "
            "(store/nightformat.py)'",
        ),
    ),
    Migration(
        12,
        "verdicts: unsteady, how many of the two sides' values measured a window whose "
        "throughput was still moving (run/steady.py)",
        ("ALTER TABLE verdicts ADD COLUMN unsteady INTEGER",),
    ),
)

CURRENT_VERSION: int = MIGRATIONS[-1].version

# Every table the current schema has, in the order `info` and `check` report them.
TABLES: tuple[str, ...] = (
    "schema_version",
    "hardware",
    "servers",
    "runs",
    "results",
    "server_variables",
    "noise",
    "verdicts",
    "change_points",
    nightfiles.FILES_TABLE,
    "alerts",
)


def user_tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Names of the tables in the connection's main schema (not the views)."""
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() "
        "WHERE database_name = current_database() AND schema_name = 'main'"
    ).fetchall()
    return {name for (name,) in rows}


def user_relations(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Names of the tables and views in the main schema (and TEMP views over them)."""
    rows = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal "
        "AND schema_name = 'main' AND database_name IN (current_database(), 'temp')"
    ).fetchall()
    return user_tables(con) | {name for (name,) in rows}


def schema_version(con: duckdb.DuckDBPyConnection) -> int | None:
    """The DB's schema version: 0 for a DB with no tables, None if it is not ours.

    "Not ours" means it has tables but no `schema_version` table, or that table is empty.
    """
    tables = user_tables(con)
    if not tables:
        return 0
    if "schema_version" not in tables:
        return None
    (version,) = con.execute("SELECT max(version) FROM schema_version").fetchone() or (None,)
    return None if version is None else int(version)


def pending(version: int, steps: Sequence[Migration] | None = None) -> list[Migration]:
    """Migrations newer than `version`, oldest first (default: all of MIGRATIONS)."""
    return [m for m in (MIGRATIONS if steps is None else steps) if m.version > version]


def validate_sequence(steps: Sequence[Migration]) -> None:
    """Versions must be 1, 2, 3, … with no gaps; a bug here is the programmer's, not the user's."""
    versions = [m.version for m in steps]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migration versions must be 1..N in order, got {versions}")


def _utc_now() -> datetime:
    """Now as a naive UTC datetime: every TIMESTAMP in the DB is UTC."""
    return datetime.now(UTC).replace(tzinfo=None)


def apply(
    con: duckdb.DuckDBPyConnection,
    migration: Migration,
    perftrack_version: str = __version__,
) -> None:
    """Apply one migration and record it, in one transaction (all of it or none of it)."""
    con.begin()
    written: list[Path] = []
    try:
        for statement in migration.statements:
            con.execute(statement)
        if migration.then is not None:
            written = migration.then(con, migration.version)
        con.execute(
            "INSERT INTO schema_version VALUES (?, ?, ?)",
            [migration.version, _utc_now(), perftrack_version],
        )
        con.commit()
    except BaseException:
        con.rollback()
        nightfiles.discard(written)
        raise


def migrate(
    con: duckdb.DuckDBPyConnection,
    *,
    target: int | None = None,
    steps: Sequence[Migration] | None = None,
    perftrack_version: str = __version__,
) -> list[int]:
    """Bring the DB forward to `target` (default: the newest); return the versions applied.

    `steps` defaults to MIGRATIONS (looked up at call time). The caller has checked that
    the DB is ours and not newer than the steps know.
    """
    steps = MIGRATIONS if steps is None else steps
    validate_sequence(steps)
    version = schema_version(con)
    if version is None:
        raise ValueError("not a perftrack DB: it has tables but no schema_version rows")
    goal = steps[-1].version if target is None else target
    applied: list[int] = []
    for migration in pending(version, steps):
        if migration.version > goal:
            break
        apply(con, migration, perftrack_version)
        applied.append(migration.version)
    return applied
