"""The report of a study's run: our ratios next to the article's published ones.

The report reads a run's records (no DB needed), or, with no run directory, the results
DB's records of the study's own cells (what the study page shows), and prints, per comparison:

- `version`: new/base speed at the same workload, threads and axes;
- `charset`: baseline collation / each collation, per role (article 000);
- `durability`: baseline durability / each durability, per role (article 001's
  sync_binlog finding).

Our ratios come from compare.versus, the verdicts' one function (paired over the rounds
both sides share, as `perftrack compare --axis` for the axis comparisons); the article's
`seconds` values (mysqlslap) are turned into speeds (1/seconds) so every ratio reads
"> 1: the numerator is faster". Every row, claim and finding is graded by the one rule,
analysis/grading.py; a row with a side measured on another product's stand-in (a study's
`Player`) is shown for its direction only, never graded.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perftrack.analysis import compare, grading, stats
from perftrack.analysis.medians import ratio_of_medians
from perftrack.core.errors import ConfigError
from perftrack.planning.study import AXIS_OF, Claim, Player, Study
from perftrack.publish.study_runs import read_records, run_status
from perftrack.servers import rules

# The cell fields a reference row is matched on (configs/studies/reference/README.md).
MATCH = (
    "workload",
    "threads",
    "collation",
    "engine",
    "durability",
    "handshake",
    "dataset_size",
    "phase",
    "isolation",
    "profile",
)
UNITS = {"tps": True, "qps": True, "seconds": False}  # unit -> higher is better
LABEL_WIDTH = 78  # the longest cell label of the two article studies


Key = tuple[Any, ...]  # MATCH values


@dataclass(kw_only=True)
class Side:
    """Speeds per (role, key): ours (qps of every ok repeat) and the article's."""

    ours: dict[tuple[str, Key], list[float]] = field(default_factory=dict)
    # (run_id, repeat) of each of `ours`' values: values of one round are a pair
    rounds: dict[tuple[str, Key], list[tuple[str, int]]] = field(default_factory=dict)
    article: dict[tuple[str, Key], float] = field(default_factory=dict)
    # our profile -> the article's it stands in for (the study's `stand_in_profiles`)
    profile_alias: dict[str, str] = field(default_factory=dict)
    # (role, key) -> the key as the matrix asked for it: a bare charset axis value
    # (`utf8mb4`: each server's default collation) in place of the collation it resolved
    # to, so a version comparison pairs MySQL's utf8mb4_0900_ai_ci with MariaDB's (or MySQL
    # 5.7's) utf8mb4_general_ci as the article did
    asked: dict[tuple[str, Key], Key] = field(default_factory=dict)


def _norm(value: Any) -> Any:
    return None if value in ("", None) else value


def _key(row: dict[str, Any]) -> Key:
    return tuple(int(row[k]) if k == "threads" else _norm(row.get(k)) for k in MATCH)


def read_reference(study: Study) -> dict[tuple[str, Key], float]:
    """The article's speeds by (role, key); `seconds` become 1/seconds."""
    by_version = {study.roles[r]["article"]: r for r in study.role_names}
    out: dict[tuple[str, Key], float] = {}
    with study.reference.open(newline="") as fh:
        for n, row in enumerate(csv.DictReader(fh), 2):
            role = by_version.get(row.get("version", ""))
            if role is None:
                continue
            unit = row.get("unit", "")
            if unit not in UNITS:
                raise ConfigError(f"{study.reference}:{n}: unit must be one of {', '.join(UNITS)}")
            value = float(row["value"])
            out[(role, _key(row))] = value if UNITS[unit] else 1.0 / value
    return out


def collect(study: Study, scale: str, recs: Iterable[dict[str, Any]]) -> tuple[Side, list[str]]:
    side = Side(article=read_reference(study), profile_alias=dict(study.stand_in_profiles or {}))
    role_of = study.role_of_server(scale)
    charsets = {c for m in study.matrices(scale) for c in m.charsets}
    ci = MATCH.index("collation")
    skipped: list[str] = []
    for rec in recs:
        role = role_of.get(rec["server"]["id"])
        if role is None:
            continue
        if rec["status"] != "ok":
            c = rec["cell"]
            skipped.append(
                f"{rec['status']}: {rec['server']['id']} {c['workload']} {c['collation']} "
                f"t={c['threads']}: {rec['reason']}"
            )
            continue
        k = (role, _key(rec["cell"]))
        coll = k[1][ci]
        if coll and coll not in charsets and rules.charset_of(coll) in charsets:
            side.asked[k] = (*k[1][:ci], rules.charset_of(coll), *k[1][ci + 1 :])
        side.ours.setdefault(k, []).append(float(rec["result"]["qps"]))
        side.rounds.setdefault(k, []).append((rec["run_id"], int(rec["cell"].get("repeat") or 0)))
    return side, sorted(set(skipped))


# Fields a reference row may leave empty, meaning "not an axis of the article" (collation
# in article 001) or "the release's default" (durability): tried exact first.
OPTIONAL_MATCH = ("collation", "durability")
# Axes no reference file has a column for yet (the article's value is the setting it
# describes): our cells with them set are compared with the article's plain rows.
UNREFERENCED = ("handshake", "dataset_size", "phase", "isolation", "profile")


def _article(side: Side, role: str, key: Key, keep: str = "") -> float | None:
    """The article's speed for the key, allowing the reference's empty optional fields
    (except `keep`: the field an axis comparison varies must match exactly); a stand-in
    profile is looked up as the profile it stands in for."""
    pi = MATCH.index("profile")
    key = tuple(side.profile_alias.get(v, v) if i == pi else v for i, v in enumerate(key))
    for extra in ((), UNREFERENCED):
        for optional in ((), ("durability",), ("collation",), OPTIONAL_MATCH):
            blank = (*optional, *extra)
            if keep in blank:
                continue
            k = tuple(None if MATCH[i] in blank else v for i, v in enumerate(key))
            hit = side.article.get((role, k))
            if hit is not None:
                return hit
    return None


def _ratio(base: float | None, new: float | None) -> float | None:
    return base / new if base is not None and new else None


def _interval(side: Side, num: tuple[str, Key], den: tuple[str, Key]) -> stats.Comparison | None:
    """num/den by the one verdict function, compare.versus (as `perftrack compare`, and
    `compare --axis` for a configuration against another on one server): paired over the
    rounds both were measured in (per-round ratios), else the ratio of geometric means
    with a Welch t on the logs; None with fewer than two repeats on a side."""
    if not side.ours.get(num) or not side.ours.get(den):
        return None
    a, b = (_row(side, k) for k in (den, num))
    return compare.versus(a, b, compare.group_cv([a, b]), True)


def _row(side: Side, server_key: tuple[str, Key]) -> compare.Row:
    return compare.Row(
        server_id=server_key[0],
        product="",
        version="",
        version_string=None,
        values=side.ours[server_key],
        latency=[],
        rounds=side.rounds.get(server_key, []),
    )


@dataclass(frozen=True, kw_only=True)
class ReportRow:
    comparison: str
    label: str
    ours: float | None
    n: tuple[int, int]
    article: float | None
    interval: stats.Comparison | None = None  # our ratio's 95% interval and test
    cell: Key = ()  # the cell's MATCH values (the axis comparison's: the other value's)
    # its sides that ran on another product's stand-in: "MariaDB 10.2.11 for MySQL 5.7"
    stand_ins: tuple[str, ...] = ()

    @property
    def sure(self) -> bool:
        """Our ratio is outside the noise (grading.outside_noise)."""
        return grading.outside_noise(self.interval)

    @property
    def grade(self) -> grading.Grade:
        """The row against the article's ratio, by the one rule."""
        return grading.grade(self.ours, self.interval, self.article, stand_ins=self.stand_ins)


def _stand_ins(players: dict[str, Player], *roles: str) -> tuple[str, ...]:
    """The roles' players that are another product's stand-ins, in words."""
    return tuple(
        dict.fromkeys(players[r].label for r in roles if r in players and players[r].cross_product)
    )


def rows(study: Study, side: Side, players: dict[str, Player]) -> list[ReportRow]:
    """The report's rows; `players` (planning.study.players) says which of their sides are
    another product's stand-ins."""
    out: list[ReportRow] = []
    keys = sorted({k for _, k in side.ours}, key=_order)
    if "version" in study.comparisons:
        b = study.base_role
        # each role's cells by the key the matrix asked for (a bare charset: each server's
        # default collation), so two servers with different defaults still pair
        mine = {(r, side.asked.get((r, k), k)): k for r, k in side.ours}
        asked = sorted({a for _, a in mine}, key=_order)
        for role in study.role_names[1:]:
            name = (
                "version"
                if len(study.roles) == 2
                else f"version {_who(study, role)} / {_who(study, b)}"
            )
            for a in asked:
                nk, bk = mine.get((role, a)), mine.get((b, a))
                new = side.ours.get((role, nk)) if nk else None
                base = side.ours.get((b, bk)) if bk else None
                if new is None and base is None:
                    continue
                c = _interval(side, (role, nk), (b, bk)) if nk and bk else None
                cell = nk or bk or a
                out.append(
                    ReportRow(
                        comparison=name,
                        label=_label(cell) if not (nk and bk) or nk == bk else _defaults(a, nk, bk),
                        ours=c.ratio if c else ratio_of_medians(new, base),
                        n=(len(new or []), len(base or [])),
                        article=_ratio(_article(side, role, cell), _article(side, b, bk or cell)),
                        interval=c,
                        cell=cell,
                        stand_ins=_stand_ins(players, role, b),
                    )
                )
    for comparison in (c for c in study.comparisons if c in AXIS_OF):
        out += _axis_rows(study, side, keys, comparison, players)
    return out


def _axis_rows(
    study: Study, side: Side, keys: list[Key], comparison: str, players: dict[str, Player]
) -> list[ReportRow]:
    """baseline / value of one axis, per role, everything else equal."""
    field_name = AXIS_OF[comparison]
    ai, baselines = MATCH.index(field_name), study.baseline(comparison)
    out = []
    for role in study.role_names:
        for k in keys:
            if k[ai] is None or k[ai] in baselines:
                continue
            candidates = [(*k[:ai], b, *k[ai + 1 :]) for b in baselines]
            base_k = next((c for c in candidates if (role, c) in side.ours), candidates[0])
            baseline = base_k[ai]
            num, den = side.ours.get((role, base_k)), side.ours.get((role, k))
            if num is None and den is None:
                continue
            article = _ratio(
                _article(side, role, base_k, keep=field_name),
                _article(side, role, k, keep=field_name),
            )
            c = _interval(side, (role, base_k), (role, k))  # the axis comparison's verdict
            out.append(
                ReportRow(
                    comparison=f"{comparison} {_who(study, role)}",
                    label=f"{baseline} / {_label(k)}",
                    ours=c.ratio if c else ratio_of_medians(num, den),
                    n=(len(num or []), len(den or [])),
                    article=article,
                    interval=c,
                    cell=k,
                    stand_ins=_stand_ins(players, role),
                )
            )
    return out


def _order(key: Key) -> tuple[str, ...]:
    return tuple(str(x) for x in key)


def _defaults(asked: Key, new: Key, base: Key) -> str:
    """A version row whose two servers resolved the asked charset to their own defaults."""
    ci = MATCH.index("collation")
    return f"{_label(asked)} (defaults: {new[ci]} / {base[ci]})"


def _who(study: Study, role: str) -> str:
    return f"{role} ({study.roles[role]['article']})"


def _label(key: Key) -> str:
    """The cell in words; the default profile goes without saying."""
    return " ".join(
        f"{MATCH[i]}={v}"
        for i, v in enumerate(key)
        if v is not None and not (MATCH[i] == "profile" and v == "default")
    )


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def render(
    study: Study,
    scale: str,
    run_dirs: Path | list[Path],
    emit: Callable[[str], None],
    players: dict[str, Player],
    *,
    records: list[dict[str, Any]] | None = None,
    source: str = "",
) -> list[ReportRow]:
    """Print the report; return its rows (for tests and callers). `players`: the scale's
    (planning.study.players). With `records` (the DB's, already kept to the study's cells:
    `db_records`) no run directory is read and `source` says where they came from."""
    dirs = [run_dirs] if isinstance(run_dirs, Path) else run_dirs
    side, skipped = collect(study, scale, read_records(dirs) if records is None else records)
    table = rows(study, side, players)
    emit(f"study {study.name}: {study.title}")
    if records is None:
        runs = ", ".join(f"{d.name} ({run_status(d)})" for d in dirs)
        emit(f"scale {scale}, run {runs}; reference {study.reference.name}")
    else:
        emit(f"scale {scale}, {source}; reference {study.reference.name}")
    for line in role_lines(players):
        emit(f"  {line}")
    if scale != "full" and study.local_notes:
        emit(f"  local scale: {study.local_notes}")
    emit(
        "ratios: > 1 means the numerator is faster (ours: qps, as `perftrack compare` "
        "computes it: the per-round ratios' geometric mean with a paired t 95% interval where "
        "both sides share rounds, else the ratio of geometric means with a Welch t interval; * = "
        "outside the noise: interval excludes 1 and the test p < 0.05; a ratio without * "
        "may be this machine's noise)"
    )
    emit(f"grades: {RULE}")
    current = None
    for r in table:
        if r.comparison != current:
            current = r.comparison
            head = "new / base" if r.comparison.startswith("version") else "baseline / other value"
            emit(f"[{r.comparison}] {head}")
            emit(
                f"  {'cells':<{LABEL_WIDTH}} {'ours':>7}  {'95% interval':<15} {'n':>5} "
                f"{'article':>8}  grade"
            )
        ci = r.interval
        span = f"[{ci.ci_low:.3f}, {ci.ci_high:.3f}]" if ci else "—"
        emit(
            f"  {r.label:<{LABEL_WIDTH}} {_fmt(r.ours):>7}{'*' if r.sure else ' '} {span:<15} "
            f"{r.n[0]}/{r.n[1]:<3} {_fmt(r.article):>8}  {r.grade.text}"
        )
    if "charset" in study.comparisons:
        for line in charset_findings(study, table, side, players):
            emit(line)
    for check in claim_checks(study, table):
        emit(check.line())
    if skipped:
        emit(f"not measured ({len(skipped)}):")
        for s in skipped:
            emit(f"  {s}")
    return table


# The one rule in words (analysis/grading.py), printed with every report and on the pages.
RULE = (
    f"{grading.AGREES} = on the article's side of 1, outside the noise, and the effects "
    f"(|ln ratio|) within {grading.MAGNITUDE_FACTOR:g}x of each other; "
    f"{grading.MAGNITUDE_DIFFERS} = on its side, outside the noise, effects more than "
    f"{grading.MAGNITUDE_FACTOR:g}x apart; {grading.DISAGREES} = on the other side, outside "
    f"the noise; {grading.NOT_SHOWN}; 'stand-in: X for Y — direction only' = a side ran on "
    "another product's server standing in for the article's: not graded"
)


def role_lines(players: dict[str, Player]) -> list[str]:
    """Each role's player in words: the server, whether it is the article's, and why."""
    out = []
    for p in players.values():
        why = f" — {p.why}" if p.stand_in and p.why else ""
        out.append(f"{p.role}: article {p.system} -> here {p.server} ({p.label}): {p.kind}{why}")
    return out


@dataclass(frozen=True)
class ClaimCheck:
    """An article's claim in words, graded on our rows by the one rule: `up_to` by our
    most extreme graded row (in the claim's direction) against the article's figure,
    `above` / `below` by every graded row's side of 1 (grading.every). Rows measured on
    another product's stand-in are shown, not graded."""

    claim: Claim
    rows: list[ReportRow]

    def _row_grade(self, row: ReportRow) -> grading.Grade:
        c = self.claim
        if c.kind == "up_to":
            return grading.grade(row.ours, row.interval, c.value, stand_ins=row.stand_ins)
        direction = 1 if c.kind == "above" else -1
        return grading.grade(
            row.ours, row.interval, None, direction=direction, stand_ins=row.stand_ins
        )

    @property
    def grade(self) -> grading.Grade:
        c = self.claim
        measured = [r for r in self.rows if r.ours is not None]
        graded = [r for r in measured if not r.stand_ins]
        if c.kind == "up_to" and graded:
            pick = max if c.value >= 1 else min
            return self._row_grade(pick(graded, key=lambda r: r.ours or 0.0))
        return grading.every([self._row_grade(r) for r in measured])

    def line(self) -> str:
        c = self.claim
        want = {
            "up_to": f"up to {c.value:.2f}",
            "above": f"> {c.value:g}",
            "below": f"< {c.value:g}",
        }
        values = [r.ours for r in self.rows if r.ours is not None]
        if not values:
            return f"claim: {c.text} — article: {want[c.kind]}; ours: no data"
        tally = grading.tally([self._row_grade(r) for r in self.rows if r.ours is not None])
        return (
            f"claim: {c.text} — article: {want[c.kind]}; ours: {min(values):.3f}–"
            f"{max(values):.3f} over {len(values)} rows ({tally}): {self.grade.text}"
        )


def _claim_cell(claim: Claim, cell: Key) -> bool:
    """The cell matches every `where` field: its value starts with one of the claim's."""
    values = dict(zip(MATCH, cell, strict=True)) if cell else {}
    return all(
        field in values and any(str(values[field] or "").startswith(v) for v in wanted)
        for field, wanted in claim.where
    )


def claim_checks(study: Study, table: list[ReportRow]) -> list[ClaimCheck]:
    out = []
    for c in study.claims:
        mine = [r for r in table if r.comparison.startswith(c.rows) and _claim_cell(c, r.cell)]
        out.append(ClaimCheck(c, mine))
    return out


def charset_findings(
    study: Study, table: list[ReportRow], side: Side, players: dict[str, Player]
) -> list[str]:
    """Article 000's two directional findings, per role, graded by the one rule: the
    baseline collation faster than each utf8mb4 collation (every row: grading.every), and
    unicode_ci slower than general_ci (against the article's own ratio where it has one)."""
    out = []
    ci = MATCH.index("collation")
    for role in study.role_names:
        mine = [r for r in table if r.comparison.startswith(f"charset {role} ") and r.ours]
        if not mine:
            continue
        who = f"{role}, {players[role].label}" if role in players else role
        grades = [
            grading.grade(r.ours, r.interval, None, direction=1, stand_ins=r.stand_ins)
            for r in mine
        ]
        out.append(
            f"finding ({who}): {study.baseline_collation} faster than the utf8mb4 collation "
            f"— {len(mine)} rows ({grading.tally(grades)}): {grading.every(grades).text}"
        )
        for r, k in sorted(side.ours, key=str):
            if r != role or k[ci] != "utf8mb4_unicode_ci":
                continue
            gen_k = (role, (*k[:ci], "utf8mb4_general_ci", *k[ci + 1 :]))
            if not side.ours.get(gen_k):
                continue
            c = _interval(side, gen_k, (role, k))  # general_ci speed / unicode_ci speed
            if c is None:
                continue
            article = _ratio(
                _article(side, role, gen_k[1], keep="collation"),
                _article(side, role, k, keep="collation"),
            )
            g = grading.grade(c.ratio, c, article, direction=1, stand_ins=_stand_ins(players, role))
            where = _label(tuple(None if i == ci else v for i, v in enumerate(k)))
            out.append(
                f"finding ({who}): unicode_ci slower than general_ci ({where}: "
                f"general_ci/unicode_ci = {c.ratio:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}], "
                f"article {_fmt(article)}): {g.text}"
            )
    return out
