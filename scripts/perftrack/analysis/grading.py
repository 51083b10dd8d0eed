"""Grading: the one rule for how one of our ratios stands against an article's.

`perftrack study report` and the site's study pages grade every row, every claim and
every finding of every study with `grade` (and `every` for a claim every one of several
rows must hold), so a verdict reads the same in each study and on each page. The outcomes,
in these exact words:

- ``agrees``: our ratio is on the article's side of 1, outside the noise, and the two
  effects are within MAGNITUDE_FACTOR of each other;
- ``magnitude differs``: on the article's side and outside the noise, but the effects are
  more than MAGNITUDE_FACTOR apart (or the article saw no difference at all);
- ``disagrees``: on the other side of 1, outside the noise;
- ``not shown (within the noise)``: our ratio could be this machine's noise (`outside_noise`);
- ``stand-in: MariaDB 10.2.11 for MySQL 5.7 — direction only``: a side of the row ran on
  another product's server standing in for the article's system; a claim about one
  product is graded only from that product's results, so such a row is never graded,
  its number is read for its direction only.

Ratios read "> 1: the numerator is faster" on both sides (publish/study_report.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from perftrack.analysis import stats

AGREES = "agrees"
MAGNITUDE_DIFFERS = "magnitude differs"
DISAGREES = "disagrees"
NOT_SHOWN = "not shown (within the noise)"
OUTCOMES = (AGREES, MAGNITUDE_DIFFERS, DISAGREES, NOT_SHOWN)  # the graded ones
STAND_IN = "stand-in"  # not graded: a side ran on another product's stand-in
NOT_GRADED = "—"  # nothing to grade: no measurement, or the article gives no figure

# How far apart the two effects may be and still agree: the effect is |ln(ratio)|, the
# ratio's distance from 1 on the log scale (a 2x speed-up and a 2x slow-down are the same
# size), and ours agrees when the larger effect is at most MAGNITUDE_FACTOR times the
# smaller. Why 2: the articles ran other hardware, dataset sizes, run lengths and thread
# counts (a local scale: a 2-core VM, seconds-long cells, tiny tables), so the same cause
# moves throughput by a different amount here; what must carry over is the effect's order
# of magnitude, not its digits. Against an article's 1.40 it accepts 1.18-1.96; against
# 0.117 (8.5x slower) 0.34-0.014; it tells a 10% effect from a 40% one (ln 1.10 = 0.095,
# ln 1.40 = 0.336: 3.5x apart) and a 10% one from an 8.5x drop (23x apart).
MAGNITUDE_FACTOR = 2.0


@dataclass(frozen=True)
class Grade:
    outcome: str  # one of OUTCOMES, STAND_IN or NOT_GRADED
    stand_ins: tuple[str, ...] = ()  # STAND_IN: the sides, "MariaDB 10.2.11 for MySQL 5.7"

    @property
    def graded(self) -> bool:
        return self.outcome in OUTCOMES

    @property
    def text(self) -> str:
        """The words the report and the site show."""
        if self.outcome == STAND_IN:
            return f"stand-in: {', '.join(self.stand_ins)} — direction only"
        return self.outcome


def outside_noise(comparison: stats.Comparison | None) -> bool:
    """The ratio differs from 1 beyond the noise: its own 95% interval excludes 1 and the
    test agrees (p < 0.05: the paired t-test over shared rounds, else Mann-Whitney).
    Anything else could be the machine's noise."""
    return (
        comparison is not None
        and comparison.p_value < stats.ALPHA
        and (comparison.ci_low > 1 or comparison.ci_high < 1)
    )


def effect(ratio: float) -> float:
    """The effect's size: |ln(ratio)|."""
    return abs(math.log(ratio))


def magnitude_within(ours: float, article: float, factor: float = MAGNITUDE_FACTOR) -> bool:
    """The two effects are at most `factor` apart (both nil counts as equal)."""
    small, large = sorted((effect(ours), effect(article)))
    return large <= factor * small


def _side(ratio: float) -> int:
    return (ratio > 1) - (ratio < 1)


def grade(
    ours: float | None,
    interval: stats.Comparison | None,
    article: float | None,
    *,
    direction: int | None = None,
    stand_ins: Sequence[str] = (),
) -> Grade:
    """The one rule. `ours`: our ratio (None: not measured); `interval`: its 95% interval
    and test (None: too few repeats for one, so never outside the noise); `article`: the
    article's ratio, whose size is checked too; or, when the article states only which
    side is faster, `direction` (+1: the numerator, -1: the denominator) and no `article`.
    `stand_ins`: the row's sides that ran on another product's server."""
    if ours is None:
        return Grade(NOT_GRADED)
    if stand_ins:
        return Grade(STAND_IN, tuple(dict.fromkeys(stand_ins)))
    want = _side(article) if article is not None else direction
    if want is None:
        return Grade(NOT_GRADED)
    if not outside_noise(interval):
        return Grade(NOT_SHOWN)
    if want == 0:  # the article measured no difference; ours is beyond the noise
        return Grade(MAGNITUDE_DIFFERS)
    if _side(ours) != want:
        return Grade(DISAGREES)
    if article is not None and not magnitude_within(ours, article):
        return Grade(MAGNITUDE_DIFFERS)
    return Grade(AGREES)


def every(grades: Sequence[Grade]) -> Grade:
    """A claim every one of several rows must hold (`above`, `below`): graded from the
    rows that are graded (stand-in rows are not); it disagrees if one row does, differs in
    magnitude if one row does, agrees if all do, and is not shown otherwise."""
    graded = [g for g in grades if g.graded]
    if not graded:
        return _stand_ins(grades)
    for outcome in (DISAGREES, MAGNITUDE_DIFFERS):
        if any(g.outcome == outcome for g in graded):
            return Grade(outcome)
    return Grade(AGREES) if all(g.outcome == AGREES for g in graded) else Grade(NOT_SHOWN)


def _stand_ins(grades: Sequence[Grade]) -> Grade:
    sides = tuple(dict.fromkeys(s for g in grades for s in g.stand_ins))
    return Grade(STAND_IN, sides) if sides else Grade(NOT_GRADED)


def tally(grades: Sequence[Grade]) -> str:
    """How many rows came out each way: "2 agrees, 1 not shown (within the noise)"."""
    counts = {o: sum(1 for g in grades if g.outcome == o) for o in (*OUTCOMES, STAND_IN)}
    words = {STAND_IN: "stand-in (direction only)"}
    return ", ".join(f"{n} {words.get(o, o)}" for o, n in counts.items() if n) or "none"
