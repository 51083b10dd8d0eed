"""Steps of one nightly series, and of a group's combined series (issue 22 item 5).

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
Which series are looked at together, and how one cause becomes one row:
analysis/changepoints.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import ndimage, special

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
# A group's step is sized from its rows' own steps when it has this many rows with points
# on both sides (pooled_step); below that, from its combined signal.
MIN_POOLED_ROWS = 3
SIGMA_FLOOR = 0.002  # 0.2%: a perfectly flat synthetic series must not divide by zero
MEDIAN_SE = stats.MEDIAN_SE_FACTOR  # se of a median ≈ 1.2533 σ / √n
Z_INTERVAL = float(special.ndtri(0.5 + stats.CONFIDENCE / 2))  # scipy.stats.norm.ppf


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
        return float(2 * special.ndtr(-abs(self.z)))  # scipy.stats.norm.sf(|z|)


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
    fewer than MIN_SIDE points. A split's full windows are two of the series' sliding
    windows (its left one is the right one of the split WINDOW earlier): their medians are
    computed once for all splits (window_medians)."""
    n, w = len(y), WINDOW
    z = np.full(n + 1, np.nan)
    t = np.arange(MIN_SIDE, n - MIN_SIDE + 1)
    if len(t) == 0:
        return z
    n_left, n_right = np.minimum(t, w), np.minimum(n - t, w)
    full = (n_left == w) & (n_right == w)
    med_l, med_r = np.empty(len(t)), np.empty(len(t))
    if full.any():
        med = window_medians(y, w)  # med[i] = median of y[i:i+w]
        med_l[full], med_r[full] = med[t[full] - w], med[t[full]]
    if (~full).any():  # near the ends: the windows' points, fewer than WINDOW
        pad = np.concatenate([np.full(w, np.nan), y, np.full(w, np.nan)])
        views = sliding_window_view(pad, w)  # views[i] = pad[i:i+w] = y[i-w:i]
        med_l[~full] = _nan_medians(views[t[~full]])
        med_r[~full] = _nan_medians(views[t[~full] + w])
    z[t] = (med_r - med_l) / (MEDIAN_SE * sigma * np.sqrt(1 / n_left + 1 / n_right))
    return z


def _nan_medians(rows: np.ndarray) -> np.ndarray:
    """np.nanmedian of each row (at least one number in each), from one sort: nan sorts
    last, so a row's median is its middle number(s). The same floats as np.nanmedian but
    for the sign of a zero median (np.nanmedian's masked-array path for small arrays was
    most of the windows' time near the series' ends)."""
    s = np.sort(rows, axis=1)
    count = np.count_nonzero(~np.isnan(rows), axis=1)
    at = np.arange(len(rows))
    medians: np.ndarray = (s[at, (count - 1) // 2] + s[at, count // 2]) / 2
    return medians


def window_medians(y: np.ndarray, w: int) -> np.ndarray:
    """The median of every run of `w` consecutive points of y (no nan): [i] of y[i:i+w].

    Bit for bit np.median of each window (the mean of its two middle values when `w` is
    even, else the middle one), from two rank filters of the sorted window as it slides
    (scipy.ndimage) instead of a copy and partition of every window (np.median over
    sliding windows, twice per split, was the largest part of detect's change points at
    1,000 nights: git log -p docs/benchmarks.md)."""
    n = len(y)
    if n < w:
        return np.empty(0)
    x = np.asarray(y, dtype=float)
    origin = -(w // 2)  # output[i] ranks y[i:i+w]

    def rank(k: int) -> np.ndarray:
        ranked: np.ndarray = ndimage.rank_filter(x, k, size=w, mode="nearest", origin=origin)
        return ranked[: n - w + 1]

    # np.median's mean of the middle values sums from +0.0 (so a -0.0 comes out +0.0)
    if w % 2:
        return 0.0 + rank(w // 2)
    middle: np.ndarray = (0.0 + rank(w // 2 - 1) + rank(w // 2)) / 2
    return middle


def segment_step(y: np.ndarray, t: int, lo: int, hi: int, sigma: float) -> Step | None:
    """The step at t measured on y[lo:t] against y[t:hi], each side capped at SIZE_WINDOW."""
    a = y[max(lo, t - SIZE_WINDOW) : t]
    b = y[t : min(hi, t + SIZE_WINDOW)]
    if len(a) < MIN_SIDE or len(b) < MIN_SIDE:
        return None
    la, lb = float(np.median(a)), float(np.median(b))
    se = MEDIAN_SE * sigma * math.sqrt(1 / len(a) + 1 / len(b))
    return Step.of(t, (len(a), len(b)), (la, lb), se)


def step_at(signal: np.ndarray, night: int) -> Step | None:
    """The step of a gapped night-axis signal (nan where a night has no point) at a given
    night, measured on its points, in units of its own noise."""
    idx = np.flatnonzero(~np.isnan(signal))
    if len(idx) < 2:
        return None
    t = int(np.searchsorted(idx, night))
    return segment_step(signal[idx], t, 0, len(idx), robust_sigma(signal[idx]))


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
    signal = step_at(combined(y[list(rows), lo:hi]), night - lo)
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
