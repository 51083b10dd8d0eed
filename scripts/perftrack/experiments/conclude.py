"""Sequential tag-vs-tag verdicts: interleaved rounds of A and B until the verdict settles.

`perftrack compare A B --until-conclusive --budget MINUTES` runs rounds of one cell per
server (A then B, then B then A, …; each a fresh server via the runner), ingests every
round into the DB, and recomputes the verdict of B against A from the rounds of this
session. It stops when the verdict is no longer `inconclusive`, when the planned looks are
used up, or when the next round would not fit in the budget (estimated before each round
from the slowest round so far, so a round is never started that cannot finish).

Multiple looks. Looking at the data after every round and stopping at the first
`regression` would raise the false-alarm rate with each look. Verdicts are therefore only
*decided* at looks spaced geometrically (n = 4, 6, 9, 14, 21, 32, … per side; before 4
Mann-Whitney cannot reach p < 0.05), and the false-alarm budget of the whole sequence,
1%, is split evenly over the looks the budget allows (Bonferroni): each look's
noise-calibrated threshold uses z = Φ⁻¹(1 − 0.01 / K) instead of 2.326. Rounds between
looks print an interim ratio and interval, but cannot end the sequence.

Bands are on the log scale (e^±t), and `unchanged` also needs the interval inside
±min_effect (default 10%): see docs/statistics.md, "Sequential rounds".
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

from scipy import stats as scipy_stats

from perftrack.analysis import compare, stats
from perftrack.core.errors import ConfigError, ServerError
from perftrack.planning import cells, matrix
from perftrack.run import runner
from perftrack.servers.catalog import Catalog
from perftrack.store import store

FALSE_ALARM = 0.01  # target false-alarm rate of one whole sequence (issue #8)
FIRST_LOOK_N = 4  # repeats per side: below this Mann-Whitney's smallest p is >= 0.1
LOOK_GROWTH = 1.5  # the next look when each side has grown by half
DEFAULT_MIN_EFFECT = stats.MIN_EFFECT_UNCHANGED  # --min-effect: the change "unchanged" rules out
MAX_FAILED_ROUNDS = 2  # consecutive rounds without a value for a side: stop, say why
BOOT_Z = NormalDist().inv_cdf(0.5 + stats.CONFIDENCE / 2)  # 1.96: half-width of the 95% CI


def look_points(max_n: int) -> list[int]:
    """Repeats per side at which a verdict is decided: 4, 6, 9, 14, 21, 32, … ≤ max_n."""
    points, n = [], FIRST_LOOK_N
    while n <= max_n:
        points.append(n)
        n = math.ceil(n * LOOK_GROWTH)
    return points


def look_z(looks: int, df: int | None = None) -> float:
    """Per-look one-sided quantile so that K looks together false-alarm at most FALSE_ALARM.

    Normal when the CV is known (stored A/A noise); Student's t with `df` degrees of
    freedom when it is estimated from the few values at hand, whose CV is often too small.
    """
    q = 1 - FALSE_ALARM / max(1, looks)
    if df is None:
        return NormalDist().inv_cdf(q)
    return float(scipy_stats.t.ppf(q, df))


def log_threshold(cv: float | None, n_a: int, n_b: int, z: float) -> float:
    """The noise threshold on the log-ratio scale, with the per-look z.

    As `stats.noise_threshold` (SE of the log-ratio of two medians ≈ 1.2533·CV·√(1/nA+1/nB)),
    but kept in logs: at the CVs of a loaded 2-core VM (30-50%) z·SE exceeds 1, and a
    linear band 1 ± threshold would make a regression impossible to call.
    """
    floor = -math.log(1 - stats.MIN_EFFECT)
    if cv is None or n_a < 1 or n_b < 1:
        return floor
    return max(floor, z * stats.MEDIAN_SE_FACTOR * cv * math.sqrt(1 / n_a + 1 / n_b))


def log_verdict(
    c: stats.Comparison, t: float, higher_is_better: bool, min_effect: float = DEFAULT_MIN_EFFECT
) -> str:
    """`stats.verdict` for a log-scale threshold t (band [e^-t, e^t]).

    `unchanged` also needs the interval inside ±`min_effect`: early in a sequence the noise
    band is wide (±50% and more here), and "no change larger than the noise" would settle
    a real -20% change after four rounds.
    """
    return stats.verdict(
        c.ratio, c.ci_low, c.ci_high, c.p_value, 1 - math.exp(-t), higher_is_better, min_effect
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
) -> stats.Comparison | None:
    """B against A at one look of a sequence of `looks` (None: too few values).

    `paired`: a[i] and b[i] come from round i (the rounds of this module always pair): the
    effect is the per-round ratios' geometric mean (`stats.compare_paired`) and the band is
    a one-sided Student-t bound on their mean log-ratio at the per-look level, t = q·s/√n
    (s: the spread of the per-round log-ratios, q: `look_z` with n - 1 degrees of freedom),
    so drift shared by both arms of a round is not counted as noise.

    Unpaired: the comparison's `threshold` is the regression-side band, 1 - e^-t. The
    standard error behind t is the larger of the CV formula's (exact for normal noise) and
    the one the bootstrap interval implies: for flat or skewed noise, as here, the median
    varies more than 1.2533·σ/√n (up to 1.73·σ/√n for uniform noise).
    """
    if paired:
        spread = stats.paired_spread(a, b)
        if spread is None:
            return None
        n = len(a)
        floor = -math.log(1 - stats.MIN_EFFECT)
        t = max(floor, look_z(looks, n - 1) * spread / math.sqrt(n))
        return stats.compare_paired(
            a,
            b,
            higher_is_better=higher_is_better,
            threshold=1 - math.exp(-t),
            min_effect=min_effect,
        )
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
    return dataclasses.replace(c, threshold=1 - math.exp(-t), verdict=verdict)


def _pooled_cv(a: list[float], b: list[float]) -> float | None:
    """The pair's own A/A noise: the median of the two sides' CVs (as compare.group_cv)."""
    cvs = [c for c in (stats.cv(a), stats.cv(b)) if c is not None]
    return sum(cvs) / len(cvs) if cvs else None


@dataclass(frozen=True)
class Request:
    """What to compare, on which cell shape, within which budget."""

    a: str
    b: str
    budget_s: float
    workload: str = "oltp_point_select"
    threads: int = 1
    charset: str = "latin1"
    duration_s: int = 5
    warmup_s: int = 1
    tables: int = 2
    table_size: int = 10_000
    profile: str = "default"
    metric: str = "tps"
    runner_class: str = "local"
    # `unchanged` settles only when B is within ±min_effect of A (and within the noise band)
    min_effect: float = DEFAULT_MIN_EFFECT

    def optimistic_round_s(self) -> float:
        """A lower bound of one round: two cells' warm-up and measurement, no overhead."""
        return 2.0 * (self.warmup_s + self.duration_s)

    def first_round_estimate_s(self) -> float:
        """Before any round has run: the runner's per-cell overhead estimate added."""
        return 2.0 * (self.warmup_s + self.duration_s + cells.CELL_OVERHEAD_ESTIMATE_S)

    def planned_looks(self) -> int:
        """K of the Bonferroni split: looks reachable if rounds took only their measured time."""
        return max(1, len(look_points(int(self.budget_s // self.optimistic_round_s()))))


@dataclass
class Round:
    number: int
    n_a: int
    n_b: int
    comparison: stats.Comparison | None
    look: int | None  # 1-based look number, None for an interim round
    round_s: float
    machine_s: float  # wall-clock since the first round started
    run_id: str

    @property
    def verdict(self) -> str:
        return self.comparison.verdict if self.comparison else "inconclusive"


@dataclass
class Sequence:
    request: Request
    looks_planned: int
    rounds: list[Round] = field(default_factory=list)
    stop: str = ""  # why the sequence ended

    @property
    def verdict(self) -> str:
        """The verdict of the last look; `inconclusive` when no look settled it."""
        looks = [r for r in self.rounds if r.look is not None]
        return looks[-1].verdict if looks else "inconclusive"

    @property
    def machine_s(self) -> float:
        return self.rounds[-1].machine_s if self.rounds else 0.0

    @property
    def run_ids(self) -> list[str]:
        return [r.run_id for r in self.rounds]


def validate(req: Request, cat: Catalog) -> None:
    """Refuse bad input before anything runs (one-line ConfigError each)."""
    if req.a == req.b:
        raise ConfigError(f"compare two different servers, not {req.a!r} with itself")
    cat.get(req.a)
    cat.get(req.b)
    if not req.budget_s > 0 or not math.isfinite(req.budget_s):
        raise ConfigError("--budget must be a positive number of minutes, e.g. --budget 10")
    if not stats.MIN_EFFECT <= req.min_effect < 1:
        raise ConfigError(
            f"--min-effect must be between {stats.MIN_EFFECT:.0%} and 99% (e.g. 10), "
            f"not {req.min_effect:.0%}"
        )
    if req.metric not in compare.METRICS:
        raise ConfigError(f"unknown metric '{req.metric}'; known: {', '.join(compare.METRICS)}")
    need = FIRST_LOOK_N * req.first_round_estimate_s()
    if req.budget_s < need:
        raise ConfigError(
            f"a budget of {req.budget_s / 60:.1f} min cannot fit the {FIRST_LOOK_N} rounds of "
            f"the first look (~{need / 60:.1f} min at {req.duration_s} s per cell): raise "
            "--budget or lower --duration"
        )


def _round_matrix(req: Request, number: int) -> matrix.Matrix:
    order = [req.a, req.b] if number % 2 == 1 else [req.b, req.a]  # alternate who goes first
    return cell_matrix(req, order, "until-conclusive")


def cell_matrix(req: Request, servers: list[str], name: str) -> matrix.Matrix:
    """One round: the request's cell on each of `servers`, in that order."""
    return matrix.from_dict(
        {
            "name": name,
            "servers": servers,
            "workloads": [req.workload],
            "charsets": [req.charset],
            "threads": [req.threads],
            "repeats": 1,
            "duration_s": req.duration_s,
            "warmup_s": req.warmup_s,
            "tables": req.tables,
            "table_size": req.table_size,
            "profile": req.profile,
        },
        where=f"--{name}" if name == "until-conclusive" else name,
    )


def session_pairs(db: Path, run_ids: list[str], req: Request) -> tuple[list[float], list[float]]:
    """This session's values of the metric, read back from the DB, as pairs: (A_i, B_i) of
    each round (one run) where both sides have a value; a round with a side missing (a
    failed cell) gives no pair."""
    col = compare.METRICS[req.metric][0]
    with store.open_db(db, write=False) as st:
        rows = st.run_values(run_ids, col)
    by_round: dict[str, dict[str, float]] = {rid: {} for rid in run_ids}
    for rid, sid, value in rows:
        by_round[rid][sid] = float(value)
    pairs = [(v[req.a], v[req.b]) for v in by_round.values() if req.a in v and req.b in v]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def run(
    req: Request,
    cat: Catalog,
    config_dir: Path,
    db: Path,
    out_dir: Path,
    emit: Callable[[str], None],
    *,
    workroot: Path | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Sequence:
    """Add interleaved rounds until the verdict settles, the looks or the budget end."""
    validate(req, cat)
    higher = compare.METRICS[req.metric][1]
    outcome = Sequence(req, req.planned_looks())
    points = look_points(10**9)
    z = look_z(outcome.looks_planned)
    emit(
        f"until conclusive: {req.b} against {req.a}, {req.workload}, {req.threads} thread(s), "
        f"{req.duration_s} s per cell, budget {req.budget_s / 60:.1f} min; verdicts at "
        f"n = {', '.join(map(str, points[: outcome.looks_planned]))} per side "
        f"({outcome.looks_planned} looks, z = {z:.2f} each, or Student's t while the CV "
        f"comes from these rounds: ≤ {FALSE_ALARM:.0%} false alarms); "
        f"unchanged = within ±{req.min_effect:.0%} and the noise band"
    )
    start = clock()
    slowest = req.first_round_estimate_s()
    looks_done, failed_rounds = 0, 0
    while True:
        spent = clock() - start
        if spent + slowest > req.budget_s:
            outcome.stop = (
                f"budget: the next round (~{slowest:.0f} s) would end after the "
                f"{req.budget_s / 60:.1f} min budget"
            )
            break
        number = len(outcome.rounds) + 1
        t0 = clock()
        rd = runner.create(_round_matrix(req, number), cat, out_dir, req.runner_class)
        summary = runner.Runner(
            rd, cat, config_dir, lambda _m: None, workroot=workroot, repeat_noisy=False
        ).run()  # one value per server per round: a noisy cell is not re-measured
        store.ingest_paths(db, [rd.path])
        round_s = clock() - t0
        slowest = max(slowest if number > 1 else 0.0, round_s)
        for line in summary.final_failed:
            emit(f"  round {number}: failed cell: {line}")
        a, b = session_pairs(db, [*outcome.run_ids, rd.run_id], req)
        failed_rounds = failed_rounds + 1 if summary.failed else 0
        if failed_rounds >= MAX_FAILED_ROUNDS:
            raise ServerError(
                f"rounds {number - 1}-{number} failed (see above); fix the server or cell, "
                f"the rounds so far are in {out_dir} and {db}"
            )
        n = min(len(a), len(b))
        look = None
        if looks_done < len(points) and n >= points[looks_done]:
            looks_done += 1
            look = looks_done
        c = decide(
            a,
            b,
            cv=None,
            looks=outcome.looks_planned,
            higher_is_better=higher,
            min_effect=req.min_effect,
            paired=True,
        )
        r = Round(number, len(a), len(b), c, look, round_s, clock() - start, rd.run_id)
        outcome.rounds.append(r)
        emit(format_round(r, outcome.looks_planned))
        if look is not None and r.verdict != "inconclusive":
            outcome.stop = f"settled at look {look}"
            break
        if look is not None and look >= outcome.looks_planned:
            outcome.stop = f"all {outcome.looks_planned} planned looks used"
            break
    emit(format_outcome(outcome))
    return outcome


def format_round(r: Round, looks: int) -> str:
    c = r.comparison
    stage = f"look {r.look}/{looks}" if r.look is not None else "interim"
    if c is None:
        body = "too few values for a ratio"
    else:
        body = (
            f"ratio {c.ratio:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}] p={c.p_value:.3f} "
            f"threshold ±{c.threshold:.1%} -> {c.verdict}"
        )
    return (
        f"round {r.number}: n={r.n_a}+{r.n_b}: {body} ({stage}); "
        f"round {r.round_s:.0f} s, machine time {r.machine_s:.0f} s"
    )


def format_outcome(o: Sequence) -> str:
    looks = [r for r in o.rounds if r.look is not None]
    last = looks[-1] if looks else (o.rounds[-1] if o.rounds else None)
    c = last.comparison if last else None
    what = (
        f"{o.request.b} / {o.request.a} = {c.ratio:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}]"
        if c
        else "no ratio"
    )
    return (
        f"verdict: {o.verdict}: {what} after {len(o.rounds)} round(s), "
        f"{o.machine_s / 60:.1f} min machine time ({o.stop})"
    )


def to_json(o: Sequence) -> dict[str, Any]:
    return {
        "a": o.request.a,
        "b": o.request.b,
        "verdict": o.verdict,
        "stop": o.stop,
        "looks_planned": o.looks_planned,
        "machine_s": o.machine_s,
        "rounds": [
            {
                "round": r.number,
                "n_a": r.n_a,
                "n_b": r.n_b,
                "look": r.look,
                "verdict": r.verdict,
                "ratio": r.comparison.ratio if r.comparison else None,
                "ci_low": r.comparison.ci_low if r.comparison else None,
                "ci_high": r.comparison.ci_high if r.comparison else None,
                "p_value": r.comparison.p_value if r.comparison else None,
                "threshold": r.comparison.threshold if r.comparison else None,
                "round_s": r.round_s,
                "machine_s": r.machine_s,
                "run_id": r.run_id,
            }
            for r in o.rounds
        ],
    }


def check_cli(
    servers: list[str], budget: float | None, until: bool, run_id: str | None
) -> tuple[str, str, float]:
    """A, B and the budget in minutes, from what `compare --until-conclusive` was given."""
    if not until:
        raise ConfigError("--budget goes with --until-conclusive")
    if run_id:
        raise ConfigError("--until-conclusive runs new rounds: it takes no --run")
    if len(servers) != 2:
        raise ConfigError(
            "--until-conclusive compares exactly two servers: "
            "perftrack compare A B --until-conclusive --budget MINUTES"
        )
    if budget is None:
        raise ConfigError("--until-conclusive needs --budget MINUTES, e.g. --budget 10")
    return servers[0], servers[1], budget
