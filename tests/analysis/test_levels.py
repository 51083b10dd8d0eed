"""analysis/levels.py: the levels before and after each change point that the history
page draws as steps.

Rows are SYNTHETIC (made up here, in the history exporter's row shape)."""

from __future__ import annotations

from typing import Any

import numpy as np

from perftrack.analysis import levels


def _point(night: int, server: str, tps: float) -> dict[str, Any]:
    return {
        "server": server,
        "hw_key": "hw1",
        "at": f"2026-01-{night + 1:02d}T02:00:00Z",
        "run_id": f"synthetic-night-{night:04d}",
        "tps": tps,
        "p95_ms": None if night % 2 else 1000 / tps,
    }


def _cp(night: int, server: str, kind: str) -> dict[str, Any]:
    p = _point(night, server, 1.0)
    return {k: p[k] for k in ("server", "hw_key", "at", "run_id")} | {"kind": kind}


def test_steps_are_the_medians_between_neighbouring_change_points() -> None:
    # SYNTHETIC: 100 for nights 0-9, 90 for 10-19, 120 from 20 on; a second version flat
    pts = [_point(n, "a", 100.0 if n < 10 else 90.0 if n < 20 else 120.0) for n in range(30)]
    pts += [_point(n, "b", 50.0) for n in range(30)]
    cps = [_cp(10, "a", "server"), _cp(20, "a", "environment")]
    got = levels.steps_of_points(pts, cps, ["tps"])
    assert [(s["cp"], s["before"], s["after"]) for s in got] == [(0, 100.0, 90.0), (1, 90.0, 120.0)]
    first, second = got
    assert (first["from_at"], first["at"], first["to_at"]) == (
        pts[0]["at"],
        pts[10]["at"],
        pts[19]["at"],
    )
    assert (second["from_at"], second["to_at"]) == (pts[10]["at"], pts[29]["at"])
    assert second["kind"] == "environment"


def test_a_level_leaves_out_the_nights_without_a_value() -> None:
    # SYNTHETIC: p95 only on even nights; 10 ms before night 6, 20 ms from it on
    pts = [_point(n, "a", 100.0 if n < 6 else 50.0) for n in range(12)]
    got = levels.steps_of_points(pts, [_cp(6, "a", "server")], ["tps", "p95_ms"])
    by_metric = {s["metric"]: (s["before"], s["after"]) for s in got}
    assert by_metric == {"tps": (100.0, 50.0), "p95_ms": (10.0, 20.0)}


def test_steps_of_lines_takes_a_change_point_between_drawn_nights_at_the_next_night() -> None:
    ats = [f"2026-01-{d:02d}T02:00:00Z" for d in (1, 2, 3, 4)]
    lines = {
        ("a", "hw1"): {
            "at": ats,
            "run_id": ["r1", "r2", "r3", "r4"],
            "tps": np.array([1.0, 3.0, 8.0, 9.0]),
        }
    }
    cp = {
        "server": "a",
        "hw_key": "hw1",
        "at": "2026-01-02T12:00:00Z",
        "run_id": "gone",
        "kind": "server",
    }
    (step,) = levels.steps_of_lines(lines, [cp], ["tps"])
    assert (step["at"], step["before"], step["after"]) == (ats[2], 2.0, 8.5)
