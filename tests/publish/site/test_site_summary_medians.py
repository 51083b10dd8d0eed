"""The trend page's medians and bands on the committed data (issue 40 item 4: computed by
analysis/medians.py, only formatted here): each summary row's throughput and p95 are the
median of the newest run's repeats, its band the order statistics whose binomial
coverage is the confidence the page states; the cost page's values are the medians of
its repeats."""

from __future__ import annotations

import statistics
from pathlib import Path

from scipy import stats as sps

from perftrack.publish.site import export
from perftrack.store import store

REPO = Path(__file__).resolve().parents[3]
DB = REPO / "data" / "results.duckdb"
# what tells a summary row (and a cost row) apart: its run, server and described series
KEY = ("run_id", "server", "runner_class", "hw_key", "profile", "dataset", "workload",
       "threads", "collation")  # fmt: skip


def _band(values: list[float]) -> tuple[float, float]:
    """[x(k), x(n-k+1)], k the largest with 1 - 2 P(B <= k-1) >= CONFIDENCE (n < 6: min..max)."""
    x, n = sorted(values), len(values)
    k = 1
    while k + 1 <= (n + 1) // 2 and 1 - 2 * sps.binom.cdf(k, n, 0.5) >= export.CONFIDENCE:
        k += 1
    return x[k - 1], x[n - k]


def test_summary_rows_are_the_medians_and_bands_of_the_newest_repeats() -> None:
    with store.open_db(DB, write=False) as st:
        ex = export.Exporter(st, [])
        newest = ex.newest()
        summary = ex.summary(newest)
        cost = export.cost_rows(ex)
        cost_repeats = [
            r for r in ex.newest_cost() if ex.current_hw[r["runner_class"]] == r["hw_key"]
        ]
    assert summary and len(summary) == len(newest)
    repeats = {tuple({**r, **ex.describe(r)}[k] for k in KEY): r for r in newest}
    assert len(repeats) == len(newest)
    wide = 0
    for s in summary:
        r = repeats[tuple(s[k] for k in KEY)]
        tps = [float(v) for v in r["tps"]]
        assert s["n"] == len(tps)
        assert s["tps"] == statistics.median(tps)
        assert (s["tps_low"], s["tps_high"]) == _band(tps)
        assert s["tps_low"] <= s["tps"] <= s["tps_high"]
        p95 = [float(v) for v in r["p95"] if v is not None]
        if p95:
            assert s["p95_ms"] == statistics.median(p95)
            assert (s["p95_ms_low"], s["p95_ms_high"]) == _band(p95)
        wide += len(tps) >= 6 and (s["tps_low"], s["tps_high"]) != (min(tps), max(tps))
    assert wide, "no row has enough repeats for a band narrower than min..max"
    # the cost page: the median of each part's repeats (its own query's, newest_cost)
    throughput = {tuple(c[k] for k in KEY): c for c in cost if c["part"] == "throughput"}
    assert len(throughput) == len(cost_repeats)
    for r in cost_repeats:
        c = throughput[tuple({**r, **ex.describe(r)}[k] for k in KEY)]
        assert c["value"] == statistics.median(r["costs"]["tps"] or [])
