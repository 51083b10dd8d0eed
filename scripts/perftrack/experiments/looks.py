"""The looks of a sequential comparison: when a verdict may be decided, and how.

Verdicts are only *decided* at looks spaced geometrically (n = 4, 6, 9, 14, 21, 32, … per
side), and the false-alarm budget of the whole sequence, 1%, is split evenly over the
looks the budget allows (Bonferroni; `conclude` splits it over both directions too,
conclude.SIDES; the per-look quantile is stats.look_z). `decide` is one look's verdict:
paired from the per-round ratios where the arms share rounds (always, in experiments/),
unpaired otherwise; bands on the log scale. See docs/statistics.md, "Sequential rounds".
"""

from __future__ import annotations

import dataclasses
import math
from statistics import NormalDist

from perftrack.analysis import compare, stats
from perftrack.analysis.stats import look_z

FIRST_LOOK_N = 4  # repeats per side: below this Mann-Whitney's smallest p is >= 0.1
LOOK_GROWTH = 1.5  # the next look when each side has grown by half
DEFAULT_MIN_EFFECT = stats.MIN_EFFECT_UNCHANGED  # --min-effect: the change "unchanged" rules out
BOOT_Z = NormalDist().inv_cdf(0.5 + stats.CONFIDENCE / 2)  # 1.96: half-width of the 95% CI


def look_points(max_n: int) -> list[int]:
    """Repeats per side at which a verdict is decided: 4, 6, 9, 14, 21, 32, … ≤ max_n."""
    points, n = [], FIRST_LOOK_N
    while n <= max_n:
        points.append(n)
        n = math.ceil(n * LOOK_GROWTH)
    return points


def log_threshold(cv: float | None, n_a: int, n_b: int, z: float) -> float:
    """The noise threshold on the log-ratio scale, with the per-look z.

    As `stats.noise_threshold` (SE of the log-ratio of two geometric means ≈ CV·√(1/nA+1/nB)),
    but kept in logs: at the CVs of a loaded 2-core VM (30-50%) z·SE exceeds 1, and a
    linear band 1 ± threshold would make a regression impossible to call.
    """
    floor = -math.log(1 - stats.MIN_EFFECT)
    if cv is None or n_a < 1 or n_b < 1:
        return floor
    return max(floor, z * stats.MEAN_SE_FACTOR * cv * math.sqrt(1 / n_a + 1 / n_b))


def log_verdict(
    comparison: stats.Comparison,
    t: float,
    higher_is_better: bool,
    min_effect: float = DEFAULT_MIN_EFFECT,
) -> str:
    """`stats.verdict` for a log-scale threshold t (band [e^-t, e^t]).

    `unchanged` also needs the interval inside ±`min_effect`: early in a sequence the noise
    band is wide (±50% and more here), and "no change larger than the noise" would settle
    a real -20% change after four rounds.
    """
    return stats.verdict(
        comparison.ratio,
        comparison.ci_low,
        comparison.ci_high,
        comparison.p_value,
        1 - math.exp(-t),
        higher_is_better,
        min_effect,
    )


def decide(
    a: list[float],
    b: list[float],
    *,
    cv: float | None,
    looks: int,
    higher_is_better: bool = True,
    min_effect: float = DEFAULT_MIN_EFFECT,
    paired: bool = False,
    aa_spread: float | None = None,
) -> stats.Comparison | None:
    """B against A at one look of a sequence of `looks` (None: too few values).

    `paired`: a[i] and b[i] come from round i (the rounds of experiments/ always pair): the
    one verdict function, compare.versus, over those rounds at this look's level (`looks`:
    the false-alarm rate split over the sequence's looks): the effect is the per-round
    ratios' geometric mean and the band a one-sided Student-t bound on their mean log-ratio,
    t = q·s/√n (s: the spread of the per-round log-ratios, q: the t quantile at
    1 - 0.01/looks with n - 1 degrees of freedom), so drift shared by both arms of a round
    is not counted as noise. With `aa_spread`, the stored paired A/A spread of the runner
    class and workload, the band comes from it with the normal quantile instead (as
    everywhere else, compare.versus): a few rounds whose ratios happen to agree closely
    can then not make the band narrower than the class's known noise. None below
    compare.PAIRED_MIN_ROUNDS rounds.

    Unpaired: the comparison's `threshold` is the regression-side band, 1 - e^-t. The
    standard error behind t is the larger of the CV formula's and the one the comparison's
    Welch interval implies (its half-width / BOOT_Z: at least the standard error of the
    log-ratio, as the Welch quantile is at least BOOT_Z): the CV of the runner class can be
    smaller than this pair's own spread.
    """
    if paired:
        if len(a) != len(b):
            raise ValueError(f"paired values need one A and one B per round, not {len(a)}/{len(b)}")
        rounds = [("session", i) for i in range(len(a))]
        ra = compare.Row(
            server_id="A",
            product="",
            version="",
            version_string=None,
            values=list(a),
            latency=[],
            rounds=rounds,
        )
        rb = compare.Row(
            server_id="B",
            product="",
            version="",
            version_string=None,
            values=list(b),
            latency=[],
            rounds=rounds,
        )
        c = compare.versus(
            ra, rb, cv, higher_is_better, aa_spread, looks=looks, min_effect=min_effect
        )
        return c if c is not None and c.paired else None
    own = cv if cv is not None else _pooled_cv(a, b)
    q = look_z(looks, None if cv is not None else max(1, len(a) + len(b) - 2))
    t = log_threshold(own, len(a), len(b), q)
    c = stats.compare(a, b, higher_is_better=higher_is_better, threshold=1 - math.exp(-t))
    if c is None:
        return None
    if c.ci_low > 0 and c.ci_high > c.ci_low:
        se_boot = (math.log(c.ci_high) - math.log(c.ci_low)) / (2 * BOOT_Z)
        t = max(t, q * se_boot)
    verdict = log_verdict(c, t, higher_is_better, min_effect)
    needed = c.rounds_needed if verdict == "inconclusive" else None
    return dataclasses.replace(c, threshold=1 - math.exp(-t), verdict=verdict, rounds_needed=needed)


def _pooled_cv(a: list[float], b: list[float]) -> float | None:
    """The pair's own A/A noise: the median of the two sides' CVs (as compare.group_cv)."""
    cvs = [c for c in (stats.cv(a), stats.cv(b)) if c is not None]
    return sum(cvs) / len(cvs) if cvs else None
