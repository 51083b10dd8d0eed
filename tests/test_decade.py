"""benchmarks/decade.py's pieces on SYNTHETIC data (benchmarks/synthetic_history.py): the
fast nights carry cost and host columns like real records; bad options exit 2. The decade
itself is a benchmark (docs/benchmarks.md), never run here."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import decade
        import synthetic_history
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return decade, synthetic_history


def test_fast_night_has_cost_and_host_columns(bench) -> None:  # type: ignore[no-untyped-def]
    _, synth = bench
    from perftrack.store.files import rows

    col = {name: i for i, (name, _) in enumerate(rows.RESULT_COLUMNS)}
    night = synth.FastNights(synth.load_setup(60, 1), np, cost=True).night(0)
    assert len(night) == 1320  # the nightly matrix, one class
    for p in night:
        r = p.result
        assert r[col["run_id"]] == "synthetic-00000-a"
        user, sys_ = r[col["cpu_user_us_per_txn"]], r[col["cpu_sys_us_per_txn"]]
        assert user > 0 and sys_ > 0
        assert r[col["cpu_us_per_txn"]] == pytest.approx(user + sys_, abs=0.002)
        assert r[col["peak_rss_bytes"]] % 4096 == 0
        assert r[col["noisy"]] == (r[col["host_foreign_cpu_pct"]] > 25.0)
        assert r[col["tps_series"]] is None  # as prepare leaves it (issue 39)


def test_bad_out_or_resume_is_refused(bench, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    decade, _ = bench
    assert decade.main(["--quick", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "exists" in err[0]
    assert list(tmp_path.iterdir()) == []  # nothing written
    assert decade.main(["--resume", str(tmp_path)]) == 2  # no run was started there
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "decade.json" in err[0]
    assert list(tmp_path.iterdir()) == []


def test_table_says_per_night_growth(bench) -> None:  # type: ignore[no-untyped-def]
    decade, _ = bench
    row = {
        "nights": 365,
        "results": 1_400_000,
        "pack_bytes": 100_000_000,
        "largest_bytes": 4_000_000,
        "largest_file": "data/results.duckdb",
        "site_bytes": 50_000_000,
        "ingest_s": 1.0,
        "detect_s": 2.0,
        "build_s": 3.0,
        "clone_s": 0.5,
        "clone_detect_s": 4.0,
    }
    line = decade.table([row]).splitlines()[-1]
    assert line.startswith("| 1 y (365 nights) | 1,400,000 | 100.0 MB | 274 KB |")
