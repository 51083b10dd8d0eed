"""Release bisect: the first bad release between a good and a bad one, by halving.

`perftrack bisect GOOD BAD` lists the catalog's releases of GOOD's product from GOOD to
BAD in version order (`rules.parse_version`; equal versions keep catalog order), then
halves the range: each step compares the midpoint against GOOD with the until-conclusive
logic (`perftrack.experiments.conclude`, one budget per step). `regression` moves BAD down to the
midpoint; `unchanged` or `improvement` moves GOOD up to it; `inconclusive` stops the
bisect and reports the range the first bad release is still somewhere in.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from perftrack.core.errors import ConfigError
from perftrack.experiments import conclude
from perftrack.servers import rules
from perftrack.servers.catalog import Catalog, Entry


def releases(cat: Catalog, good: str, bad: str) -> list[Entry]:
    """GOOD, the releases between, and BAD, in version order (ConfigError if unusable)."""
    if good == bad:
        raise ConfigError(f"GOOD and BAD are both {good!r}: name two different releases")
    g, b = cat.get(good), cat.get(bad)
    if g.product != b.product:
        raise ConfigError(
            f"{good} is {g.product} but {bad} is {b.product}: bisect within one product"
        )
    gv, bv = rules.parse_version(g.version), rules.parse_version(b.version)
    if gv >= bv:
        raise ConfigError(
            f"GOOD ({good}, {g.version}) must be older than BAD ({bad}, {b.version}): "
            "perftrack bisect GOOD BAD"
        )
    order = {e.id: i for i, e in enumerate(cat.entries)}
    between = [
        e
        for e in cat.entries
        if e.product == g.product
        and e.id not in (good, bad)
        and gv <= rules.parse_version(e.version) <= bv
    ]
    between.sort(key=lambda e: (rules.parse_version(e.version), order[e.id]))
    return [g, *between, b]


def max_steps(n_releases: int) -> int:
    """Steps halving needs at most for a list of n (GOOD and BAD included)."""
    return math.ceil(math.log2(n_releases - 1)) if n_releases > 2 else 0


@dataclass
class Step:
    number: int
    candidate: str
    verdict: str
    outcome: conclude.Sequence


@dataclass
class BisectResult:
    releases: list[Entry]
    lo: int  # index of the newest release known good
    hi: int  # index of the oldest release known bad
    steps: list[Step] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.hi - self.lo == 1

    @property
    def first_bad(self) -> str | None:
        return self.releases[self.hi].id if self.found else None

    @property
    def machine_s(self) -> float:
        return sum(s.outcome.machine_s for s in self.steps)

    def summary(self) -> str:
        good, bad = self.releases[self.lo].id, self.releases[self.hi].id
        if self.found:
            return (
                f"first bad release: {bad} (last good: {good}); {len(self.steps)} step(s), "
                f"{self.machine_s / 60:.1f} min machine time"
            )
        left = ", ".join(e.id for e in self.releases[self.lo + 1 : self.hi + 1])
        return (
            f"not found: step {len(self.steps)} was inconclusive; the first bad release is "
            f"one of {left} (after {good}); {self.machine_s / 60:.1f} min machine time. "
            "Run again from there with a larger --step-budget, or a less noisy cell"
        )


def plan_lines(rel: list[Entry], step_budget_s: float) -> list[str]:
    """The `--dry-run` text: the releases and the halving plan."""
    lines = [f"{len(rel)} releases from {rel[0].id} (good) to {rel[-1].id} (bad):"]
    for i, e in enumerate(rel):
        role = " (good)" if i == 0 else " (bad)" if i == len(rel) - 1 else ""
        lines.append(f"  {i}. {e.id} {e.product} {e.version}{role}")
    steps = max_steps(len(rel))
    if steps == 0:
        lines.append(f"nothing to benchmark: {rel[-1].id} directly follows {rel[0].id}")
        return lines
    lines.append(
        f"plan: at most {steps} step(s), each ≤ {step_budget_s / 60:.1f} min "
        f"(≤ {steps * step_budget_s / 60:.1f} min in all); each compares the midpoint "
        f"against {rel[0].id} until conclusive"
    )
    lines += _tree(rel, 0, len(rel) - 1, 1, "")
    return lines


def _tree(rel: list[Entry], lo: int, hi: int, depth: int, indent: str) -> list[str]:
    if hi - lo <= 1:
        return [f"{indent}  -> first bad: {rel[hi].id}"]
    mid = (lo + hi) // 2
    out = [f"{indent}step {depth}: {rel[mid].id} vs {rel[0].id}"]
    out += [f"{indent}  regression:", *_tree(rel, lo, mid, depth + 1, indent + "    ")]
    out += [f"{indent}  unchanged:", *_tree(rel, mid, hi, depth + 1, indent + "    ")]
    return out


def halve_releases(
    rel: list[Entry],
    template: conclude.Request,
    runner_fn: Callable[[conclude.Request], conclude.Sequence],
    emit: Callable[[str], None],
) -> BisectResult:
    """Halve until the first bad release is found or a step stays inconclusive.

    `template` carries the cell and the per-step budget; `runner_fn` runs one
    until-conclusive comparison (conclude.run_rounds with the catalog, DB and run dir bound).
    """
    res = BisectResult(rel, 0, len(rel) - 1)
    good = rel[0].id
    while not res.found:
        mid = (res.lo + res.hi) // 2
        number = len(res.steps) + 1
        emit(f"== step {number}: {rel[mid].id} against {good} (range {_range(res)})")
        outcome = runner_fn(dataclasses.replace(template, a=good, b=rel[mid].id))
        res.steps.append(Step(number, rel[mid].id, outcome.verdict, outcome))
        if outcome.verdict == "regression":
            res.hi = mid
        elif outcome.verdict in ("unchanged", "improvement"):
            res.lo = mid
        else:
            break
    emit("path: " + " -> ".join(f"{s.candidate} {s.verdict}" for s in res.steps))
    emit(res.summary())
    return res


def _range(res: BisectResult) -> str:
    return f"{res.releases[res.lo].id} good .. {res.releases[res.hi].id} bad"


def bisect(
    cat: Catalog,
    good: str,
    bad: str,
    template: conclude.Request,
    config_dir: Path,
    db: Path,
    out_dir: Path,
    emit: Callable[[str], None],
    *,
    workroot: Path | None = None,
) -> BisectResult:
    """`perftrack bisect GOOD BAD` on real servers: releases, then halving."""
    rel = releases(cat, good, bad)
    conclude.validate(dataclasses.replace(template, a=good, b=bad), cat)
    for line in plan_lines(rel, template.budget_s)[: len(rel) + 1]:
        emit(line)

    def one(req: conclude.Request) -> conclude.Sequence:
        return conclude.run_rounds(req, cat, config_dir, db, out_dir, emit, workroot=workroot)

    return halve_releases(rel, template, one, emit)
