"""`perftrack detect`: derived statistics written back to the DB.

Three tables, each recomputed from `results` and replaced whole (so they never disagree
with the measurements):
  noise          A/A spread per runner class × hardware × workload: the CV of a cell's
                 metric across its repeats within one run, pooled (median, p90), and the
                 paired A/A spread of consecutive repeats (the paired thresholds' noise)
  verdicts       every version vs its predecessor per series, with the noise-calibrated
                 threshold, acknowledgement and the diff of effective server variables
  change_points  steps of the nightly series (analysis/changepoints.py): one value per run
                 (the median over its repeats); series never cross hardware keys; a step
                 of the control server on a runner class is one `environment` row for
                 the class, a server's step at every thread count and charset of a
                 workload one row, each with its size and 95% interval
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from perftrack.analysis import advise, alerts, changepoints, compare, stats
from perftrack.analysis.annotations import (
    DEFAULT_EXPIRE_DAYS,
    Annotation,
    acknowledged,
    check_matched,
)
from perftrack.store.store import Store

MIN_REPEATS_FOR_NOISE = 3  # a CV from fewer repeats says little
NOISE_P90 = 90
SERIES_COLS = compare.GROUP_COLS  # one definition of a series, shared with compare
MAX_DIFF_VARIABLES = 200  # a verdict carries at most this many changed variables
# Scale (docs/scaling.md): a verdict pools each server's newest values per series
# (compare.RECENT_VALUES), and the noise estimate pools the newest runs of each runner
# class, so `detect` costs the same after a year as after two months instead of
# bootstrapping ever longer samples.
NOISE_RECENT_RUNS = 60
# Metrics whose noise `detect METRIC` stores too (the verdicts and change points are the
# metric's own): the site's heatmap judges p95 with it at build time (publish/site/
# verdicts.py), and `compare --metric p95` then uses the same noise.
NOISE_ALSO = {"tps": ("p95",)}


@dataclass(kw_only=True)
class DetectCounts:
    noise: int = 0
    verdicts: int = 0
    regressions: int = 0
    acknowledged: int = 0
    change_points: int = 0
    series: int = 0
    alerts_new: int = 0  # alerts this detect found first (reported once, tonight)
    alerts_open: int = 0  # new or acknowledged


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def compute_noise(
    results: Store, metric: str = "tps", samples: list[tuple[Any, ...]] | None = None
) -> list[tuple[Any, ...]]:
    """Per runner class × hardware × workload: the A/A CV (median, p90 over the series of
    each run) and the paired A/A spread (stats.aa_spread over every server's consecutive
    repeats of one run and series, each two an A/A pair; NULL below stats.MIN_AA_PAIRS).
    `samples`: the store's noise_samples of the metric, if the caller has them."""
    col = compare.METRICS[metric][0]
    rows = results.noise_samples(col, NOISE_RECENT_RUNS) if samples is None else samples
    rows = [r for r in rows if len(r[3]) >= MIN_REPEATS_FOR_NOISE]
    keys: list[tuple[str, str, str]] = [(r[0], r[1], r[2]) for r in rows]
    pools = stats.noise_pools(keys, [r[3] for r in rows])
    now = _now()
    out = []
    for (rc, hw, wl), pool in sorted(pools.items()):
        ratios = pool.log_ratios()
        out.append(
            (
                rc,
                hw,
                wl,
                metric,
                len(pool.cvs),
                sum(pool.sizes),
                float(np.median(pool.cvs)),
                float(np.percentile(pool.cvs, NOISE_P90)),
                now,
                stats.aa_spread(ratios),
                len(ratios),
            )
        )
    return out


def variables_diff(results: Store, base: str | None, new: str | None) -> dict[str, list[Any]]:
    """{name: [base value, new value]} for every variable whose value differs between two
    stored variable sets (at most MAX_DIFF_VARIABLES, by name)."""
    if not base or not new or base == new:
        return {}
    diff = [(name, a, b) for name, a, b, _ in results.variables_diff(base, new) if a != b]
    return {name: [a, b] for name, a, b in diff[:MAX_DIFF_VARIABLES]}


def variables_diff_of(results: Store) -> advise.VarsDiff:
    """diff(series key, base server, new server): the variables diff of the two servers'
    most common variable sets in that series (what a verdict carries), for `advise`."""
    varsets = results.series_varsets()

    def diff(series: dict[str, object], base: str, new: str) -> dict[str, list[Any]]:
        k = tuple(series[c] for c in SERIES_COLS)
        # each pair of sets is read once per open store (st.variables_diff)
        return variables_diff(results, varsets.get((*k, base)), varsets.get((*k, new)))

    return diff


def verdict_tables(
    results: Store, metric: str = "tps", noise_rows: list[tuple[Any, ...]] | None = None
) -> list[compare.Table]:
    """The comparison tables verdicts (and their alerts) are read from: the noise threshold
    and the stored paired A/A spread of each runner class × workload. `noise_rows`:
    compute_noise's rows, if the caller has them already."""
    rows = compute_noise(results, metric) if noise_rows is None else noise_rows
    noise = {(r[0], r[1], r[2], r[3]): r[6] for r in rows}
    spreads = {(r[0], r[1], r[2], r[3]): r[9] for r in rows if r[9] is not None}
    return compare.tables(results, metric=metric, noise=noise, spreads=spreads)


def compute_verdicts(
    results: Store,
    notes: list[Annotation],
    metric: str = "tps",
    tables: list[compare.Table] | None = None,
    last_result: dict[str, datetime] | None = None,
) -> list[tuple[Any, ...]]:
    """The verdict rows; `tables`, `last_result` (the store's server_last_result): if the
    caller has them already."""
    varsets = results.series_varsets()
    unsteady = results.series_unsteady()
    last = results.server_last_result() if last_result is None else last_result
    now = _now()
    out = []
    for t in verdict_tables(results, metric) if tables is None else tables:
        key = tuple(t.key[c] for c in SERIES_COLS)
        for prev, row in zip(t.rows, t.rows[1:], strict=False):
            c = row.vs_previous
            if c is None:
                continue
            subject = {**t.key, "base_server": prev.server_id, "new_server": row.server_id}
            ack = acknowledged(notes, subject)
            diff = variables_diff(
                results, varsets.get((*key, prev.server_id)), varsets.get((*key, row.server_id))
            )
            vid = alerts.verdict_alert_id(key, metric, prev.server_id, row.server_id)
            out.append(
                (
                    vid,
                    *key,
                    metric,
                    prev.server_id,
                    row.server_id,
                    prev.version_string,
                    row.version_string,
                    c.n_a,
                    c.n_b,
                    c.mean_a,
                    c.mean_b,
                    c.ratio,
                    c.ci_low,
                    c.ci_high,
                    c.p_value,
                    c.threshold,
                    c.verdict,
                    ack,
                    json.dumps(diff),
                    last.get(row.server_id),
                    now,
                    # values of either side whose window still moved (run/steady.py)
                    unsteady.get((*key, prev.server_id), 0)
                    + unsteady.get((*key, row.server_id), 0),
                )
            )
    return out


def compute_verdict_rounds(tables: list[compare.Table], metric: str) -> list[tuple[Any, ...]]:
    """(verdict_id, metric, paired, rounds_needed) of each verdict `compute_verdicts`
    makes from these tables (store table `verdict_rounds`): how it was computed, and for
    an inconclusive one the rounds a side that would decide it."""
    out = []
    for t in tables:
        key = tuple(t.key[c] for c in SERIES_COLS)
        for prev, row in zip(t.rows, t.rows[1:], strict=False):
            c = row.vs_previous
            if c is not None:
                vid = alerts.verdict_alert_id(key, metric, prev.server_id, row.server_id)
                out.append((vid, metric, c.paired, c.rounds_needed))
    return out


# Positions in a verdict row (the `verdicts` table's column order, written positionally).
VERDICT_AT = -6
ACKNOWLEDGED_AT = -5


def compute_change_points(
    results: Store,
    notes: list[Annotation],
    control_server: str | None,
    metric: str = "tps",
    series: changepoints.Points | None = None,
) -> tuple[list[tuple[Any, ...]], int]:
    """One row per change (analysis/changepoints.py): an environment change once per runner
    class, a server's change at every thread count and charset of a workload once, a
    single series' change once. Returns (rows, series looked at). `series`: the store's
    nightly_points, if the caller has them already."""
    if series is None:
        series = results.nightly_points(compare.METRICS[metric][0])
    found = changepoints.detect(series, control_server, SERIES_COLS)
    now = _now()
    out = []
    for c in found:
        key = c.key
        sk = hashlib.sha256(json.dumps([*map(str, key), metric]).encode()).hexdigest()[:16]
        subject = dict(zip((*SERIES_COLS, "server_id"), key, strict=True))
        low, high = c.step.interval
        out.append(
            (
                sk,
                *key[:-1],
                metric,
                key[-1],
                c.run_id,
                c.at,
                c.before,
                c.after,
                c.step.rel,
                c.step.p_value,
                c.is_control,
                c.environment,
                acknowledged(notes, subject),
                now,
                low,
                high,
                c.scope,
                c.series_count,
            )
        )
    return out, len(series)


def check_annotations(
    notes: list[Annotation], verdicts: list[tuple[Any, ...]], cps: list[tuple[Any, ...]]
) -> None:
    """A ConfigError for the first annotation that matches no verdict and no change point
    of tonight's (annotations.check_matched)."""
    n = len(SERIES_COLS)
    subjects = [
        {**dict(zip(SERIES_COLS, v[1 : 1 + n], strict=True)), "base_server": v[n + 2],
         "new_server": v[n + 3]}
        for v in verdicts
    ]  # fmt: skip
    subjects += [dict(zip(alerts.CP_COLS, c, strict=True)) for c in cps]
    check_matched(notes, subjects)


def detect_and_store(
    results: Store,
    notes: list[Annotation],
    control_server: str | None,
    metric: str = "tps",
    *,
    expire_days: int = DEFAULT_EXPIRE_DAYS,
    strict: bool = False,
    now: datetime | None = None,
) -> DetectCounts:
    """Recompute the three tables and bring the alerts up to date; the store replaces
    them in one transaction. `strict`: an annotation that matches nothing is an error
    (before anything is written). `now` (tests): the alerts' clock."""
    also = NOISE_ALSO.get(metric, ())
    cols = [compare.METRICS[m][0] for m in (metric, *also)]
    samples = results.noise_samples_of(cols, NOISE_RECENT_RUNS)  # one scan for all of them
    noise = compute_noise(results, metric, samples[cols[0]])
    tables = verdict_tables(results, metric, noise)
    last = results.server_last_result()  # read once, used twice
    verdicts = compute_verdicts(results, notes, metric, tables, last)
    points = results.nightly_points(compare.METRICS[metric][0])  # read once, used twice
    cps, n_series = compute_change_points(results, notes, control_server, metric, points)
    if strict:
        check_annotations(notes, verdicts, cps)
    clock = now or _now()
    rows = alerts.compute(results, (tables, last), (cps, points), notes, metric, expire_days, clock)
    results.replace_derived(
        metric,
        {
            "noise": noise,
            "verdicts": verdicts,
            "verdict_rounds": compute_verdict_rounds(tables, metric),
            "change_points": cps,
            "alerts": rows,
        },
    )
    for other, col in zip(also, cols[1:], strict=True):  # after the verdicts: computed_at
        results.replace_derived(other, {"noise": compute_noise(results, other, samples[col])})
    stored = results.stored_alerts(metric)
    return DetectCounts(
        noise=len(noise),
        verdicts=len(verdicts),
        regressions=sum(
            1 for v in verdicts if v[VERDICT_AT] == "regression" and v[ACKNOWLEDGED_AT] is None
        ),
        acknowledged=sum(1 for v in verdicts if v[ACKNOWLEDGED_AT] is not None),
        change_points=len(cps),
        series=n_series,
        alerts_new=len(alerts.newly_reported(stored)),
        alerts_open=sum(1 for a in stored if a["state"] in alerts.OPEN_STATES),
    )
