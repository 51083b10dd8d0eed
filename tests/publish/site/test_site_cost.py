"""The "cost per transaction" page in a real browser (Debian's chromium via Playwright).

The DB is SYNTHETIC (made-up records, tests/fixtures/records/synthetic.py) with cost
columns: two versions, the newer spending 20% more CPU per transaction.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from site_helpers import Tab

from fixtures.records.synthetic import make_record, with_cost
from perftrack.publish.site import build, export
from perftrack.store import store

VERSIONS = (
    ("synthetic-mysql-8.0.36", "8.0.36", 1000.0, 900.0),
    ("synthetic-mysql-8.4.0", "8.4.0", 950.0, 1080.0),
)


@pytest.fixture(scope="module")
def cost_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("synthetic-cost")
    recs = []
    for rep in range(3):
        for i, (sid, ver, tps, cpu) in enumerate(VERSIONS):
            rec = make_record(
                run_id="synthetic-cost", cell=rep * 2 + i, server_id=sid, version=ver, tps=tps
            )
            rec["cell"]["repeat"] = rep + 1
            recs.append(with_cost(rec, cpu + rep, noisy=rep == 0))
    db = root / "results.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    return build.build(db, root / "site").out


def test_cost_rows_hold_medians_per_version_and_part(cost_site: Path) -> None:
    db = cost_site.parent / "results.duckdb"
    with store.open_db(db, write=False) as st:
        rows = export.export(st, []).cost
    got = {(r["server"], r["part"]): r["value"] for r in rows}
    assert got[("synthetic-mysql-8.0.36", "throughput")] == 1000.0
    assert got[("synthetic-mysql-8.4.0", "CPU user")] == pytest.approx(1081 * 0.8)
    assert got[("synthetic-mysql-8.4.0", "written")] == 4096.0
    assert {r["noisy"] for r in rows} == {1}
    assert {r["panel"] for r in rows} == {
        "throughput (transactions/s)",
        "server CPU per transaction (µs)",
        "context switches per transaction",
        "storage bytes per transaction",
    }


def test_cost_page_draws_every_panel_for_every_version(cost_site: Path, tab: Tab) -> None:
    tab.open((cost_site / "cost.html").as_uri())
    tab.shot("desktop-cost-synthetic")
    assert tab.problems() == []
    # 2 versions x (1 throughput + 2 CPU + 2 switches + 2 IO) bars
    assert tab.marks("cost") == 14
    drawn = tab.page.evaluate(
        "window.perftrack.charts['cost'].data('table').map(r => [r.server, r.part])"
    )
    assert {p for _, p in drawn} == {
        "throughput",
        "CPU user",
        "CPU sys",
        "voluntary",
        "involuntary",
        "read",
        "written",
    }
    assert tab.page.inner_text("#status") == ""
    text = tab.page.inner_text("#chart-cost")
    assert "server CPU per transaction" in text and "context switches per transaction" in text
    nav = tab.page.inner_text("nav")
    assert "Cost per transaction" in nav
