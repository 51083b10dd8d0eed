"""Nightly points as arrays: one point per series, server and run (the run's median).

`SeriesQueries.nightly_points` returns them; detect's change points read the arrays whole
(analysis/changepoints.py `class_series`), the alerts a few series as lists. A tuple per
point (run id, time, value) made ~2.3 million Python objects at 1,000 nights: 0.9 s of
detect to make, 0.45 s more to read back into the class matrices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Key = tuple[Any, ...]  # (series…, server_id)
Point = tuple[Any, ...]  # (run_id, first started_at, median value)


@dataclass(frozen=True, eq=False, kw_only=True)
class NightlyPoints(Mapping[Key, list[Point]]):
    """Points in the order (key, time, run id). `series_keys` and `runs` are the distinct keys and
    run ids (`runs` in string order); `key`, `run`, `at` and `value` hold, per point, its
    key's and run's index, its time as a number that orders the times (`at_of` gives
    the time back) and its value (nan for none). As a mapping: key -> [(run_id, time,
    value)], oldest first, as the store gave them before (a list made on each read)."""

    series_keys: list[Key]
    runs: list[str]
    key: np.ndarray
    run: np.ndarray
    at: np.ndarray
    value: np.ndarray
    at_of: Callable[[int], Any]
    _index: dict[Key, int] = field(init=False, repr=False, compare=False)
    _bounds: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        order = np.lexsort((self.run, self.at, self.key))  # runs are in string order
        for name in ("key", "run", "at", "value"):
            object.__setattr__(self, name, np.asarray(getattr(self, name))[order])
        bounds = np.searchsorted(self.key, np.arange(len(self.series_keys) + 1))
        object.__setattr__(self, "_bounds", bounds)
        object.__setattr__(self, "_index", {k: i for i, k in enumerate(self.series_keys)})

    @classmethod
    def from_dict(cls, points: Mapping[Key, list[Point]]) -> NightlyPoints:
        """The arrays of points given as {key: [(run_id, time, value)]} (tests, and the
        benchmarks' synthetic histories): times of any one comparable type."""
        if isinstance(points, NightlyPoints):
            return points
        keys = list(points)
        runs = sorted({p[0] for k in keys for p in points[k]})
        times = sorted({p[1] for k in keys for p in points[k]})
        run_of = {r: i for i, r in enumerate(runs)}
        tick_of = {t: i for i, t in enumerate(times)}
        flat = [
            (i, run_of[p[0]], tick_of[p[1]], p[2]) for i, k in enumerate(keys) for p in points[k]
        ]
        cols = list(zip(*flat, strict=True)) if flat else [(), (), (), ()]
        return cls(
            series_keys=keys,
            runs=runs,
            key=np.array(cols[0], dtype=np.int64),
            run=np.array(cols[1], dtype=np.int64),
            at=np.array(cols[2], dtype=np.int64),
            value=np.array([np.nan if v is None else float(v) for v in cols[3]], dtype=float),
            at_of=times.__getitem__,
        )

    def rows(self, index: int) -> slice:
        """The points of key `index`."""
        return slice(int(self._bounds[index]), int(self._bounds[index + 1]))

    def __getitem__(self, key: Key) -> list[Point]:
        s = self.rows(self._index[key])
        run, at, value = self.run[s].tolist(), self.at[s].tolist(), self.value[s].tolist()
        return [
            (self.runs[r], self.at_of(t), None if math.isnan(v) else v)
            for r, t, v in zip(run, at, value, strict=True)
        ]

    def __iter__(self) -> Iterator[Key]:
        return iter(self.series_keys)

    def __len__(self) -> int:
        return len(self.series_keys)

    def __contains__(self, key: object) -> bool:
        return key in self._index
