"""Axis comparisons: two values of one configuration axis on one server, from the DB.

`perftrack compare SERVER --axis charset --values latin1 utf8mb4` pairs the server's
results whose cells differ only in the named axis (same runner class, hardware,
workload, threads, data set, every other axis) and compares B against A with
`compare.versus`, the one verdict function: paired over the rounds (run and repeat) both
sides were measured in, unpaired otherwise. Bad input is refused with one line
(`ConfigError`), never answered with a verdict from mismatched data: an axis that does
not exist, a value no row has, sides that differ in more than the axis, a round of a run
that measured both sides with one side missing, a metric without values.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perftrack.analysis import compare
from perftrack.core.errors import ConfigError
from perftrack.store.store import Store

# A series_values row (store/queries/shapes.py ValueRow), read here by column name.
Values = Mapping[str, Any]

# axis -> the series columns its value sets (dataset_size sizes table_size with it)
AXES: dict[str, tuple[str, ...]] = {
    "charset": ("collation",),
    "profile": ("profile",),
    "durability": ("durability",),
    "isolation": ("isolation",),
    "engine": ("engine",),
    "handshake": ("handshake",),
    "dataset_size": ("dataset_size", "table_size"),
    "table_size": ("table_size",),
}
ALIASES = {"collation": "charset"}
UNSET = "default"  # an axis the cell did not set (the server's own default)


def canonical(axis: str) -> str:
    """The axis's name (`collation` is the charset axis); unknown: a one-line error."""
    name = ALIASES.get(axis, axis)
    if name not in AXES:
        known = ", ".join([*AXES, *ALIASES])
        raise ConfigError(f"unknown axis {axis!r}; axes: {known}")
    return name


def value_of(axis: str, values: Values) -> str:
    """A result row's value on the axis ("default" when the cell did not set it)."""
    v = values[AXES[axis][0]]
    return UNSET if v is None else str(v)


@dataclass(kw_only=True)
class AxisResult:
    axis: str
    server: str
    values: tuple[str, str]
    tables: list[compare.Table] = field(default_factory=list)
    one_sided: int = 0  # series of the server with only one of the two values: not compared


def _side(axis: str, values: tuple[str, str], row: Values, charset_of: dict[str, str]) -> int:
    """0 or 1: which value the row has; -1: neither. A charset value matches each of its
    collations; a collation named exactly wins over its charset."""
    own = value_of(axis, row)
    for i, v in enumerate(values):
        if own == v:
            return i
    if axis == "charset":
        for i, v in enumerate(values):
            if charset_of.get(own) == v:
                return i
    return -1


def tables(
    results: Store,
    server: str,
    axis: str,
    values: tuple[str, str],
    *,
    metric: str = "tps",
    run_id: str | None = None,
    noise: dict[Any, float] | None = None,
    spreads: dict[Any, float] | None = None,
) -> AxisResult:
    """Per series of `server` (everything but the axis equal), value B against value A."""
    axis = canonical(axis)
    if values[0] == values[1]:
        raise ConfigError(f"compare two different {axis} values, not {values[0]!r} with itself")
    col = compare.METRICS[metric][0]
    rows = results.series_values(col, run_id=run_id, servers=[server], recent=compare.RECENT_VALUES)
    if not rows:
        where = f"run {run_id}" if run_id else "the DB"
        raise ConfigError(
            f"no values of metric {metric!r} for server {server!r} in {where}: "
            "a metric needs results that measured it (see `perftrack compare --help`)"
        )
    charset_of = results.collation_charsets()
    sides: list[list[Values]] = [[], []]
    for d in rows:
        i = _side(axis, values, d, charset_of)
        if i >= 0:
            sides[i].append(d)
    for v, side in zip(values, sides, strict=True):
        if not side:
            have = sorted({value_of(axis, d) for d in rows})
            raise ConfigError(
                f"no result of {server} has {axis} {v!r}; its {axis} values: {', '.join(have)}"
            )
    fixed = fixed_columns(axis)
    groups: dict[tuple[Any, ...], list[list[Values]]] = defaultdict(lambda: [[], []])
    for i, side in enumerate(sides):
        for row in side:
            groups[tuple(row[c] for c in fixed)][i].append(row)
    both = {k: g for k, g in groups.items() if g[0] and g[1]}
    if not both:
        raise ConfigError(_differ(axis, values, server, fixed, sides))
    noise = results.noise_cv() if noise is None else noise
    spreads = results.noise_spread() if spreads is None else spreads
    out = AxisResult(axis=axis, server=server, values=values, one_sided=len(groups) - len(both))
    items = []
    for k, (da, db) in sorted(both.items(), key=lambda kv: tuple(map(str, kv[0]))):
        key = dict(zip(fixed, k, strict=True))
        _check_rounds(axis, values, server, key, da, db)
        items.append((values, key, (da, db)))
    out.tables = compared_all(axis, items, metric, noise, spreads)
    return out


def fixed_columns(axis: str) -> tuple[str, ...]:
    """The series columns both sides share: every one but those the axis sets."""
    return tuple(c for c in compare.GROUP_COLS if c not in AXES[axis])


Sides = tuple[Sequence[Values], Sequence[Values]]


def compared_all(
    axis: str,
    items: Sequence[tuple[tuple[str, str], dict[str, object], Sides]],
    metric: str,
    noise: dict[Any, float],
    spreads: dict[Any, float],
) -> list[compare.Table]:
    """Each item (the two values, `key`: the fixed columns, the two sides: `series_values`
    rows of one server, equal on `key`) as a table of two rows, B against A by
    compare.versus_all (the paired comparisons in one batch). The one path of every axis
    verdict: `compare --axis` and the site's charset page."""
    tables = []
    for values, key, sides in items:
        ra, rb = (_row(axis, v, ds) for v, ds in zip(values, sides, strict=True))
        t = compare.Table(key={**key, "server_id": ra.server_id}, rows=[ra, rb], axis=axis)
        nk = compare.noise_key(key, metric)
        t.noise_cv = noise.get(nk) or compare.group_cv(t.rows)
        t.aa_spread = spreads.get(nk)
        rb.previous = ra.label
        tables.append(t)
    higher = compare.METRICS[metric][1]
    pairs = [(t.rows[0], t.rows[1], t.noise_cv, higher, t.aa_spread) for t in tables]
    for t, c in zip(tables, compare.versus_all(pairs), strict=True):
        assert not isinstance(c, compare.Deferred)
        t.rows[1].vs_previous = c
    return tables


def _row(axis: str, value: str, side_values: Sequence[Values]) -> compare.Row:
    """One side as a compare row: its values, rounds, and the axis columns it has."""
    cells = {c: sorted({str(d[c]) for d in side_values}) for c in AXES[axis]}
    many = {c: v for c, v in cells.items() if len(v) > 1 and c != "table_size"}
    if many:
        c, v = next(iter(many.items()))
        raise ConfigError(
            f"{axis} {value!r} matches {len(v)} {c} values in one series ({', '.join(v)}): "
            f"name one of them"
        )
    d0 = side_values[0]
    r = compare.Row(
        server_id=d0["server_id"],
        product=d0["product"],
        version=d0["version"],
        version_string=d0["version_string"],
        values=[],
        latency=[],
    )
    for d in side_values:
        r.values.append(float(d["value"]))
        r.rounds.append((d["run_id"], d["round"]))
        if d["latency_pct_ms"] is not None:
            r.latency.append(float(d["latency_pct_ms"]))
    r.label = value
    r.cell = {c: d0[c] for c in AXES[axis]}
    return r


def _check_rounds(
    axis: str,
    values: tuple[str, str],
    server: str,
    key: dict[str, object],
    values_a: list[Values],
    values_b: list[Values],
) -> None:
    """In a run that measured both values, every round must have both: a round with one
    side missing (a failed cell) would pair the wrong values."""
    ra = {(d["run_id"], d["round"]) for d in values_a}
    rb = {(d["run_id"], d["round"]) for d in values_b}
    shared_runs = {r for r, _ in ra} & {r for r, _ in rb}
    for (run, rnd), have, miss in sorted(
        [(k, values[0], values[1]) for k in ra - rb] + [(k, values[1], values[0]) for k in rb - ra]
    ):
        if run in shared_runs:
            raise ConfigError(
                f"round {rnd} of run {run} has {axis} {have!r} but no {miss!r} value for "
                f"{server} ({key['workload']}, {key['threads']} threads): a failed or missing "
                "cell; choose a complete run with --run"
            )


def _differ(
    axis: str,
    values: tuple[str, str],
    server: str,
    fixed: tuple[str, ...],
    sides: list[list[Values]],
) -> str:
    """Why no series has both values: the columns (besides the axis) the sides differ in."""
    seen = [{c: {d[c] for d in side} for c in fixed} for side in sides]
    apart = [c for c in fixed if not seen[0][c] & seen[1][c]] or [
        c for c in fixed if seen[0][c] != seen[1][c]
    ]
    what = ", ".join(f"{c} ({_alts(seen[0][c])} vs {_alts(seen[1][c])})" for c in apart)
    return (
        f"the {values[0]!r} and {values[1]!r} results of {server} differ in more than "
        f"{axis}: {what}; nothing to compare"
    )


def _alts(values: set[Any]) -> str:
    return "/".join(sorted(map(str, values)))


# edge: CLI --json out: compare --axis --json
def to_json(res: AxisResult, metric: str) -> list[dict[str, Any]]:
    """compare.to_json's shape, each group with the axis and each row with its value."""
    return compare.to_json(res.tables, metric)
