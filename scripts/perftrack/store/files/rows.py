"""A run record as the DB's rows: the server's content key, interval summaries, the
result row (variable sets: `variables`), the tables' columns (the one write of a batch:
`batch`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb
import numpy as np

from perftrack.core import record
from perftrack.core.errors import RecordError
from perftrack.store.files.variables import KEY_HEX_DIGITS, VariableSets

# --- interval summaries ----------------------------------------------------------------
# At most this many points of the per-interval tps series are kept: enough for a sparkline
# of how a cell's throughput moved; raw intervals stay in the run record / workflow
# artifact. Scale (docs/schema.md, "Size by design"): at 60 points the series was 38 % of
# a synthetic year's DB and most of each night's git delta; 12 points cost a fifth.
SERIES_POINTS = 12
# Downsampled points keep 3 significant digits (0.1 % steps, far below the A/A noise of
# 10-20 %), summary percentiles 0.01 tps and the CV 4 decimals: short decimals compress
# several times better in DuckDB (ALP) than full doubles.
SERIES_SIGNIFICANT = 3
SERIES_DECIMALS = 2
CV_DECIMALS = 4
TPS_PERCENTILES = (5.0, 50.0, 95.0)


VALID_STATUSES = ("ok", "failed", "skipped")


# === turning a record into rows ========================================================
# --- content keys ----------------------------------------------------------------------


def _content_key(values: Sequence[Any]) -> str:
    text = json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_HEX_DIGITS]


SERVER_IDENTITY = ("id", "product", "version", "provider", "version_string", "source_sha256")


def server_key(server: dict[str, Any]) -> str:
    """Stable key of a server build: sha256 of its identity fields as a JSON list, 16 hex.

    Fields: id, product, version, provider, version_string, source_sha256, stand_in (a
    missing optional field counts as null). Same binary reported the same way ⇒ same key.
    """
    return _content_key([*(server.get(f) for f in SERVER_IDENTITY), server.get("stand_in")])


def _timestamp(value: str, field: str, where: str) -> datetime:
    """An RFC 3339 date-time as a naive UTC datetime (the DB stores UTC without zone)."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise RecordError(f"{where}: field '{field}' is not an RFC 3339 date-time") from None
    if parsed.tzinfo is None:
        raise RecordError(f"{where}: field '{field}' has no UTC offset (e.g. 'Z' or '+00:00')")
    return parsed.astimezone(UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class IntervalSummary:
    p5: float | None
    p50: float | None
    p95: float | None
    cv: float | None
    series: list[float] | None


def summarize_intervals(tps: Sequence[float]) -> IntervalSummary:
    """p5/p50/p95 (linear interpolation), CV (sample stdev / mean) and a short downsample.

    The downsample splits the series into at most SERIES_POINTS contiguous, nearly equal
    chunks and averages each; a series that is already short is kept as it is.
    """
    if not tps:
        return IntervalSummary(None, None, None, None, None)
    values = np.asarray(tps, dtype=float)
    p5, p50, p95 = (
        round(float(x), SERIES_DECIMALS) for x in np.percentile(values, TPS_PERCENTILES)
    )
    mean = float(values.mean())
    cv = (
        round(float(values.std(ddof=1) / mean), CV_DECIMALS)
        if len(values) > 1 and mean > 0
        else None
    )
    # the chunks np.array_split makes (the first n % k one longer), averaged in one pass
    k = min(SERIES_POINTS, len(values))
    size, extra = divmod(len(values), k)
    lengths = np.full(k, size) + (np.arange(k) < extra)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    means = np.add.reduceat(values, starts) / lengths
    series = [float(f"{x:.{SERIES_SIGNIFICANT}g}") for x in means]
    return IntervalSummary(p5, p50, p95, cv, series)


# (column, DuckDB type) of `results`, in table order; values come from `_result_row`.
# Cost per operation and host signals of the measured window (sampler.py, issue #9): all
# nullable, null in results older than them and for metrics that could not be measured
# (`cost_unavailable` holds {metric: reason}).
V4_COST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("cpu_us_per_txn", "DOUBLE"),
    ("cpu_user_us_per_txn", "DOUBLE"),
    ("cpu_sys_us_per_txn", "DOUBLE"),
    ("cpu_us_per_query", "DOUBLE"),
    ("ctx_vol_per_txn", "DOUBLE"),
    ("ctx_invol_per_txn", "DOUBLE"),
    ("read_bytes_per_txn", "DOUBLE"),
    ("write_bytes_per_txn", "DOUBLE"),
    ("peak_rss_bytes", "DOUBLE"),
    ("instructions_per_txn", "DOUBLE"),
    ("cycles_per_txn", "DOUBLE"),
    ("ipc", "DOUBLE"),
    ("cost_unavailable", "JSON"),
    ("host_steal_pct", "DOUBLE"),
    ("host_iowait_pct", "DOUBLE"),
    ("host_foreign_cpu_pct", "DOUBLE"),
    ("cpu_mhz", "DOUBLE"),
    ("noisy", "BOOLEAN"),
    ("noisy_reason", "VARCHAR"),
)
RESULT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("record_id", "VARCHAR"),
    ("run_id", "VARCHAR"),
    ("cell_id", "VARCHAR"),
    ("attempt", "INTEGER"),
    ("status", "VARCHAR"),
    ("reason", "VARCHAR"),
    ("server_key", "VARCHAR"),
    ("workload", "VARCHAR"),
    ("threads", "INTEGER"),
    ("charset", "VARCHAR"),
    ("collation", "VARCHAR"),
    ("profile", "VARCHAR"),
    ("tables", "INTEGER"),
    ("table_size", "BIGINT"),
    ("duration_s", "INTEGER"),
    ("warmup_s", "INTEGER"),
    ("repeat", "INTEGER"),
    ("round", "INTEGER"),
    ("connection", "VARCHAR"),
    ("tps", "DOUBLE"),
    ("qps", "DOUBLE"),
    ("latency_avg_ms", "DOUBLE"),
    ("latency_pct_ms", "DOUBLE"),
    ("latency_pct", "DOUBLE"),
    ("latency_max_ms", "DOUBLE"),
    ("errors_per_s", "DOUBLE"),
    ("reconnects_per_s", "DOUBLE"),
    ("total_time_s", "DOUBLE"),
    ("events", "BIGINT"),
    ("tps_p5", "DOUBLE"),
    ("tps_p50", "DOUBLE"),
    ("tps_p95", "DOUBLE"),
    ("tps_cv", "DOUBLE"),
    ("tps_series", "DOUBLE[]"),  # null since issue 39 (the run records keep the trace)
    ("varset_hash", "VARCHAR"),
    ("effective", "VARCHAR"),  # JSON column; passed as text, DuckDB casts on insert
    ("error_log_tail", "VARCHAR"),
    ("tool_name", "VARCHAR"),
    ("tool_version", "VARCHAR"),
    ("started_at", "TIMESTAMP"),
    ("finished_at", "TIMESTAMP"),
    # schema v3: configuration axes, null when not set (and in records older than them)
    ("engine", "VARCHAR"),
    ("isolation", "VARCHAR"),
    ("durability", "VARCHAR"),
    # schema v4: cost per operation and host signals (null in records older than them), as
    # the migration made them; a JSON column (cost_unavailable) travels as text
    *((name, "VARCHAR" if t == "JSON" else t) for name, t in V4_COST_COLUMNS),
    # schema v5: the other three axes (null when not set)
    ("handshake", "VARCHAR"),
    ("dataset_size", "VARCHAR"),
    ("phase", "VARCHAR"),
)
# The record's result fields stored as columns; `threads` comes from the cell instead.
RESULT_METRICS = tuple(f for f in (*record.RESULT_FIELDS, *record.COST_FIELDS) if f != "threads")
CELL_FIELDS = record.CELL_FIELDS


@dataclass(frozen=True)
class PreparedRecord:
    """One validated record as the rows it adds to each table."""

    record_id: str
    hardware: tuple[Any, ...]
    server: tuple[Any, ...]
    run: tuple[Any, ...]
    result: tuple[Any, ...]
    varset_hash: str | None
    variables: dict[str, str | None]

    @property
    def run_id(self) -> str:
        return str(self.run[0])


def _result_row(
    rec: dict[str, Any], skey: str, vhash: str | None, started: datetime, finished: datetime
) -> tuple[Any, ...]:
    result = rec.get("result") or {}
    summary = summarize_intervals([i["tps"] for i in result.get("intervals") or []])
    effective = rec.get("effective")
    values: dict[str, Any] = {
        "record_id": rec["record_id"],
        "run_id": rec["run_id"],
        "cell_id": rec["cell_id"],
        "attempt": rec["attempt"],
        "status": rec["status"],
        "reason": rec.get("reason"),
        "server_key": skey,
        **{f: rec["cell"].get(f) for f in CELL_FIELDS},
        **{m: result.get(m) for m in RESULT_METRICS},
        "tps_p5": summary.p5,
        "tps_p50": summary.p50,
        "tps_p95": summary.p95,
        "tps_cv": summary.cv,
        # issue 39: the per-second trace leaves the committed history (no analysis reads
        # it); the run record keeps it and the monthly archive keeps the records
        "tps_series": None,
        "varset_hash": vhash,
        "effective": None if effective is None else json.dumps(effective, sort_keys=True),
        "error_log_tail": rec.get("error_log_tail"),
        "tool_name": rec["tool"]["name"],
        "tool_version": rec["tool"]["version"],
        "started_at": started,
        "finished_at": finished,
        **_cost_values(rec),
    }
    return tuple(values[name] for name, _ in RESULT_COLUMNS)


def _cost_values(rec: dict[str, Any]) -> dict[str, Any]:
    """Schema v4 columns from the record's optional `cost` and `host` objects."""
    unavailable = (rec.get("cost") or {}).get("unavailable")
    host = rec.get("host") or {}
    return {
        "cost_unavailable": json.dumps(unavailable, sort_keys=True) if unavailable else None,
        "host_steal_pct": host.get("steal_pct"),
        "host_iowait_pct": host.get("iowait_pct"),
        "host_foreign_cpu_pct": host.get("foreign_cpu_pct"),
        "cpu_mhz": host.get("cpu_mhz"),
        "noisy": host.get("noisy"),
        "noisy_reason": host.get("noisy_reason"),
    }


def prepare(rec: dict[str, Any], where: str, varsets: VariableSets | None = None) -> PreparedRecord:
    """Rows for one validated record; RecordError (naming `where`) for bad timestamps.
    Records prepared for one ingest share `varsets` (each distinct set computed once)."""
    started = _timestamp(rec["started_at"], "started_at", where)
    finished = _timestamp(rec["finished_at"], "finished_at", where)
    hw, server = rec["hardware"], rec["server"]
    skey = server_key(server)
    variables, vhash = (varsets or VariableSets()).stored(rec.get("variables"))
    return PreparedRecord(
        record_id=rec["record_id"],
        hardware=(hw["key"], hw["cpu_model"], hw["cores"], hw["mem_gib"], hw["kernel"]),
        server=(skey, *(server.get(f) for f in SERVER_IDENTITY), server.get("stand_in")),
        run=(
            rec["run_id"],
            rec["runner_class"],
            hw["key"],
            started,
            finished,
            rec["tool"].get("perftrack_version"),
        ),
        result=_result_row(rec, skey, vhash, started, finished),
        varset_hash=vhash,
        variables=variables,
    )


# === inserting ===========================================================================


def insert_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]],
) -> None:
    """Insert rows in one statement: each column travels as one typed list, unnested.

    Much faster than executemany (one round trip instead of one per row).
    """
    if not rows:
        return
    names = ", ".join(f'"{name}"' for name, _ in columns)
    exprs = ", ".join(f"unnest(?::{sql_type}[])" for _, sql_type in columns)
    params = [list(column) for column in zip(*rows, strict=True)]
    con.execute(f"INSERT INTO {table} ({names}) SELECT {exprs}", params)
