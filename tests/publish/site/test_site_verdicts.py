"""publish/site/verdicts.py: the heatmap's p95 verdicts, computed at build time, judge
with the p95 noise `detect` stored while it is current (SYNTHETIC records)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fixtures.records.synthetic import SYNTHETIC_START, make_record
from perftrack.analysis import detect
from perftrack.publish.site import verdicts
from perftrack.store import store


def _records(first: int, rounds: int, start: datetime = SYNTHETIC_START) -> list[dict[str, Any]]:
    """Two servers measured in the same rounds, one run, p95 varying by round."""
    out = []
    for i in range(first, first + rounds):
        for k, ver in enumerate(("8.0.35", "8.0.36")):
            rec = make_record(
                cell=2 * i + k,
                server_id=f"synthetic-mysql-{ver}",
                version=ver,
                tps=1000.0 + 3 * i - 40 * k,
                started_at=start + timedelta(minutes=2 * i + k),
            )
            rec["cell"]["repeat"] = i + 1
            rec["result"]["latency_pct_ms"] = 12.0 + 0.1 * (i % 3) + 0.5 * k
            out.append(rec)
    return out


def _without_times(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [r[:8] + r[9:] for r in rows]  # computed_at is the 9th column


def test_p95_verdicts_use_the_stored_noise_while_it_is_current(tmp_path: Path) -> None:
    db = tmp_path / "v.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(_records(0, 6))
        detect.detect_and_store(st, [], None)
        metrics = {m for (m,) in st.con.execute("SELECT DISTINCT metric FROM noise").fetchall()}
    assert metrics == {"tps", "p95"}  # detect.NOISE_ALSO
    with store.open_db(db, write=False) as st:
        stored = verdicts._current_noise(st, "p95")
        assert stored is not None
        assert _without_times(stored) == _without_times(detect.compute_noise(st, "p95"))
        rows, origin = verdicts.raw(st, [], "p95")
        fresh = detect.compute_verdicts(st, [], "p95")
        assert origin == "computed at build time" and len(rows) == len(fresh) == 1
        names = st.verdict_columns()
        keep = [n for n in names if n != "computed_at"]
        assert [{n: r[n] for n in keep} for r in rows] == [
            {n: v for n, v in zip(names, f, strict=True) if n != "computed_at"} for f in fresh
        ]
        assert verdicts._current_noise(st, "tps") is None  # throughput's own are stored
    with store.open_db(db, write=True) as st:  # a result that finished after detect ran
        st.ingest(_records(6, 1, datetime.now(UTC) + timedelta(days=1)))
    with store.open_db(db, write=False) as st:
        assert verdicts._current_noise(st, "p95") is None


def test_a_verdict_row_says_if_it_is_paired_and_what_an_inconclusive_one_needs(
    tmp_path: Path,
) -> None:
    """Stored (detect's table verdict_rounds) or computed at build time, each row carries
    how its verdict was computed and, when inconclusive, the rounds a side that would
    decide it: the same as compare's comparison of the pair."""
    db = tmp_path / "r.duckdb"
    recs = _records(0, 3)  # 3 shared rounds, ratios 0.985, 0.943, 1.011: inconclusive
    for rec, tps in zip(recs, (1000.0, 985.0, 1060.0, 1000.0, 950.0, 960.0), strict=True):
        rec["result"]["tps"] = tps
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
        detect.detect_and_store(st, [], None)
    with store.open_db(db, write=False) as st:
        ((t,),) = [detect.verdict_tables(st)]
        c = t.rows[1].vs_previous
        assert c is not None and c.paired and c.verdict == "inconclusive"
        assert c.rounds_needed is not None
        for metric in ("tps", "p95"):  # stored; computed at build time
            (row,) = verdicts.raw(st, [], metric)[0]
            assert row["paired"] is True
        (row,) = verdicts.raw(st, [], "tps")[0]
        assert row["rounds_needed"] == c.rounds_needed
