"""The overview's verdicts: the latest verdict per version pair and series.

`perftrack detect` stores them in the `verdicts` table (noise-calibrated thresholds,
acknowledgements from configs/annotations.yaml, the variables diff). When that table is
empty, or older than the newest result (detect not re-run after an ingest), they are
computed here the same way, with detect.compute_verdicts (compare.py underneath), so
the site never shows stale or missing verdicts. Pages consume only the rows returned.

Every stored verdict is exported; `hw_current` says whether it was measured on its runner
class's current hardware. The overview shows those first and says how many others there
are and where (a link shows them); the heatmap has the hardware as a filter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from perftrack.analysis import detect, stats
from perftrack.analysis.annotations import Annotation
from perftrack.store.store import Store

METRIC = "tps"  # the overview's verdicts are throughput's (the heatmap's others: metrics.py)
# Display order on the overview: what needs attention first.
VERDICT_RANK = {"regression": 0, "improvement": 1, "inconclusive": 2, "unchanged": 3}


def _stored_is_current(results: Store, metric: str) -> bool:
    """detect ran after the newest result: it computed after that result finished, or
    its verdicts already saw it (their newest `last_result_at` is the newest result;
    run clocks can be ahead of the publishing machine's)."""
    computed, seen, newest = results.verdicts_freshness(metric)
    if computed is None:
        return False
    return newest is None or computed >= newest or seen == newest


def raw(
    results: Store,
    notes: list[Annotation],
    metric: str = METRIC,
    samples: list[tuple[Any, ...]] | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """Verdict rows as the verdicts table has them, and where they came from; each with
    `paired` and `rounds_needed` (table verdict_rounds; None where detect did not write
    them). `samples`: the metric's noise samples (`Store.noise_samples`), if the caller
    read them already (with the other metrics', in one scan)."""
    found: Sequence[Mapping[str, Any]]
    if _stored_is_current(results, metric):
        rounds = results.verdict_rounds(metric)
        found = results.stored_verdicts(metric)
        origin = "detect"
    else:
        names = results.verdict_columns()
        noise = _current_noise(results, metric)
        if noise is None and samples is not None:
            noise = detect.compute_noise(results, metric, samples)
        tables = detect.verdict_tables(results, metric, noise)
        rows = detect.compute_verdicts(results, notes, metric, tables)
        found = [dict(zip(names, r, strict=True)) for r in rows]
        rounds = {r[0]: (r[2], r[3]) for r in detect.compute_verdict_rounds(tables, metric)}
        origin = "computed at build time"
    out = []
    for v in found:
        paired, needed = rounds.get(v["verdict_id"], (None, None))
        out.append({**v, "paired": paired, "rounds_needed": needed})
    return out, origin


def _current_noise(results: Store, metric: str) -> list[tuple[Any, ...]] | None:
    """The metric's stored noise if the detect that stored it saw every result (it stored
    it after throughput's verdicts, which are current: detect.NOISE_ALSO); else None (the
    caller computes it, as detect would)."""
    if metric not in detect.NOISE_ALSO.get(METRIC, ()) or not _stored_is_current(results, METRIC):
        return None
    rows, computed = results.stored_noise(metric)
    verdicts_at = results.verdicts_freshness(METRIC)[0]
    if not rows or computed is None or verdicts_at is None or computed < verdicts_at:
        return None
    return rows


def latest(
    results: Store,
    notes: list[Annotation],
    current_hw: dict[str, str],
    describe: Callable[[dict[str, Any]], dict[str, Any]],
    metric: str = METRIC,
    samples: list[tuple[Any, ...]] | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """Site rows (regressions first, newest first within a verdict) and their source.
    `run_id`: the run that last measured the new version in the series (its page has the
    variables diff of the pair); `previous_run_id` the same for the previous version."""
    stored, origin = raw(results, notes, metric, samples)
    # with a rotation (`perftrack plan`) series run on different nights, so the overview
    # shows how fresh each verdict's data is
    last_run = results.series_last_run()
    alert_state = {a["alert_id"]: a["state"] for a in results.stored_alerts(METRIC)}
    out = []
    for v in stored:
        diff = v.get("variables_diff")
        diff = json.loads(diff) if isinstance(diff, str) else (diff or {})
        at = v.get("last_result_at")
        key = tuple(v[c] for c in detect.SERIES_COLS)
        runs = [last_run.get((*key, v[k])) for k in ("base_server", "new_server")]
        series_at = max((t[0] for t in runs if t is not None), default=None)
        out.append(
            {
                **describe(v),
                "previous": v["base_server"],
                "server": v["new_server"],
                "previous_version_string": v["base_version_string"],
                "version_string": v["new_version_string"],
                "n_previous": v["n_base"],
                "n": v["n_new"],
                # the ratio's own basis: the geometric means of the values it came from
                # (detect stores them in the columns median_base / median_new)
                "mean_previous": v["median_base"],
                "mean": v["median_new"],
                "ratio": v["ratio"],
                "ci_low": v["ci_low"],
                "ci_high": v["ci_high"],
                "p_value": v["p_value"],
                "threshold": v["threshold"],
                "verdict": v["verdict"],
                "paired": v["paired"],  # None: stored before detect wrote it
                # inconclusive: what the row says it needs (stats.undecided_note)
                "undecided": (
                    stats.undecided_note(v["rounds_needed"])
                    if v["verdict"] == "inconclusive" and v["paired"] is not None
                    else None
                ),
                "id": v["verdict_id"],  # deep links select it: index.html#verdict=ID
                "metric": metric,
                # measured on the runner class's current hardware (else: its history)
                "hw_current": current_hw.get(v["runner_class"]) == v["hw_key"],
                "run_id": runs[1][1] if runs[1] else None,
                "previous_run_id": runs[0][1] if runs[0] else None,
                "acknowledged": v["acknowledged"] is not None,
                "note": v["acknowledged"],
                # a regression's alert state (analysis/alerts.py; the Regressions page)
                "alert": alert_state.get(v["verdict_id"]),
                "variables_changed": len(diff),
                # values of either side whose window was still warming up (run/steady.py)
                "unsteady": v.get("unsteady") or 0,
                "at": at.isoformat() + "Z" if at is not None else None,  # DB times are UTC
                "series_last_run": series_at.isoformat() + "Z" if series_at else None,
            }
        )
    out.sort(key=lambda r: r["at"] or "", reverse=True)
    out.sort(key=lambda r: VERDICT_RANK.get(r["verdict"], len(VERDICT_RANK)))
    out.sort(key=lambda r: not r["hw_current"])
    return out, origin
