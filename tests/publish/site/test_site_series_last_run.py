"""The overview shows when each series last ran (a rotation runs series on different
nights). SYNTHETIC DB (tests/fixtures/records/synthetic_history.py): threads 1 and 4 for
six nights, then threads 1 only for three more."""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path

import pytest
from site_helpers import Tab

from fixtures.records.synthetic_history import START, night_records
from perftrack.publish.site import build
from perftrack.store import store


@pytest.fixture(scope="module")
def rotated_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rotated")
    db = root / "results.duckdb"
    rng = random.Random(3)
    recs = []
    for night in range(9):
        threads = (1, 4) if night < 6 else (1,)
        recs += night_records(night, rng=rng, repeats=3, threads=threads)
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    return build.build(db, root / "site").out


def test_overview_shows_each_series_last_run_date(rotated_site: Path, tab: Tab) -> None:
    tab.open((rotated_site / "index.html").as_uri())
    tab.page.check("#verdict-all-columns")  # the threads column (the default table joins it)
    table = tab.page.locator("#verdict-table")
    headers = table.locator("thead th").all_inner_texts()
    assert "series last run" in headers
    col = headers.index("series last run")
    threads_col = headers.index("threads")
    rows = table.locator("tbody tr").all()
    assert rows
    last_full = (START.date().toordinal() + 5, START.date().toordinal() + 8)
    seen = set()
    for row in rows:
        cells = row.locator("td").all_inner_texts()
        threads, shown = int(cells[threads_col]), cells[col]
        want = last_full[0] if threads == 4 else last_full[1]
        assert shown == date.fromordinal(want).isoformat(), (threads, shown)
        seen.add(threads)
    assert seen == {1, 4}
    assert tab.problems() == []
