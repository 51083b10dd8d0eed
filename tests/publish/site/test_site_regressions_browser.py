"""The Regressions page in a real browser (Debian's chromium via Playwright): what it
says, row by row, for a SYNTHETIC DB whose detects left open, acknowledged and
false-positive alerts (regressions_db.py). Screenshots go to test-artifacts/site/."""

from __future__ import annotations

from pathlib import Path

import pytest
from regressions_db import NEW, OLD, build_db
from site_helpers import Tab

from perftrack.publish.site import build, columns


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("regressions-site")
    db = build_db(root / "results.duckdb", root / "annotations.yaml")
    return build.build(db, root / "site").out


def cells(tab: Tab) -> list[list[str]]:
    return tab.page.eval_on_selector_all(
        "#regressions-table tbody tr",
        "rows => rows.map(r => [...r.cells].map(c => c.textContent))",
    )


def test_regressions_page_lists_open_alerts_newest_first_with_links(site: Path, tab: Tab):
    tab.open((site / "regressions.html").as_uri())
    tab.shot("desktop-regressions")
    assert tab.problems() == []
    heads = tab.page.eval_on_selector_all("#regressions-table th", "h => h.map(x => x.textContent)")
    assert heads[:6] == ["state", "first reported", "change", "ratio", "why", "links"]
    rows = cells(tab)
    # newest first; the false positive is closed, so not listed
    assert [(r[0], r[1], r[7]) for r in rows] == [
        ("new", "2026-03-03", "16"),
        ("acknowledged", "2026-03-02", "1"),
        ("new", "2026-03-01", "8"),
    ]
    assert all(r[2] == f"{OLD} → {NEW}" for r in rows)
    assert all(0.67 < float(r[3]) < 0.73 for r in rows)
    # the acknowledged one says why, as text (the reason holds HTML: shown, not parsed)
    assert rows[1][12] == "SYNTHETIC <b>expected</b> cost link"
    # why: no explanation stored, so the exact command for the alert's own cell
    assert rows[0][4].startswith("Not explained yet")
    assert f"perftrack explain {OLD} {NEW} --workload " in rows[0][4]
    assert "--threads 16 " in rows[0][4]
    assert tab.page.locator("#regressions-table b").count() == 0
    # both results of each: detect's verdict it was found from, its paired re-measurement
    assert rows[1][13].startswith("found: regression, 0.70") and "(detect's verdict)" in rows[1][13]
    assert rows[1][13].endswith("not re-measured paired yet")
    status = tab.page.text_content("#status")
    assert status.startswith("3 open alert(s), 2 new; checked 2026-03-03 06:00 UTC")
    assert "Closed: 1 false positive" in tab.page.text_content("#regressions-closed")
    assert tab.page.get_attribute("#regressions-feed", "href") == "regressions.atom"
    nav = tab.page.locator("nav a[aria-current='page']")
    assert nav.text_content() == "Regressions"
    # each row links to its run detail and its history; the run detail opens that run
    first = tab.page.locator("#regressions-table tbody tr").first
    hrefs = first.locator("td.links a").evaluate_all("a => a.map(x => x.getAttribute('href'))")
    assert hrefs[0].startswith(f"runs.html#run=synthetic-pair-t16&previous={OLD}&server={NEW}&")
    assert hrefs[1].startswith("history.html#runner_class=synthetic&") and "threads=16" in hrefs[1]
    first.locator("td.links a", has_text="run detail").click()
    tab.page.wait_for_selector("body[data-ready='1']")
    assert tab.page.input_value("#run-select") == "synthetic-pair-t16"
    # ... with the alert's pair's why: the same command (its two versions report the same
    # variables here, so no diff to rank)
    assert f"No explanation stored for {OLD} → {NEW} yet" in tab.page.inner_text("#explain-status")
    assert tab.page.inner_text("#explain-command").strip() in rows[0][4]
    assert tab.problems() == []


def test_history_link_opens_the_alerts_series(site: Path, tab: Tab):
    tab.open((site / "regressions.html").as_uri())
    tab.page.locator("#regressions-table tbody tr").nth(1).locator("a", has_text="history").click()
    tab.page.wait_for_selector("body[data-ready='1']")
    assert tab.page.input_value("#filter-threads") == "1"
    assert tab.page.input_value("#filter-workload") == "oltp_read_write"
    tab.shot("desktop-regressions-history")
    assert tab.problems() == []


def test_a_deep_link_marks_the_alert(site: Path, tab: Tab):
    oldest = columns.read_data_file(site / "data" / "regressions.js")["open"][2]["id"]
    tab.open((site / "regressions.html").as_uri() + f"#alert-{oldest}")
    assert tab.page.get_attribute(f"#alert-{oldest}", "class") == "alert state-new selected"
    assert tab.page.locator("tr.selected td").nth(7).text_content() == "8"
