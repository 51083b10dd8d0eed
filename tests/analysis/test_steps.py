"""analysis/steps.py: the sliding window medians the change points rest on."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from perftrack.analysis import steps


@pytest.mark.parametrize("w", [30, 7, 1])
def test_window_medians_are_np_median_of_each_window_bit_for_bit(w: int) -> None:
    rng = np.random.default_rng(7)
    series = [
        np.log(rng.lognormal(5, 0.1, 400)),  # a nightly series' log values
        np.round(rng.normal(0, 1, 250), 1),  # many ties
        np.repeat([0.0, 1.0, -2.5], 40),  # steps, long runs of equal values
        np.cumsum(rng.normal(0, 1, 90)),  # a walk
        rng.normal(0, 1, w),  # exactly one window
    ]
    for y in series:
        want = np.median(sliding_window_view(y, w), axis=1)
        got = steps.window_medians(y, w)
        assert got.shape == want.shape
        assert got.tobytes() == want.tobytes()  # the same floats, not only close ones


def test_window_medians_of_a_series_shorter_than_a_window_are_none() -> None:
    assert steps.window_medians(np.arange(5.0), 30).size == 0


def test_mosum_finds_the_step_where_a_window_median_moves() -> None:
    rng = np.random.default_rng(3)
    y = np.concatenate([rng.normal(0, 0.01, 100), rng.normal(0.1, 0.01, 100)])
    (s,) = steps.find_steps(y)
    assert abs(s.index - 100) <= 2 and s.rel > 0.09


def test_nan_medians_are_np_nanmedian_of_each_row() -> None:
    rng = np.random.default_rng(11)
    for rows, width in ((5, 30), (40, 30), (3, 7)):  # both of np.nanmedian's paths
        x = np.log(rng.lognormal(5, 0.2, (rows, width)))
        x[0, :3] = x[0, 3]  # ties
        for i in range(rows):
            x[i, rng.integers(1, width) :] = np.nan  # a window near a series' end
        got, want = steps._nan_medians(x), np.nanmedian(x, axis=1)
        assert got.tobytes() == want.tobytes()
