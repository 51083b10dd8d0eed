"""store/queries/series.py: `series_samples` is `series_values` grouped (SYNTHETIC records)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fixtures.records.synthetic import SYNTHETIC_START, make_record
from perftrack.store import store


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
