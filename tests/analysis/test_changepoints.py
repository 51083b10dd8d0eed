"""analysis/changepoints.py: one answer whatever the order the store's rows come in."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import numpy as np

from perftrack.analysis import changepoints, detect


def server_step_points() -> dict[tuple, list]:
    """SYNTHETIC: 3 classes × 3 servers × 4 thread counts, 100 nights of 3% noise; server
    s2's workload steps -20% at night 60 on every class (one `server` row)."""
    rng = np.random.default_rng(5)
    start = datetime(2026, 1, 1)
    points: dict[tuple, list] = {}
    for cls in ("x", "y", "z"):
        for srv in ("s1", "s2", "s3"):
            for th in (1, 4, 16, 64):
                key = ("hw-" + cls, cls, "w1", th, "c", "default", 8, 1000, 60, "tcp")
                key += (None,) * (len(detect.SERIES_COLS) - len(key)) + (f"synthetic-{srv}",)
                pts = []
                for n in range(100):
                    f = math.exp(rng.normal(0, 0.03)) * (0.8 if srv == "s2" and n >= 60 else 1)
                    pts.append((f"synthetic-{n:03d}-{cls}", start + timedelta(days=n), 100 * f))
                points[key] = pts
    return points


def test_a_server_change_is_stored_under_the_same_class_whatever_the_points_order():
    points = server_step_points()
    forward = changepoints.detect(points, None, detect.SERIES_COLS)
    backward = changepoints.detect(dict(reversed(points.items())), None, detect.SERIES_COLS)
    assert [c.scope for c in forward] == ["server"]
    assert forward == backward  # the same row: key (its class), night, size, levels
