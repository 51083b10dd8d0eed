"""The alert lifecycle: each regression detect finds is reported once and has a state.

An alert is one change of one series, with a stable identity across nights:
  verdict       a `regression` verdict of release NEW against its predecessor BASE:
                identity = series key + metric + (BASE, NEW), the verdict's own id
  change_point  a nightly change point that lowers the series (raises it, for a metric
                where lower is better), not the control server's and not an environment
                change: identity = series key + server + metric + the night of the change
                as first found; a change point Otava finds again up to CP_MATCH_POINTS
                nights away in the same series is the same alert (more nights move it)

Its state, one rule (`state_of`), strongest first:
  false_positive  an annotation with `state: false_positive` matches it
  fixed           a later release (verdicts: `compare.versus` of BASE and the later
                  release is `unchanged` or `improvement`) or the nights after a later
                  change point (change points: the same verdict function on the level
                  before the change against the newest level) are back within the noise
  not_reproduced  verdicts: the newest paired re-measurement of the same cell, pair and
                  hardware key (store/remeasures.py: `compare --until-conclusive`) says
                  `unchanged` or `improvement`: the paired measurement supersedes
                  detect's verdict (a `regression` confirms it, `inconclusive` leaves it
                  open; `evidence` words both results for every place that lists alerts)
  acknowledged    an annotation (default `state: acknowledged`) matches it
  expired         new, and nothing happened to it (found, state changed) for
                  `alerts.expire_days` (configs/annotations.yaml, default 90)
  new             otherwise
Open alerts are the new and acknowledged ones (the Regressions page and feed).

"Reported once": `first_seen_at` is the detect that first found the alert and never
changes; the nightly summary reports as new only the alerts the newest detect found first
(`first_seen_at == checked_at`), never the ones it reported on an earlier night.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast

from perftrack.analysis import compare
from perftrack.analysis.annotations import Annotation, matching
from perftrack.analysis.changepoints import Points
from perftrack.store import remeasures
from perftrack.store.queries.shapes import (
    AlertFinding,
    AlertRow,
    ChangePointRow,
    RemeasureRow,
    SeriesKey,
    VerdictRow,
    series_key,
)
from perftrack.store.store import SERIES_COLS, Store

AlertT = TypeVar("AlertT", bound=Mapping[str, Any])  # a stored alert row or one detect made

METRIC = "tps"  # the metric alerts are reported for (the nightly's and the site's)
STATES = ("new", "acknowledged", "false_positive", "fixed", "not_reproduced", "expired")
OPEN_STATES = ("new", "acknowledged")
KINDS = ("verdict", "change_point")
# A change point found again this many nights (points of its series) from where an alert
# of the same series was found is the same change: Otava's split moves as nights arrive.
CP_MATCH_POINTS = 3
BACK = ("unchanged", "improvement")  # verdicts that mean "back within the noise"
# change_points table columns, in order (detect.compute_change_points writes them so)
CP_COLS = (
    "series_key",
    *SERIES_COLS,
    "metric",
    "server_id",
    "run_id",
    "at_time",
    "before_value",
    "after_value",
    "rel_change",
    "p_value",
    "is_control",
    "environment",
    "acknowledged",
    "computed_at",
    "rel_low",
    "rel_high",
    "scope",
    "series_count",
)


def verdict_alert_id(key: Sequence[Any], metric: str, base: str, new: str) -> str:
    """A verdict's id, and the id of its alert: series key, metric and version pair."""
    raw = json.dumps([*map(str, key), metric, base, new])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def change_alert_id(key: Sequence[Any], server: str, metric: str, run_id: str) -> str:
    raw = json.dumps(["change_point", *map(str, key), server, metric, run_id])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


@dataclass(kw_only=True)
class Found:
    """A change tonight's detect sees."""

    alert_id: str
    kind: str
    key: SeriesKey  # the series (SERIES_COLS)
    server_id: str
    base_server: str | None
    run_id: str | None
    change_at: datetime | None
    ratio: float | None
    before: float | None
    after: float | None
    fixed_by: str | None = None

    def subject(self) -> dict[str, object]:
        """What an annotation's `match` is tested against (annotations.Annotation)."""
        if self.kind == "verdict":
            return {**self.key, "base_server": self.base_server, "new_server": self.server_id}
        return {**self.key, "server_id": self.server_id}


def subject_of(alert: Mapping[str, Any]) -> dict[str, object]:
    """The annotation subject of a stored alert row."""
    key = {c: alert[c] for c in SERIES_COLS}
    if alert["kind"] == "verdict":
        return {**key, "base_server": alert["base_server"], "new_server": alert["server_id"]}
    return {**key, "server_id": alert["server_id"]}


def state_of(
    note: Annotation | None,
    fixed_by: str | None,
    news_at: datetime | None,
    now: datetime,
    expire_days: int | None,
    remeasured: str | None = None,
) -> str:
    """The one rule (module docstring); `expire_days` None: never expired; `remeasured`:
    the verdict of the alert's paired re-measurement on its own hardware, if any."""
    if note is not None and note.state == "false_positive":
        return "false_positive"
    if fixed_by:
        return "fixed"
    if remeasured in BACK:
        return "not_reproduced"
    if note is not None:
        return "acknowledged"
    if (
        expire_days is not None
        and news_at is not None
        and now - news_at > timedelta(days=expire_days)
    ):
        return "expired"
    return "new"


# --- what detect sees tonight ----------------------------------------------------------


def from_tables(
    tables: list[compare.Table], metric: str, last_result: dict[str, datetime]
) -> list[Found]:
    """Regression verdicts of the comparison tables, each with the later release that
    brought the series back within the noise, if one did."""
    higher = compare.METRICS[metric][1]
    regressions: list[tuple[compare.Table, int, compare.Row, compare.Row]] = []
    pairs: list[compare.Pair] = []  # each regression's base against every later release
    for t in tables:
        by_id = {r.server_id: r for r in t.rows}
        for i, row in enumerate(t.rows):
            c = row.vs_previous
            if c is None or c.verdict != "regression" or row.previous not in by_id:
                continue
            base = by_id[row.previous]
            regressions.append((t, len(pairs), base, row))
            pairs += [
                (base, later, t.noise_cv, higher, None)
                for later in t.rows[i + 1 :]
                if later.product == row.product
            ]
    # the paired ones all in one compare.versus_all (one call per pair was ~1 s of detect
    # at 1,001 nights); an unpaired one (a Welch t each) only until a release is back
    backs = compare.versus_all(pairs, defer_unpaired=True)
    out = []
    for k, (t, start, base, row) in enumerate(regressions):
        end = regressions[k + 1][1] if k + 1 < len(regressions) else len(pairs)
        fixed_by = None
        for pair, back in zip(pairs[start:end], backs[start:end], strict=True):
            later = pair[1]
            if isinstance(back, compare.Deferred):
                back = compare.versus(*pair)
            if back is not None and back.verdict in BACK:  # the first later release back
                fixed_by = (
                    f"{later.server_id}: {back.verdict} against {base.server_id} "
                    f"(ratio {back.ratio:.3f})"
                )
                break
        key = tuple(t.key[c] for c in SERIES_COLS)
        c = row.vs_previous
        assert c is not None
        out.append(
            Found(
                alert_id=verdict_alert_id(key, metric, base.server_id, row.server_id),
                kind="verdict",
                key=series_key(t.key),
                server_id=row.server_id,
                base_server=base.server_id,
                run_id=row.rounds[-1][0] if row.rounds else None,  # values are oldest first
                change_at=last_result.get(row.server_id),
                ratio=c.ratio,
                before=c.mean_a,
                after=c.mean_b,
                fixed_by=fixed_by,
            )
        )
    return out


def from_change_points(
    cps: Sequence[tuple[Any, ...]],
    points: Mapping[tuple[Any, ...], list[tuple[Any, ...]]],
    metric: str,
) -> list[Found]:
    """Regressing change points (rows as detect writes them), each with whether the
    newest nights are back at the level before it (`compare.versus` of the two levels)."""
    higher = compare.METRICS[metric][1]
    # the columns of the table, in its order: a ChangePointRow each
    rows = [cast(ChangePointRow, dict(zip(CP_COLS, r, strict=True))) for r in cps]
    by_series: dict[tuple[Any, ...], list[ChangePointRow]] = {}
    for r in rows:
        columns: Mapping[str, object] = r
        skey = (*(columns[c] for c in SERIES_COLS), r["server_id"])
        by_series.setdefault(skey, []).append(r)
    out = []
    for skey, found in by_series.items():
        series = points.get(skey, [])
        index = {p[0]: i for i, p in enumerate(series)}
        splits = sorted(index[r["run_id"]] for r in found if r["run_id"] in index)
        for r in found:
            change = r["rel_change"] or 0.0
            worse = change < 0 if higher else change > 0
            if r["is_control"] or r["environment"] or not worse or r["run_id"] not in index:
                continue
            i = index[r["run_id"]]
            start = max((s for s in splits if s < i), default=0)
            fixed_by = _back_after(series, start, i, splits[-1], higher)
            key = series_key(dict(zip(SERIES_COLS, skey[:-1], strict=True)))
            out.append(
                Found(
                    alert_id=change_alert_id(skey[:-1], r["server_id"], metric, r["run_id"]),
                    kind="change_point",
                    key=key,
                    server_id=r["server_id"],
                    base_server=None,
                    run_id=r["run_id"],
                    change_at=r["at_time"],
                    ratio=(
                        r["after_value"] / r["before_value"]
                        if r["before_value"] and r["after_value"] is not None
                        else None
                    ),
                    before=r["before_value"],
                    after=r["after_value"],
                    fixed_by=fixed_by,
                )
            )
    return out


def _back_after(
    series: list[tuple[Any, ...]], start: int, change_index: int, last_split: int, higher: bool
) -> str | None:
    """Whether the nights after the newest change point (if it is later than this one)
    are back within the noise of the nights before this one."""
    if last_split <= change_index:
        return None  # no later change: the series is still at the changed level
    before = _row("before", [float(p[2]) for p in series[start:change_index]])
    now = _row("now", [float(p[2]) for p in series[last_split:]])
    c = compare.versus(before, now, compare.group_cv([before, now]), higher)
    if c is None or c.verdict not in BACK:
        return None
    since = series[last_split][1]
    day = since.date().isoformat() if hasattr(since, "date") else str(since)[:10]
    return f"nights since {day}: {c.verdict} against the level before (ratio {c.ratio:.3f})"


def _row(name: str, values: list[float]) -> compare.Row:
    return compare.Row(
        server_id=name, product="", version="", version_string=None, values=values, latency=[]
    )


# --- paired re-measurements ------------------------------------------------------------

# remeasures.newest: (*series key, base server, new server) -> the newest re-measurement
Remeasures = dict[tuple[Any, ...], RemeasureRow]


def remeasure_of(alert: Mapping[str, Any], remeasured: Remeasures) -> RemeasureRow | None:
    """The newest paired re-measurement of a verdict alert's own cell, pair and hardware
    key (the one that settles it), if any."""
    if alert["kind"] != "verdict":
        return None
    key = (*(alert[c] for c in SERIES_COLS), alert["base_server"], alert["server_id"])
    return remeasured.get(key)


def _elsewhere(alert: Mapping[str, Any], remeasured: Remeasures) -> RemeasureRow | None:
    """The newest paired re-measurement of the alert's cell and pair on another hardware
    key: shown, never settling (a series never crosses hardware keys)."""
    if alert["kind"] != "verdict":
        return None
    rest = [c for c in SERIES_COLS if c != "hw_key"]

    def same_cell(row: Mapping[str, Any]) -> bool:  # the series but its hardware key
        return all(row[c] == alert[c] for c in rest)

    found = [
        r
        for r in remeasured.values()
        if r["base_server"] == alert["base_server"]
        and r["new_server"] == alert["server_id"]
        and same_cell(r)
    ]
    return max(found, key=lambda r: r["measured_at"], default=None)


def paired_text(remeasure: RemeasureRow) -> str:
    """One paired re-measurement in words: verdict, ratio [interval], n, date."""
    ratio = (
        "no ratio"
        if remeasure["ratio"] is None
        else f"{remeasure['ratio']:.3f} [{remeasure['ci_low']:.3f}, {remeasure['ci_high']:.3f}]"
    )
    day = str(remeasure["measured_at"])[:10]
    return f"{remeasure['verdict']}, {ratio}, n={remeasure['n_base']}+{remeasure['n_new']}, {day}"


def evidence(
    alert: Mapping[str, Any], remeasured: Remeasures, verdict: VerdictRow | None
) -> dict[str, str | None]:
    """Both results of a verdict alert in words, for every place that lists alerts:
    `found` (detect's stored verdict of the pair: the `verdicts` row of its id) and
    `paired` (its re-measurement and what it did to the alert), each None if absent."""
    if alert["kind"] != "verdict":
        return {"found": None, "paired": None}
    first = None
    if verdict is not None:
        v = verdict
        first = (
            f"{v['verdict']}, {v['ratio']:.3f} [{v['ci_low']:.3f}, {v['ci_high']:.3f}], "
            f"n={v['n_base']}+{v['n_new']} (detect's verdict)"
        )
    elif alert.get("ratio") is not None:
        first = f"{alert['ratio']:.3f} (detect's verdict)"
    own = remeasure_of(alert, remeasured)
    if own is not None:
        effect = {
            "regression": "confirmed",
            "inconclusive": "still open (the paired rounds did not settle it)",
        }.get(own["verdict"], "not reproduced: closed")
        second = f"{effect}: re-measured paired {paired_text(own)}"
    elif (other := _elsewhere(alert, remeasured)) is not None:
        second = (
            f"re-measured paired on other hardware ({other['hw_key']}): {paired_text(other)}; "
            f"it does not settle this alert of {alert['hw_key']}"
        )
    else:
        second = None
    return {"found": first, "paired": second}


def evidence_of(
    results: Store, alerts: Sequence[Mapping[str, Any]], metric: str
) -> list[dict[str, str | None]]:
    """`evidence` of each alert, in order, from the store's verdicts and re-measurements."""
    again = remeasures.newest(results, metric)
    verdicts = {v["verdict_id"]: v for v in results.stored_verdicts(metric)}
    return [evidence(a, again, verdicts.get(a["alert_id"])) for a in alerts]


# --- the lifecycle -----------------------------------------------------------------------


def _base_state(state: str) -> str:
    """The state without expiry: what an expired alert would be (only new ones expire)."""
    return "new" if state == "expired" else state


def _claim_near(
    found: Found,
    stored: Sequence[AlertRow],
    claimed: set[str],
    points: Mapping[tuple[Any, ...], list[tuple[Any, ...]]],
) -> AlertRow | None:
    """The stored change-point alert of the same series found within CP_MATCH_POINTS
    nights of `found` (the nearest), if any and not taken by another change tonight."""
    series = points.get((*_series_of(found.key), found.server_id), [])
    index = {p[0]: i for i, p in enumerate(series)}
    if found.run_id not in index:
        return None
    best: tuple[int, AlertRow] | None = None
    for a in stored:
        if a["kind"] != "change_point" or a["alert_id"] in claimed:
            continue
        same = a["server_id"] == found.server_id and _same_series(a, found.key)
        if not same or a["run_id"] not in index:
            continue
        d = abs(index[a["run_id"]] - index[found.run_id])
        if d <= CP_MATCH_POINTS and (best is None or d < best[0]):
            best = (d, a)
    return best[1] if best else None


def update(
    stored: Sequence[AlertRow],
    found: list[Found],
    notes: list[Annotation],
    points: Mapping[tuple[Any, ...], list[tuple[Any, ...]]],
    metric: str,
    expire_days: int,
    now: datetime,
    remeasured: Remeasures | None = None,
) -> list[AlertRow]:
    """Every alert of the metric after tonight's detect: the stored ones carried over
    (identity, first seen, news), tonight's changes merged in, each state recomputed
    (`remeasured`: the store's newest paired re-measurements, remeasures.newest)."""
    again = remeasured or {}
    by_id = {a["alert_id"]: a for a in stored}
    claimed: set[str] = set()
    out: list[AlertRow] = []
    # changes found again exactly first, so a nearby one cannot take their alert
    for f in sorted(found, key=lambda f: f.alert_id not in by_id):
        prev = by_id.get(f.alert_id)
        if prev is None and f.kind == "change_point":
            prev = _claim_near(f, stored, claimed, points)  # else: a change of its own
        alert_id = prev["alert_id"] if prev else f.alert_id
        if alert_id in claimed:
            continue  # the same change twice in tonight's list
        claimed.add(alert_id)
        row: AlertFinding = {
            **f.key,
            "alert_id": alert_id,
            "kind": f.kind,
            "metric": metric,
            "server_id": f.server_id,
            "base_server": f.base_server,
            "run_id": f.run_id,
            "change_at": f.change_at,
            "ratio": f.ratio,
            "before_value": f.before,
            "after_value": f.after,
            "fixed_by": f.fixed_by,
            "first_seen_at": prev["first_seen_at"] if prev else now,
            "last_seen_at": now,
        }
        out.append(_restated(row, prev, notes, expire_days, now, again))
    for a in stored:
        if a["alert_id"] not in claimed:  # not seen tonight: kept, its state recomputed
            out.append(_restated(a, a, notes, expire_days, now, again))
    return out


def _restated(
    row: AlertFinding,
    prev: AlertRow | None,
    notes: list[Annotation],
    expire_days: int | None,
    now: datetime,
    remeasured: Remeasures,
) -> AlertRow:
    """The row with its state, reason, link and times recomputed (the one rule)."""
    note = matching(notes, subject_of(row))
    own = remeasure_of(row, remeasured)
    again = own["verdict"] if own else None
    base = state_of(note, row["fixed_by"], None, now, None, again)
    changed = prev is None or base != _base_state(prev["state"])
    news = prev["news_at"] if prev is not None and not changed else now  # found or changed: news
    state = state_of(note, row["fixed_by"], news, now, expire_days, again)
    return {
        **row,
        "state": state,
        "reason": note.reason if note else None,
        "link": note.link if note else None,
        "news_at": news,
        "state_since": now if prev is None or prev["state"] != state else prev["state_since"],
        "checked_at": now,
    }


def _series_of(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """The series columns of an alert or a key, in SERIES_COLS order."""
    return tuple(row[c] for c in SERIES_COLS)


def _same_series(alert: AlertRow, key: SeriesKey) -> bool:
    return _series_of(alert) == _series_of(key)


def restate(
    stored: Sequence[AlertRow],
    notes: list[Annotation],
    expire_days: int,
    now: datetime,
    remeasured: Remeasures | None = None,
) -> list[AlertRow]:
    """Stored alerts with the states the current annotations file gives them now (what
    the next detect will store): `perftrack alerts` shows an edit at once."""
    out = []
    for a in stored:
        row = _restated(a, a, notes, expire_days, now, remeasured or {})
        row["checked_at"] = a["checked_at"]
        out.append(row)
    return out


def as_rows(alerts: list[AlertRow], columns: list[str]) -> list[tuple[Any, ...]]:
    """Alerts as rows in the table's column order (for `replace_derived`)."""
    return [tuple(a.get(c) for c in columns) for a in alerts]


def compute(
    results: Store,
    verdicts: tuple[list[compare.Table], dict[str, datetime]],
    changes: tuple[Sequence[tuple[Any, ...]], Points],
    notes: list[Annotation],
    metric: str,
    expire_days: int,
    now: datetime,
) -> list[tuple[Any, ...]]:
    """detect's alert rows: tonight's changes (the comparison tables with the store's
    server_last_result, the change point rows with the nightly points they were found in)
    merged into the stored alerts."""
    (tables, last_result), (cps, points) = verdicts, changes
    found = from_tables(tables, metric, last_result)
    found += from_change_points(cps, points, metric)
    again = remeasures.newest(results, metric)
    alerts = update(
        results.stored_alerts(metric), found, notes, points, metric, expire_days, now, again
    )
    return as_rows(alerts, results.alert_columns())


def newly_reported(alerts: Sequence[AlertT]) -> list[AlertT]:
    """The alerts the newest detect found first: what a summary reports as new (once)."""
    if not alerts:
        return []
    latest = max(a["checked_at"] for a in alerts)
    return [a for a in alerts if a["first_seen_at"] == latest and a["checked_at"] == latest]
