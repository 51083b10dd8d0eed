"""The levels a nightly-history chart draws before and after each change point.

Per change point and metric, the level before and after it, drawn as a step: the
medians of the nightly values between the previous change point of the same version and
hardware (or its first night) and this one, and from this one to the next (or its last
night). Detect's own before/after are means over Otava's window; these are what the
history page's chart shows, for whichever metric is selected (publish/site/history.py
writes them; `site png` draws them).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from perftrack.analysis.medians import median


def steps_of_points(
    points: Sequence[dict[str, Any]], cps: Sequence[dict[str, Any]], metrics: Sequence[str]
) -> list[dict[str, Any]]:
    """Before/after levels of each change point, for each metric (see the module doc),
    from rows of (server, hw_key, at, run_id, metric...): `steps_of_lines` of their lines."""
    by_line: dict[tuple[Any, Any], list[dict[str, Any]]] = defaultdict(list)
    for p in points:
        by_line[(p["server"], p["hw_key"])].append(p)
    lines = {}
    for line, pts in by_line.items():
        pts = sorted(pts, key=lambda p: p["at"])
        lines[line] = {
            "at": [p["at"] for p in pts],
            "run_id": [p["run_id"] for p in pts],
            **{m: np.array([_number(p.get(m)) for p in pts], dtype=float) for m in metrics},
        }
    return steps_of_lines(lines, cps, metrics)


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


def steps_of_lines(
    lines: Mapping[tuple[Any, Any], Mapping[str, Any]],
    cps: Sequence[dict[str, Any]],
    metrics: Sequence[str],
) -> list[dict[str, Any]]:
    """`steps_of_points` of lines given as columns: {(server, hw_key): {"at": [...],
    "run_id": [...], metric: float array (NaN: none)}}, each by time. A level is the median
    of a metric's values (NaN and null left out) over the nights before or after the change."""
    cps_by_line: dict[tuple[Any, Any], list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for i, c in enumerate(cps):
        cps_by_line[(c["server"], c["hw_key"])].append((i, c))
    out = []
    for line, marks in cps_by_line.items():
        cols = lines.get(line) or {"at": [], "run_id": []}
        ats, n = cols["at"], len(cols["at"])
        found = []  # (index of the first point after the change, cp number, cp)
        for i, c in marks:
            k = _last_of_run(ats, cols["run_id"], c)
            if k is None:  # not one of the drawn nights: the first night from its time on
                k = bisect.bisect_left(ats, c["at"])
            if k < n:
                found.append((k, i, c))
        found.sort(key=lambda x: x[0])
        bounds = [0, *(k for k, _, _ in found), n]
        for j, (k, i, c) in enumerate(found):
            lo, hi = bounds[j], bounds[j + 2]
            if lo >= k or k >= hi:
                continue
            for m in metrics:
                b, a = cols[m][lo:k], cols[m][k:hi]
                b, a = b[~np.isnan(b)], a[~np.isnan(a)]
                if not b.size or not a.size:
                    continue
                out.append(
                    {
                        "cp": i,
                        "metric": m,
                        "server": c["server"],
                        "hw_key": c["hw_key"],
                        "kind": c["kind"],
                        "from_at": ats[lo],
                        "at": ats[k],
                        "to_at": ats[hi - 1],
                        "before": median(b),
                        "after": median(a),
                    }
                )
    return out


def _last_of_run(ats: Sequence[Any], runs: Sequence[Any], change: Mapping[str, Any]) -> int | None:
    """The last place of the change's run among a line's points (by time), None if it has
    none: looked for among the points of the change's time first (a run's points share
    its time), then among all."""
    lo, hi = bisect.bisect_left(ats, change["at"]), bisect.bisect_right(ats, change["at"])
    for k in range(hi - 1, lo - 1, -1):
        if runs[k] == change["run_id"]:
            return k
    hits = [k for k, r in enumerate(runs) if r == change["run_id"]]
    return hits[-1] if hits else None
