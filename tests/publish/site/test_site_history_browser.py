"""The nightly-history page in a real browser (Debian's chromium via Playwright): what the
chart says at 60 nights — real dates, change points as steps in colours no version uses,
environment ones told apart, a rolling median, zoom and a range that deep links restore,
a point that opens its run, a metric selector, and a visible message for a bad link.

The DB is SYNTHETIC (tests/fixtures/records/synthetic_history.py): 60 nights of 3
versions; in oltp_read_only the newest 10% slower from night 20, then every version 20%
slower from night 40 (an "environment" step: the control server moved too), the other
workloads flat; `perftrack detect`'s own
analysis (detect.detect_and_store, the control server 8.0.36) finds the change points.
"""

from __future__ import annotations

import random
import re
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from site_helpers import READY_TIMEOUT_MS, Tab

from fixtures.records.synthetic_history import night_records
from perftrack.analysis import detect
from perftrack.publish.site import build
from perftrack.store import store

NIGHTS = 60
CONTROL = "synthetic-mysql-8.0.36"
NEWEST = "synthetic-mysql-9.1.0"
REGRESSION_NIGHT = 20
ENV_NIGHT = 40
CELL = "#workload=oltp_read_only&collation=latin1_swedish_ci&threads=4"
VIEW = "window.perftrack.charts.history"


def _records() -> Iterator[dict[str, Any]]:
    rng = random.Random(7)
    for night in range(NIGHTS):
        for rec in night_records(night, rng=rng, repeats=3, threads=(4,)):
            # SYNTHETIC steps, read_only only (the other workloads stay flat): the newest
            # version -10% from night 20; every version, the control too, -20% from night 40
            step = 1.0
            if rec["cell"]["workload"] == "oltp_read_only":
                step *= 0.9 if night >= REGRESSION_NIGHT and rec["server"]["id"] == NEWEST else 1
                step *= 0.8 if night >= ENV_NIGHT else 1
            rec["result"]["tps"] = round(rec["result"]["tps"] * step, 2)
            rec["result"]["latency_pct_ms"] = round(rec["result"]["latency_pct_ms"] / step, 4)
            yield rec


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("synthetic-60-nights")
    db = root / "results.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(list(_records()))
        detect.detect_and_store(st, [], CONTROL)
    return build.build(db, root / "site").out


def url(site: Path, hash_: str = "") -> str:
    return (site / "history.html").as_uri() + hash_


def marks(tab: Tab, prefix: str) -> list[dict[str, Any]]:
    """Items of the chart's marks whose name starts with `prefix`: colour, dash, datum."""
    return tab.page.evaluate(
        """(prefix) => { const out = [];
          (function walk(x) { if (!x || !x.items) return;
            if (x.role === 'mark' && (x.name || '').startsWith(prefix))
              for (const it of x.items) out.push({ name: x.name, type: x.marktype,
                stroke: it.stroke || null, fill: it.fill || null,
                dash: it.strokeDash ? String(it.strokeDash) : null,
                datum: it.datum ? Object.assign({}, it.datum) : null });
            x.items.forEach(walk); })(window.perftrack.charts.history.scenegraph().root);
          return out; }""",
        prefix,
    )


def redrawn(tab: Tab, action: Any) -> None:
    before = tab.drawn()
    action()
    tab.page.wait_for_function(f"() => window.perftrack.drawn > {before}", timeout=READY_TIMEOUT_MS)


def focus_domain(tab: Tab) -> list[float]:
    return tab.page.evaluate(f"{VIEW}.scale('focus_x').domain().map(Number)")


def test_the_tooltip_shows_real_dates_and_p95_with_its_precision(site: Path, tab: Tab) -> None:
    tab.open(url(site, CELL.replace("oltp_read_only", "oltp_point_select")))
    tab.page.locator("#chart-history g.nightly_marks path").nth(5).hover()
    tip = tab.page.locator("#vg-tooltip-element")
    tip.wait_for(state="visible", timeout=READY_TIMEOUT_MS)
    text = tip.inner_text()
    assert re.search(r"night\s+20\d\d-\d\d-\d\d \d\d:\d\d", text), text
    assert "NaN" not in text
    # p95 of point selects here is ~0.05 ms: printed with its significant digits
    redrawn(tab, lambda: tab.page.select_option("#history-metric", "p95_ms"))
    assert tab.page.evaluate(f"{VIEW}.data('table').every(r => r.v < 1)")
    shown = tab.page.evaluate(f"{VIEW}.data('table').map(r => [r.v, r.v_text])")
    assert shown
    for v, text in shown:  # three significant digits (trailing zeros dropped), never "0.0"
        assert text != "0.0" and re.fullmatch(r"0\.0\d{1,3}", text), text
        assert float(text) == pytest.approx(v, rel=0.01)
    tab.page.locator("#chart-history g.nightly_marks path").nth(5).hover()
    tab.shot("history-p95-tooltip")
    assert "NaN" not in tab.page.inner_text("body")
    assert tab.problems() == []


def test_change_points_are_steps_in_colours_no_version_uses(site: Path, tab: Tab) -> None:
    tab.open(url(site, CELL))
    tab.shot("history-60-nights-change-points")
    versions = {m["stroke"] for m in marks(tab, "rolling_median")}
    versions |= {m["fill"] for m in marks(tab, "nightly")}
    assert len(versions) == 3
    server = marks(tab, "change_steps_server")
    env = marks(tab, "change_steps_environment")
    assert server and env, "detect found the version's step and the environment's"
    server_colours = {m["stroke"] for m in server}
    env_colours = {m["stroke"] for m in env}
    assert len(server_colours) == len(env_colours) == 1
    assert not (server_colours | env_colours) & versions
    assert server_colours != env_colours
    assert {m["dash"] for m in env} != {m["dash"] for m in server}  # and dashed
    # the steps go from the level before to the level after: the newest version lost ~10%
    newest = [
        m["datum"] for m in marks(tab, "change_points_server") if m["datum"]["server"] == NEWEST
    ]
    assert newest and all(0.8 < d["after"] / d["before"] < 0.95 for d in newest)
    status = tab.page.inner_text("#cp-status")
    assert "change point" in status and "computed yet" not in status
    assert tab.problems() == []


def test_an_environment_change_is_drawn_on_every_cell_of_its_class(site: Path, tab: Tab) -> None:
    """Detect stores the environment change once (scope class, under the control's
    read_only series); the page draws it in the flat workloads' cells too, as the only
    change point there, and says so."""
    tab.open(url(site, CELL))
    cells = tab.page.evaluate("window.perftrack.lib.rows('history_cells')")
    flat = [c for c in cells if c["workload"] != "oltp_read_only"]
    assert flat and all(c["change_points"] >= 1 for c in flat)
    c = flat[0]
    tab.open(url(site, f"#workload={c['workload']}&collation={c['collation']}&threads=4"))
    tab.page.wait_for_function(f"() => {VIEW} && {VIEW}.data('cp_marks').length > 0")
    kinds = tab.page.evaluate(f"{VIEW}.data('cp_marks').map((m) => m.kind)")
    assert set(kinds) == {"environment"}
    assert "environment)" in tab.page.inner_text("#cp-status")


def test_after_detect_a_cell_without_change_points_says_detect_ran(
    tmp_path: Path, tab: Tab
) -> None:
    db = tmp_path / "results.duckdb"
    with store.open_db(db, write=True) as st:  # SYNTHETIC: the flat workloads only
        st.ingest([r for r in _records() if r["cell"]["workload"] != "oltp_read_only"])
        detect.detect_and_store(st, [], CONTROL)
    quiet = build.build(db, tmp_path / "site").out
    tab.open(url(quiet, "#workload=oltp_point_select&collation=latin1_swedish_ci&threads=4"))
    cells = tab.page.evaluate("window.perftrack.lib.rows('history_cells')")
    assert cells and all(c["change_points"] == 0 for c in cells)
    text = tab.page.inner_text("#cp-status")
    assert "No change point in this cell" in text and "last ran" in text


def test_the_rolling_median_is_drawn_over_the_nightly_points(site: Path, tab: Tab) -> None:
    tab.open(url(site, CELL + "&median=7"))
    lines = marks(tab, "rolling_median")
    assert len({m["stroke"] for m in lines}) == 3  # one per version
    rows = tab.page.evaluate(f"{VIEW}.data('table').map(r => Object.assign({{}}, r))")
    newest = sorted((r for r in rows if r["server"] == NEWEST), key=lambda r: r["t"])
    for i in (0, 3, 30, len(newest) - 1):
        window = [r["v"] for r in newest[max(0, i - 6) : i + 1]]
        assert newest[i]["med"] == pytest.approx(statistics.median(window))
    redrawn(tab, lambda: tab.page.select_option("#history-median", "1"))
    assert marks(tab, "rolling_median") == []
    assert "median=1" in tab.page.url


def test_a_deep_link_restores_range_versions_and_metric(site: Path, tab: Tab) -> None:
    link = CELL + f"&metric=p95_ms&median=15&from=2026-01-21&to=2026-02-10&versions={NEWEST}"
    tab.open(url(site, link))
    tab.shot("history-deep-link-range")
    assert tab.page.input_value("#history-from") == "2026-01-21"
    assert tab.page.input_value("#history-to") == "2026-02-10"
    assert tab.page.input_value("#history-metric") == "p95_ms"
    assert tab.page.input_value("#history-median") == "15"
    checked = tab.page.evaluate(
        "[...document.querySelectorAll('#history-versions input')].map(x => [x.value, x.checked])"
    )
    assert dict(checked) == {CONTROL: False, "synthetic-mysql-8.4.0": False, NEWEST: True}
    assert {r["server"] for r in tab.page.evaluate(f"{VIEW}.data('table')")} == {NEWEST}
    lo, hi = focus_domain(tab)
    assert tab.page.evaluate(f"new Date({lo}).toISOString()").startswith("2026-01-21")
    assert tab.page.evaluate(f"new Date({hi}).toISOString()").startswith("2026-02-10")
    assert "p95 latency" in (tab.page.text_content("#chart-history") or "")  # y axis title
    for key in ("from=2026-01-21", "to=2026-02-10", "metric=p95_ms", f"versions={NEWEST}"):
        assert key in tab.page.url
    assert tab.page.inner_text("#status") == ""
    assert tab.problems() == []


def focus_y(tab: Tab) -> list[float]:
    return tab.page.evaluate(f"{VIEW}.scale('focus_y').domain().map(Number)")


def test_brushing_the_overview_zooms_and_lands_in_the_url(site: Path, tab: Tab) -> None:
    tab.open(url(site, CELL))
    full = focus_domain(tab)
    full_y = focus_y(tab)
    strip = tab.page.locator("#chart-history g.context_pathgroup").first
    strip.scroll_into_view_if_needed()  # below the fold at 1280×900: the mouse must reach it
    box = strip.bounding_box() or {}
    assert box, "the overview strip is drawn"
    y = box["y"] + box["height"] / 2
    tab.page.mouse.move(box["x"] + box["width"] * 0.4, y)
    tab.page.mouse.down()
    tab.page.mouse.move(box["x"] + box["width"] * 0.6, y, steps=5)
    tab.page.mouse.up()
    tab.page.wait_for_function("() => location.hash.includes('from=')", timeout=READY_TIMEOUT_MS)
    lo, hi = focus_domain(tab)
    assert full[0] < lo < hi < full[1]
    # y rescaled to the nights in the range: the -20% nights (40 on) are out of it, so
    # the scale's floor rises, and every night in the range is inside the scale
    y0, y1 = focus_y(tab)
    assert y0 > full_y[0] and y1 <= full_y[1], (full_y, (y0, y1))
    seen = tab.page.evaluate(f"{VIEW}.data('table')")
    inside = [p for p in seen if lo <= p["t"] <= hi]
    assert inside and all(y0 <= p["v"] <= y1 for p in inside)
    frm = tab.page.input_value("#history-from")
    assert frm and f"from={frm}" in tab.page.url
    tab.shot("history-zoomed")
    # the link restores the zoom
    zoomed = tab.page.url
    tab.page.goto("about:blank")
    tab.open(zoomed)
    assert tab.page.input_value("#history-from") == frm
    lo2, _ = focus_domain(tab)
    assert lo2 <= lo and tab.page.evaluate(f"new Date({lo2}).toISOString()").startswith(frm)
    assert tab.problems() == []


def test_a_version_toggle_hides_its_line(site: Path, tab: Tab) -> None:
    tab.open(url(site, CELL))
    redrawn(tab, lambda: tab.page.uncheck(f"#history-versions input[value='{CONTROL}']"))
    assert CONTROL not in {r["server"] for r in tab.page.evaluate(f"{VIEW}.data('table')")}
    assert len({m["stroke"] for m in marks(tab, "rolling_median")}) == 2
    assert "versions=" in tab.page.url and CONTROL not in tab.page.url.split("versions=")[1]


def test_a_history_point_opens_its_run(site: Path, tab: Tab) -> None:
    tab.open(url(site, CELL))
    dot = tab.page.locator("#chart-history g.nightly_marks path").nth(10)
    run = tab.page.evaluate(
        f"{VIEW}.data('table').slice().sort((a, b) => a.t - b.t || a.vorder - b.vorder)"
        ".map(r => r.run_id)"
    )
    dot.click()
    tab.page.wait_for_url(re.compile(r".*/runs\.html#run="), timeout=READY_TIMEOUT_MS)
    tab.page.wait_for_selector("body[data-ready='1']", timeout=READY_TIMEOUT_MS)
    opened = tab.page.input_value("#run-select")
    assert opened in run and opened.startswith("synthetic-night-")
    assert tab.page.is_visible("#run-detail")


@pytest.mark.parametrize(
    ("link", "says"),
    [
        ("#workload=nosuch_workload", 'No workload "nosuch_workload"'),
        (CELL + "&versions=synthetic-mysql-0.0.1", 'No version "synthetic-mysql-0.0.1"'),
        (CELL + "&from=2030-01-01&to=2030-02-01", "No nights between 2030-01-01 and 2030-02-01"),
        (CELL + "&from=yesterday", 'Not a date range: "yesterday"'),
        (CELL + "&metric=nosuch", 'No metric "nosuch"'),
    ],
)
def test_a_bad_deep_link_shows_a_message_and_the_rest(
    site: Path, tab: Tab, link: str, says: str
) -> None:
    tab.open(url(site, link))
    status = tab.page.locator("#status")
    assert status.is_visible()
    assert says in status.inner_text()
    assert tab.marks("history") > 0, "the chart is drawn with what exists"
    assert "NaN" not in tab.page.inner_text("body")
    assert tab.problems() == []
