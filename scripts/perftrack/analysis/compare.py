"""Version-to-version comparison tables from the results DB (read-only)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np

from perftrack.analysis import stats
from perftrack.servers import rules
from perftrack.store import migrations

# Series never mix: a comparison group is one hardware key, runner class, and cell shape,
# including every configuration axis (null when a cell does not set it: schema v5).
GROUP_COLS = (
    "hw_key",
    "runner_class",
    "workload",
    "threads",
    "collation",
    "profile",
    "tables",
    "table_size",
    "duration_s",
    "connection",
    *migrations.V5_AXES,
)
METRICS = {  # name -> (column, higher is better, unit)
    "tps": ("tps", True, "tx/s"),
    "qps": ("qps", True, "q/s"),
    "p95": ("latency_pct_ms", False, "ms"),
    "latency_avg": ("latency_avg_ms", False, "ms"),
    # cost per operation (sampler.py, schema v4): lower is better, except IPC
    "cpu_us_per_txn": ("cpu_us_per_txn", False, "µs/txn"),
    "cpu_user_us_per_txn": ("cpu_user_us_per_txn", False, "µs/txn"),
    "cpu_sys_us_per_txn": ("cpu_sys_us_per_txn", False, "µs/txn"),
    "cpu_us_per_query": ("cpu_us_per_query", False, "µs/query"),
    "ctx_vol_per_txn": ("ctx_vol_per_txn", False, "switches/txn"),
    "ctx_invol_per_txn": ("ctx_invol_per_txn", False, "switches/txn"),
    "read_bytes_per_txn": ("read_bytes_per_txn", False, "B/txn"),
    "write_bytes_per_txn": ("write_bytes_per_txn", False, "B/txn"),
    "peak_rss_bytes": ("peak_rss_bytes", False, "B"),
    "instructions_per_txn": ("instructions_per_txn", False, "instructions/txn"),
    "cycles_per_txn": ("cycles_per_txn", False, "cycles/txn"),
    "ipc": ("ipc", True, "instructions/cycle"),
}
# A cell re-measured because its window was noisy (runner, host.repeat_of) has two ok
# attempts: only the latest counts, so a repeat never weighs twice.
LATEST_ATTEMPT = (
    "NOT EXISTS (SELECT 1 FROM results r2 WHERE r2.run_id = r.run_id "
    "AND r2.cell_id = r.cell_id AND r2.status = 'ok' AND r2.attempt > r.attempt)"
)


@dataclass
class Row:
    server_id: str
    product: str
    version: str
    version_string: str | None
    stand_in: str | None
    values: list[float]
    latency: list[float]
    vs_previous: stats.Comparison | None = None
    previous: str | None = None


@dataclass
class Table:
    key: dict[str, Any]
    rows: list[Row] = field(default_factory=list)
    noise_cv: float | None = None  # A/A CV the thresholds were derived from


def _version_key(product: str, version: str) -> tuple[Any, ...]:
    return (product, rules.parse_version(version))


NoiseKey = tuple[str, str, str, str]  # runner_class, hw_key, workload, metric


def load_noise(con: Any) -> dict[NoiseKey, float]:
    """A/A CV per runner class/hardware/workload/metric from the `noise` table, if any."""
    try:
        rows = con.execute(
            "SELECT runner_class, hw_key, workload, metric, cv_median FROM noise"
        ).fetchall()
    except duckdb.Error:  # an older DB without the table: thresholds come from the data
        return {}
    return {(r[0], r[1], r[2], r[3]): float(r[4]) for r in rows}


def group_cv(rows: list[Row]) -> float | None:
    """The group's own A/A noise: median over its servers of the CV across repeats."""
    cvs = [c for r in rows if (c := stats.cv(r.values)) is not None]
    return float(np.median(cvs)) if cvs else None


def tables(
    con: Any,
    *,
    metric: str = "tps",
    run_id: str | None = None,
    servers: list[str] | None = None,
    noise: dict[NoiseKey, float] | None = None,
    recent: int | None = None,
) -> list[Table]:
    """`recent`: only each server's newest that many values per series (detect uses it so
    a verdict costs the same after a year of nightly runs as after a month)."""
    col, higher, _unit = METRICS[metric]
    where = ["r.status = 'ok'", f"r.{col} IS NOT NULL", LATEST_ATTEMPT]
    args: list[Any] = []
    if run_id:
        where.append("r.run_id = ?")
        args.append(run_id)
    if servers:
        where.append(f"s.server_id IN ({', '.join('?' for _ in servers)})")
        args += servers
    sql = f"""
        SELECT {
        ", ".join("ru." + c if c in ("hw_key", "runner_class") else "r." + c for c in GROUP_COLS)
    },
               s.server_id, s.product, s.version, s.version_string, s.stand_in,
               r.{col} AS value, r.latency_pct_ms
        FROM results r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
        WHERE {" AND ".join(where)}
        {_newest(recent)}
        ORDER BY r.started_at"""
    cur = con.execute(sql, args)
    names = [d[0] for d in cur.description]
    groups: dict[tuple[Any, ...], dict[str, Row]] = defaultdict(dict)
    for rec in cur.fetchall():
        d = dict(zip(names, rec, strict=True))
        gk = tuple(d[c] for c in GROUP_COLS)
        row = groups[gk].get(d["server_id"])
        if row is None:
            row = groups[gk][d["server_id"]] = Row(
                d["server_id"],
                d["product"],
                d["version"],
                d["version_string"],
                d["stand_in"],
                [],
                [],
            )
        row.values.append(float(d["value"]))
        if d["latency_pct_ms"] is not None:
            row.latency.append(float(d["latency_pct_ms"]))
    out: list[Table] = []
    for gk, by_server in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        t = Table(dict(zip(GROUP_COLS, gk, strict=True)))
        t.rows = sorted(by_server.values(), key=lambda r: _version_key(r.product, r.version))
        nk = (t.key["runner_class"], t.key["hw_key"], t.key["workload"], metric)
        cv = (noise or {}).get(nk) or group_cv(t.rows)
        t.noise_cv = cv
        for prev, cur_row in zip(t.rows, t.rows[1:], strict=False):
            if prev.product != cur_row.product:
                continue  # the first release of another product has no predecessor here
            cur_row.previous = prev.server_id
            threshold = stats.noise_threshold(cv, len(prev.values), len(cur_row.values))
            cur_row.vs_previous = stats.compare(
                prev.values, cur_row.values, higher_is_better=higher, threshold=threshold
            )
        out.append(t)
    return out


def _newest(recent: int | None) -> str:
    """A QUALIFY clause keeping each server's newest `recent` values per series."""
    if recent is None:
        return ""
    part = ", ".join(("ru." if c in ("hw_key", "runner_class") else "r.") + c for c in GROUP_COLS)
    return (
        f"QUALIFY row_number() OVER (PARTITION BY {part}, s.server_id "
        f"ORDER BY r.started_at DESC) <= {int(recent)}"
    )


def median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def to_json(ts: list[Table], metric: str) -> list[dict[str, Any]]:
    res = []
    for t in ts:
        rows = []
        for r in t.rows:
            c = r.vs_previous
            rows.append(
                {
                    "server": r.server_id,
                    "version_string": r.version_string,
                    "stand_in": r.stand_in,
                    "n": len(r.values),
                    "metric": metric,
                    "median": median(r.values),
                    "p95_latency_ms_median": median(r.latency),
                    "previous": r.previous,
                    "ratio": c.ratio if c else None,
                    "ci_low": c.ci_low if c else None,
                    "ci_high": c.ci_high if c else None,
                    "p_value": c.p_value if c else None,
                    "threshold": c.threshold if c else None,
                    "verdict": c.verdict if c else None,
                }
            )
        res.append({"group": dict(t.key), "noise_cv": t.noise_cv, "rows": rows})
    return res
