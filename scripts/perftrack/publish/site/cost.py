"""The `cost` data set: cost per transaction next to throughput, per version (issue #9).

Per series and server, the newest run's repeats on the runner class's current hardware
(the same results as the trend page's `summary`), as long rows: one per panel part, so
one faceted chart draws throughput, CPU µs per transaction (user + sys stacked), context
switches per transaction (voluntary + involuntary) and storage bytes per transaction
(read + write). Values are medians over the repeats; `noisy` counts the repeats whose
window was flagged noisy. Results without cost columns (older than schema v4, or sampling
off) contribute the throughput panel only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perftrack.analysis.compare import LATEST_ATTEMPT
from perftrack.publish.site.series import GROUP

# (panel order, panel title, part label, column), in drawing order
PARTS: tuple[tuple[int, str, str, str], ...] = (
    (1, "throughput (transactions/s)", "throughput", "tps"),
    (2, "server CPU per transaction (µs)", "CPU user", "cpu_user_us_per_txn"),
    (2, "server CPU per transaction (µs)", "CPU sys", "cpu_sys_us_per_txn"),
    (3, "context switches per transaction", "voluntary", "ctx_vol_per_txn"),
    (3, "context switches per transaction", "involuntary", "ctx_invol_per_txn"),
    (4, "storage bytes per transaction", "read", "read_bytes_per_txn"),
    (4, "storage bytes per transaction", "written", "write_bytes_per_txn"),
)
COLUMNS = tuple(dict.fromkeys(col for *_, col in PARTS))


def _query() -> str:
    g = ", ".join(GROUP)
    cols = ", ".join(f"r.{c}" for c in COLUMNS)
    lists = ", ".join(f"list({c}) FILTER (WHERE {c} IS NOT NULL) AS {c}" for c in COLUMNS)
    return f"""
        WITH ok AS (
            SELECT ru.runner_class, ru.hw_key, ru.first_started_at AS run_at, r.run_id,
                   r.profile, r.tables, r.table_size, r.duration_s, r.connection,
                   r.engine, r.isolation, r.durability, r.handshake, r.dataset_size, r.phase,
                   r.workload, r.threads, r."collation" AS coll,
                   s.server_id AS server, {cols}, r.noisy, r.cpu_us_per_txn AS cpu_total
            FROM results r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
            WHERE r.status = 'ok' AND r.tps IS NOT NULL AND {LATEST_ATTEMPT}),
        marked AS (SELECT *, max(run_at) OVER (PARTITION BY {g}, server) AS newest_at FROM ok)
        SELECT {g}, server, run_id, count(*) AS n, count(*) FILTER (WHERE noisy) AS noisy,
               median(cpu_total) AS cpu_us_per_txn, {lists}
        FROM marked WHERE run_at = newest_at
        GROUP BY {g}, server, run_id"""


def rows(ex: Any) -> list[dict[str, Any]]:
    """`ex`: the site's export.Exporter (its connection, hardware and server order)."""
    out = []
    for r in ex._rows(_query()):
        if ex.current_hw.get(r["runner_class"]) != r["hw_key"]:
            continue
        common = {
            **ex.describe(r),
            "server": r["server"],
            "vorder": ex.order.get(r["server"], -1),
            "n": r["n"],
            "noisy": r["noisy"],
            "cpu_us_per_txn": r["cpu_us_per_txn"],
            "run_id": r["run_id"],
        }
        for porder, panel, part, col in PARTS:
            values = [float(v) for v in r[col] or []]
            if not values:
                continue
            out.append(
                {
                    **common,
                    "porder": porder,
                    "panel": panel,
                    "part": part,
                    "value": float(np.median(values)),
                    "n_value": len(values),
                }
            )
    out.sort(key=lambda x: (x["workload"], x["collation"], x["threads"], x["vorder"], x["porder"]))
    return out
