"""The one grading rule (analysis/grading.py) on rows built here: its four outcomes, the
stand-in case, the magnitude factor, and a claim over several rows."""

from __future__ import annotations

import math

import pytest

from perftrack.analysis import grading, stats


def interval(ratio: float, low: float, high: float, p: float = 0.01) -> stats.Comparison:
    """Our ratio with its 95% interval and test p (as compare.versus returns them)."""
    return stats.Comparison(
        n_a=5,
        n_b=5,
        mean_a=1000.0,
        mean_b=1000.0 * ratio,
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        p_value=p,
        threshold=0.05,
        verdict="",
    )


def outcome(ours: float, c: stats.Comparison | None, article: float | None, **kw) -> str:
    return grading.grade(ours, c, article, **kw).outcome


def test_the_four_outcomes() -> None:
    sure_faster = interval(1.30, 1.20, 1.41)
    # same side as the article's 1.40, outside the noise, effects within 2x: agrees
    assert outcome(1.30, sure_faster, 1.40) == grading.AGREES
    # same side, but 1.30 against 8.5x: the effects are 8x apart
    assert outcome(1.30, sure_faster, 8.5) == grading.MAGNITUDE_DIFFERS
    # the other side, outside the noise
    assert outcome(1.30, sure_faster, 0.70) == grading.DISAGREES
    # within the noise: the interval includes 1 (p small), or p >= 0.05 (interval excludes 1)
    assert outcome(1.16, interval(1.16, 0.89, 1.50), 1.40) == grading.NOT_SHOWN
    assert outcome(1.30, interval(1.30, 1.20, 1.41, p=0.1), 1.40) == grading.NOT_SHOWN
    assert outcome(1.30, None, 1.40) == grading.NOT_SHOWN  # too few repeats for an interval
    # the words the report and the pages print
    assert [grading.Grade(o).text for o in grading.OUTCOMES] == [
        "agrees",
        "magnitude differs",
        "disagrees",
        "not shown (within the noise)",
    ]


def test_a_side_on_another_products_stand_in_is_shown_for_its_direction_only() -> None:
    sure_faster = interval(1.30, 1.20, 1.41)
    g = grading.grade(1.30, sure_faster, 1.40, stand_ins=["MariaDB 10.2.11 for MySQL 5.7"])
    assert g.outcome == grading.STAND_IN and not g.graded
    assert g.text == "stand-in: MariaDB 10.2.11 for MySQL 5.7 — direction only"
    # whatever the numbers: a stand-in row is never graded, even where it would "agree"
    two = ["MariaDB 10.11.5 for MySQL 8.0.36", "MariaDB 10.2.11 for MySQL 5.7"]
    g = grading.grade(0.5, interval(0.5, 0.4, 0.6), 0.5, stand_ins=two)
    assert g.text == (
        "stand-in: MariaDB 10.11.5 for MySQL 8.0.36, MariaDB 10.2.11 for MySQL 5.7 — direction only"
    )
    # nothing measured, or nothing published to grade against: not graded either
    assert outcome(None, None, 1.40) == grading.NOT_GRADED
    assert outcome(1.30, sure_faster, None) == grading.NOT_GRADED


def test_the_magnitude_factor_is_on_the_log_effect() -> None:
    assert grading.MAGNITUDE_FACTOR == 2.0
    sure = interval(1.0, 0.5, 0.9)  # only outside_noise reads it
    # against 1.40 (ln 0.336): 1.19 (ln 0.174) agrees, 1.15 (ln 0.140, 2.4x smaller) does not
    assert grading.magnitude_within(1.19, 1.40) and not grading.magnitude_within(1.15, 1.40)
    # slow-downs measure like speed-ups: 1/1.40 against 1/1.19
    assert outcome(1 / 1.19, interval(1 / 1.19, 0.8, 0.9), 1 / 1.40) == grading.AGREES
    # study 003's InnoDB row: the article's 0.117 (8.5x slower) against 0.926, 28x apart
    assert grading.effect(0.117) / grading.effect(0.926) > 20
    assert outcome(0.926, interval(0.926, 0.90, 0.95), 0.117) == grading.MAGNITUDE_DIFFERS
    # an article that measured no difference at all: any effect of ours differs in size
    assert outcome(0.8, sure, 1.0) == grading.MAGNITUDE_DIFFERS
    assert grading.effect(2.0) == pytest.approx(grading.effect(0.5)) == pytest.approx(math.log(2))


def test_a_direction_only_claim_and_a_claim_every_row_must_hold() -> None:
    up = interval(1.30, 1.20, 1.41)
    down = interval(0.70, 0.60, 0.80)
    noise = interval(1.05, 0.90, 1.20)
    side = ["MariaDB 10.1.23 for MySQL 5.6"]
    # `above 1` / `below 1`: the article's direction, no size to check
    assert outcome(1.30, up, None, direction=1) == grading.AGREES
    assert outcome(0.70, down, None, direction=1) == grading.DISAGREES

    def g(r: float, c: stats.Comparison, **kw) -> grading.Grade:
        return grading.grade(r, c, None, direction=1, **kw)

    assert grading.every([g(1.3, up), g(1.3, up)]).outcome == grading.AGREES
    assert grading.every([g(1.3, up), g(1.05, noise)]).outcome == grading.NOT_SHOWN
    assert grading.every([g(1.3, up), g(0.7, down)]).outcome == grading.DISAGREES
    # stand-in rows do not count; with only those, the claim is a stand-in's, not graded
    assert grading.every([g(1.3, up), g(0.7, down, stand_ins=side)]).outcome == grading.AGREES
    only = grading.every([g(0.7, down, stand_ins=side)])
    assert only.text == "stand-in: MariaDB 10.1.23 for MySQL 5.6 — direction only"
    assert grading.every([]).outcome == grading.NOT_GRADED
    assert grading.tally([g(1.3, up), g(1.05, noise), g(0.7, down, stand_ins=side)]) == (
        "1 agrees, 1 not shown (within the noise), 1 stand-in (direction only)"
    )
