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
        detect.run(st, [], None)
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
