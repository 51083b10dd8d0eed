"""Version-to-version comparison tables from the results DB (read-only, through the
store's named query `series_values`)."""

from __future__ import annotations

import functools
import itertools
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from perftrack.analysis import stats
from perftrack.servers import rules
from perftrack.store.store import SERIES_COLS, NoiseKey, Store

# Series never mix: a comparison group is one hardware key, runner class, and cell shape,
# including every configuration axis (null when a cell does not set it: schema v5).
GROUP_COLS = SERIES_COLS
METRICS = {  # name -> (column, higher is better, unit)
    "tps": ("tps", True, "tx/s"),
    "qps": ("qps", True, "q/s"),
    "p95": ("latency_pct_ms", False, "ms"),
    "latency_avg": ("latency_avg_ms", False, "ms"),
    # cost per operation (sampler.py, schema v4): lower is better, except IPC
    "cpu_us_per_txn": ("cpu_us_per_txn", False, "µs/txn"),
    "cpu_user_us_per_txn": ("cpu_user_us_per_txn", False, "µs/txn"),
    "cpu_sys_us_per_txn": ("cpu_sys_us_per_txn", False, "µs/txn"),
    "cpu_us_per_query": ("cpu_us_per_query", False, "µs/query"),
    "ctx_vol_per_txn": ("ctx_vol_per_txn", False, "switches/txn"),
    "ctx_invol_per_txn": ("ctx_invol_per_txn", False, "switches/txn"),
    "read_bytes_per_txn": ("read_bytes_per_txn", False, "B/txn"),
    "write_bytes_per_txn": ("write_bytes_per_txn", False, "B/txn"),
    "peak_rss_bytes": ("peak_rss_bytes", False, "B"),
    "instructions_per_txn": ("instructions_per_txn", False, "instructions/txn"),
    "cycles_per_txn": ("cycles_per_txn", False, "cycles/txn"),
    "ipc": ("ipc", True, "instructions/cycle"),
}


# Fewest shared rounds for a paired comparison: with 3 pairs the t interval has 2 degrees
# of freedom (t = 4.3) and still resolves a steady 10% change; with 2 it cannot.
PAIRED_MIN_ROUNDS = 3


@dataclass(kw_only=True)
class Row:
    server_id: str
    product: str
    version: str
    version_string: str | None
    values: list[float]
    latency: list[float]
    vs_previous: stats.Comparison | None = None
    rounds: list[tuple[str, int]] = field(default_factory=list)  # (run_id, repeat) per value
    previous: str | None = None  # the row compared against: a server id, or an axis value
    label: str | None = None  # an axis comparison's row: the axis value (analysis/axis.py)
    cell: dict[str, object] = field(default_factory=dict)  # …and the columns that value set

    @property
    def name(self) -> str:
        return self.label if self.label is not None else self.server_id


@dataclass(kw_only=True)
class Table:
    key: dict[str, object]
    rows: list[Row] = field(default_factory=list)
    noise_cv: float | None = None  # A/A CV the unpaired thresholds were derived from
    aa_spread: float | None = None  # stored paired A/A spread the paired thresholds use
    axis: str | None = None  # an axis comparison (analysis/axis.py): the axis compared


def noise_key(key: Mapping[str, object], metric: str) -> NoiseKey:
    """The stored A/A noise a table's verdicts use: its runner class, hardware and
    workload (always set: the series' leading columns), for `metric`."""
    return (str(key["runner_class"]), str(key["hw_key"]), str(key["workload"]), metric)


def _version_key(product: str, version: str) -> tuple[Any, ...]:
    return (product, rules.parse_version(version))


T = TypeVar("T")


def version_steps(
    servers: Sequence[T], product_version: Callable[[T], tuple[str, str]]
) -> list[tuple[T, T]]:
    """The version steps a series compares, (base, new): its servers in version order,
    each against its predecessor of the same product (the first release of another
    product has none). One definition: verdicts, `compare` and the night's sharding
    (planning/pairing.py, which keeps both sides on one runner) all use it."""
    ordered = sorted(servers, key=lambda x: _version_key(*product_version(x)))
    return [
        (a, b)
        for a, b in itertools.pairwise(ordered)
        if product_version(a)[0] == product_version(b)[0]
    ]


def group_cv(rows: list[Row]) -> float | None:
    """The group's own A/A noise: median over its servers of the CV across repeats."""
    cvs = [c for r in rows if (c := stats.cv(r.values)) is not None]
    return float(np.median(cvs)) if cvs else None


# Every comparison of stored history (detect's verdicts, `compare`, `advise`, the site's
# pages) pools each server's newest RECENT_VALUES values per series: 40 nights of 5
# repeats (a tag-vs-tag run has far fewer). One window, so a verdict reads the same
# everywhere, and it costs the same after three years of nightly runs as after two months
# (the site's advisor compared every night's values: 116 s of a 230 s build at 1,000
# nights: `git log -p docs/benchmarks.md`).
RECENT_VALUES = 200


def tables(
    results: Store,
    *,
    metric: str = "tps",
    run_id: str | None = None,
    servers: list[str] | None = None,
    noise: dict[NoiseKey, float] | None = None,
    recent: int | None = RECENT_VALUES,
    spreads: dict[NoiseKey, float] | None = None,
) -> list[Table]:
    """`noise`: the A/A CV, `spreads`: the paired A/A spread, per runner class, hardware,
    workload and metric (default: the stored ones, table `noise`). `recent`: only each
    server's newest that many values per series (RECENT_VALUES: every verdict, stored or
    shown, from the same window; None: the whole history)."""
    col, higher, _unit = METRICS[metric]
    noise = results.noise_cv() if noise is None else noise
    spreads = results.noise_spread() if spreads is None else spreads
    samples = results.series_samples(col, run_id=run_id, servers=servers, recent=recent)
    n = len(GROUP_COLS)
    groups: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for s in samples:  # one per series and server, in order of its oldest value
        # the store's stand_in column (s[n + 4]) is history, not shown: a server is what it
        # is outside a study (planning/study.py says who stands in for whom there)
        server_id, product, version, version_string = s[n : n + 4]
        values, latency, run_ids, repeats = s[n + 5 :]
        row = Row(
            server_id=server_id,
            product=product,
            version=version,
            version_string=version_string,
            values=values,
            latency=[],
        )
        row.latency = [x for x in latency if x is not None]
        row.rounds = list(zip(run_ids, repeats, strict=True))
        groups[tuple(s[:n])].append(row)
    out: list[Table] = []
    pairs: list[Pair] = []
    for gk, rows in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        t = Table(key=dict(zip(GROUP_COLS, gk, strict=True)))
        t.rows = sorted(rows, key=lambda r: _version_key(r.product, r.version))
        nk = noise_key(t.key, metric)
        cv = noise.get(nk) or group_cv(t.rows)
        t.noise_cv = cv
        t.aa_spread = spreads.get(nk)
        for prev, cur_row in version_steps(t.rows, lambda r: (r.product, r.version)):
            cur_row.previous = prev.server_id
            pairs.append((prev, cur_row, cv, higher, t.aa_spread))
        out.append(t)
    for (_, cur_row, *_), c in zip(pairs, versus_all(pairs), strict=True):
        assert not isinstance(c, Deferred)
        cur_row.vs_previous = c
    return out


def shared_rounds(row_a: Row, row_b: Row) -> tuple[list[float], list[float]]:
    """The values of A and B measured in the same rounds (run and repeat), as pairs; none
    when a side has two values of one round (then rounds do not identify a value)."""
    if len(set(row_a.rounds)) != len(row_a.rounds) or len(set(row_b.rounds)) != len(row_b.rounds):
        return [], []
    if row_a.rounds == row_b.rounds:  # the common case (one run measured both): every value pairs
        return list(row_a.values), list(row_b.values)
    bv = dict(zip(row_b.rounds, row_b.values, strict=True))
    pairs = [(va, bv[k]) for k, va in zip(row_a.rounds, row_a.values, strict=True) if k in bv]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def versus(
    row_a: Row,
    row_b: Row,
    cv: float | None,
    higher: bool,
    aa_spread: float | None = None,
    *,
    looks: int = 1,
    min_effect: float = stats.MIN_EFFECT_UNCHANGED,
) -> stats.Comparison | None:
    """B against A, the one verdict function of every place that compares two samples
    (compare, detect, advise, axis comparisons, the site, study reports): paired over their
    shared rounds when there are at least PAIRED_MIN_ROUNDS of them (interleaved runs,
    nightly runs of both), else unpaired (data without shared rounds).

    The paired band is a one-sided 99% bound of the mean log-ratio: from `aa_spread`, the
    stored paired A/A spread of the runner class and workload (`detect`'s noise table), with
    the normal z = 2.326 (that spread comes from many pairs); without one, from the pairs'
    own spread with Student's t (n - 1 degrees of freedom). `looks`: one look of a
    sequence of that many (experiments/looks.py), whose 1% false-alarm rate is split over
    them (each at 1 - 0.01/looks). The unpaired band comes from the A/A CV `cv`
    (stats.noise_threshold). `unchanged` needs the interval within ±`min_effect`."""
    (c,) = versus_all([(row_a, row_b, cv, higher, aa_spread)], looks=looks, min_effect=min_effect)
    assert not isinstance(c, Deferred)
    return c


Pair = tuple[Row, Row, float | None, bool, float | None]  # a, b, cv, higher, aa_spread


class Deferred:
    """An unpaired comparison `versus_all` left for the caller (`defer_unpaired`)."""


DEFERRED = Deferred()


def versus_all(
    pairs: list[Pair],
    *,
    looks: int = 1,
    min_effect: float = stats.MIN_EFFECT_UNCHANGED,
    defer_unpaired: bool = False,
) -> list[stats.Comparison | Deferred | None]:
    """`versus` of each pair, its paired comparisons all in one stats.compare_paired_all.
    `defer_unpaired`: an unpaired one (a Welch t each) is DEFERRED, for a caller that
    may not need it to call `versus` on it if it does."""
    out: list[stats.Comparison | Deferred | None] = [None] * len(pairs)
    paired: list[tuple[int, list[float], list[float], float | Callable[[float], float], bool]] = []
    for i, (a, b, cv, higher, aa_spread) in enumerate(pairs):
        pa, pb = shared_rounds(a, b) if a.rounds and b.rounds else ([], [])
        if len(pa) >= PAIRED_MIN_ROUNDS:
            n = len(pa)
            threshold: float | Callable[[float], float]
            if aa_spread is not None:
                threshold = stats.paired_threshold(aa_spread, n, stats.look_z(looks))
            else:  # from the pair's own spread, which compare_paired_all computes
                threshold = _own_threshold(n, looks)
            paired.append((i, pa, pb, threshold, higher))
            continue
        if defer_unpaired:
            out[i] = DEFERRED
            continue
        threshold = stats.noise_threshold(cv, len(a.values), len(b.values))
        out[i] = stats.compare(
            a.values, b.values, higher_is_better=higher, threshold=threshold, min_effect=min_effect
        )
    found = stats.compare_paired_all(
        [(pa, pb) for _, pa, pb, _, _ in paired],
        [p[3] for p in paired],
        [p[4] for p in paired],
        min_effect=min_effect,
    )
    for (i, *_), c in zip(paired, found, strict=True):
        out[i] = c
    return out


@functools.cache
def _own_threshold(rounds: int, looks: int) -> Callable[[float], float]:
    """The paired threshold of n rounds from the pair's own spread (`paired_spread`, no
    stored A/A spread): Student's t with n - 1 degrees of freedom."""
    z = stats.look_z(looks, rounds - 1)
    return lambda spread: stats.paired_threshold(spread, rounds, z)


def median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def geometric_mean(values: list[float]) -> float | None:
    """A row's value where it has no ratio beside it (the first of its series): the same
    kind of number (stats.Comparison.mean_b) as the rows that have one."""
    x = np.asarray(values, dtype=float)
    return float(np.exp(np.log(x).mean())) if len(x) and (x > 0).all() else None


# edge: CLI --json out: compare --json
def to_json(tables: list[Table], metric: str) -> list[dict[str, Any]]:
    res = []
    for t in tables:
        rows = []
        for r in t.rows:
            c = r.vs_previous
            axis = {"value": r.label, **r.cell} if r.label is not None else {}
            rows.append(
                {
                    **axis,
                    "server": r.server_id,
                    "version_string": r.version_string,
                    "n": len(r.values),
                    "metric": metric,
                    "p95_latency_ms_median": median(r.latency),
                    "previous": r.previous,
                    # the ratio's own basis: the geometric means of the values it came
                    # from (the shared rounds when paired), ratio == mean / mean_previous
                    "n_previous": c.n_a if c else None,
                    "n_compared": c.n_b if c else None,
                    "mean_previous": c.mean_a if c else None,
                    "mean": c.mean_b if c else geometric_mean(r.values),
                    "ratio": c.ratio if c else None,
                    "ci_low": c.ci_low if c else None,
                    "ci_high": c.ci_high if c else None,
                    "p_value": c.p_value if c else None,
                    "threshold": c.threshold if c else None,
                    "verdict": c.verdict if c else None,
                    "paired": c.paired if c else None,
                    "rounds_needed": c.rounds_needed if c else None,
                }
            )
        head = {"axis": t.axis} if t.axis else {}
        res.append(
            {
                **head,
                "group": dict(t.key),
                "noise_cv": t.noise_cv,
                "aa_spread": t.aa_spread,
                "rows": rows,
            }
        )
    return res
