"""Version-to-version comparison tables from the results DB (read-only)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import rules, stats

# Series never mix: a comparison group is one hardware key, runner class, and cell shape.
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
)
METRICS = {  # name -> (column, higher is better, unit)
    "tps": ("tps", True, "tx/s"),
    "qps": ("qps", True, "q/s"),
    "p95": ("latency_pct_ms", False, "ms"),
    "latency_avg": ("latency_avg_ms", False, "ms"),
}


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


def _version_key(product: str, version: str) -> tuple[Any, ...]:
    return (product, rules.parse_version(version))


def tables(
    con: Any,
    *,
    metric: str = "tps",
    run_id: str | None = None,
    servers: list[str] | None = None,
    threshold: float = stats.MIN_EFFECT,
) -> list[Table]:
    col, higher, _unit = METRICS[metric]
    where = ["r.status = 'ok'", f"r.{col} IS NOT NULL"]
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
        for prev, cur_row in zip(t.rows, t.rows[1:], strict=False):
            cur_row.previous = prev.server_id
            cur_row.vs_previous = stats.compare(
                prev.values, cur_row.values, higher_is_better=higher, threshold=threshold
            )
        out.append(t)
    return out


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
                    "verdict": c.verdict if c else None,
                }
            )
        res.append({"group": {k: v for k, v in t.key.items()}, "rows": rows})
    return res
