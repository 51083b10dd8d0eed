"""The headline of a comparison (analysis/headline.py) on SYNTHETIC changes: counts,
geometric mean, the largest resolved change, one line per pair in release order."""

from __future__ import annotations

import math

from perftrack.analysis import headline


def change(pair: str, ratio: float, verdict: str, cell: str, order: tuple = ()) -> headline.Change:
    return headline.Change(
        pair=pair, ratio=ratio, verdict=verdict, cell=cell, paired=True, order=order
    )


def test_one_headline_per_pair_counts_geomean_and_largest_resolved() -> None:
    later, first = (("mysql", (8, 4)),), (("mysql", (8, 0)),)
    heads = headline.summarise(
        [
            change("b → c", 1.30, "inconclusive", "x threads=1", later),
            change("a → b", 0.80, "regression", "x threads=1", first),
            change("a → b", 1.25, "improvement", "x threads=4", first),
            change("a → b", 0.70, "regression", "y threads=8", first),
            change("a → b", 1.00, "unchanged", "y threads=1", first),
        ]
    )
    assert [h.pair for h in heads] == ["a → b", "b → c"]
    ab, bc = heads
    assert ab.counts == {"regression": 2, "improvement": 1, "unchanged": 1, "inconclusive": 0}
    assert ab.cells == 4
    assert math.isclose(ab.geomean or 0, (0.8 * 1.25 * 0.7 * 1.0) ** 0.25)
    assert ab.largest is not None and ab.largest.ratio == 0.70 and ab.largest.cell == "y threads=8"
    line = headline.line(ab)
    assert line.startswith("a → b: 2 regressions, 1 improvement, 1 unchanged, 0 inconclusive")
    assert "largest resolved: 0.700 regression in y threads=8" in line
    # an unresolved 1.30 is never the headline's change
    assert bc.largest is None and "no resolved change" in headline.line(bc)


def test_cell_label_names_what_differs_between_cells() -> None:
    key = {"workload": "oltp_read_only", "threads": 4, "collation": "latin1_swedish_ci"}
    assert headline.cell_label({**key, "profile": "default", "engine": None}) == (
        "oltp_read_only threads=4 latin1_swedish_ci"
    )
    assert headline.cell_label({**key, "profile": "p", "engine": "myisam"}).endswith(
        "profile=p engine=myisam"
    )
