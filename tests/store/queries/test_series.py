"""store/queries/series.py: `series_samples` is `series_values` grouped (SYNTHETIC records)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fixtures.records.synthetic import SYNTHETIC_START, make_record, with_cost
from perftrack.store import store
from perftrack.store.queries import series


def records() -> list[dict[str, Any]]:
    """3 runs × 2 servers × 2 thread counts × 2 repeats, interleaved in time."""
    out = []
    cell = 0
    for run in range(3):
        for rep in (1, 2):
            for threads in (1, 8):
                for ver in ("8.0.36", "8.4.0"):
                    sid = f"synthetic-mysql-{ver}"
                    cell += 1
                    at = SYNTHETIC_START + timedelta(days=run, minutes=cell)
                    rec = make_record(
                        run_id=f"synthetic-run-{run}",
                        cell=cell,
                        server_id=sid,
                        version=ver,
                        threads=threads,
                        tps=1000.0 + 7 * cell,
                        started_at=at,
                    )
                    rec["cell"]["repeat"] = rep
                    out.append(rec)
    return out


@pytest.mark.parametrize("recent", [None, 5])  # 6 values per series and server
def test_series_samples_are_series_values_grouped_by_series_and_server(
    tmp_path: Path, recent: int | None
) -> None:
    db = tmp_path / "r.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(records())
    with store.open_db(db, write=False) as st:
        values = st.series_values("tps", recent=recent)
        samples = st.series_samples("tps", recent=recent)
    n = len(store.SERIES_COLS)
    want: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for d in values:  # oldest first
        want.setdefault((*(d[c] for c in store.SERIES_COLS), d["server_id"]), []).append(d)
    assert [tuple(s[: n + 1]) for s in samples] == list(want)  # in order of oldest value
    for s in samples:
        ds = want[tuple(s[: n + 1])]
        first = ds[0]
        assert s[n + 1 : n + 5] == tuple(
            first[c] for c in ("product", "version", "version_string", "stand_in")
        )
        assert s[n + 5 :] == tuple(
            [d[c] for d in ds] for c in ("value", "latency_pct_ms", "run_id", "round")
        )
    assert sum(len(s[n + 5]) for s in samples) == len(values)
    assert max(len(s[n + 5]) for s in samples) == (recent or 6)


def _without_latency(tmp_path: Path, n: int) -> Path:
    """A DB of `records()` whose first `n` ok results have tps and no p95."""
    recs = records()
    for rec in recs[:n]:
        rec["result"]["latency_pct_ms"] = None
    db = tmp_path / "r.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    return db


@pytest.mark.parametrize("without_latency", [0, 1])  # ok results with tps and no p95
def test_p95_samples_are_their_own_query_s_answer_whether_or_not_taken_from_throughput_s(
    tmp_path: Path, without_latency: int
) -> None:
    """On a read-only store, p95's samples come from throughput's answer when both pick
    the same rows, and from their own query when a result has one and not the other:
    either way they are what the query gives. A writer keeps no answer."""
    db = _without_latency(tmp_path, without_latency)
    with store.open_db(db, write=True) as st:
        assert st.series_samples("tps", recent=5) is not st.series_samples("tps", recent=5)
    with store.open_db(db, write=False) as st:
        assert st._same_selection("tps", "latency_pct_ms") is (without_latency == 0)
        p95 = st.series_samples("latency_pct_ms", recent=5)
        assert p95 == st._samples("latency_pct_ms", None, None, 5)
        assert len(p95) == 4 and all(None not in s[-4] for s in p95)
        assert st.series_samples("latency_pct_ms", recent=5) is p95  # asked once
        taken = "tps" in {k[1] for k in st.__dict__["_kept_answers"] if k[0] == "series_samples"}
        assert taken is (without_latency == 0)


@pytest.mark.parametrize("without_latency", [0, 1])
def test_noise_samples_of_two_columns_are_each_column_s_own(
    tmp_path: Path, without_latency: int
) -> None:
    """One query when both columns pick the same rows, one each when not: either way
    what `noise_samples` gives for each column alone."""
    db = _without_latency(tmp_path, without_latency)
    with store.open_db(db, write=True) as st:
        both = st.noise_samples_of(["tps", "latency_pct_ms"], 10)
        alone = {c: st.noise_samples(c, 10) for c in ("tps", "latency_pct_ms")}
    assert both == alone
    assert len(both["tps"]) - len(both["latency_pct_ms"]) == 0  # a group keeps its row
    assert sum(map(len, (r[3] for r in both["latency_pct_ms"]))) == 24 - without_latency


@pytest.mark.parametrize("odd", [0, 1])  # ok results with tps and no cpu_sys_us_per_txn
def test_series_samples_of_several_columns_are_each_column_s_own(tmp_path: Path, odd: int) -> None:
    """The heatmap's windows in one query where the columns pick throughput's rows (a
    column that does not is asked alone): each column's rows are exactly what its own
    query gives, kept so that compare's `series_samples` reads them (the same object)."""
    recs = [with_cost(r, 50.0 + i) for i, r in enumerate(records())]
    for rec in recs[:odd]:
        rec["result"]["cpu_sys_us_per_txn"] = None
    db = tmp_path / "r.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    cols = ["tps", "latency_pct_ms", "cpu_us_per_txn", "cpu_sys_us_per_txn", "write_bytes_per_txn"]
    with store.open_db(db, write=False) as st:
        got = st.series_samples_of(cols, recent=5)
        for c in cols:
            assert got[c] == st._samples(c, None, None, 5), c
            assert st.series_samples(c, recent=5) is got[c]
        assert got["cpu_us_per_txn"] != got["tps"]  # its own values, not throughput's
        one = {k[2] for k in st.__dict__["_kept_answers"] if k[0] == "series_samples_of"}
    assert one == (
        {("cpu_us_per_txn", "cpu_sys_us_per_txn", "write_bytes_per_txn")}
        if not odd
        else {("cpu_us_per_txn", "write_bytes_per_txn")}
    )
    with store.open_db(db, write=True) as st:  # a writer: each column's own query
        assert st.series_samples_of(cols, recent=5) == got


# the query nightly_points was until it fetched numbers: one row of key columns per point
_NIGHTLY_BY_COLUMNS = """
    SELECT {series}, s.server_id, r.run_id, min(r.started_at) AS first_at, median(r.tps)
    FROM results r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
    WHERE r.status = 'ok' AND r.tps IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM results r2 WHERE r2.run_id = r.run_id AND r2.cell_id = r.cell_id
        AND r2.status = 'ok' AND r2.attempt > r.attempt)
    GROUP BY ALL ORDER BY first_at, r.run_id
"""


@pytest.mark.parametrize("by_hash", [True, False])  # False: as when two keys share a hash
def test_nightly_points_are_each_run_s_median_by_series_and_server_latest_attempts_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_hash: bool
) -> None:
    recs = records()
    again = dict(recs[3], attempt=2, record_id=recs[3]["record_id"][:-1] + "2")
    again["result"] = dict(recs[3]["result"], tps=5000.0)  # re-measured: only it counts
    failed = dict(recs[5], attempt=2, record_id=recs[5]["record_id"][:-1] + "2")
    failed |= {"status": "failed", "reason": "synthetic", "result": None}
    db = tmp_path / "r.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest([*recs, again, failed])
    if not by_hash:
        monkeypatch.setattr(series, "_each_its_own", lambda hashes: False)
    with store.open_db(db, write=False) as st:
        points = st.nightly_points("tps")
        rows = st.con.execute(_NIGHTLY_BY_COLUMNS.format(series=series.series_select())).fetchall()
    want: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for *key, run, at, value in rows:
        want.setdefault(tuple(key), []).append((run, at, value))
    assert {k: points[k] for k in points} == want
    # the re-measured cell's 5000 moved its run's median: the attempt it replaced did not count
    assert len(points) == 4 and max(v for ps in want.values() for _, _, v in ps) > 3000
    assert set(points) == set(want) and all(k in points for k in want)
