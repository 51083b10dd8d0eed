"""Change points of nightly series: steps worth reading (issue 22 item 5).

The steps themselves (of one series, or of a group's combined series) are found and sized
by analysis/steps.py. Here: which series are looked at together.

Four scopes, so that one cause is one row:
  class     the control server moved on a runner class (the median of its series): an
            environment change of that class, reported once, sized on the class's other
            series (the median of their own steps: pooled_step), and removed from every
            series of the class (one size per workload) before the narrower scopes look;
  server    one server's workload moved on every runner class (>= MIN_SERVER_CLASSES; the
            median over the classes, each class's own step agreeing): reported once;
  workload  one server and workload on one class moved at every thread count and charset
            together (the median of those series): reported once;
  series    one series alone.
A narrower step within `ABSORB_NIGHTS` of a wider one (`ENV_NIGHTS` of an environment
change), in the same direction, is that one seen again, not another row. Measured
precision and recall: docs/benchmarks.md.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from perftrack.analysis.steps import (
    WINDOW,
    Step,
    combined,
    find_steps,
    pooled_step,
    remove_step,
    step_at,
    steps_on,
)
from perftrack.store.queries.points import NightlyPoints

# A server's step over classes is the median of the classes' signals: with 3 or more, one
# class moving alone cannot move it (with 2 the median is the mean, half of one class's).
MIN_SERVER_CLASSES = 3
MATCH_NIGHTS = 3  # how close to its true night a change must be found (issue 22)
# A narrower scope's step this close to a wider one's, in the same direction, is that
# change seen again (one series' noisier estimate of the night: measured 4-7 nights off
# for a 2× noise step of one series, benchmarks/alert_precision.py), not another row.
ABSORB_NIGHTS = WINDOW // 2
# An environment step is removed from every series before the narrower scopes look; what a
# group still shows this close to it, the same way, is the rest of that step in a series
# that responded more (a removed step leaves no residual to be located far from its night).
# Further away it is a change of its own: with ABSORB_NIGHTS here, a +23.5 % workload step
# 5 nights after a +6 % environment step was never reported (benchmarks/alert_precision.py).
ENV_NIGHTS = MATCH_NIGHTS
# A server's step must show on every class (each class's own step at that night with
# |z| >= Z_CONSISTENT the same way, its interval overlapping the server's): a median over
# classes also shifts a little when one class alone moves or drifts (measured: a -20% step
# of one class moved the median of three by -2.7%, benchmarks/alert_precision.py).
CONSISTENT_SHARE = 1.0
Z_CONSISTENT = 2.0
# An environment step is removed with one size pooled over a workload's servers when it has
# this many (one server's own step is then an outlier among them); otherwise server by server.
MIN_POOLED_SERVERS = 3
# Axes a `workload` group spans: everything else of the series key (and the server) is fixed.
GROUP_SPANS = ("threads", "collation")
# An environment step is removed from each workload's series with that workload's size (a
# kernel update need not move point selects and writes alike), pooled over its servers.
ENV_SPLIT = ("workload",)


# --- a runner class's series on a common night axis ------------------------------------


@dataclass
class ClassSeries:
    """All nightly series of one runner class and hardware, on the class's nights."""

    runs: list[tuple[str, Any]]  # (run_id, first started_at) of the class, oldest first
    keys: list[tuple[Any, ...]]  # (series…, server_id) per row
    y: np.ndarray  # log values, rows × nights, nan where a series has no point


Points = Mapping[tuple[Any, ...], list[tuple[Any, ...]]]  # (series…, server) -> [(run, at, v)]


def class_series(points: Points, cls_cols: int = 2) -> dict[tuple[Any, ...], ClassSeries]:
    """{(hw_key, runner_class): ClassSeries} from detect's nightly points (the first
    `cls_cols` series columns are the class's): the store's arrays (NightlyPoints), or a
    dict of lists made into them."""
    pts = NightlyPoints.from_dict(points)
    by_class: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for i, key in enumerate(pts.series_keys):
        by_class[key[:cls_cols]].append(i)
    out = {}
    # classes in one order whatever the order of `points` (the store's rows come in any
    # order): a server's change is stored under its first class's series (_server_changes)
    for ck, rows_of in sorted(by_class.items(), key=lambda kv: repr(kv[0])):
        rows_of.sort(key=lambda i: repr(pts.series_keys[i]))
        at = np.concatenate([np.arange(pts.rows(i).start, pts.rows(i).stop) for i in rows_of])
        run, when = pts.run[at], pts.at[at]
        # each run's first point, and the runs in order of it, then id (runs are numbered
        # in id order)
        first = np.full(len(pts.runs), np.iinfo(np.int64).max)
        np.minimum.at(first, run, when)
        runs = np.unique(run)
        runs = runs[np.lexsort((runs, first[runs]))]
        col_of = np.empty(len(pts.runs), dtype=np.intp)
        col_of[runs] = np.arange(len(runs))
        sizes = [pts.rows(i).stop - pts.rows(i).start for i in rows_of]
        y = np.full((len(rows_of), len(runs)), np.nan)
        vals = pts.value[at]
        ok = vals > 0
        y[np.repeat(np.arange(len(rows_of)), sizes)[ok], col_of[run][ok]] = np.log(vals[ok])
        order_runs = [(pts.runs[r], pts.at_of(int(first[r]))) for r in runs.tolist()]
        out[ck] = ClassSeries(order_runs, [pts.series_keys[i] for i in rows_of], y)
    return out


# --- the three scopes --------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Change:
    scope: str  # class | server | workload | series
    key: tuple[Any, ...]  # (series…, server_id) the row is stored under
    run_id: str
    at: Any
    step: Step  # of the scope's signal: size, interval, z
    before: float | None  # the stored series' own levels (its unit), around the change
    after: float | None
    series_count: int  # series the scope spans
    environment: bool
    is_control: bool
    group: tuple[Any, ...] = ()  # the workload group (class columns first)


@dataclass(kw_only=True)
class Signal:
    """A workload group's combined signal on its class's nights, environment removed."""

    days: list[Any]  # the night (date) of each point
    values: np.ndarray
    rows: int
    key: tuple[Any, ...]  # a member series (series…, server_id), for the stored row
    run_of_day: dict[Any, tuple[str, Any]]
    own: np.ndarray  # the member series' log values on the class's nights
    night_of_day: dict[Any, int]


def _near(
    night: Any, sign: float, found: list[tuple[Any, Step]], nights: int = ABSORB_NIGHTS
) -> bool:
    return any(abs(_days(night, n)) <= nights and np.sign(s.z) == sign for n, s in found)


def _days(later: Any, earlier: Any) -> float:
    if isinstance(later, int | np.integer):
        return float(later - earlier)
    return float((later - earlier).days)


def _day(moment: Any) -> Any:
    return moment.date() if hasattr(moment, "date") else moment


def detect(points: Points, control: str | None, cols: Sequence[str]) -> list[Change]:
    """Every change of every runner class. `cols` names the series columns (hw_key and
    runner_class first) of each key before its server_id."""
    spans = [i for i, c in enumerate(cols) if c in GROUP_SPANS]
    env_cols = [i for i, c in enumerate(cols) if c in ENV_SPLIT]
    out: list[Change] = []
    signals: dict[tuple[Any, ...], Signal] = {}
    for cs in class_series(points).values():
        out += _class_changes(cs, control, (spans, env_cols), signals)
    server = _server_changes(signals)
    done: dict[tuple[Any, ...], list[tuple[Any, Step]]] = defaultdict(list)
    for c in server:
        for g in signals:
            if g[2:] == c.group:
                done[g].append((_day(c.at), c.step))
    kept = [
        c
        for c in out
        if c.scope == "class" or not _near(_day(c.at), np.sign(c.step.z), done[c.group])
    ]
    return sorted(server + kept, key=lambda c: (c.at, c.scope, repr(c.key)))


def _agrees(own: Step | None, step: Step) -> bool:
    """A class's own step at the night goes the same way, clearly, and is about as large
    (the two 95% intervals overlap)."""
    if own is None or own.z * np.sign(step.z) < Z_CONSISTENT:
        return False
    (a, b), (c, d) = own.interval, step.interval
    return a <= d and c <= b


def _server_changes(signals: dict[tuple[Any, ...], Signal]) -> list[Change]:
    """A server's step in one workload seen on every runner class it runs on (the median
    over the classes' workload signals, night by night): one row."""
    by: dict[tuple[Any, ...], list[Signal]] = defaultdict(list)
    for g, sig in signals.items():
        by[g[2:]].append(sig)
    out = []
    for g, sigs in by.items():
        if len(sigs) < MIN_SERVER_CLASSES:
            continue
        days = sorted({d for s in sigs for d in s.days})
        col = {d: i for i, d in enumerate(days)}
        m = np.full((len(sigs), len(days)), np.nan)
        for i, s in enumerate(sigs):
            m[i, [col[d] for d in s.days]] = s.values
        for night, step in steps_on(combined(m)):
            day = days[night]
            agree = sum(1 for i in range(len(sigs)) if _agrees(step_at(m[i], night), step))
            if agree < math.ceil(CONSISTENT_SHARE * len(sigs)):
                continue
            rep = next(s for s in sigs if day in s.run_of_day)
            run_id, at = rep.run_of_day[day]
            count = sum(s.rows for s in sigs)
            own = step_at(rep.own, rep.night_of_day[day])
            before, after = (
                (math.exp(own.level_before), math.exp(own.level_after)) if own else (None, None)
            )
            out.append(
                Change(
                    scope="server",
                    key=rep.key,
                    run_id=run_id,
                    at=at,
                    step=step,
                    before=before,
                    after=after,
                    series_count=count,
                    environment=False,
                    is_control=False,
                    group=g,
                )
            )
    return out


def _class_changes(
    series: ClassSeries,
    control: str | None,
    cols: tuple[list[int], list[int]],
    signals: dict[tuple[Any, ...], Signal],
) -> list[Change]:
    spans, env_cols = cols
    y, y0 = series.y.copy(), series.y
    groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    by_env: dict[tuple[Any, ...], list[tuple[Any, ...]]] = defaultdict(list)
    for i, k in enumerate(series.keys):
        g = tuple(v for j, v in enumerate(k) if j not in spans)
        groups[g].append(i)
        if g not in by_env[(k[-1] == control, *(k[j] for j in env_cols))]:
            by_env[(k[-1] == control, *(k[j] for j in env_cols))].append(g)
    # the rows each environment step is removed from with one size (MIN_POOLED_SERVERS)
    removal = [
        rows
        for gs in by_env.values()
        for rows in (
            [[i for g in gs for i in groups[g]]]
            if len(gs) >= MIN_POOLED_SERVERS
            else [groups[g] for g in gs]
        )
    ]
    ctl = [i for i, k in enumerate(series.keys) if k[-1] == control]
    rest = [i for i in range(len(series.keys)) if i not in set(ctl)]
    out: list[Change] = []

    def strongest(rows: list[int], night: int) -> int:
        return max(rows, key=lambda i: abs(o.z) if (o := step_at(y[i], night)) else 0.0)

    env: list[tuple[int, Step]] = []
    if ctl:
        found_env = steps_on(combined(y[ctl]))
        bounds = [0, *(n for n, _ in found_env), y.shape[1]]
        for e, (night, s) in enumerate(found_env):
            sized = pooled_step(y, rest, night, bounds[e], bounds[e + 2]) if rest else None
            env.append((night, sized or s))
            out.append(
                _row(series, "class", strongest(ctl, night), night, sized or s, y0, len(rest))
            )
        for e, (night, _) in enumerate(env):
            for rows in removal:
                remove_step(y, night, rows, bounds[e], bounds[e + 2])
    days = [_day(at) for _, at in series.runs]  # the class's, shared by its signals
    run_of_day = {d: run for d, run in zip(days, series.runs, strict=True)}
    night_of_day = {d: i for i, d in enumerate(days)}
    for g, rows in groups.items():
        if rows[0] in set(ctl):
            continue
        sig = combined(y[rows])
        idx = np.flatnonzero(~np.isnan(sig))
        signals[g] = Signal(
            days=[days[i] for i in idx],
            values=sig[idx],
            rows=len(rows),
            key=series.keys[rows[0]],
            run_of_day=run_of_day,
            own=y0[rows[0]],
            night_of_day=night_of_day,
        )
        found = steps_on(sig) if len(rows) > 1 else []
        found = [(n, s) for n, s in found if not _near(n, np.sign(s.z), env, ENV_NIGHTS)]
        for night, s in found:
            out.append(_row(series, "workload", strongest(rows, night), night, s, y0, len(rows), g))
        for i in rows:
            idx = np.flatnonzero(~np.isnan(y[i]))
            for s in find_steps(y[i, idx]):
                night = int(idx[s.index])
                if not _near(night, np.sign(s.z), found) and not _near(
                    night, np.sign(s.z), env, ENV_NIGHTS
                ):
                    out.append(_row(series, "series", i, night, s, y0, 1, g))
    return out


def _row(
    series: ClassSeries,
    scope: str,
    rep: int,
    night: int,
    step: Step,
    observed: np.ndarray,
    count: int,
    group: tuple[Any, ...] = (),
) -> Change:
    own = step_at(observed[rep], night)
    run_id, at = series.runs[night]
    env = scope == "class"
    return Change(
        scope=scope,
        key=series.keys[rep],
        run_id=run_id,
        at=at,
        step=step,
        before=math.exp(own.level_before) if own else None,
        after=math.exp(own.level_after) if own else None,
        series_count=count,
        environment=env,
        is_control=env,
        group=group,
    )
