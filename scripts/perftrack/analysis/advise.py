"""`perftrack advise --from VERSION`: what upgrading would change, from the measured pairs.

For every series shape the reader asks about (workload, threads, collation, profile, …)
and every newer release of the same product, the expected change of throughput and p95
latency against the reader's release, with a 95% interval and the verdict of the one rule
(`stats.verdict`):

- **direct** when one series (same hardware, runner class and cell) measured both
  releases: the comparison `perftrack compare` would make between them;
- **chained** otherwise, over the releases measured in between (A→M in one series, M→B in
  another of the same cell shape): log-ratios add, their interval half-widths and noise
  bands add in quadrature (independent measurements), and the result says which releases
  it went through. No path of measurements: the release is listed as not reachable.

The settings whose effective values changed on the way (the variables diff of each step,
values compared after normalisation: analysis/settings.py) come with each target, because
changed defaults explain many "regressions"; `release_steps` names each change once per
release step, however many series measured that step.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from perftrack.analysis import compare, settings, stats
from perftrack.core.errors import ConfigError
from perftrack.servers import rules

Z95 = NormalDist().inv_cdf(0.5 + stats.CONFIDENCE / 2)  # 1.96
# The cell fields that make a series shape across hardware and runner classes.
SHAPE_COLS = tuple(c for c in compare.GROUP_COLS if c not in ("hw_key", "runner_class"))
MAX_SETTINGS = 40  # changed settings listed per target (the full diff is in the verdicts)

VarsDiff = Callable[[dict[str, object], str, str], dict[str, list[Any]]]


@dataclass(frozen=True, kw_only=True)
class Estimate:
    """B against A on one metric, measured directly or chained over steps."""

    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    threshold: float
    verdict: str


@dataclass(kw_only=True)
class ReleaseAdvice:
    server: str
    version: str
    throughput: Estimate | None
    p95: Estimate | None
    via: list[str]  # releases in between when chained; [] when measured directly
    series: int  # how many series the estimate rests on
    settings: dict[str, list[Any]] = field(default_factory=dict)
    # the release steps of the path, each with the settings it changed
    steps: list[tuple[str, str, dict[str, list[Any]]]] = field(default_factory=list)

    @property
    def direct(self) -> bool:
        return not self.via


@dataclass
class SeriesAdvice:
    shape: dict[str, object]
    base: str
    targets: list[ReleaseAdvice]
    unreachable: list[str]  # newer releases measured in this shape but with no path


def _estimate(comparison: stats.Comparison | None) -> Estimate | None:
    if comparison is None:
        return None
    return Estimate(
        ratio=comparison.ratio,
        ci_low=comparison.ci_low,
        ci_high=comparison.ci_high,
        p_value=comparison.p_value,
        threshold=comparison.threshold,
        verdict=comparison.verdict,
    )


def _pairs(
    chosen: list[tuple[compare.Table, compare.Row, compare.Row]], metric: str
) -> list[tuple[Estimate | None, Estimate | None]]:
    """B against A in one series, as `compare` does it (paired over shared rounds), for the
    metric and for p95 latency (lower is better), of every (table, a, b) at once; the
    pooled CV of an unpaired latency pair is worked out only for such a pair."""
    higher = compare.METRICS[metric][1]
    main = compare.versus_all([(a, b, t.noise_cv, higher, t.aa_spread) for t, a, b in chosen])
    lat = [(_latency_row(a), _latency_row(b)) for _t, a, b in chosen]
    p95 = compare.versus_all([(la, lb, None, False, None) for la, lb in lat], defer_unpaired=True)
    out = []
    for m, (la, lb), q in zip(main, lat, p95, strict=True):
        if isinstance(q, compare.Deferred):  # unpaired: the pooled CV, for such a pair only
            q = compare.versus(la, lb, stats.cv(la.values + lb.values), False)
        assert not isinstance(m, compare.Deferred)
        out.append((_estimate(m), _estimate(q)))
    return out


def _latency_row(row: compare.Row) -> compare.Row:
    """The row with its p95 latencies as values (rounds kept only when every value has one)."""
    rounds = row.rounds if len(row.latency) == len(row.values) else []
    return dataclasses.replace(row, values=row.latency, rounds=rounds)


def chain(steps: list[Estimate], higher_is_better: bool) -> Estimate:
    """Steps A→M→…→B as one estimate: log-ratios add; interval half-widths (on the log
    scale) and noise bands add in quadrature; the p-value is the normal test of the sum."""
    logs = [math.log(s.ratio) for s in steps]
    halves = [(math.log(s.ci_high) - math.log(s.ci_low)) / 2 for s in steps]
    total = sum(logs)
    half = math.sqrt(sum(h * h for h in halves))
    band = math.sqrt(sum(math.log(1 - min(s.threshold, stats.MAX_THRESHOLD)) ** 2 for s in steps))
    threshold = max(stats.MIN_EFFECT, 1 - math.exp(-band))
    se = half / Z95
    p = 1.0 if se == 0 else 2 * (1 - NormalDist().cdf(abs(total) / se))
    lo, hi = math.exp(total - half), math.exp(total + half)
    ratio = math.exp(total)
    return Estimate(
        ratio=ratio,
        ci_low=lo,
        ci_high=hi,
        p_value=p,
        threshold=threshold,
        verdict=stats.verdict(ratio, lo, hi, p, threshold, higher_is_better),
    )


def resolve_base(tables: list[compare.Table], wanted: str) -> compare.Row:
    """The reader's release: a server id or a version with results; else a one-line error
    naming the releases that have results."""
    rows = {r.server_id: r for t in tables for r in t.rows}
    if wanted in rows:
        return rows[wanted]
    by_version = [r for r in rows.values() if r.version == wanted]
    if len(by_version) == 1:
        return by_version[0]
    known = sorted(rows, key=lambda s: (rows[s].product, rules.parse_version(rows[s].version)))
    if len(by_version) > 1:
        raise ConfigError(
            f"version {wanted} is more than one server "
            f"({', '.join(r.server_id for r in by_version)}): give the server id"
        )
    raise ConfigError(
        f"no results of '{wanted}': advise starts from a release with results; "
        f"known: {', '.join(known) or 'none (run and ingest a benchmark first)'}"
    )


def advise(
    tables: list[compare.Table],
    base: str,
    metric: str = "tps",
    vars_diff: VarsDiff | None = None,
    measured: dict[tuple[Any, ...], Measured] | None = None,
) -> list[SeriesAdvice]:
    """SeriesAdvice per series shape that measured the reader's release `base` (server id or
    version), for every newer release of its product reachable over measured pairs.
    `measured`: a cache of each shape's compared pairs, for callers advising from many
    releases over the same tables (the site), so each pair is compared once."""
    start = resolve_base(tables, base)
    higher = compare.METRICS[metric][1]
    shapes: dict[tuple[Any, ...], list[compare.Table]] = defaultdict(list)
    for t in tables:
        shapes[tuple(t.key[c] for c in SHAPE_COLS)].append(t)
    out = []
    for shape_key, ts in sorted(shapes.items(), key=lambda kv: tuple(map(str, kv[0]))):
        if not any(r.server_id == start.server_id for t in ts for r in t.rows):
            continue
        cache = {} if measured is None else measured
        if shape_key not in cache:
            cache[shape_key] = _measured_pairs(ts, metric)
        shape = dict(zip(SHAPE_COLS, shape_key, strict=True))
        out.append(_advise_shape(shape, cache[shape_key], start, higher, vars_diff))
    if not out:
        raise ConfigError(f"no series measured {start.server_id} with the cell options given")
    return out


Pair = tuple[Estimate | None, Estimate | None, compare.Table, int]  # main, p95, table, n


@dataclass
class Measured:
    """Every pair of releases one series shape measured together: (a, b) -> b against a, from
    the series with the most values per side; and each release's row."""

    pairs: dict[tuple[str, str], Pair]
    rows: dict[str, compare.Row]


def _measured_pairs(tables: list[compare.Table], metric: str) -> Measured:
    chosen: dict[tuple[str, str], tuple[compare.Table, compare.Row, compare.Row, int]] = {}
    rows: dict[str, compare.Row] = {}
    for t in tables:
        for a in t.rows:
            rows.setdefault(a.server_id, a)
            for b in t.rows:
                if a.server_id == b.server_id or a.product != b.product:
                    continue
                n = min(len(a.values), len(b.values))
                old = chosen.get((a.server_id, b.server_id))
                if old is None or n > old[3]:  # the series with the most values per side
                    chosen[(a.server_id, b.server_id)] = (t, a, b, n)
    got = _pairs([(t, a, b) for t, a, b, _n in chosen.values()], metric)
    pairs: dict[tuple[str, str], Pair] = {
        k: (main, p95, t, n)
        for (k, (t, _a, _b, n)), (main, p95) in zip(chosen.items(), got, strict=True)
    }
    return Measured(pairs, rows)


def _advise_shape(
    shape: dict[str, object],
    measured: Measured,
    start: compare.Row,
    higher: bool,
    vars_diff: VarsDiff | None,
) -> SeriesAdvice:
    pairs, rows = measured.pairs, measured.rows

    def newer(row: compare.Row) -> bool:
        return row.product == start.product and rules.parse_version(
            row.version
        ) > rules.parse_version(start.version)

    targets, unreachable = [], []
    for sid in sorted(
        (s for s, r in rows.items() if newer(r)), key=lambda s: rules.parse_version(rows[s].version)
    ):
        path = _path(pairs, start.server_id, sid)
        if path is None:
            unreachable.append(sid)
            continue
        steps = [pairs[(x, y)] for x, y in itertools.pairwise(path)]
        if any(s[0] is None for s in steps):
            unreachable.append(sid)
            continue
        if len(steps) == 1:
            main, p95 = steps[0][0], steps[0][1]
        else:
            main = chain([s[0] for s in steps if s[0] is not None], higher)
            p95s = [s[1] for s in steps]
            p95 = chain([s for s in p95s if s is not None], False) if all(p95s) else None
        changes: dict[str, list[Any]] = {}
        step_changes = []
        if vars_diff is not None:
            for (x, y), s in zip(itertools.pairwise(path), steps, strict=True):
                diff = vars_diff(s[2].key, x, y)
                step_changes.append((x, y, dict(sorted(settings.changed(diff).items()))))
                for name, (old, new) in diff.items():
                    if name in changes:
                        changes[name][1] = new  # changed again later on the way
                    else:
                        changes[name] = [old, new]
            changes = dict(sorted(settings.changed(changes).items()))
        targets.append(
            ReleaseAdvice(
                server=sid,
                version=rows[sid].version,
                throughput=main,
                p95=p95,
                via=path[1:-1],
                series=len({id(s[2]) for s in steps}),
                settings=dict(list(changes.items())[:MAX_SETTINGS]),
                steps=step_changes,
            )
        )
    return SeriesAdvice(shape, start.server_id, targets, unreachable)


@dataclass(frozen=True, kw_only=True)
class Step:
    """One release step (a measured pair on some path) and the settings it changed, each
    named once: {name: [[old, new], …]} (more than one pair of values when the series
    that measured the step had different values, e.g. another profile)."""

    a: str
    b: str
    version: str  # b's
    changes: dict[str, list[list[Any]]]
    series: int  # series shapes whose advice went through this step


def release_steps(advice: list[SeriesAdvice]) -> list[Step]:
    """Every release step of the advice, in release order, its settings changes merged
    over the series shapes (values that mean the same already left out)."""
    found: dict[tuple[str, str], dict[str, list[list[Any]]]] = {}
    shapes: dict[tuple[str, str], set[int]] = defaultdict(set)
    versions: dict[str, str] = {}
    for i, a in enumerate(advice):
        for t in a.targets:
            versions[t.server] = t.version
            for x, y, diff in t.steps:
                step = found.setdefault((x, y), {})
                shapes[(x, y)].add(i)
                for name, values in diff.items():
                    seen = step.setdefault(name, [])
                    if not any(
                        settings.same(v[0], values[0]) and settings.same(v[1], values[1])
                        for v in seen
                    ):
                        seen.append(list(values))
    out = [
        Step(
            a=x,
            b=y,
            version=versions.get(y, ""),
            changes=dict(sorted(changes.items())),
            series=len(shapes[(x, y)]),
        )
        for (x, y), changes in found.items()
    ]
    return sorted(out, key=lambda s: (rules.parse_version(s.version), s.a))


def _path(pairs: dict[tuple[str, str], Any], start: str, end: str) -> list[str] | None:
    """The shortest chain of measured pairs from a to b (direct when measured together)."""
    if (start, end) in pairs:
        return [start, end]
    nxt: dict[str, list[str]] = defaultdict(list)
    for x, y in pairs:
        nxt[x].append(y)
    seen, queue = {start: [start]}, deque([start])
    while queue:
        cur = queue.popleft()
        for y in sorted(nxt[cur]):
            if y not in seen:
                seen[y] = [*seen[cur], y]
                if y == end:
                    return seen[y]
                queue.append(y)
    return None


# edge: CLI --json out: advise --json
def to_json(advice: list[SeriesAdvice], metric: str) -> list[dict[str, Any]]:
    # edge: CLI --json out: advise --json
    def est(estimate: Estimate | None) -> dict[str, Any] | None:
        return None if estimate is None else dict(estimate.__dict__)

    return [
        {
            "shape": a.shape,
            "from": a.base,
            "metric": metric,
            "targets": [
                {
                    "server": t.server,
                    "version": t.version,
                    "throughput": est(t.throughput),
                    "p95": est(t.p95),
                    "direct": t.direct,
                    "via": t.via,
                    "series": t.series,
                    "settings": t.settings,
                    "steps": [[x, y] for x, y, _ in t.steps],
                }
                for t in a.targets
            ],
            "unreachable": a.unreachable,
        }
        for a in advice
    ]
