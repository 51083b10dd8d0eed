"""Statistics for comparing two sets of repeated measurements, and the one verdict rule.

Two ways to estimate B against A:

- **paired** (`compare_paired`), wherever A and B were measured in the same rounds (an
  interleaved run's repeats, `compare --until-conclusive`, bisect, explain): the effect is
  the geometric mean of the per-round ratios B_i / A_i with a Student-t 95% interval and a
  paired t-test on the log-ratios. Drift that moves both arms of a round together cancels.
- **unpaired** (`compare`), for data without shared rounds (nightly history across days):
  the ratio of the two sides' geometric means, exp(mean log b - mean log a), with the 95%
  interval and the two-sided p of one Welch t on the log values (Welch-Satterthwaite
  degrees of freedom). Interval and p come from the same t, so the interval excludes 1
  exactly when p < 0.05, at every n from 2 (a bootstrap of 2-4 values looked sharp while
  a rank test beside it could not go below p = 0.333).

Either way the ratio is the ratio of the values shown beside it, `mean_b / mean_a`: the
geometric means of the values it was computed from (of the shared rounds, when paired),
never medians that can point the other way.

Both end in `verdict`, the one rule every place that shows a verdict uses: a regression or
improvement needs a significant difference larger than the noise threshold; `unchanged`
needs the whole interval inside the noise band *and* inside ±`MIN_EFFECT_UNCHANGED`;
anything else is "inconclusive": more repeats are needed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

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
MIN_SAMPLES = 2  # fewer than this per side and nothing can be said
# Fewest A/A pairs a stored paired spread rests on: with 10 the RMS estimate is within
# about ±25% of the true spread (chi-square, 10 degrees of freedom, 80% of the time).
MIN_AA_PAIRS = 10

# The standard error of the median of n roughly normal values is ~1.2533 sigma / sqrt(n)
# (the change-point steps, analysis/steps.py, compare medians of segments).
MEDIAN_SE_FACTOR = 1.2533
# Noise-calibrated threshold of a verdict. Its estimator is a mean of logs, whose standard
# error is sd(log x) / sqrt(n) ~ cv / sqrt(n), so the log-ratio of two geometric means has
# standard error ~ cv sqrt(1/n_a + 1/n_b). An A/A comparison exceeds Z_FALSE_ALARM of those
# about 1% of the time on one side: the target false-alarm rate of issue #8.
MEAN_SE_FACTOR = 1.0
# The most rounds per side `rounds_needed` looks at: beyond it "more than 100" is the answer.
MAX_ROUNDS = 100
FALSE_ALARM = 0.01  # one-sided false-alarm rate of one comparison's noise band
Z_FALSE_ALARM = 2.326  # one-sided 99% normal quantile

VERDICTS = ("regression", "improvement", "unchanged", "inconclusive")


@dataclass(frozen=True, kw_only=True)
class Comparison:
    n_a: int
    n_b: int
    # the geometric means of each side's values the ratio was computed from (the shared
    # rounds, when paired): ratio == mean_b / mean_a, so they never point the other way
    mean_a: float
    mean_b: float
    ratio: float  # mean_b / mean_a
    ci_low: float
    ci_high: float
    p_value: float
    threshold: float
    verdict: str
    paired: bool = False  # from per-round ratios (n_a == n_b == the rounds)
    # inconclusive only: rounds per side that would decide at the observed spread and
    # effect (`rounds_needed`); None: decided, or more than MAX_ROUNDS
    rounds_needed: int | None = None


def compare(
    a: list[float],
    b: list[float],
    *,
    higher_is_better: bool = True,
    threshold: float = MIN_EFFECT,
    min_effect: float = MIN_EFFECT_UNCHANGED,
) -> Comparison | None:
    """Compare B against A, unpaired: the ratio of geometric means with a Welch t on the
    log values (interval and p from the one t). None when either side has fewer than
    MIN_SAMPLES values or a value ≤ 0 (a log needs it > 0: a cost metric that is mostly 0,
    storage reads of a cached dataset, has no ratio)."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(xa) < MIN_SAMPLES or len(xb) < MIN_SAMPLES or (xa <= 0).any() or (xb <= 0).any():
        return None
    la, lb = np.log(xa), np.log(xb)
    na, nb = len(la), len(lb)
    mean = float(lb.mean() - la.mean())
    va, vb = float(la.var(ddof=1)) / na, float(lb.var(ddof=1)) / nb
    se = math.sqrt(va + vb)
    if se == 0:
        lo = hi = math.exp(mean)
        p, df = (1.0 if mean == 0 else 0.0), float(na + nb - 2)
    else:
        # Welch-Satterthwaite: the degrees of freedom of a difference of two means whose
        # variances are each estimated from their own side
        df = (va + vb) ** 2 / (va * va / (na - 1) + vb * vb / (nb - 1))
        half = float(special.stdtrit(df, 0.5 + CONFIDENCE / 2)) * se
        lo, hi = math.exp(mean - half), math.exp(mean + half)
        p = float(2 * special.stdtr(df, -abs(mean) / se))
    gm = (math.exp(float(la.mean())), math.exp(float(lb.mean())))
    spread = math.sqrt((na * va + nb * vb) / 2)  # one value's sd of log, pooled
    return _judged((na, nb), gm, mean, (lo, hi), p, threshold, higher_is_better, min_effect, spread)


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
    p: np.ndarray = 2 * special.stdtr(np.asarray(n - 1, dtype=t.dtype), -np.abs(t))
    return p


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
    nights, and most of a site build's advisor: git log -p docs/benchmarks.md). A threshold is a
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
        ok = np.asarray(~((xa <= 0).any(axis=1) | (xb <= 0).any(axis=1)))
        idx = [i for i, keep in zip(idx, ok, strict=True) if keep]
        xa, xb = xa[ok], xb[ok]
        d = np.log(xb) - np.log(xa)
        means, sds = d.mean(axis=1), d.std(axis=1, ddof=1)
        p = np.full(len(idx), np.nan)
        if (sds != 0).any():
            p[sds != 0] = ttest_pvalues(d[sds != 0])
        t_q = float(special.stdtrit(n - 1, 0.5 + CONFIDENCE / 2))  # scipy.stats.t.ppf
        gm_a, gm_b = np.exp(np.log(xa).mean(axis=1)), np.exp(np.log(xb).mean(axis=1))
        for j, i in enumerate(idx):
            mean, sd = float(means[j]), float(sds[j])
            if sd == 0:
                lo = hi = math.exp(mean)
                pv = 1.0 if mean == 0 else 0.0
            else:
                half = t_q * sd / math.sqrt(n)
                lo, hi = math.exp(mean - half), math.exp(mean + half)
                pv = float(p[j])
            thr, higher = thresholds[i], higher_is_better[i]
            thr = thr(sd) if callable(thr) else thr
            gm = (float(gm_a[j]), float(gm_b[j]))
            out[i] = _judged(
                (n, n), gm, mean, (lo, hi), pv, thr, higher, min_effect, sd, paired=True
            )
    return out


def _judged(
    sizes: tuple[int, int],
    means: tuple[float, float],
    log_ratio: float,
    interval: tuple[float, float],
    p: float,
    threshold: float,
    higher_is_better: bool,
    min_effect: float,
    spread: float,
    *,
    paired: bool = False,
) -> Comparison:
    """The comparison with its verdict, by the one rule (`verdict`), and when that is
    inconclusive the rounds that would decide (`rounds_needed`)."""
    ratio = math.exp(log_ratio)
    lo, hi = interval
    said = verdict(ratio, lo, hi, p, threshold, higher_is_better, min_effect)
    needed = None
    if said == "inconclusive":
        needed = rounds_needed(
            log_ratio,
            spread,
            paired=paired,
            threshold=threshold,
            n=min(sizes),
            higher_is_better=higher_is_better,
            min_effect=min_effect,
        )
    return Comparison(
        n_a=sizes[0],
        n_b=sizes[1],
        mean_a=means[0],
        mean_b=means[1],
        ratio=ratio,
        ci_low=lo,
        ci_high=hi,
        p_value=p,
        threshold=threshold,
        verdict=said,
        paired=paired,
        rounds_needed=needed,
    )


def rounds_needed(
    log_ratio: float,
    spread: float,
    *,
    paired: bool,
    threshold: float,
    n: int,
    higher_is_better: bool = True,
    min_effect: float = MIN_EFFECT_UNCHANGED,
) -> int | None:
    """Fewest rounds per side (more than `n`, at most MAX_ROUNDS) at which a comparison
    with this effect (log B/A) and this spread (sd of one round's log-ratio when paired,
    of one value's log otherwise) would get a verdict other than inconclusive, by the same
    t interval and rule; None beyond MAX_ROUNDS (an effect at the edge of its band never
    decides). The threshold shrinks as 1/sqrt(n) on the log scale, as `noise_threshold`
    and `paired_threshold` do, down to MIN_EFFECT. The counterpart of `repeats_needed`
    (which plans ahead from a CV and a wanted effect) for a comparison already made."""
    if not math.isfinite(spread) or spread < 0:
        return None
    ms = np.arange(max(n, MIN_SAMPLES - 1) + 1, MAX_ROUNDS + 1)
    if not len(ms):
        return None
    if spread == 0:
        return int(ms[0])
    df = ms - 1.0 if paired else 2.0 * ms - 2
    se = spread / np.sqrt(ms) if paired else spread * np.sqrt(2 / ms)
    half = _t_quantiles(paired)[ms - MIN_SAMPLES] * se
    p = 2 * special.stdtr(df, -abs(log_ratio) / se)
    band0 = -math.log(1 - min(max(threshold, 0.0), MAX_THRESHOLD))
    thr = 1 - np.exp(-np.maximum(-math.log(1 - MIN_EFFECT), band0 * np.sqrt(n / ms)))
    ratio = math.exp(log_ratio)
    lo, hi = np.exp(log_ratio - half), np.exp(log_ratio + half)
    for j, m in enumerate(ms):
        said = verdict(ratio, lo[j], hi[j], p[j], thr[j], higher_is_better, min_effect)
        if said != "inconclusive":
            return int(m)
    return None


def undecided_note(needed: int | None) -> str:
    """What an inconclusive row says about its `rounds_needed` (CLI, PR check, site)."""
    if needed is None:
        return f"more than {MAX_ROUNDS} rounds a side would be needed"
    return f"~{needed} rounds a side would decide"


@functools.cache
def _t_quantiles(paired: bool) -> np.ndarray:
    """The 97.5% t quantiles `rounds_needed` uses for m = MIN_SAMPLES … MAX_ROUNDS rounds."""
    ms = np.arange(MIN_SAMPLES, MAX_ROUNDS + 1)
    return special.stdtrit(ms - 1.0 if paired else 2.0 * ms - 2, 0.5 + CONFIDENCE / 2)


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


def aa_spread(log_ratios: Sequence[float] | np.ndarray) -> float | None:
    """The paired A/A spread of pooled A/A log-ratios: their root mean square (an A/A pair's
    expected log-ratio is 0, so every pair is a degree of freedom); None below MIN_AA_PAIRS.
    The squares are summed exactly (math.fsum): the same answer in any order of pooling."""
    x = np.asarray(log_ratios, dtype=float)
    if len(x) < MIN_AA_PAIRS:
        return None
    return math.sqrt(math.fsum((x * x).tolist()) / len(x))


K = TypeVar("K", bound=Hashable)  # a noise key (noise_pools)


@dataclass(kw_only=True)
class NoisePool:
    """The samples of one noise key (`noise_pools`): each sample's CV and size, and the
    A/A log-ratios of all of them (`aa_log_ratios`), pooled."""

    cvs: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    ratios: list[np.ndarray] = field(default_factory=list)

    def log_ratios(self) -> np.ndarray:
        return np.concatenate(self.ratios) if self.ratios else np.empty(0)


def noise_pools(keys: Sequence[K], samples: Sequence[Sequence[float]]) -> dict[K, NoisePool]:
    """Each sample's `cv` and `aa_log_ratios`, pooled by its key: a sample without a CV
    (fewer than two values, or a zero mean) adds nothing to its key, and a key without
    such a sample has no pool. One numpy pass per sample size, as `cvs` (detect's noise
    has tens of thousands of samples a night and the site's heatmap asks it for each of
    its metrics: one Python loop a sample was seconds)."""
    pools: dict[K, NoisePool] = {}
    for idx, x, means, sds in _by_size(samples):
        size = x.shape[1]
        pairs = size // 2
        a, b = x[:, 0 : 2 * pairs : 2], x[:, 1 : 2 * pairs : 2]
        ok = (a > 0) & (b > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.log(np.where(ok, b, 1.0) / np.where(ok, a, 1.0))
        ids: dict[K, int] = {}
        kid = np.fromiter((ids.setdefault(keys[i], len(ids)) for i in idx), int, len(idx))
        for key, j in ids.items():
            rows = (kid == j) & (means != 0)
            if not rows.any():
                continue
            pool = pools.setdefault(key, NoisePool())
            pool.cvs += (sds[rows] / means[rows]).tolist()
            pool.sizes += [size] * int(rows.sum())
            pool.ratios.append(ratios[rows][ok[rows]])
    return pools


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
    se = MEAN_SE_FACTOR * cv_ * math.sqrt(1 / n_a + 1 / n_b)
    # z·SE is a bound on |log ratio|; as a fraction below 1 it is 1 - e^(-z·SE) (≈ z·SE when
    # small), so a noisy series gets a wide band, never one that swallows every drop.
    return max(MIN_EFFECT, 1 - math.exp(-Z_FALSE_ALARM * se))


def repeats_needed(cv_: float, effect: float, power_z: float = 1.645) -> int:
    """Repeats per side for a noise-calibrated verdict to catch `effect` (e.g. 0.05) with
    ~95% power (one-sided z of the power = 1.645)."""
    per = (Z_FALSE_ALARM + power_z) * MEAN_SE_FACTOR * cv_ / effect
    return max(MIN_SAMPLES, math.ceil(2 * per * per))


def cv(values: list[float]) -> float | None:
    """Coefficient of variation (sample stdev / mean)."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2 or x.mean() == 0:
        return None
    return float(x.std(ddof=1) / x.mean())


def _by_size(
    samples: Sequence[Sequence[float]],
) -> Iterator[tuple[list[int], np.ndarray, np.ndarray, np.ndarray]]:
    """The samples of each size of two or more, as one array: (their indices, the values
    row by row, each row's mean and standard deviation), one numpy call each."""
    by_size: dict[int, list[int]] = {}
    for i, values in enumerate(samples):
        by_size.setdefault(len(values), []).append(i)
    for size, idx in by_size.items():
        if size < 2:
            continue
        x = np.asarray([samples[i] for i in idx], dtype=float)
        yield idx, x, x.mean(axis=1), x.std(axis=1, ddof=1)


def cvs(samples: Sequence[Sequence[float]]) -> list[float | None]:
    """`cv` of each sample, bit for bit, in one numpy call per sample size (detect's noise
    has tens of thousands of samples a night: one numpy call each took seconds)."""
    out: list[float | None] = [None] * len(samples)
    for idx, _x, means, sds in _by_size(samples):
        for i, mean, sd in zip(idx, means, sds, strict=True):
            if mean != 0:
                out[i] = float(sd / mean)
    return out
