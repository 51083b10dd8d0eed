"""Statistics on synthetic samples (test fixtures, not measurements)."""

import math

import numpy as np

from perftrack.analysis import stats


def test_clear_regression_is_found_with_interval_below_one():
    a = [100.0, 101.0, 99.0, 100.5, 99.5]
    b = [80.0, 81.0, 79.0, 80.5, 79.5]
    c = stats.compare(a, b)
    assert c is not None
    assert c.verdict == "regression"
    assert c.ci_high < 1.0
    assert abs(c.ratio - 0.8) < 0.01


def test_latency_direction_is_inverted():
    a = [1.0, 1.01, 0.99, 1.0, 1.02]
    b = [1.5, 1.49, 1.52, 1.5, 1.51]
    c = stats.compare(a, b, higher_is_better=False)
    assert c is not None and c.verdict == "regression"


def test_same_distribution_tight_noise_is_unchanged():
    rng = np.random.default_rng(1)
    a = list(100 + rng.normal(0, 0.2, 9))
    b = list(100 + rng.normal(0, 0.2, 9))
    c = stats.compare(a, b)
    assert c is not None and c.verdict == "unchanged"


def test_noisy_small_samples_are_inconclusive_not_a_verdict():
    a = [100.0, 130.0, 85.0]
    b = [95.0, 120.0, 80.0]
    c = stats.compare(a, b)
    assert c is not None and c.verdict == "inconclusive"


def test_too_few_samples_give_nothing():
    assert stats.compare([1.0], [2.0, 3.0]) is None


def test_interval_is_deterministic():
    a, b = [100.0, 97.0, 103.0, 99.0], [90.0, 95.0, 92.0, 94.0]
    assert stats.compare(a, b) == stats.compare(a, b)


def test_cv():
    assert stats.cv([1.0]) is None
    assert abs(stats.cv([9.0, 11.0]) - (np.std([9, 11], ddof=1) / 10)) < 1e-12


def test_a_very_noisy_series_still_calls_a_collapse_a_regression() -> None:
    # Seen in an act run under load: CV so high that z·SE ≈ 1.54. A linear band 1 ± 1.54
    # called a ratio of 0.053 [0.009, 0.242] "unchanged"; the log-scale band must not.
    se_target = 1.54 / stats.Z_FALSE_ALARM
    cv = se_target / (stats.MEDIAN_SE_FACTOR * math.sqrt(1 / 4 + 1 / 4))
    thr = stats.noise_threshold(cv, 4, 4)
    assert 0.7 < thr < 1
    assert stats.verdict(0.053, 0.009, 0.242, 0.001, thr) == "regression"
    assert stats.verdict(0.95, 0.5, 1.8, 0.6, thr) == "unchanged"
    assert stats.verdict(0.95, 0.5, 1.8, 0.6, thr, min_effect=0.1) == "inconclusive"
