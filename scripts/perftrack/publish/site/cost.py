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

from perftrack.analysis.medians import median

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


def rows(exporter: Any) -> list[dict[str, Any]]:
    """`exporter`: the site's export.Exporter (its store, hardware and server order)."""
    out = []
    for r in exporter.newest_cost():  # has every column of COLUMNS
        if exporter.current_hw.get(r["runner_class"]) != r["hw_key"]:
            continue
        common = {
            **exporter.describe(r),
            "server": r["server"],
            "vorder": exporter.order.get(r["server"], -1),
            "n": r["n"],
            "noisy": r["noisy"],
            "cpu_us_per_txn": r["cpu_us_per_txn"],
            "run_id": r["run_id"],
        }
        for porder, panel, part, col in PARTS:
            values = r["costs"].get(col) or []
            if not values:
                continue
            out.append(
                {
                    **common,
                    "porder": porder,
                    "panel": panel,
                    "part": part,
                    "value": median(values),
                    "n_value": len(values),
                }
            )
    out.sort(key=lambda x: (x["workload"], x["collation"], x["threads"], x["vorder"], x["porder"]))
    return out
