"""Statistics for comparing two sets of repeated measurements, and the one verdict rule.

Two ways to estimate B against A:

- **paired** (`compare_paired`), wherever A and B were measured in the same rounds (an
  interleaved run's repeats, `compare --until-conclusive`, bisect, explain): the effect is
  the geometric mean of the per-round ratios B_i / A_i with a Student-t 95% interval and a
  paired t-test on the log-ratios. Drift that moves both arms of a round together cancels.
- **unpaired** (`compare`), for data without shared rounds (nightly history across days):
  ratio of medians with a percentile-bootstrap 95% interval (scipy.stats.bootstrap) and a
  two-sided Mann-Whitney U rank test.

Both end in `verdict`, the one rule every place that shows a verdict uses: a regression or
improvement needs a significant difference larger than the noise threshold; `unchanged`
needs the whole interval inside the noise band *and* inside ±`MIN_EFFECT_UNCHANGED`;
anything else is "inconclusive": more repeats are needed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

CONFIDENCE = 0.95
ALPHA = 0.05
# Smallest change reported as a regression/improvement, whatever the noise: Mozilla's
# Perfherder alerts at >= 2%; sub-2% effects are below what release notes act on.
MIN_EFFECT = 0.02
# The change `unchanged` rules out: an interval inside the noise band of a very noisy series
# (±40% here) says nothing about a 20% regression, so `unchanged` also needs the interval
# within ±10% (the size of the version effects the source articles report: 3-40%).
MIN_EFFECT_UNCHANGED = 0.10
MAX_THRESHOLD = 0.999  # a band [1 - t, 1/(1 - t)] needs t < 1
N_RESAMPLES = 2000  # percentile bootstrap; interval endpoints stable to ~0.2% at this size
SEED = 20261123  # fixed: the same data always gives the same interval
MIN_SAMPLES = 2  # fewer than this per side and nothing can be said
# Fewest A/A pairs a stored paired spread rests on: with 10 the RMS estimate is within
# about ±25% of the true spread (chi-square, 10 degrees of freedom, 80% of the time).
MIN_AA_PAIRS = 10

# Noise-calibrated threshold. For roughly normal data the median of n values has standard
# error ~1.2533 sigma / sqrt(n), so the log-ratio of two medians has standard error
# ~1.2533 cv sqrt(1/n_a + 1/n_b). An A/A comparison exceeds Z_FALSE_ALARM of those about 1%
# of the time on one side: the target false-alarm rate of issue #8.
MEDIAN_SE_FACTOR = 1.2533
FALSE_ALARM = 0.01  # one-sided false-alarm rate of one comparison's noise band
Z_FALSE_ALARM = 2.326  # one-sided 99% normal quantile

VERDICTS = ("regression", "improvement", "unchanged", "inconclusive")


@dataclass(frozen=True)
class Comparison:
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: float  # median_b / median_a
    ci_low: float
    ci_high: float
    p_value: float
    threshold: float
    verdict: str
    paired: bool = False  # from per-round ratios (n_a == n_b == the rounds)


def _ratio_of_medians(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.median(b, axis=axis) / np.median(a, axis=axis)


def compare(
    a: list[float],
    b: list[float],
    *,
    higher_is_better: bool = True,
    threshold: float = MIN_EFFECT,
    min_effect: float = MIN_EFFECT_UNCHANGED,
) -> Comparison | None:
    """Compare B against A; None when either side has fewer than MIN_SAMPLES values or A
    has a value ≤ 0 (a ratio to A needs A > 0: a resample of A's values could have a
    median of 0 — a cost metric that is mostly 0, storage reads of a cached dataset)."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(xa) < MIN_SAMPLES or len(xb) < MIN_SAMPLES or (xa <= 0).any():
        return None
    ratio = float(_ratio_of_medians(xa, xb))
    if np.ptp(np.concatenate([xa, xb])) == 0:
        lo = hi = ratio
        p = 1.0
    else:
        from scipy import stats  # here: 0.45 s to import, and only unpaired pairs need it

        res = stats.bootstrap(
            (xa, xb),
            _ratio_of_medians,
            n_resamples=N_RESAMPLES,
            confidence_level=CONFIDENCE,
            method="percentile",
            vectorized=True,
            paired=False,
            random_state=np.random.default_rng(SEED),
        )
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        p = float(stats.mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    sizes, medians = (len(xa), len(xb)), (float(np.median(xa)), float(np.median(xb)))
    return _judged(sizes, medians, ratio, lo, hi, p, threshold, higher_is_better, min_effect)


def compare_paired(
    a: list[float],
    b: list[float],
    *,
    higher_is_better: bool = True,
    threshold: float = MIN_EFFECT,
    min_effect: float = MIN_EFFECT_UNCHANGED,
) -> Comparison | None:
    """B against A where a[i] and b[i] were measured in the same round i.

    The effect is exp(mean of log(b_i / a_i)), the geometric mean of the per-round ratios,
    with a Student-t 95% interval and a two-sided paired t-test on the log-ratios (per-round
    ratios of throughput are close to log-normal; a rank test on 4-6 pairs cannot reach
    p < 0.05). None with fewer than MIN_SAMPLES pairs or a non-positive value.
    """
    (c,) = compare_paired_all([(a, b)], [threshold], [higher_is_better], min_effect=min_effect)
    return c


def ttest_pvalues(d: np.ndarray) -> np.ndarray:
    """Two-sided p-values of the one-sample t-test of each row of `d` against 0: the floats
    `scipy.stats.ttest_1samp(d, 0.0, axis=1).pvalue` gives (its steps, in its order; a test
    holds them equal to the last bit), without importing scipy.stats (0.45 s of every
    command's start) for detect and the site build."""
    n = d.shape[1]
    mean = d.mean(axis=1)
    var = ((d - d.mean(axis=1, keepdims=True)) ** 2).mean(axis=1)
    var *= np.asarray(n, dtype=d.dtype) / np.asarray(n - 1, dtype=d.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.divide(mean, np.sqrt(var / n))
    return 2 * special.stdtr(np.asarray(n - 1, dtype=t.dtype), -np.abs(t))


def compare_paired_all(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
    thresholds: Sequence[float | Callable[[float], float]],
    higher_is_better: Sequence[bool],
    *,
    min_effect: float = MIN_EFFECT_UNCHANGED,
) -> list[Comparison | None]:
    """`compare_paired` of each pair (A, B) with its threshold and direction: the pairs of
    one size as rows of one array, one numpy and scipy call per size for all of them (the
    same floats as one call per pair, which took ~2 s of detect's 1,455 verdicts at 1,000
    nights, and most of a site build's advisor: docs/benchmarks.md). A threshold is a
    number, or a function of the pair's per-round log-ratios' spread (`paired_spread`,
    its own noise) that gives it."""
    out: list[Comparison | None] = [None] * len(pairs)
    by_n: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(pairs):
        if len(a) != len(b):
            raise ValueError(f"paired values need one A and one B per round, not {len(a)}/{len(b)}")
        by_n.setdefault(len(a), []).append(i)
    for n, idx in by_n.items():
        if n < MIN_SAMPLES:
            continue
        xa = np.asarray([pairs[i][0] for i in idx], dtype=float).reshape(len(idx), n)
        xb = np.asarray([pairs[i][1] for i in idx], dtype=float).reshape(len(idx), n)
        ok = ~((xa <= 0).any(axis=1) | (xb <= 0).any(axis=1))
        idx = [i for i, keep in zip(idx, ok, strict=True) if keep]
        xa, xb = xa[ok], xb[ok]
        d = np.log(xb) - np.log(xa)
        means, sds = d.mean(axis=1), d.std(axis=1, ddof=1)
        p = np.full(len(idx), np.nan)
        if (sds != 0).any():
            p[sds != 0] = ttest_pvalues(d[sds != 0])
        t_q = float(special.stdtrit(n - 1, 0.5 + CONFIDENCE / 2))  # scipy.stats.t.ppf
        med_a, med_b = np.median(xa, axis=1), np.median(xb, axis=1)
        for j, i in enumerate(idx):
            mean, sd = float(means[j]), float(sds[j])
            if sd == 0:
                lo = hi = math.exp(mean)
                pv = 1.0 if mean == 0 else 0.0
            else:
                half = t_q * sd / math.sqrt(n)
                lo, hi = math.exp(mean - half), math.exp(mean + half)
                pv = float(p[j])
            ratio = math.exp(mean)
            thr, higher = thresholds[i], higher_is_better[i]
            thr = thr(sd) if callable(thr) else thr
            medians = (float(med_a[j]), float(med_b[j]))
            out[i] = _judged((n, n), medians, ratio, lo, hi, pv, thr, higher, min_effect, True)
    return out


def _judged(
    sizes: tuple[int, int],
    medians: tuple[float, float],
    ratio: float,
    lo: float,
    hi: float,
    p: float,
    threshold: float,
    higher_is_better: bool,
    min_effect: float,
    paired: bool = False,
) -> Comparison:
    """The comparison with its verdict, by the one rule (`verdict`)."""
    return Comparison(
        *sizes,
        *medians,
        ratio,
        lo,
        hi,
        p,
        threshold,
        verdict(ratio, lo, hi, p, threshold, higher_is_better, min_effect),
        paired=paired,
    )


def paired_spread(a: list[float], b: list[float]) -> float | None:
    """The standard deviation of the per-round log-ratios log(b_i / a_i): the paired noise.
    Of an A/A pair (the same server twice a round) it is the noise a paired verdict faces."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(xa) != len(xb) or len(xa) < 2 or (xa <= 0).any() or (xb <= 0).any():
        return None
    return float((np.log(xb) - np.log(xa)).std(ddof=1))


def aa_log_ratios(values: list[float]) -> list[float]:
    """A server against itself: log(x2/x1), log(x4/x3), … of its repeats in round order,
    each two consecutive rounds an A/A pair (non-positive values give no pair)."""
    return [
        math.log(b / a) for a, b in zip(values[::2], values[1::2], strict=False) if a > 0 and b > 0
    ]


def aa_spread(log_ratios: list[float]) -> float | None:
    """The paired A/A spread of pooled A/A log-ratios: their root mean square (an A/A pair's
    expected log-ratio is 0, so every pair is a degree of freedom); None below MIN_AA_PAIRS."""
    if len(log_ratios) < MIN_AA_PAIRS:
        return None
    return math.sqrt(sum(d * d for d in log_ratios) / len(log_ratios))


@functools.cache  # a scipy quantile, asked again for each verdict
def look_z(looks: int, df: int | None = None) -> float:
    """Per-look one-sided quantile so that K looks together false-alarm at most FALSE_ALARM
    (each at 1 - FALSE_ALARM / K; K = 1: one comparison, 2.326).

    Normal when the noise is known (stored A/A noise); Student's t with `df` degrees of
    freedom when it is estimated from the few values at hand, whose spread is often too
    small.
    """
    q = 1 - FALSE_ALARM / max(1, looks)
    if df is None:
        return float(special.ndtri(q))  # scipy.stats.norm.ppf
    return float(special.stdtrit(df, q))  # scipy.stats.t.ppf


def paired_threshold(spread: float | None, n: int, z: float = Z_FALSE_ALARM) -> float:
    """Smallest change an A/A paired comparison of this per-round spread exceeds ~1% of the
    time with `n` rounds (z = 2.326): 1 - e^(-z·spread/√n), never below MIN_EFFECT."""
    if spread is None or n < 1:
        return MIN_EFFECT
    return max(MIN_EFFECT, 1 - math.exp(-z * spread / math.sqrt(n)))


def verdict(
    ratio: float,
    lo: float,
    hi: float,
    p: float,
    threshold: float,
    higher_is_better: bool = True,
    min_effect: float = MIN_EFFECT_UNCHANGED,
) -> str:
    """The verdict for a ratio B/A with its interval and test p-value: the one rule.

    The noise band is symmetric on the log scale, [1 - threshold, 1 / (1 - threshold)]:
    a threshold near or above 100% (very noisy, few values) still leaves a drop to a tenth
    outside it, where a linear band 1 ± threshold would call any drop `unchanged`.
    `unchanged` also needs the interval inside ±`min_effect` (default MIN_EFFECT_UNCHANGED).
    """
    thr = min(max(threshold, 0.0), MAX_THRESHOLD)
    band_lo, band_hi = 1 - thr, 1 / (1 - thr)
    significant = p < ALPHA and (hi < 1 or lo > 1)
    if significant and (ratio < band_lo or ratio > band_hi):
        worse = ratio < 1 if higher_is_better else ratio > 1
        return "regression" if worse else "improvement"
    same = min(thr, min(max(min_effect, 0.0), MAX_THRESHOLD))
    if 1 - same <= lo and hi <= 1 / (1 - same):
        return "unchanged"
    return "inconclusive"


def noise_threshold(cv_: float | None, n_a: int, n_b: int) -> float:
    """Smallest ratio change an A/A comparison of this noise exceeds ~1% of the time.

    `cv_` is the A/A coefficient of variation measured for this runner class and workload
    (table `noise`); without one, only the MIN_EFFECT floor applies.
    """
    if cv_ is None or n_a < 1 or n_b < 1:
        return MIN_EFFECT
    se = MEDIAN_SE_FACTOR * cv_ * math.sqrt(1 / n_a + 1 / n_b)
    # z·SE is a bound on |log ratio|; as a fraction below 1 it is 1 - e^(-z·SE) (≈ z·SE when
    # small), so a noisy series gets a wide band, never one that swallows every drop.
    return max(MIN_EFFECT, 1 - math.exp(-Z_FALSE_ALARM * se))


def repeats_needed(cv_: float, effect: float, power_z: float = 1.645) -> int:
    """Repeats per side for a noise-calibrated verdict to catch `effect` (e.g. 0.05) with
    ~95% power (one-sided z of the power = 1.645)."""
    per = (Z_FALSE_ALARM + power_z) * MEDIAN_SE_FACTOR * cv_ / effect
    return max(MIN_SAMPLES, math.ceil(2 * per * per))


def cv(values: list[float]) -> float | None:
    """Coefficient of variation (sample stdev / mean)."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2 or x.mean() == 0:
        return None
    return float(x.std(ddof=1) / x.mean())


def cvs(samples: Sequence[Sequence[float]]) -> list[float | None]:
    """`cv` of each sample, bit for bit, in one numpy call per sample size (detect's noise
    has tens of thousands of samples a night: one numpy call each took seconds)."""
    out: list[float | None] = [None] * len(samples)
    by_size: dict[int, list[int]] = {}
    for i, values in enumerate(samples):
        by_size.setdefault(len(values), []).append(i)
    for n, idx in by_size.items():
        if n < 2:
            continue
        x = np.asarray([samples[i] for i in idx], dtype=float)
        means, sds = x.mean(axis=1), x.std(axis=1, ddof=1)
        for i, mean, sd in zip(idx, means, sds, strict=True):
            if mean != 0:
                out[i] = float(sd / mean)
    return out
