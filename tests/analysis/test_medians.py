"""analysis/medians.py: the medians the site shows and the interval of a median.

Values are SYNTHETIC (made up here)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perftrack.analysis import medians


def test_median_is_numpy_s_median_at_odd_and_even_sizes() -> None:
    rng = np.random.default_rng(40)
    for n in (1, 2, 3, 4, 7, 10, 101):
        x = rng.lognormal(7.0, 0.3, n)
        assert medians.median(x) == float(np.median(x)), n
        assert medians.median(list(x)) == float(np.median(x)), n
    assert medians.median([3.0, 1.0]) == 2.0
    assert math.isnan(medians.median([1.0, float("nan"), 2.0]))  # like np.median


def test_median_interval_from_order_statistics() -> None:
    assert medians.median_interval([5.0, 1.0, 3.0, 2.0, 4.0]) == (1.0, 5.0)  # n=5: min..max
    assert medians.median_interval([float(i) for i in range(1, 11)]) == (2.0, 9.0)  # 97.9%
    assert medians.median_interval([]) is None


def test_with_interval_gives_the_median_and_its_interval_or_nothing() -> None:
    assert medians.with_interval([4.0, 1.0, 3.0, 2.0, 5.0]) == (3.0, 1.0, 5.0)
    assert medians.with_interval([]) == (None, None, None)


def test_the_median_interval_s_order_statistic_is_scipy_stats_binomial_s() -> None:
    """medians uses scipy.special's binomial so that the site build does not import
    scipy.stats (0.45 s): its k must be the one scipy.stats.binom.cdf gives, at every n."""
    from scipy import stats as sps

    tail = (1 - medians.CONFIDENCE) / 2
    for n in range(1, 1201):
        ks = np.arange(1, (n + 1) // 2)  # every k that may still grow by one
        below = sps.binom.cdf(ks, n, 0.5) <= tail  # one call per n, as the loop reads it
        k = 1 + (int(np.argmin(below)) if not below.all() else len(ks))
        assert medians.order_k(n) == k, n


@pytest.mark.parametrize("n", [6, 20, 50])
def test_the_interval_covers_the_median_at_the_confidence_asked(n: int) -> None:
    """The order statistics' coverage P(x(k) <= m <= x(n-k+1)) = 1 - 2 P(B <= k-1) is at
    least CONFIDENCE from 6 values on (exact binomial, no sampling)."""
    from scipy import stats as sps

    k = medians.order_k(n)
    assert 1 - 2 * sps.binom.cdf(k - 1, n, 0.5) >= medians.CONFIDENCE
    # and k is the largest such: one more order statistic in would fall short
    assert 1 - 2 * sps.binom.cdf(k, n, 0.5) < medians.CONFIDENCE


def test_ratio_of_medians_needs_both_sides() -> None:
    assert medians.ratio_of_medians([2.0, 4.0, 9.0], [1.0, 2.0]) == 4.0 / 1.5
    assert medians.ratio_of_medians([2.0], None) is None
    assert medians.ratio_of_medians([], [1.0]) is None
    assert medians.ratio_of_medians([1.0], [0.0]) is None
