"""Change points of nightly series: steps worth reading (issue 22 item 5).

A nightly series is one value per run (the median of its repeats), per series and server.
Steps are found on the log scale by a moving-window test of medians (MOSUM of medians:
Eichinger & Kirch 2018, with medians for robustness, as E-divisive/Otava splits on a
window of 30): at every split the median of the next `WINDOW` points against the median of
the previous `WINDOW`, in units of the series' own noise. One change per stretch of
splits above `Z_CHANGE`; each is then re-measured between its neighbouring changes
(at most `SIZE_WINDOW` points a side): the size is the ratio of the two segments' medians
with a 95% interval, and it must pass `Z_CHANGE` and `stats.MIN_EFFECT` again.

The noise σ of a series is robust to its own steps and drift: the MAD of successive
differences / √2. A slow drift moves two adjacent windows apart by only slope × WINDOW,
so it is not a step; a missing night is simply not a point (nothing is interpolated).

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
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import stats as sps

from perftrack.analysis import stats

WINDOW = 30  # points each side of a split (Otava's window_len)
MIN_SIDE = 6  # a change needs this many points on each side (a new step shows after 6 runs)
MIN_POINTS = 2 * MIN_SIDE
SIZE_WINDOW = 30  # points a side the size is measured over, between neighbouring changes
# |step| / its standard error above which a split is a change. Calibrated on the labelled
# synthetic year (benchmarks/alert_precision.py, docs/benchmarks.md): the whole nightly
# matrix (~800 series) stays under 1 false alert per 30 nights.
Z_CHANGE = 5.0
MIN_GROUP_SHARE = 0.5  # a night counts in a group's median when half its series ran
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
# A group's step is sized from its rows' own steps when it has this many rows with points
# on both sides (pooled_step); below that, from its combined signal.
MIN_POOLED_ROWS = 3
# An environment step is removed with one size pooled over a workload's servers when it has
# this many (one server's own step is then an outlier among them); otherwise server by server.
MIN_POOLED_SERVERS = 3
SIGMA_FLOOR = 0.002  # 0.2%: a perfectly flat synthetic series must not divide by zero
MEDIAN_SE = stats.MEDIAN_SE_FACTOR  # se of a median ≈ 1.2533 σ / √n
Z_INTERVAL = float(sps.norm.ppf(0.5 + stats.CONFIDENCE / 2))
# Axes a `workload` group spans: everything else of the series key (and the server) is fixed.
GROUP_SPANS = ("threads", "collation")
# An environment step is removed from each workload's series with that workload's size (a
# kernel update need not move point selects and writes alike), pooled over its servers.
ENV_SPLIT = ("workload",)


@dataclass(frozen=True)
class Step:
    index: int  # first point after the change
    z: float
    n_before: int
    n_after: int
    level_before: float  # median of the segment before (log scale)
    level_after: float
    se: float  # standard error of level_after - level_before

    @classmethod
    def of(cls, index: int, n: tuple[int, int], levels: tuple[float, float], se: float) -> Step:
        return cls(index, (levels[1] - levels[0]) / se, *n, *levels, se)

    @property
    def rel(self) -> float:
        return math.expm1(self.level_after - self.level_before)

    @property
    def interval(self) -> tuple[float, float]:
        d = self.level_after - self.level_before
        half = Z_INTERVAL * self.se
        return math.expm1(d - half), math.expm1(d + half)

    @property
    def p_value(self) -> float:
        return float(2 * sps.norm.sf(abs(self.z)))


def robust_sigma(y: np.ndarray) -> float:
    """Noise of one point: 1.4826 · MAD of successive differences / √2 (steps and drift
    touch few differences), at least SIGMA_FLOOR."""
    if len(y) < 3:
        return SIGMA_FLOOR
    d = np.diff(y)
    mad = float(np.median(np.abs(d - np.median(d))))
    return max(SIGMA_FLOOR, 1.4826 * mad / math.sqrt(2))


def _mosum(y: np.ndarray, sigma: float) -> np.ndarray:
    """z of the step at every split t (the first point after it): the median of the next
    WINDOW points against the previous WINDOW's (fewer near the ends); nan where a side has
    fewer than MIN_SIDE points. One vectorised median per side over all splits."""
    n, w = len(y), WINDOW
    z = np.full(n + 1, np.nan)
    t = np.arange(MIN_SIDE, n - MIN_SIDE + 1)
    if len(t) == 0:
        return z
    pad = np.concatenate([np.full(w, np.nan), y, np.full(w, np.nan)])
    views = sliding_window_view(pad, w)  # views[i] = pad[i:i+w] = y[i-w:i]
    left, right = views[t], views[t + w]
    n_left, n_right = np.minimum(t, w), np.minimum(n - t, w)
    full = (n_left == w) & (n_right == w)
    med_l, med_r = np.empty(len(t)), np.empty(len(t))
    med_l[full], med_r[full] = np.median(left[full], axis=1), np.median(right[full], axis=1)
    if (~full).any():
        med_l[~full] = np.nanmedian(left[~full], axis=1)
        med_r[~full] = np.nanmedian(right[~full], axis=1)
    z[t] = (med_r - med_l) / (MEDIAN_SE * sigma * np.sqrt(1 / n_left + 1 / n_right))
    return z


def segment_step(y: np.ndarray, t: int, lo: int, hi: int, sigma: float) -> Step | None:
    """The step at t measured on y[lo:t] against y[t:hi], each side capped at SIZE_WINDOW."""
    a = y[max(lo, t - SIZE_WINDOW) : t]
    b = y[t : min(hi, t + SIZE_WINDOW)]
    if len(a) < MIN_SIDE or len(b) < MIN_SIDE:
        return None
    la, lb = float(np.median(a)), float(np.median(b))
    se = MEDIAN_SE * sigma * math.sqrt(1 / len(a) + 1 / len(b))
    return Step.of(t, (len(a), len(b)), (la, lb), se)


def pooled_step(y: np.ndarray, rows: Sequence[int], night: int, lo: int, hi: int) -> Step | None:
    """A group's step at a night, sized as the median of its rows' own steps, each measured
    on the row's points between nights lo and hi (each side capped at SIZE_WINDOW).

    A median over rows of each night's value (`combined`) is moved by every row that steps
    on its own within the window: a server's -19 % on 8 of 240 rows pulled a class's
    +6 % environment step to +5.0 % [4.6, 5.4] (benchmarks/alert_precision.py). The median
    of the rows' steps treats such rows as the outliers they are. Its standard error is the
    larger of two: from the rows' spread (1.2533 × 1.4826 MAD / √rows: rows that respond
    differently widen it) and from the night-to-night noise of the combined signal
    (what moves every row together on a night)."""
    diffs, sides = [], []
    for i in rows:
        idx = lo + np.flatnonzero(~np.isnan(y[i, lo:hi]))
        t = int(np.searchsorted(idx, night))
        s = segment_step(y[i, idx], t, 0, len(idx), 1.0)
        if s is not None:
            diffs.append(s.level_after - s.level_before)
            sides.append((s.n_before, s.n_after))
    if len(diffs) < MIN_POOLED_ROWS:
        return None
    d = np.asarray(diffs)
    med = float(np.median(d))
    se_rows = MEDIAN_SE * 1.4826 * float(np.median(np.abs(d - med))) / math.sqrt(len(d))
    nb, na = (int(np.median([x[k] for x in sides])) for k in (0, 1))
    sig = combined(y[list(rows), lo:hi])
    ok = ~np.isnan(sig)
    t = int(np.searchsorted(np.flatnonzero(ok) + lo, night))
    signal = segment_step(sig[ok], t, 0, int(ok.sum()), robust_sigma(sig[ok]))
    se = max(se_rows, signal.se if signal else 0.0, SIGMA_FLOOR / math.sqrt(len(d)))
    return Step.of(night, (nb, na), (0.0, med), se)


def find_steps(y: np.ndarray, sigma: float | None = None) -> list[Step]:
    """The steps of one log-scale series (no nan), oldest first."""
    y = np.asarray(y, dtype=float)
    n = len(y)
    if n < MIN_POINTS:
        return []
    sigma = robust_sigma(y) if sigma is None else sigma
    z = _mosum(y, sigma)
    cands = _stretch_peaks(z)
    cands = _refined(y, cands)
    # re-measure each between its neighbours; drop what no longer passes, until stable
    while True:
        bounds = [0, *cands, n]
        kept = []
        for i, t in enumerate(cands):
            s = segment_step(y, t, bounds[i], bounds[i + 2], sigma)
            if s and abs(s.z) >= Z_CHANGE and abs(s.rel) >= stats.MIN_EFFECT:
                kept.append(s)
        if len(kept) == len(cands):
            return kept
        cands = [s.index for s in kept]


def _stretch_peaks(z: np.ndarray) -> list[int]:
    """The split of largest |z| in each stretch of consecutive splits with |z| >= Z_CHANGE
    of one sign."""
    hit = np.nan_to_num(np.abs(z)) >= Z_CHANGE
    sign = np.where(hit, np.sign(np.nan_to_num(z)), 0)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], sign, [0]])) != 0)
    out = []
    for a, b in pairwise(edges):
        if sign[a] != 0:
            out.append(int(a + np.argmax(np.abs(z[a:b]))))
    return out


def _refined(y: np.ndarray, cands: list[int]) -> list[int]:
    """Each candidate moved to the split that best separates the points between its
    neighbours (at most SIZE_WINDOW a side; the two-sample statistic of means, which
    locates a step more precisely than the windows' medians), within WINDOW // 2."""
    out = []
    n = len(y)
    for i, t in enumerate(cands):
        lo = max(cands[i - 1] if i else 0, t - SIZE_WINDOW)
        hi = min(cands[i + 1] if i + 1 < len(cands) else n, t + SIZE_WINDOW)
        seg = y[lo:hi]
        c = np.concatenate([[0.0], np.cumsum(seg)])
        m = len(seg)
        k = np.arange(MIN_SIDE, m - MIN_SIDE + 1)
        k = k[np.abs(k + lo - t) <= WINDOW // 2]
        if len(k) == 0:
            out.append(t)
            continue
        stat = np.abs(c[k] / k - (c[m] - c[k]) / (m - k)) * np.sqrt(k * (m - k) / m)
        out.append(int(lo + k[np.argmax(stat)]))
    return sorted(set(out))


# --- a runner class's series on a common night axis ------------------------------------


@dataclass
class ClassSeries:
    """All nightly series of one runner class and hardware, on the class's nights."""

    runs: list[tuple[str, Any]]  # (run_id, first started_at) of the class, oldest first
    keys: list[tuple[Any, ...]]  # (series…, server_id) per row
    y: np.ndarray  # log values, rows × nights, nan where a series has no point


Points = dict[tuple[Any, ...], list[tuple[Any, ...]]]  # (series…, server) -> [(run, at, v)]


def class_series(points: Points, cls_cols: int = 2) -> dict[tuple[Any, ...], ClassSeries]:
    """{(hw_key, runner_class): ClassSeries} from detect's nightly points (the first
    `cls_cols` series columns are the class's)."""
    by_class: dict[tuple[Any, ...], list[tuple[Any, ...]]] = defaultdict(list)
    for key in points:
        by_class[key[:cls_cols]].append(key)
    out = {}
    for ck, keys in by_class.items():
        runs: dict[str, Any] = {}
        for k in keys:
            for run_id, at, _ in points[k]:
                runs[run_id] = min(at, runs.get(run_id, at))
        order = sorted(runs.items(), key=lambda r: (r[1], r[0]))
        col = {r: i for i, (r, _) in enumerate(order)}
        y = np.full((len(keys), len(order)), np.nan)
        keys.sort(key=repr)
        for i, k in enumerate(keys):
            for run_id, _, v in points[k]:
                if v is not None and v > 0:
                    y[i, col[run_id]] = math.log(float(v))
        out[ck] = ClassSeries(order, keys, y)
    return out


def combined(y: np.ndarray) -> np.ndarray:
    """Median over rows of each row's deviation from its own median, per night; nan on
    nights where fewer than MIN_GROUP_SHARE of the rows have a point."""
    dev = y - np.nanmedian(y, axis=1, keepdims=True)
    present = np.sum(~np.isnan(dev), axis=0)
    out = np.full(y.shape[1], np.nan)
    ok = present >= max(1, math.ceil(MIN_GROUP_SHARE * y.shape[0]))
    if ok.any():
        out[ok] = np.nanmedian(dev[:, ok], axis=0)
    return out


def steps_on(signal: np.ndarray) -> list[tuple[int, Step]]:
    """Steps of a night-axis signal with gaps: (night index, step) oldest first."""
    idx = np.flatnonzero(~np.isnan(signal))
    return [(int(idx[s.index]), s) for s in find_steps(signal[idx])]


def remove_step(y: np.ndarray, night: int, rows: Sequence[int], lo: int, hi: int) -> None:
    """Subtract, from each row from `night` on, the rows' step at that night measured
    between nights lo and hi: one estimate for all of them (pooled_step, which a few rows
    with steps of their own do not move), or with fewer rows that of their combined signal.
    Before pooling, a group of 8 series measured its own environment step on its combined
    signal, and a -45 % step of its own 12 nights earlier became a -54 % "environment"
    step, removed from it: the -45 % was reported as -10 %."""
    s = pooled_step(y, rows, night, lo, hi)
    if s is None:
        sig = combined(y[list(rows), lo:hi])
        idx = np.flatnonzero(~np.isnan(sig))
        s = segment_step(sig[idx], int(np.searchsorted(idx + lo, night)), 0, len(idx), 1.0)
    if s is not None:
        y[list(rows), night:] -= s.level_after - s.level_before


# --- the three scopes --------------------------------------------------------------------


@dataclass(frozen=True)
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


@dataclass
class Signal:
    """A workload group's combined signal on its class's nights, environment removed."""

    days: list[Any]  # the night (date) of each point
    values: np.ndarray
    rows: int
    key: tuple[Any, ...]  # a member series (series…, server_id), for the stored row
    run_of_day: dict[Any, tuple[str, Any]]
    own: np.ndarray  # the member series' log values on the class's nights
    night_of_day: dict[Any, int]


def _own(y: np.ndarray, night: int) -> Step | None:
    """A row's own step at a night (its points only), for the stored levels."""
    idx = np.flatnonzero(~np.isnan(y))
    if len(idx) < 2:
        return None
    t = int(np.searchsorted(idx, night))
    return segment_step(y[idx], t, 0, len(idx), robust_sigma(y[idx]))


def _near(
    night: Any, sign: float, found: list[tuple[Any, Step]], nights: int = ABSORB_NIGHTS
) -> bool:
    return any(abs(_days(night, n)) <= nights and np.sign(s.z) == sign for n, s in found)


def _days(a: Any, b: Any) -> float:
    if isinstance(a, int | np.integer):
        return float(a - b)
    return float((a - b).days)


def _day(at: Any) -> Any:
    return at.date() if hasattr(at, "date") else at


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
            agree = sum(1 for i in range(len(sigs)) if _agrees(_at(m[i], night), step))
            if agree < math.ceil(CONSISTENT_SHARE * len(sigs)):
                continue
            rep = next(s for s in sigs if day in s.run_of_day)
            run_id, at = rep.run_of_day[day]
            count = sum(s.rows for s in sigs)
            own = _own(rep.own, rep.night_of_day[day])
            before, after = (
                (math.exp(own.level_before), math.exp(own.level_after)) if own else (None, None)
            )
            out.append(
                Change("server", rep.key, run_id, at, step, before, after, count, False, False, g)
            )
    return out


def _class_changes(
    cs: ClassSeries,
    control: str | None,
    cols: tuple[list[int], list[int]],
    signals: dict[tuple[Any, ...], Signal],
) -> list[Change]:
    spans, env_cols = cols
    y, y0 = cs.y.copy(), cs.y
    groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    by_env: dict[tuple[Any, ...], list[tuple[Any, ...]]] = defaultdict(list)
    for i, k in enumerate(cs.keys):
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
    ctl = [i for i, k in enumerate(cs.keys) if k[-1] == control]
    rest = [i for i in range(len(cs.keys)) if i not in set(ctl)]
    out: list[Change] = []

    def strongest(rows: list[int], night: int) -> int:
        return max(rows, key=lambda i: abs(o.z) if (o := _own(y[i], night)) else 0.0)

    env: list[tuple[int, Step]] = []
    if ctl:
        found_env = steps_on(combined(y[ctl]))
        bounds = [0, *(n for n, _ in found_env), y.shape[1]]
        for k, (night, s) in enumerate(found_env):
            sized = pooled_step(y, rest, night, bounds[k], bounds[k + 2]) if rest else None
            env.append((night, sized or s))
            out.append(_row(cs, "class", strongest(ctl, night), night, sized or s, y0, len(rest)))
        for k, (night, _) in enumerate(env):
            for rows in removal:
                remove_step(y, night, rows, bounds[k], bounds[k + 2])
    for g, rows in groups.items():
        if rows[0] in set(ctl):
            continue
        sig = combined(y[rows])
        idx = np.flatnonzero(~np.isnan(sig))
        signals[g] = Signal(
            [_day(cs.runs[i][1]) for i in idx],
            sig[idx],
            len(rows),
            cs.keys[rows[0]],
            {_day(at): (r, at) for r, at in cs.runs},
            y0[rows[0]],
            {_day(at): i for i, (_, at) in enumerate(cs.runs)},
        )
        found = steps_on(sig) if len(rows) > 1 else []
        found = [(n, s) for n, s in found if not _near(n, np.sign(s.z), env, ENV_NIGHTS)]
        for night, s in found:
            out.append(_row(cs, "workload", strongest(rows, night), night, s, y0, len(rows), g))
        for i in rows:
            idx = np.flatnonzero(~np.isnan(y[i]))
            for s in find_steps(y[i, idx]):
                night = int(idx[s.index])
                if not _near(night, np.sign(s.z), found) and not _near(
                    night, np.sign(s.z), env, ENV_NIGHTS
                ):
                    out.append(_row(cs, "series", i, night, s, y0, 1, g))
    return out


def _at(signal: np.ndarray, night: int) -> Step | None:
    """The step of a gapped night-axis signal at a given night."""
    idx = np.flatnonzero(~np.isnan(signal))
    if len(idx) < 2:
        return None
    t = int(np.searchsorted(idx, night))
    return segment_step(signal[idx], t, 0, len(idx), robust_sigma(signal[idx]))


def _row(
    cs: ClassSeries,
    scope: str,
    rep: int,
    night: int,
    step: Step,
    y0: np.ndarray,
    count: int,
    group: tuple[Any, ...] = (),
) -> Change:
    own = _own(y0[rep], night)
    run_id, at = cs.runs[night]
    env = scope == "class"
    return Change(
        scope,
        cs.keys[rep],
        run_id,
        at,
        step,
        math.exp(own.level_before) if own else None,
        math.exp(own.level_after) if own else None,
        count,
        env,
        env,
        group,
    )
