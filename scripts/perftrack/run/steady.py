"""Steady state: whether a measured window's per-second throughput was still moving.

A server started cold (empty buffer pool, a large table read from disk, adaptive hash
index still filling) is faster at the end of its first minute than at its start; a short
warm-up hides that only partly. Such a window measures the warm-up, not the release, and
two of them compared say more about which side warmed faster. Here a window is *not
steady* when its throughput moved by at least `MAX_DRIFT` between its first and its last
third (medians, robust to single slow seconds) and a straight line through the seconds has
a slope at least `MIN_TREND_T` standard errors away from flat (not a chance tilt of noisy
seconds). Both conditions, so a noisy but flat window and a tiny but clean drift are
steady. Pure: numbers in, a verdict out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

# A move of 5% over the window: the smallest change the verdicts resolve on these
# machines (the paired noise floor, analysis/stats.MIN_EFFECT is 2%, typical paired bands
# 3-6%), so a smaller drift cannot change a verdict.
MAX_DRIFT = 0.05
# |slope / SE| for a trend: 3 is p < 0.01 two-sided from ~10 seconds on (Student t),
# with per-second noise that is not independent (checkpoint and flush cycles), margin.
MIN_TREND_T = 3.0
MIN_SECONDS = 6  # thirds of at least two seconds each: fewer says nothing


@dataclass(frozen=True, kw_only=True)
class Steadiness:
    steady: bool
    drift: float | None  # (last third - first third) / the window's median; None: too short
    slope_t: float | None  # the per-second slope in standard errors
    reason: str | None  # why not steady, in words (None when steady)


def assess(tps: list[float]) -> Steadiness:
    """The window of per-second throughputs ``tps``, in time order."""
    n = len(tps)
    if n < MIN_SECONDS:
        return Steadiness(steady=True, drift=None, slope_t=None, reason=None)
    third = n // 3
    mid = median(tps)
    if mid <= 0:
        return Steadiness(steady=True, drift=None, slope_t=None, reason=None)
    drift = (median(tps[-third:]) - median(tps[:third])) / mid
    slope_t = _slope_t(tps)
    steady = abs(drift) < MAX_DRIFT or abs(slope_t) < MIN_TREND_T
    reason = None
    if not steady:
        way = "rose" if drift > 0 else "fell"
        reason = (
            f"not steady: throughput {way} {abs(drift):.0%} from the window's first third to "
            f"its last ({n} s; still {'warming up' if drift > 0 else 'slowing down'})"
        )
    return Steadiness(steady=steady, drift=drift, slope_t=slope_t, reason=reason)


def _slope_t(values: list[float]) -> float:
    """The least-squares slope of values against 0..n-1, in standard errors."""
    n = len(values)
    xm = (n - 1) / 2
    ym = sum(values) / n
    sxx = sum((i - xm) ** 2 for i in range(n))
    slope = sum((i - xm) * (y - ym) for i, y in enumerate(values)) / sxx
    resid = sum((y - ym - slope * (i - xm)) ** 2 for i, y in enumerate(values))
    se = math.sqrt(resid / (n - 2) / sxx) if n > 2 else 0.0
    if se == 0:
        return math.inf if slope else 0.0
    return slope / se
