"""The metrics the trend, heatmap and history pages offer (their metric selector, #20).

The trend page draws, per series and server, the median of the newest run's repeats of
the chosen metric with the 95% interval of that median (`analysis/medians.py`); the
heatmap colours the stored verdicts of the chosen metric (`verdicts.latest`, one verdict
rule for every page). `DEFS` is the one list of them: the pages read it from `meta`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from perftrack.analysis import compare, detect, medians
from perftrack.publish.site import verdicts
from perftrack.publish.site.series import GROUP
from perftrack.store.queries.shapes import NewestCost

# (summary field, compare.METRICS name or None, label, unit, higher is better); the cost
# fields are the results' own columns (record.COST_FIELDS), p95_ms is latency_pct_ms's
_C = "per transaction"
_S = "context switches"
_DEFS: tuple[tuple[str, str | None, str, str, bool], ...] = (
    ("tps", "tps", "throughput", "transactions/s", True),
    ("p95_ms", "p95", "p95 latency", "ms", False),
    ("cpu_us_per_txn", "cpu_us_per_txn", f"server CPU {_C}", "µs", False),
    ("cpu_user_us_per_txn", "cpu_user_us_per_txn", f"server CPU (user) {_C}", "µs", False),
    ("cpu_sys_us_per_txn", "cpu_sys_us_per_txn", f"server CPU (sys) {_C}", "µs", False),
    ("ctx_vol_per_txn", "ctx_vol_per_txn", f"voluntary {_S} {_C}", "switches", False),
    ("ctx_invol_per_txn", "ctx_invol_per_txn", f"involuntary {_S} {_C}", "switches", False),
    ("read_bytes_per_txn", "read_bytes_per_txn", f"storage bytes read {_C}", "B", False),
    ("write_bytes_per_txn", "write_bytes_per_txn", f"storage bytes written {_C}", "B", False),
    ("instructions_per_txn", "instructions_per_txn", f"instructions {_C}", "instructions", False),
    ("cycles_per_txn", "cycles_per_txn", f"cycles {_C}", "cycles", False),
    ("ipc", "ipc", "instructions per cycle", "IPC", True),
)
# The heatmap's metric selector: its metrics besides throughput (compare.METRICS names),
# each computed like throughput's (stored by `perftrack detect --metric M`, else at build
# time): every metric of the list that has verdicts.
HEATMAP_METRICS = tuple(m for _k, m, *_ in _DEFS if m is not None and m != verdicts.METRIC)
# (key, label, unit) of every metric, in the selectors' order (the history page's list)
LABELS: tuple[tuple[str, str, str], ...] = tuple((k, lbl, u) for k, _m, lbl, u, _h in _DEFS)
# the per-transaction costs (each one's repeats: newest_cost's `costs`)
COST_COLUMNS = tuple(key for key, *_ in _DEFS if key not in ("tps", "p95_ms"))


def defs() -> list[dict[str, Any]]:
    """The selector's entries, in order: key (the summary field), verdict (the heatmap's
    metric name, when it has verdicts), label, unit, higher (is better)."""
    heat = {verdicts.METRIC, *HEATMAP_METRICS}
    return [
        {"key": k, "verdict": m if m in heat else None, "label": lbl, "unit": u, "higher": hi}
        for k, m, lbl, u, hi in _DEFS
    ]


def add_cost(summary: list[dict[str, Any]], cost_rows: Sequence[NewestCost]) -> None:
    """Give each summary row (keyed by series, server and run) the median and its interval
    of every cost column its repeats have: FIELD, FIELD_low, FIELD_high."""
    by_key = {series_run(r): r for r in cost_rows}
    for s in summary:
        c = by_key.get(s.pop("_key"))
        for col in COST_COLUMNS:
            values = (c["costs"].get(col) if c else None) or []
            s[col], s[col + "_low"], s[col + "_high"] = medians.with_interval(values)


def series_run(row: Mapping[str, object]) -> tuple[object, ...]:
    """The key a summary row carries as `_key`: its series, server and run."""
    return (*(row[c] for c in GROUP), row["server"], row["run_id"])


def heatmap_verdicts(exporter: Any) -> list[dict[str, Any]]:
    """The verdicts of the heatmap's other metrics (`exporter`: export.Exporter), for the
    metrics the results have values of (cost columns are missing before schema v4 or with
    sampling off)."""
    out = []
    present = exporter.st.columns_with_values([compare.METRICS[m][0] for m in HEATMAP_METRICS])
    shown = [m for m in HEATMAP_METRICS if compare.METRICS[m][0] in present]
    # the noise samples of every metric in one scan where they pick the same rows (one
    # scan per metric was half the build at two years of the nightly)
    cols = [compare.METRICS[m][0] for m in shown]
    samples = exporter.st.noise_samples_of(cols, detect.NOISE_RECENT_RUNS) if cols else {}
    # and their comparisons' windows, likewise (compare.tables reads them kept)
    if cols:
        exporter.st.series_samples_of(cols, recent=compare.RECENT_VALUES)
    for m in shown:
        rows, _origin = verdicts.latest(
            exporter.st,
            exporter.notes,
            exporter.current_hw,
            exporter.describe,
            m,
            samples[compare.METRICS[m][0]],
        )
        for r in rows:
            r["vorder"] = exporter.order.get(r["server"], -1)
        out += rows
    return out
