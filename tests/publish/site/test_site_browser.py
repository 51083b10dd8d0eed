"""The built site in a real browser (Debian's chromium via Playwright), as a person uses it.

Sites are built from SYNTHETIC DBs (tests/fixtures/records/synthetic_history.py). Every
test saves screenshots under test-artifacts/site/.
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from site_helpers import (
    HOSTILE_REASON,
    HOSTILE_VERSION,
    READY_TIMEOUT_MS,
    REPO,
    SYNTHETIC_STUDY,
    Tab,
)

CHART_PAGES = {
    "index": "overview",
    "trend": "trend",
    "scaling": "scaling",
    "charset": "charset",
    "heatmap": "heatmap",
    "history": "history",
    "cost": "cost",
}
PAGES = [*CHART_PAGES, "runs", "studies"]
SERVE_STOP_TIMEOUT_S = 30
PERFTRACK = str(Path(sys.executable).parent / "perftrack")


def url(site: Path, page: str, hash_: str = "") -> str:
    return (site / f"{page}.html").as_uri() + hash_


def chart_rows(tab: Tab, chart: str) -> list[dict[str, Any]]:
    """The rows the drawn chart holds (its Vega data set 'table')."""
    return tab.page.evaluate(
        f"window.perftrack.charts[{chart!r}].data('table').map(r => Object.assign({{}}, r))"
    )


def select(tab: Tab, key: str, value: str) -> None:
    before = tab.drawn()
    tab.page.select_option(f"#filter-{key}", value)
    tab.page.wait_for_function(f"() => window.perftrack.drawn > {before}", timeout=READY_TIMEOUT_MS)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_loads_without_console_errors_and_draws(
    sites: dict[str, Path], tab: Tab, page: str
) -> None:
    site = sites["history"]
    tab.open(url(site, page))
    tab.shot(f"desktop-{page}")
    assert tab.problems() == []
    if page in CHART_PAGES:
        assert tab.marks(CHART_PAGES[page]) > 0, "the chart drew no marks from the data"
        assert len(chart_rows(tab, CHART_PAGES[page])) > 0
    # every request stayed inside the site's own directory
    assert all(r.startswith(site.as_uri()) for r in tab.requests), tab.requests


@pytest.mark.parametrize("page", ["index", "trend", "history", "runs"])
def test_pages_fit_a_phone_screen(sites: dict[str, Path], phone_tab: Tab, page: str) -> None:
    phone_tab.open(url(sites["history"], page))
    phone_tab.shot(f"phone-{page}")
    assert phone_tab.problems() == []
    overflow = phone_tab.page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 1, f"the page is {overflow}px wider than the phone's screen"
    if page in CHART_PAGES:
        assert phone_tab.marks(CHART_PAGES[page]) > 0


def test_filters_change_what_is_drawn_and_land_in_the_url(sites: dict[str, Path], tab: Tab) -> None:
    tab.open(url(sites["history"], "trend"))
    all_rows = chart_rows(tab, "trend")
    assert {r["workload"] for r in all_rows} == {
        "oltp_point_select",
        "oltp_read_only",
        "oltp_read_write",
    }
    marks_all = tab.marks("trend")
    select(tab, "workload", "oltp_read_only")
    rows = chart_rows(tab, "trend")
    assert rows and {r["workload"] for r in rows} == {"oltp_read_only"}
    assert tab.marks("trend") < marks_all
    assert "workload=oltp_read_only" in tab.page.url
    select(tab, "threads", "4")
    assert {r["threads"] for r in chart_rows(tab, "trend")} == {4}
    tab.shot("filter-trend-read-only-4-threads")
    # the other pages' links carry the same view
    href = tab.page.get_attribute("nav a[data-page='scaling']", "href") or ""
    assert "workload=oltp_read_only" in href
    assert tab.problems() == []


def test_a_permalink_restores_the_view(sites: dict[str, Path], tab: Tab) -> None:
    link = "#workload=oltp_point_select&collation=utf8mb4_0900_ai_ci&threads=4"
    tab.open(url(sites["history"], "history", link))
    assert tab.page.input_value("#filter-workload") == "oltp_point_select"
    assert tab.page.input_value("#filter-collation") == "utf8mb4_0900_ai_ci"
    assert tab.page.input_value("#filter-threads") == "4"
    rows = chart_rows(tab, "history")
    assert rows
    assert {(r["workload"], r["collation"], r["threads"]) for r in rows} == {
        ("oltp_point_select", "utf8mb4_0900_ai_ci", 4)
    }
    tab.shot("permalink-history")
    assert tab.problems() == []


def test_history_is_broken_at_the_hardware_change(sites: dict[str, Path], tab: Tab) -> None:
    tab.open(url(sites["history"], "history"))
    changes = tab.page.evaluate("window.perftrack.charts.history.data('hardware_changes').length")
    assert changes == 1
    # one rolling-median line per version and hardware key: 3 versions x 2 machines,
    # never joined
    lines = tab.page.evaluate(
        """(() => { let n = 0;
          (function walk(x) { if (!x || !x.items) return;
            if (x.marktype === 'line' && x.role === 'mark' && x.name.startsWith('rolling_median'))
              n++;
            x.items.forEach(walk); })(window.perftrack.charts.history.scenegraph().root);
          return n; })()"""
    )
    assert lines == 6
    assert "No change points computed yet" in tab.page.inner_text("#cp-status")
    assert tab.problems() == []


def test_history_marks_change_points_and_annotations(
    tmp_path: Path, history_db: Path, tab: Tab
) -> None:
    from perftrack.publish.site import build
    from perftrack.store.files import nightfiles

    db = tmp_path / "results.duckdb"
    nightfiles.copy_db(history_db, db)
    # SYNTHETIC: a change point as `perftrack detect` stores it
    con = nightfiles.connect(db, read_only=False)
    con.execute(
        """INSERT INTO change_points
           SELECT 'synthetic-series', ru.hw_key, ru.runner_class, r.workload, r.threads,
                  r."collation", r.profile, r.tables, r.table_size, r.duration_s, r.connection,
                  r.engine, r.isolation, r.durability, r.handshake, r.dataset_size, r.phase,
                  'tps', s.server_id, r.run_id, min(r.started_at), 2500.0, 2250.0, -0.1,
                  0.0001, false, false, NULL, now(), -0.15, -0.05, 'series', 1
           FROM results r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
           WHERE r.run_id = 'synthetic-night-0005' AND r.workload = 'oltp_read_only'
             AND r.threads = 1 AND r."collation" = 'latin1_swedish_ci'
             AND s.server_id = 'synthetic-mysql-9.1.0'
           GROUP BY ALL"""
    )
    con.close()
    notes = tmp_path / "annotations.yaml"
    notes.write_text(
        "annotations:\n  - match: {server: synthetic-mysql-9.1.0, workload: oltp_read_only}\n"
        "    reason: synthetic annotation (test fixture)\n    date: 2026-01-06\n"
    )
    site = build.build(db, tmp_path / "site", annotations_path=notes).out
    link = "#workload=oltp_read_only&collation=latin1_swedish_ci&threads=1"
    tab.open(url(site, "history", link))
    view = "window.perftrack.charts.history"
    assert tab.page.evaluate(f"{view}.data('cp_marks').length") == 1
    assert tab.page.evaluate(f"{view}.data('annotations').length") == 1
    assert tab.page.inner_text("#cp-status").startswith("1 change point in this cell")
    tab.shot("history-change-point-annotation")
    # another cell: neither is drawn there
    select(tab, "workload", "oltp_point_select")
    assert tab.page.evaluate("window.perftrack.datasets.history.annotations.length") == 0
    assert tab.page.evaluate("window.perftrack.datasets.history.cp_marks.length") == 0
    assert tab.problems() == []


def test_every_chart_has_a_table_view_and_a_csv_download(sites: dict[str, Path], tab: Tab) -> None:
    tab.open(url(sites["history"], "scaling"))
    n = len(chart_rows(tab, "scaling"))
    card = tab.page.locator("[data-chart='scaling']")
    card.locator("details.table-view summary").click()
    # the table is filled on the details' "toggle" event, a task after the click
    card.locator("details.table-view tbody tr").first.wait_for(timeout=READY_TIMEOUT_MS)
    assert card.locator("details.table-view tbody tr").count() == n
    with tab.page.expect_download() as dl:
        card.locator("button.csv").click()
    text = Path(dl.value.path()).read_text(encoding="utf-8")
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert len(parsed) == n
    assert {"version", "workload", "median tx/s"} <= set(parsed[0])
    assert tab.problems() == []


def test_overview_lists_regressions_first(sites: dict[str, Path], tab: Tab) -> None:
    tab.open(url(sites["history"], "index"))
    verdicts = tab.page.locator("#verdict-table tbody tr td:first-child").all_inner_texts()
    assert "regression" in verdicts
    rank = {"regression": 0, "improvement": 1, "inconclusive": 2, "unchanged": 3}
    assert [rank[v] for v in verdicts] == sorted(rank[v] for v in verdicts)
    assert tab.page.locator(".count.verdict.regression b").inner_text() != "0"
    # the headline opens the page (issue 37 item 4): a sentence saying what the site is,
    # then one line per version pair, which say what the table below says
    assert "tracks the performance of MySQL and MariaDB" in tab.page.inner_text(".opening")
    lines = tab.page.locator("#headline li").all_inner_texts()
    pairs = tab.page.locator("#headline li").evaluate_all("(ls) => ls.map((l) => l.dataset.pair)")
    assert len(lines) == len(set(pairs)) >= 1
    assert any(re.search(r": [1-9]\d* regressions?, ", ln) for ln in lines)
    assert all(
        ln.startswith(p + ": ") and " cells · geomean " in ln
        for ln, p in zip(lines, pairs, strict=True)
    )
    # the verdicts of hardware the runner class no longer has: counted, placed, one click
    every = tab.page.evaluate("window.perftrack.lib.rows('verdicts')")
    earlier = [r for r in every if not r["hw_current"]]
    assert earlier and len(verdicts) == min(len(every) - len(earlier), 500)
    note = tab.page.inner_text("#verdict-elsewhere")
    assert f"{len(earlier)} more were measured on hardware it no longer has" in note
    assert f"{len(earlier)} on synthetic: 5ee0000000a1" in note
    with tab.page.expect_navigation(timeout=READY_TIMEOUT_MS):
        tab.page.click("#verdict-hardware-toggle")
    tab.page.wait_for_selector("body[data-ready='1']", timeout=READY_TIMEOUT_MS)
    assert "hardware=all" in tab.page.url
    assert tab.page.locator("#verdict-table tbody tr").count() == min(len(every), 500)
    assert "earlier hardware 5ee0000000a1" in tab.page.inner_text("#verdict-table")
    assert tab.problems() == []


def test_run_page_shows_configuration_and_variable_diff(sites: dict[str, Path], tab: Tab) -> None:
    tab.open(url(sites["history"], "runs", "#run=synthetic-night-0003"))
    assert tab.page.input_value("#run-select") == "synthetic-night-0003"
    tab.page.wait_for_function("document.getElementById('diff-status').textContent.includes('→')")
    assert "synthetic-night-0003" in tab.page.inner_text("#run-config")
    assert "8.4.0-synthetic" in tab.page.inner_text("#run-servers")
    # the first pair with a difference is selected; the buffer pool default "changed"
    options = tab.page.locator("#diff-select option").all_inner_texts()
    pair = next(o for o in options if o.startswith("synthetic-mysql-8.4.0 → synthetic-mysql-9.1.0"))
    tab.page.select_option("#diff-select", pair)
    assert "innodb_buffer_pool_size" in tab.page.inner_text("#run-diff")
    tab.shot("runs-detail")
    assert tab.problems() == []


def test_run_page_shows_the_explanation_of_its_versions(
    history_db: Path, tmp_path: Path, tab: Tab
) -> None:
    """A stored `perftrack explain` result (SYNTHETIC: built here, nothing measured) of a
    pair of the run's versions is on the run's page: the setting, its share and interval."""
    from perftrack.analysis import candidates
    from perftrack.experiments import explanation
    from perftrack.publish.site import build
    from perftrack.store import explanations
    from perftrack.store.files import nightfiles

    db = tmp_path / "results.duckdb"
    nightfiles.copy_db(history_db, db)
    old, new = "synthetic-mysql-8.4.0", "synthetic-mysql-9.1.0"
    cand = candidates.Candidate("innodb_buffer_pool_size", "innodb_buffer_pool_size", "128M", "1G")
    res = explanation.Explanation(
        old, new, {"workload": "oltp_point_select", "threads": 4, "metric": "tps"}, [cand], []
    )
    res.groups.append(explanation.Group("g1", (cand,), 1, state=explanation.MOVED, share=0.62,
                                        share_low=0.41, share_high=0.83))  # fmt: skip
    res.isolated.append("g1")
    explanations.save(db, explanation.to_json(res))
    site = build.build(db, tmp_path / "site").out
    tab.open(url(site, "runs", "#run=synthetic-night-0003"))
    tab.page.wait_for_selector("#run-explain tbody tr")
    row = tab.page.locator("#run-explain tbody tr").first.inner_text()
    assert f"{old} → {new}" in row
    assert "innodb_buffer_pool_size=128M" in row
    assert "62% [41%, 83%]" in row
    assert "1 explanation(s)" in tab.page.inner_text("#explain-status")
    tab.shot("runs-explanation")
    assert tab.problems() == []
    # the same run in a site without explanations says how to get one
    plain = build.build(history_db, tmp_path / "plain").out
    tab.open(url(plain, "runs", "#run=synthetic-night-0003"))
    tab.page.wait_for_selector("#run-servers tbody tr")
    tab.page.wait_for_function("document.getElementById('diff-status').textContent.includes('→')")
    pair = tab.page.input_value("#diff-select").split(" · ")[0]
    assert f"No explanation stored for {pair} yet" in tab.page.inner_text("#explain-status")
    assert tab.page.locator("#run-explain tbody tr").count() == 0
    # ... and the command that computes it, for the selected pair
    a, b = pair.split(" → ")
    command = tab.page.inner_text("#explain-command")
    assert re.fullmatch(
        rf"perftrack explain {a} {b} --workload \w+ --threads \d+ --charset \w+ --profile \w+",
        command.strip(),
    ), command
    # the settings explain would try are listed, the rest folded with why (the version)
    assert tab.page.locator("#diff-rest").get_attribute("open") is None
    assert int(tab.page.inner_text("#diff-rest-count")) >= 1
    assert "a version string" in (tab.page.text_content("#run-diff-rest") or "")


@pytest.mark.parametrize("page", PAGES)
def test_an_empty_db_says_no_results_yet(sites: dict[str, Path], tab: Tab, page: str) -> None:
    tab.open(url(sites["empty"], page))
    tab.shot(f"empty-{page}")
    assert tab.problems() == []
    status = tab.page.inner_text("#status")
    assert "No results yet" in status or (page == "studies" and "No studies yet" in status)


@pytest.mark.parametrize("page", ["index", "history", "runs", "heatmap"])
def test_html_in_version_strings_and_annotations_is_shown_as_text(
    sites: dict[str, Path], tab: Tab, page: str
) -> None:
    tab.open(url(sites["hostile"], page, "#run=synthetic-hostile"))
    if page == "runs":
        tab.page.wait_for_selector("#run-servers tbody tr")
    tab.shot(f"hostile-{page}")
    assert tab.page.evaluate("window.__pwned") is None, "injected script ran"
    assert tab.page.locator("main img").count() == 0
    assert tab.dialogs == []
    text = tab.page.inner_text("main")
    if page == "index":
        assert HOSTILE_VERSION in text
        assert HOSTILE_REASON in text
        assert "acknowledged" in text
    if page == "runs":
        assert HOSTILE_VERSION in text
    if page == "history":
        one_night_history_is_readable(tab)
    assert tab.problems() == []


def one_night_history_is_readable(tab: Tab) -> None:
    """The hostile DB has one night: its dots sit inside the plot, not on its edge, and
    each date is one label per axis (the focus and the overview strip), never one label
    per six hours."""
    view = "window.perftrack.charts.history"
    ts = tab.page.evaluate(f"{view}.data('table').map(d => d.t)")
    assert ts and len({t // 86_400_000 for t in ts}) == 1
    lo, hi = tab.page.evaluate(f"{view}.scale('focus_x').domain().map(Number)")
    assert lo < min(ts) and max(ts) < hi
    labels = tab.page.eval_on_selector_all(
        "#chart-history svg .role-axis-label text", "ts => ts.map(t => t.textContent)"
    )
    dates = [x for x in labels if re.fullmatch(r"\d{4}-\d\d-\d\d", x)]
    night = tab.page.evaluate(f"new Date({ts[0]}).toISOString().slice(0, 10)")
    assert night in dates, dates
    assert max(dates.count(d) for d in dates) <= 2, dates


def test_study_pages_show_the_articles_ratios(sites: dict[str, Path], tab: Tab) -> None:
    site = sites["history"]
    pages = sorted(p.stem for p in site.glob("study-*.html"))
    real = [p for p in pages if p != f"study-{SYNTHETIC_STUDY}"]
    assert len(real) == len(list((REPO / "configs" / "studies").glob("*.yaml"))) == 5
    tab.open(url(site, "studies"))
    assert tab.page.locator("#study-list li").count() == len(pages)
    # the SYNTHETIC study: its servers are in the DB, so the page draws our ratios
    tab.open(url(site, f"study-{SYNTHETIC_STUDY}"))
    tab.shot(f"desktop-study-{SYNTHETIC_STUDY}")
    assert "Scale local: SYNTHETIC servers" in tab.page.inner_text("#study-source")
    roles = tab.page.inner_text("#study-roles").splitlines()
    assert [r.split(" (")[0] for r in roles] == [
        "base: article MySQL A -> here synthetic-mysql-8.0.36",
        "new: article MySQL B -> here synthetic-mysql-8.4.0",
    ]
    assert "a stand-in of the same product: graded" in roles[0]
    marks = int(tab.page.get_attribute("#chart-study", "data-marks") or 0)
    assert marks > 0
    rows = tab.page.locator("#study-table tbody tr")
    assert rows.count() > 0
    text = tab.page.inner_text("#study-table")
    assert "0.930" in text and "NaN" not in text and "undefined" not in text
    assert "claim: B is slower than A" in tab.page.inner_text("#study-claims")
    # the real studies: no results of their servers in this DB; the page says what to run,
    # names the stand-ins and the article's claims
    for page in real:
        tab.open(url(site, page))
        tab.shot(f"desktop-{page}")
        assert tab.page.inner_text("#study-title") not in ("", "Study")
        assert tab.page.locator("#study-roles li").count() >= 2
        assert "perftrack study run" in tab.page.inner_text("#status")
        assert "Nothing to draw yet" in tab.page.inner_text("#chart-study")
    tab.open(url(site, "study-002_utf8mb4_80_57_56_mariadb103"))
    assert "up to 1.40" in tab.page.inner_text("#study-claims")
    assert tab.problems() == []


def test_site_serve_serves_the_site_on_loopback_only(sites: dict[str, Path], tab: Tab) -> None:
    proc = subprocess.Popen(
        [PERFTRACK, "site", "serve", "--out", str(sites["history"]), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        base = m.group(0)
        tab.open(base + "index.html")
        assert tab.marks("overview") > 0
        tab.open(base + "history.html")
        assert tab.marks("history") > 0
        assert tab.problems() == []
        assert all(r.startswith(base) for r in tab.requests), tab.requests
    finally:
        proc.terminate()
        proc.wait(timeout=SERVE_STOP_TIMEOUT_S)


REAL_DB = REPO / "data" / "results.duckdb"  # real measurements of this project's machines


@pytest.mark.parametrize(
    "name",
    ["002_utf8mb4_80_57_56_mariadb103", "003_tpcb_41_vs_50", "004_sakila_57_80_84_ps_mariadb"],
)
def test_real_study_pages_draw_what_study_report_says(
    name: str, tmp_path_factory: pytest.TempPathFactory, tab: Tab, capsys
) -> None:
    """The site built from data/results.duckdb (REAL local runs of the studies, read only):
    the page's table holds the rows `perftrack study report --from-db` prints, the chart draws
    them with our intervals next to the article's, and the stand-ins are named."""
    from perftrack import cli
    from perftrack.publish.site import build

    out = tmp_path_factory.mktemp(f"real-{name[:3]}") / "site"
    build.build(REAL_DB, out, studies_dir=REPO / "configs" / "studies")
    capsys.readouterr()
    assert cli.main(["study", "report", name, "--from-db", "--db", str(REAL_DB)]) == 0
    report = capsys.readouterr().out
    tab.open(url(out, f"study-{name}"))
    tab.shot(f"desktop-real-study-{name[:3]}")
    assert "Scale local: " in tab.page.inner_text("#study-source")
    roles = tab.page.inner_text("#study-roles").splitlines()
    players = [ln.strip() for ln in report.splitlines() if " -> here " in ln]
    assert roles == players and any("-> here mariadb-" in r for r in roles)
    # every row of the report (the lines under a "cells" header) is a table row, in order,
    # with the same grade in the same words
    rows, in_table = [], False
    for ln in report.splitlines():
        if ln.startswith("  cells "):
            in_table = True
        elif in_table and ln.startswith("  ") and not ln.startswith("  NOTE"):
            rows.append(ln)
        else:
            in_table = False
    grades = [re.search(r" \d+/\d+ +(?:—|\d\.\d{3})  (.+)$", ln) for ln in rows]
    n_rows = tab.page.locator("#study-table tbody tr").count()
    assert n_rows == len(rows) > 0 and all(grades)
    page_grades = tab.page.locator("#study-table tbody tr td:last-child").all_inner_texts()
    assert page_grades == [g.group(1) for g in grades if g]
    assert any(g.endswith(" — direction only") for g in page_grades)  # MariaDB for MySQL
    table = tab.page.inner_text("#study-table")
    assert "NaN" not in table and "undefined" not in table
    measured = [ln for ln in rows if re.search(r"\d\.\d{3}[* ] +\[", ln)]
    first = re.search(r"(\d\.\d{3})[* ] +\[", measured[0])
    assert first and first.group(1) in table  # the report's first ratio, on the page
    assert int(tab.page.get_attribute("#chart-study", "data-marks") or 0) >= len(measured)
    assert "Nothing to draw yet" not in tab.page.inner_text("#chart-study")
    # the claims and findings in the report's words, and the rule they are graded by
    claims = tab.page.inner_text("#study-claims").splitlines()
    said = [ln for ln in report.splitlines() if ln.startswith(("finding", "claim:"))]
    assert claims == (said or ["The article's claims are its numbers: see the table."])
    rule = next(ln for ln in report.splitlines() if ln.startswith("grades: "))
    assert rule.removeprefix("grades: ") in tab.page.inner_text("#study-rule")
    assert tab.problems() == []


def test_advisor_page_says_what_perftrack_advise_says(
    sites: dict[str, Path], history_db: Path, tab: Tab, capsys
) -> None:
    """The SYNTHETIC history DB: the advisor page's rows, verdict colours and chart are the
    CLI's `advise --json` for the same release and series; a deep link to a release that
    does not exist says so instead of drawing a blank chart."""
    import json

    from perftrack import cli

    site = sites["history"]
    assert (
        cli.main(["advise", "--from", "synthetic-mysql-8.0.36", "--db", str(history_db), "--json"])
        == 0
    )
    advice = json.loads(capsys.readouterr().out)["series"]
    first = advice[0]
    shape = first["shape"]
    link = (
        f"#from=synthetic-mysql-8.0.36&workload={shape['workload']}"
        f"&collation={shape['collation']}&threads={shape['threads']}&profile={shape['profile']}"
    )
    tab.open(url(site, "advisor", link))
    tab.shot("desktop-advisor")
    rows = tab.page.locator("#advisor-table tbody tr")
    assert rows.count() == len(first["targets"]) > 0
    for i, t in enumerate(first["targets"]):
        cells = rows.nth(i).locator("td")
        assert cells.nth(0).inner_text() == t["server"]
        change = (t["throughput"]["ratio"] - 1) * 100
        assert cells.nth(1).inner_text() == f"{'+' if change >= 0 else ''}{change:.1f}%"
        assert cells.nth(4).get_attribute("class") == f"verdict {t['throughput']['verdict']}"
    host = tab.page.locator("#chart-advisor")
    assert int(host.get_attribute("data-points") or 0) == len(first["targets"])
    assert "NaN" not in tab.page.inner_text("main")
    assert tab.problems() == []
    tab.open(url(site, "advisor", "#from=mysql-4.0.0"))
    status = tab.page.inner_text("#status")
    assert 'No release with results named "mysql-4.0.0" in the data' in status
    assert tab.page.input_value("#advisor-from") != "mysql-4.0.0"
