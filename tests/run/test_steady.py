"""Steady state (run/steady.py): a window whose throughput still moves is flagged in its
record and measured again, on a real server started cold with a large table."""

from __future__ import annotations

import numpy as np
import pytest
from test_runner import make_runner, records, tiny

from perftrack.run import steady


def test_a_flat_noisy_window_is_steady_and_a_ramp_is_not() -> None:
    rng = np.random.default_rng(3)
    flat = list(1000 * rng.lognormal(0, 0.10, 30))  # 10% per-second noise, no trend
    assert steady.assess(flat).steady
    ramp = [1000 * (1 + 0.01 * i) * x for i, x in enumerate(rng.lognormal(0, 0.03, 30))]
    got = steady.assess(ramp)
    assert not got.steady and got.drift is not None and got.drift > 0.15
    assert got.reason is not None and "rose" in got.reason and "warming up" in got.reason
    slowing = list(reversed(ramp))
    assert "fell" in (steady.assess(slowing).reason or "")


def test_a_small_clean_drift_or_a_short_window_is_steady() -> None:
    # 3% over the window, no noise: a real trend, but below what a verdict resolves
    assert steady.assess([1000 * (1 + 0.001 * i) for i in range(30)]).steady
    short = steady.assess([100.0, 200.0, 300.0, 400.0])
    assert short.steady and short.drift is None  # 4 seconds say nothing


@pytest.mark.integration
def test_a_cold_server_with_a_large_table_is_flagged_and_measured_again(
    tmp_path, config_dir, workroot
) -> None:
    """MariaDB 10.11.18 with 1 table × 1,000,000 rows (~240 MB), the OS page cache dropped
    right before the measured run and no warm-up: the first seconds read the table from
    disk (measured here: ~1,200 tps rising to ~2,600 over 10 s)."""

    def cold(_srv, _cell) -> None:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")

    m = tiny(
        servers=["mariadb-10.11.18"],
        workloads=["oltp_read_only"],
        duration_s=8,
        table_size=1_000_000,
    )
    # The VM's disk is cached by its host, so a dropped page cache is sometimes refilled
    # fast enough that the first window is already steady (seen in one CI run and once on a
    # loaded machine, 2026-11-28; it passed in the CI runs before): up
    # to three cold starts, each a run of its own; a product that never flags fails all.
    for attempt in range(3):
        where = tmp_path / f"cold-{attempt}"
        where.mkdir()
        r, rd, lines = make_runner(where, config_dir, workroot, m, before_measure=cold)
        r.run()
        recs = sorted(records(rd), key=lambda x: x["attempt"])
        if recs[0]["result"]["steady"] is False:
            break
    first, again = recs
    assert first["result"]["steady"] is False and first["result"]["tps_drift"] > steady.MAX_DRIFT
    assert "not steady: throughput rose" in (first["host"] or {}).get("noisy_reason", "")
    assert again["host"]["repeat_of"] == first["attempt"]  # the cell measured again
    assert any("not steady" in ln and "measuring it again" in ln for ln in lines)
