"""Medians of repeated measurements, and the distribution-free 95% interval of a median.

The site's trend, cost and history pages show medians of a run's repeats (or of a
line's nightly values); the trend page draws each with the interval of `median_interval`,
at the verdicts' confidence (`stats.CONFIDENCE`). Computed here, formatted by publish/.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from scipy import special

from perftrack.analysis import stats

CONFIDENCE = stats.CONFIDENCE  # the intervals' coverage, the same as the verdicts'


def median(values: Sequence[float] | np.ndarray) -> float:
    """The median of non-empty values: the middle one, or the mean of the two middle ones
    (np.median's value, NaN if any is NaN), with less overhead per call than np.median."""
    x = np.asarray(values, dtype=float)
    if np.isnan(x).any():
        return float("nan")
    k = x.size // 2
    if x.size % 2:
        return float(np.partition(x, k)[k])
    p = np.partition(x, [k - 1, k])
    return float((p[k - 1] + p[k]) / 2)


def median_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """Distribution-free interval for the median from order statistics.

    [x(k), x(n-k+1)] with the largest k whose binomial tail P(B <= k-1), B ~ Bin(n, 1/2),
    is at most (1 - CONFIDENCE)/2. Below 6 values no k reaches 95% and the interval is
    min..max (coverage 1 - 2^(1-n): 94% at n = 5). Cheap at any n, unlike a bootstrap.
    """
    x = sorted(values)
    n = len(x)
    if n == 0:
        return None
    k = order_k(n)
    return x[k - 1], x[n - k]


@functools.cache  # one per sample size: the site's summary asks ~1,600 times per build
def order_k(n: int) -> int:
    """median_interval's k for n values (scipy.special's binomial: no scipy.stats import)."""
    tail = (1 - CONFIDENCE) / 2
    k = 1
    while k + 1 <= (n + 1) // 2 and special.bdtr(k, n, 0.5) <= tail:  # binom.cdf
        k += 1
    return k


def with_interval(values: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    """(median, low, high) of the values with `median_interval`; all None without values."""
    if not len(values):
        return None, None, None
    lo, hi = median_interval(values) or (None, None)
    return median(values), lo, hi


def ratio_of_medians(num: Sequence[float] | None, den: Sequence[float] | None) -> float | None:
    """median(num) / median(den), None when either side has no values (or den's median
    is 0): a study row's ratio where no comparison could be made (one side unmeasured)."""
    if not num or not den:
        return None
    below = median(den)
    return median(num) / below if below else None
