"""Statistics on synthetic samples (test fixtures, not measurements)."""

import math

import numpy as np
import pytest

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
    cv = se_target / (stats.MEAN_SE_FACTOR * math.sqrt(1 / 4 + 1 / 4))
    thr = stats.noise_threshold(cv, 4, 4)
    assert 0.7 < thr < 1
    assert stats.verdict(0.053, 0.009, 0.242, 0.001, thr) == "regression"
    # inside the (huge) noise band but not within ±10%: says nothing about a 20% change
    assert stats.verdict(0.95, 0.5, 1.8, 0.6, thr) == "inconclusive"
    assert stats.verdict(0.95, 0.5, 1.8, 0.6, thr, min_effect=0.999) == "unchanged"


def test_unchanged_means_within_ten_percent_everywhere() -> None:
    """The site once said `unchanged` at 0.868 [0.66, 1.35] (noise band wider than the
    interval) where compare said `inconclusive`: one rule now, interval within ±10%."""
    assert stats.MIN_EFFECT_UNCHANGED == 0.10
    assert stats.verdict(0.868, 0.66, 1.35, 0.4, 0.6) == "inconclusive"
    assert stats.verdict(1.01, 0.95, 1.06, 0.7, 0.08) == "unchanged"
    rng = np.random.default_rng(1)
    a = list(1000 + rng.normal(0, 5, 12))
    c = stats.compare(a, [x * 1.003 for x in a], threshold=0.5)
    assert c is not None and c.verdict == "unchanged"
    assert c.ci_low >= 0.9 and c.ci_high <= 1 / 0.9


def test_paired_rounds_cancel_drift_that_unpaired_statistics_count_as_noise() -> None:
    """Both arms slide 29k -> 23k over the rounds (seen here); B is 5% slower in each round.
    Unpaired, the drift swamps the 5%; paired, every round says 0.95."""
    drift = np.linspace(29_000, 23_000, 8)
    rng = np.random.default_rng(7)
    a = list(drift * (1 + rng.normal(0, 0.01, 8)))
    b = list(drift * 0.95 * (1 + rng.normal(0, 0.01, 8)))
    thr = stats.paired_threshold(stats.paired_spread(a, a[1:] + a[:1]), 8)
    p = stats.compare_paired(a, b, threshold=stats.MIN_EFFECT)
    u = stats.compare(a, b, threshold=stats.MIN_EFFECT)
    assert p is not None and u is not None and p.paired and not u.paired
    assert p.ci_low < 0.95 < p.ci_high and p.ci_high < 0.97
    assert p.verdict == "regression" and p.p_value < 0.001
    assert u.verdict == "inconclusive"
    assert 0 < thr < 1


def test_paired_input_must_pair() -> None:
    with pytest.raises(ValueError, match="one A and one B per round"):
        stats.compare_paired([1.0, 2.0], [1.0])
    assert stats.compare_paired([1.0], [1.0]) is None
    assert stats.compare_paired([1.0, 0.0], [1.0, 1.0]) is None
    same = stats.compare_paired([5.0, 6.0, 7.0], [5.0, 6.0, 7.0])
    assert same is not None and same.ratio == 1.0 and same.verdict == "unchanged"
    assert stats.paired_spread([1.0], [1.0]) is None
    assert stats.paired_threshold(None, 5) == stats.MIN_EFFECT


def test_paired_comparisons_together_are_each_the_same_as_alone() -> None:
    """compare_paired_all stacks pairs of one size into one array: every float and verdict
    must be the one compare_paired gives the pair alone (SYNTHETIC lognormal samples)."""
    rng = np.random.default_rng(19)
    pairs, thresholds, higher = [], [], []
    for k in range(60):
        n = (3, 5, 200, 7)[k % 4]
        a = list(rng.lognormal(8, 0.1, n))
        b = list(rng.lognormal(8 + (k % 3 - 1) * 0.05, 0.1, n))
        if k == 5:
            b = list(a)  # no spread: p and the interval from the rule for sd = 0
        if k == 9:
            a[0] = 0.0  # a non-positive value: no comparison
        pairs.append((a, b))
        thresholds.append(0.02 + 0.01 * (k % 5))
        higher.append(k % 2 == 0)
    together = stats.compare_paired_all(pairs, thresholds, higher)
    alone = [
        stats.compare_paired(a, b, higher_is_better=h, threshold=t)
        for (a, b), t, h in zip(pairs, thresholds, higher, strict=True)
    ]
    assert together == alone
    assert together[9] is None and together[5] is not None and together[5].p_value == 1.0
    assert {c.verdict for c in together if c} >= {"regression", "improvement"}


def test_a_paired_comparison_is_the_one_of_its_1d_log_ratios() -> None:
    """The stacked computation against the statistics of one pair's own 1-D arrays (how
    compare_paired computed them before it was batched), to the last bit."""
    from scipy import stats as sps

    rng = np.random.default_rng(23)
    for n in (3, 4, 200):
        a, b = rng.lognormal(8, 0.1, n), rng.lognormal(8, 0.1, n)
        c = stats.compare_paired(list(a), list(b))
        d = np.log(b) - np.log(a)
        mean, sd = float(d.mean()), float(d.std(ddof=1))
        half = float(sps.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
        assert c is not None
        assert (c.ratio, c.ci_low, c.ci_high) == (
            math.exp(mean),
            math.exp(mean - half),
            math.exp(mean + half),
        )
        assert c.p_value == float(sps.ttest_1samp(d, 0.0).pvalue)
        gm_a, gm_b = math.exp(float(np.log(a).mean())), math.exp(float(np.log(b).mean()))
        assert (c.mean_a, c.mean_b) == (gm_a, gm_b)
        assert c.mean_b / c.mean_a == pytest.approx(c.ratio, rel=1e-12)


def test_the_t_test_and_quantiles_are_scipy_stats_floats_to_the_last_bit() -> None:
    """stats.py uses scipy.special so that no command imports scipy.stats (0.45 s) to
    start: its p-values and quantiles must be the very floats scipy.stats gives."""
    from scipy import stats as sps

    rng = np.random.default_rng(7)
    for n in range(2, 14):
        for scale in (1e-4, 1e-2, 0.3):
            d = rng.normal(rng.normal(0, scale, (400, 1)), scale, (400, n))
            want = sps.ttest_1samp(d, 0.0, axis=1).pvalue
            got = stats.ttest_pvalues(d)
            assert got.tobytes() == want.tobytes(), (n, scale)
    for looks in (1, 2, 3, 7):
        q = 1 - stats.FALSE_ALARM / looks
        assert stats.look_z.__wrapped__(looks) == float(sps.norm.ppf(q))
        for df in (1, 2, 4, 9, 29):
            assert stats.look_z.__wrapped__(looks, df) == float(sps.t.ppf(q, df))


def test_unpaired_interval_and_p_are_one_welch_t_on_the_logs_at_every_n() -> None:
    """The unpaired verdict's interval and p come from one Welch t on the log values (the
    p is scipy's ttest_ind(equal_var=False) of the logs), so the interval excludes 1
    exactly when p < 0.05 — also at 2 values a side, where a bootstrap interval beside a
    rank test (p >= 0.333) once read `2.274 [1.968, 2.679] p=0.333 inconclusive`. The
    values beside the ratio are its own basis: the geometric means, ratio = mean_b/mean_a."""
    from scipy import stats as sps

    rng = np.random.default_rng(37)
    seen = {True: 0, False: 0}
    for n_a, n_b in ((2, 2), (2, 3), (3, 3), (4, 4), (5, 7), (10, 10)):
        for _ in range(200):
            a = rng.lognormal(8, 0.1, n_a)
            b = rng.lognormal(8 + rng.normal(0, 0.1), 0.1, n_b)
            c = stats.compare(list(a), list(b))
            assert c is not None and not c.paired
            want = sps.ttest_ind(np.log(b), np.log(a), equal_var=False).pvalue
            assert c.p_value == pytest.approx(float(want), rel=1e-9, abs=1e-15)
            excludes = c.ci_low > 1 or c.ci_high < 1
            assert excludes == (c.p_value < stats.ALPHA), (n_a, n_b, c)
            seen[excludes] += 1
            assert c.ratio == pytest.approx(c.mean_b / c.mean_a, rel=1e-12)
            assert c.mean_a == pytest.approx(math.exp(np.log(a).mean()), rel=1e-12)
    assert seen[True] > 50 and seen[False] > 50  # both sides of the rule were tried
    # the site's example: two repeats a side, about 2.27x apart
    c = stats.compare([1000.0, 1150.0], [2270.0, 2620.0])
    assert c is not None and c.p_value < 0.05 and c.ci_low > 1 and c.verdict == "improvement"


def _verdict_at(m: int, mean: float, sd: float) -> str:
    """A paired comparison of m rounds whose log-ratios have exactly this mean and sd."""
    z = np.resize([1.0, -1.0], m) if m % 2 == 0 else np.r_[np.resize([1.0, -1.0], m - 1), 0]
    x = mean + z * sd / np.std(z, ddof=1)
    got = stats.compare_paired([1000.0] * m, list(1000.0 * np.exp(x)))
    assert got is not None
    return got.verdict


def test_rounds_needed_is_where_the_same_effect_and_spread_decide() -> None:
    """An inconclusive row says how many rounds a side would decide it: rebuilt with
    exactly the observed mean and spread of its per-round log-ratios, the comparison at
    that many rounds decides, and at one round fewer it does not."""
    for mean, sd, n in ((-0.06, 0.05, 3), (-0.03, 0.04, 4), (0.004, 0.01, 3)):
        d = np.asarray([mean + sd] * 1 + [mean - sd] * 1 + [mean] * (n - 2), dtype=float)
        d = mean + (d - d.mean()) * sd / d.std(ddof=1)
        c = stats.compare_paired([1000.0] * n, list(1000.0 * np.exp(d)))
        assert c is not None and c.verdict == "inconclusive" and c.rounds_needed is not None

        m = c.rounds_needed
        assert _verdict_at(m, mean, sd) != "inconclusive", (mean, sd, m)
        assert _verdict_at(m - 1, mean, sd) == "inconclusive", (mean, sd, m)
        assert stats.undecided_note(m) == f"~{m} rounds a side would decide"
    # an effect at the very edge of the 2% floor never decides within MAX_ROUNDS
    edge = stats.rounds_needed(
        math.log(0.98), 0.2, paired=True, threshold=0.02, n=3, higher_is_better=True
    )
    assert edge is None
    assert "more than 100" in stats.undecided_note(None)
