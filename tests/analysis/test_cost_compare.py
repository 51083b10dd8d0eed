"""Cost metrics in compare and detect: direction of the verdict, noisy repeats counted once.

SYNTHETIC records (tests/fixtures/records/synthetic.py) in a temp DB, never the real one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fixtures.records.synthetic import make_record, with_cost
from perftrack.analysis import compare
from perftrack.cli.main import app
from perftrack.core import record
from perftrack.store import store

BASE, NEW = "synthetic-mysql-8.0.36", "synthetic-mysql-8.4.0"
REPEATS = 6


def series(cpu_new: float, tps_new: float) -> list[dict[str, Any]]:
    """REPEATS cells per server: the new one costs `cpu_new` µs/txn (base 1000 µs, ±1%)."""
    recs = []
    for i in range(REPEATS):
        wobble = 1 + 0.01 * ((i % 3) - 1)
        recs.append(
            with_cost(make_record(cell=i, server_id=BASE, tps=1000 * wobble), 1000 * wobble)
        )
        recs.append(
            with_cost(
                make_record(cell=100 + i, server_id=NEW, version="8.4.0", tps=tps_new * wobble),
                cpu_new * wobble,
            )
        )
    return recs


def db_with(tmp_path: Path, recs: list[dict[str, Any]]) -> Path:
    db = tmp_path / "results.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    return db


def verdict(db: Path, metric: str) -> str | None:
    with store.open_db(db, write=False) as st:
        (t,) = compare.tables(st, metric=metric)
    assert [r.server_id for r in t.rows] == [BASE, NEW]
    c = t.rows[1].vs_previous
    return c.verdict if c else None


def test_more_cpu_per_transaction_is_a_regression(tmp_path: Path) -> None:
    # same throughput, 15% more CPU per transaction: tps unchanged, cost regressed
    db = db_with(tmp_path, series(cpu_new=1150, tps_new=1000))
    assert verdict(db, "cpu_us_per_txn") == "regression"
    assert verdict(db, "tps") == "unchanged"


def test_less_cpu_per_transaction_is_an_improvement(tmp_path: Path) -> None:
    db = db_with(tmp_path, series(cpu_new=850, tps_new=1150))
    assert verdict(db, "cpu_us_per_txn") == "improvement"
    assert verdict(db, "tps") == "improvement"  # both directions agree on a faster server


def test_metric_directions() -> None:
    assert compare.METRICS["tps"][1] is True and compare.METRICS["ipc"][1] is True
    for m in record.COST_FIELDS:
        assert compare.METRICS[m][0] == m
        if m != "ipc":
            assert compare.METRICS[m][1] is False, f"{m}: lower is better"


def test_metric_without_values_compares_nothing(tmp_path: Path) -> None:
    db = db_with(tmp_path, series(cpu_new=1000, tps_new=1000))
    with store.open_db(db, write=False) as st:
        assert compare.tables(st, metric="instructions_per_txn") == []


def test_a_noisy_attempt_superseded_by_its_repeat_counts_once(tmp_path: Path) -> None:
    recs = series(cpu_new=1000, tps_new=1000)
    # cell 100's first attempt was noisy (a wild 3000 µs); its repeat (attempt 2) is normal
    noisy = with_cost(
        make_record(cell=100, server_id=NEW, version="8.4.0", tps=400.0), 3000, noisy=True
    )
    recs = [r for r in recs if r["record_id"] != noisy["record_id"]]
    again = with_cost(
        make_record(cell=100, attempt=2, server_id=NEW, version="8.4.0", tps=1000.0),
        1000,
        repeat_of=1,
    )
    db = db_with(tmp_path, [*recs, noisy, again])
    with store.open_db(db, write=False) as st:
        (t,) = compare.tables(st, metric="cpu_us_per_txn")
        assert len(t.rows[1].values) == REPEATS and 3000 not in t.rows[1].values
        row = st.con.execute(
            "SELECT noisy, noisy_reason, host_foreign_cpu_pct FROM results "
            "WHERE attempt = 1 AND noisy"
        ).fetchone()
    assert row == (True, "foreign CPU 40.0% > 25%", 40.0)


def test_detect_and_compare_cli_take_cost_metrics(tmp_path: Path) -> None:
    db = db_with(tmp_path, series(cpu_new=1150, tps_new=1000))
    cli = CliRunner()
    res = cli.invoke(app, ["detect", "--db", str(db), "--metric", "cpu_us_per_txn"])
    assert res.exit_code == 0, res.output
    with store.open_db(db, write=False) as st:
        got = st.con.execute("SELECT metric, verdict FROM verdicts").fetchall()
    assert got == [("cpu_us_per_txn", "regression")]
    res = cli.invoke(app, ["compare", "--db", str(db), "--metric", "cpu_us_per_txn", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["groups"][0]["rows"]
    assert rows[1]["verdict"] == "regression" and rows[1]["ratio"] == pytest.approx(1.15)
    res = cli.invoke(app, ["compare", "--db", str(db), "--metric", "cpu_us_per_txn"])
    assert res.exit_code == 0 and "µs/txn" in res.output
    res = cli.invoke(app, ["compare", "--db", str(db), "--metric", "cpu_per_txn"])
    assert res.exit_code != 0 and "unknown metric 'cpu_per_txn'" in str(res.exception)
