"""Every mark says what it means and leads to its cause (issue #20, items 1, 3 and 6), in
a real browser (Debian's chromium via Playwright) at 1280×900.

The heatmap's colours are the stored verdicts, the forest plot has one row per verdict
grouped by series, the tables fit their cards, p95 has the digits its size needs, a
verdict leads to its run's variables diff and its nightly history, the trend page draws
the metric and the configurations picked, and a deep link to something that does not
exist says so. Sites are built from SYNTHETIC DBs (tests/fixtures/records/); screenshots
go to test-artifacts/site/.
"""

from __future__ import annotations

import copy
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
from site_helpers import READY_TIMEOUT_MS, Tab
from test_site_browser import chart_rows, url

from fixtures.records.synthetic_history import HW_KEYS, build_db, night_records
from perftrack.core import record
from perftrack.publish.site import build
from perftrack.store import store
from perftrack.store.files import nightfiles

VERDICT_COLOURS = {  # the Overview's (overview.vl.json) and the heatmap's
    "regression": "#c0392b",
    "improvement": "#2471a3",
    "unchanged": "#7f8c8d",
    "inconclusive": "#b9770e",
}
# SYNTHETIC: the defect seen on the real DB, a cell far from 1 whose verdict is unchanged
ODD = {"ratio": 0.868, "ci_low": 0.66, "ci_high": 1.35}
ODD_CELL = {"workload": "oltp_read_only", "collation": "latin1_swedish_ci", "threads": 4}
ODD_PAIR = ("synthetic-mysql-8.4.0", "synthetic-mysql-9.1.0")

# Every drawn data mark of a chart: its type, fill, text, datum and position on the page
# (x, y summed over its groups: facet panels have their own offsets).
MARKS_JS = """(name) => { const out = [];
  (function walk(n) { if (!n || !n.items) return;
    if (n.marktype && n.marktype !== 'group' && n.role === 'mark') for (const it of n.items) {
      let x = it.x || 0, y = it.y || 0;
      for (let g = it.mark.group; g; g = g.mark && g.mark.group) { x += g.x || 0; y += g.y || 0; }
      out.push({ type: n.marktype, fill: it.fill || null,
                 text: it.text == null ? null : String(it.text),
                 x, y, datum: JSON.parse(JSON.stringify(it.datum || {})) });
    }
    n.items.forEach(walk); })(window.perftrack.charts[name].scenegraph().root);
  return out; }"""


def marks(tab: Tab, chart: str) -> list[dict[str, Any]]:
    return tab.page.evaluate(MARKS_JS, chart)


@pytest.fixture(scope="module")
def odd_site(history_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The history DB after `perftrack detect`, one stored verdict set to 0.868 [0.66, 1.35]
    unchanged (SYNTHETIC, as the real DB showed it); the site reads the stored verdicts."""
    from perftrack.cli.analysis import detect_into

    root = tmp_path_factory.mktemp("odd")
    db = root / "results.duckdb"
    nightfiles.copy_db(history_db, db)
    detect_into(db)
    con = nightfiles.connect(db, read_only=False)
    n = con.execute(
        """UPDATE verdicts SET ratio = ?, ci_low = ?, ci_high = ?, verdict = 'unchanged'
           WHERE metric = 'tps' AND workload = ? AND "collation" = ? AND threads = ?
             AND base_server = ? AND new_server = ? AND hw_key = ? RETURNING 1""",
        [ODD["ratio"], ODD["ci_low"], ODD["ci_high"], *ODD_CELL.values(), *ODD_PAIR, HW_KEYS[1]],
    ).fetchall()
    con.close()
    assert len(n) == 1
    return build.build(db, root / "site").out


@pytest.fixture(scope="module")
def configs_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SYNTHETIC: 4 nights of the history fixture's cells (1 thread) under two profiles,
    `default` and `durable` (30% slower), so one page has several configurations."""
    root = tmp_path_factory.mktemp("configs")
    db = root / "results.duckdb"
    build_db(db, 4, repeats=3, threads=(1,))
    import random

    rng = random.Random(7)
    recs = []
    for night in range(4):
        for rec in night_records(night, rng=rng, repeats=3, threads=(1,)):
            r = copy.deepcopy(rec)
            r["cell"]["profile"] = "durable"
            r["cell_id"] = hashlib.sha256(f"{r['cell_id']}-durable".encode()).hexdigest()[:16]
            r["record_id"] = record.record_id(r["run_id"], r["cell_id"], 1)
            r["result"]["tps"] = round(r["result"]["tps"] * 0.7, 2)
            recs.append(r)
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    return build.build(db, root / "site").out


# ---------------------------------------------------------------- heatmap


def test_heatmap_cells_are_coloured_by_their_stored_verdict(odd_site: Path, tab: Tab) -> None:
    tab.open(url(odd_site, "heatmap"))
    tab.shot("marks-heatmap-verdict-colours")
    drawn = marks(tab, "heatmap")
    rects = [m for m in drawn if m["type"] == "rect"]
    texts = [m for m in drawn if m["type"] == "text"]
    # every collation and thread count of the series: 3 workloads x 2 pairs x 2 x 2
    assert len(rects) == len(texts) == 24
    for m in rects:
        assert m["fill"] == VERDICT_COLOURS[m["datum"]["verdict"]], m["datum"]
    odd = [m for m in rects if m["datum"]["ratio"] == ODD["ratio"]]
    assert len(odd) == 1 and odd[0]["fill"] == VERDICT_COLOURS["unchanged"]
    # it opens on the worst verdict's series: a regression (current hardware first, the
    # largest slowdown), whose red cell is drawn
    rows = tab.page.evaluate("window.perftrack.lib.rows('verdicts')")
    rank = {"regression": 0, "inconclusive": 1, "improvement": 2, "unchanged": 3}
    worst = min(rows, key=lambda r: (rank[r["verdict"]], not r["hw_current"], r["ratio"]))
    assert worst["verdict"] == "regression"
    for key in ("runner_class", "hw_key", "profile", "dataset"):
        assert tab.page.input_value(f"#filter-{key}") == str(worst[key])
    assert any(
        m["datum"]["ratio"] == worst["ratio"] and m["fill"] == VERDICT_COLOURS["regression"]
        for m in rects
    )
    assert "0.868" in [m["text"] for m in texts]
    assert tab.problems() == []


def test_a_heatmap_cell_opens_its_nightly_history(odd_site: Path, tab: Tab) -> None:
    tab.open(url(odd_site, "heatmap"))
    label = tab.page.locator("#chart-heatmap svg text", has_text=re.compile(r"^0\.868$"))
    with tab.page.expect_navigation(timeout=READY_TIMEOUT_MS):
        label.click()
    tab.page.wait_for_selector("body[data-ready='1']", timeout=READY_TIMEOUT_MS)
    assert tab.page.url.split("#")[0].endswith("/history.html")
    for key, value in ODD_CELL.items():
        assert tab.page.input_value(f"#filter-{key}") == str(value)
    tab.shot("marks-heatmap-cell-to-history")
    assert tab.problems() == []


def test_the_heatmap_metric_selector_draws_that_metrics_verdicts(
    sites: dict[str, Path], tab: Tab
) -> None:
    tab.open(url(sites["history"], "heatmap"))
    options = tab.page.locator("#metric option").all_inner_texts()
    assert options[:2] == ["throughput (transactions/s)", "p95 latency (ms)"]
    before = tab.drawn()
    tab.page.select_option("#metric", "p95_ms")
    tab.page.wait_for_function(f"() => window.perftrack.drawn > {before}", timeout=READY_TIMEOUT_MS)
    rows = chart_rows(tab, "heatmap")
    assert rows and {r["metric"] for r in rows} == {"p95"}
    assert "metric=p95_ms" in tab.page.url
    assert "p95 latency, new / previous" in tab.page.inner_text("#chart-heatmap")
    tab.shot("marks-heatmap-p95")
    # the link restores it
    tab.open(url(sites["history"], "heatmap", "#metric=p95_ms"))
    assert tab.page.input_value("#metric") == "p95_ms"
    assert {r["metric"] for r in chart_rows(tab, "heatmap")} == {"p95"}
    assert tab.problems() == []


def test_the_heatmap_offers_every_metric_the_results_have(tmp_path: Path, tab: Tab) -> None:
    """The cost columns too, where present: SYNTHETIC records of two versions with CPU,
    storage reads and IPC (and no other cost column) offer exactly those and p95."""
    from fixtures.records.synthetic import make_record

    recs = []
    for rep in range(3):
        versions = (("synthetic-mysql-8.0.36", "8.0.36", 1000.0),
                    ("synthetic-mysql-8.4.0", "8.4.0", 900.0))  # fmt: skip
        for i, (sid, ver, tps) in enumerate(versions):
            rec = make_record(run_id="synthetic-costs", cell=rep * 2 + i, server_id=sid,
                              version=ver, tps=tps + rep)  # fmt: skip
            rec["cell"]["repeat"] = rep + 1
            rec["result"].update(cpu_us_per_txn=50.0 + i, read_bytes_per_txn=4096.0 + rep,
                                 ipc=1.2 - i / 10)  # fmt: skip
            recs.append(rec)
    db = tmp_path / "results.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    site = build.build(db, tmp_path / "site").out
    tab.open(url(site, "heatmap"))
    assert tab.page.locator("#metric option").all_inner_texts() == [
        "throughput (transactions/s)",
        "p95 latency (ms)",
        "server CPU per transaction (µs)",
        "storage bytes read per transaction (B)",
        "instructions per cycle (IPC)",
    ]
    tab.page.select_option("#metric", "read_bytes_per_txn")
    tab.page.wait_for_function("() => location.hash.includes('metric=read_bytes_per_txn')")
    assert {r["metric"] for r in chart_rows(tab, "heatmap")} == {"read_bytes_per_txn"}
    assert tab.problems() == []


# ---------------------------------------------------------------- overview


def test_the_forest_plot_has_one_row_per_verdict_grouped_by_series(
    configs_site: Path, tab: Tab
) -> None:
    tab.open(url(configs_site, "index"))
    tab.shot("marks-overview-forest-by-series")
    rows = chart_rows(tab, "overview")
    verdicts = [r for r in rows if not r.get("header")]
    points = [m for m in marks(tab, "overview") if m["type"] == "symbol"]
    assert len(points) == len(verdicts) > 0
    # no two dots on one row: every dot has a row (a y position on the page) of its own
    assert len({round(p["y"]) for p in points}) == len(points)
    # the two profiles are two series, each a header row above its own rows
    labels = tab.page.evaluate(
        "() => [...document.querySelectorAll('#chart-overview svg .role-axis-label text')]"
        ".map(t => t.textContent)"
    )
    labels = [label for label in labels if not re.fullmatch(r"[\d.]+", label)]  # the y axis'
    for profile in ("default", "durable"):
        assert f"▸ synthetic · {profile} · 8×100,000 rows · 60 s · tcp" in labels
    assert len(labels) == len(points) + 2
    # each header row is right above its series' rows (labels are in the rows' order)
    heads = [i for i, label in enumerate(labels) if label.startswith("▸ ")]
    assert heads[0] == 0
    first = labels[0][2:]
    assert heads[1] == 1 + sum(p["datum"]["series"] == first for p in points)
    assert tab.problems() == []


def test_the_verdict_table_fits_its_card(sites: dict[str, Path], tab: Tab) -> None:
    tab.open(url(sites["history"], "index"))
    fit = """() => { const t = document.getElementById('verdict-table');
      const box = t.parentElement, card = t.closest('.card');
      return { table: t.scrollWidth, box: box.clientWidth, card: card.scrollWidth,
               cardBox: card.clientWidth, overflow: getComputedStyle(box).overflowX }; }"""
    f = tab.page.evaluate(fit)
    assert f["table"] <= f["box"], f
    assert f["card"] <= f["cardBox"], f
    head = tab.page.inner_text("#verdict-table thead")
    for col in (
        "ratio [95% interval] · threshold",
        "p",
        "tx/s previous → new (geometric means) · n",
        "runner class",
        "run",
    ):
        assert col in head
    tab.shot("marks-overview-table")
    # every column on demand: wider than the card, inside its scroller
    tab.page.check("#verdict-all-columns")
    f = tab.page.evaluate(fit)
    assert f["overflow"] == "auto"
    assert f["card"] <= f["cardBox"], f
    assert "series last run" in tab.page.inner_text("#verdict-table thead")
    assert tab.problems() == []


def test_a_verdict_row_leads_to_its_run_diff_and_history(sites: dict[str, Path], tab: Tab) -> None:
    tab.open(url(sites["history"], "index"))
    row = tab.page.locator("#verdict-table tbody tr.row-regression").first
    pair = row.locator("td").nth(1).inner_text()  # "NEW vs PREVIOUS · reports VERSION()"
    new, previous = pair.split(" · ")[0].split(" vs ")
    href = row.locator("a", has_text="diff").get_attribute("href") or ""
    assert href.startswith("runs.html#run=synthetic-night-")
    row.locator("a", has_text="diff").click()
    tab.page.wait_for_selector("#run-diff tbody tr", timeout=READY_TIMEOUT_MS)
    selected = tab.page.input_value("#diff-select")
    assert selected.startswith(f"{previous} → {new} · ")
    assert "innodb_buffer_pool_size" in tab.page.inner_text("#run-diff")
    assert tab.page.locator("#link-problem:visible").count() == 0
    # why: no explanation stored, so the command for the verdict's own cell
    hash_ = dict(
        kv.split("=", 1) for kv in tab.page.evaluate("location.hash").lstrip("#").split("&")
    )
    workload, threads = hash_["workload"], hash_["threads"]
    command = tab.page.inner_text("#explain-command").strip()
    assert command.startswith(
        f"perftrack explain {previous} {new} --workload {workload} --threads {threads} "
    ), command
    tab.shot("marks-regression-to-variables-diff")
    # the history link carries the cell
    tab.open(url(sites["history"], "index"))
    row = tab.page.locator("#verdict-table tbody tr.row-regression").first
    hist = row.locator("a", has_text="history").get_attribute("href") or ""
    assert hist.startswith("history.html#runner_class=synthetic&profile=default")
    assert "&workload=" in hist and "&threads=" in hist
    assert tab.problems() == []


def test_a_deep_link_selects_one_verdict_row(sites: dict[str, Path], tab: Tab) -> None:
    tab.open(url(sites["history"], "index"))
    rows = tab.page.evaluate("window.perftrack.lib.rows('verdicts')")
    last = rows[-1]  # the bottom row: the link must find it, not the first
    tab.open(url(sites["history"], "index", f"#verdict={last['id']}"))
    selected = tab.page.locator("#verdict-table tbody tr.selected")
    assert selected.count() == 1
    assert selected.get_attribute("id") == f"verdict-{last['id']}"
    assert last["server"] in selected.inner_text() and last["verdict"] in selected.inner_text()
    assert tab.page.locator("#link-problem:visible").count() == 0
    # a verdict that does not exist: said so, every row still shown, none selected
    tab.open(url(sites["history"], "index", "#verdict=0123456789abcdef"))
    assert "0123456789abcdef" in tab.page.inner_text("#link-problem")
    assert tab.page.locator("#verdict-table tbody tr.selected").count() == 0
    assert tab.page.locator("#verdict-table tbody tr").count() == min(len(rows), 500)
    assert tab.problems() == []


def test_a_forest_plot_dot_opens_its_run_diff(sites: dict[str, Path], tab: Tab) -> None:
    tab.open(url(sites["history"], "index"))
    rows = [r for r in chart_rows(tab, "overview") if not r.get("header")]
    assert rows and all(r["link"].startswith("runs.html#run=synthetic-night-") for r in rows)
    box = tab.page.evaluate(
        """() => { const svg = document.querySelector('#chart-overview svg');
           const dot = svg.querySelector('.mark-symbol.role-mark path');
           dot.scrollIntoView({ block: 'center' });
           const r = dot.getBoundingClientRect();
           return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; }"""
    )
    with tab.page.expect_navigation(timeout=READY_TIMEOUT_MS):
        tab.page.mouse.click(box["x"], box["y"])
    tab.page.wait_for_selector("#run-diff tbody tr", timeout=READY_TIMEOUT_MS)
    assert "/runs.html#run=synthetic-night-" in tab.page.url
    assert tab.problems() == []


# ---------------------------------------------------------------- run detail


def test_run_page_prints_p95_with_three_significant_digits_and_fits_the_diff(
    sites: dict[str, Path], tab: Tab
) -> None:
    tab.open(url(sites["history"], "runs", "#run=synthetic-night-0011"))
    tab.page.wait_for_selector("#run-cells tbody tr", timeout=READY_TIMEOUT_MS)
    heads = tab.page.locator("#run-cells thead th").all_inner_texts()
    col = heads.index("p95 ms")
    p95 = tab.page.locator(f"#run-cells tbody tr td:nth-child({col + 1})").all_inner_texts()
    assert p95 and "0.0" not in p95
    # point select at 1 thread: 1500 / ~60,000 tx/s = ~0.025 ms (the fixture's formula)
    tiny = [v for v in p95 if v.startswith("0.0")]
    assert tiny and all(re.fullmatch(r"0\.0\d{1,3}", v) for v in tiny), tiny
    digits = [v.replace(",", "").replace(".", "").lstrip("0") for v in p95]
    assert all(len(d) <= 3 for d in digits), p95  # 3 significant digits at most
    # the variables diff (the settings explain tries, and the folded rest opened): every
    # column inside its scroller, long values wrapped
    tab.page.wait_for_selector("#run-diff-rest tbody tr", state="attached")
    tab.page.click("#diff-rest summary")
    for table in ("run-diff", "run-diff-rest"):
        f = tab.page.evaluate(
            """(id) => { const t = document.getElementById(id); const box = t.parentElement;
           const right = box.getBoundingClientRect().right;
           const cells = [...t.querySelectorAll('tbody td:last-child')];
           return { table: t.scrollWidth, box: box.clientWidth,
                    outside: cells.filter(c => c.getBoundingClientRect().right > right + 1)
                                  .length }; }""",
            table,
        )
        assert f["table"] <= f["box"] and f["outside"] == 0, (table, f)
    tab.shot("marks-runs-p95-and-diff")
    assert tab.problems() == []


# ---------------------------------------------------------------- trend


def test_trend_draws_the_chosen_metric(sites: dict[str, Path], tab: Tab) -> None:
    tab.open(url(sites["history"], "trend", "#workload=oltp_point_select&threads=1"))
    assert tab.page.locator("#metric option").count() >= 2
    before = tab.drawn()
    tab.page.select_option("#metric", "p95_ms")
    tab.page.wait_for_function(f"() => window.perftrack.drawn > {before}", timeout=READY_TIMEOUT_MS)
    drawn = [m["datum"] for m in marks(tab, "trend") if m["type"] == "symbol"]
    assert drawn and all(d["value"] == d["p95_ms"] for d in drawn)
    assert all(d["value"] < 0.05 for d in drawn)  # the fixture's ~0.025 ms
    chart = tab.page.inner_text("#chart-trend")
    assert "P95 latency per release" in chart and "p95 latency (ms), lower is better" in chart
    assert "NaN" not in chart
    # the table view prints 3 significant digits, not "0.0"
    card = tab.page.locator("[data-chart='trend']")
    card.locator("details.table-view summary").click()
    card.locator("details.table-view tbody tr").first.wait_for(timeout=READY_TIMEOUT_MS)
    table = card.locator("details.table-view table").inner_text()
    assert re.search(r"\b0\.02\d\b", table) and "\t0.0\t" not in table
    tab.shot("marks-trend-p95")
    assert tab.problems() == []


def test_trend_compares_configurations_on_one_chart(configs_site: Path, tab: Tab) -> None:
    tab.open(url(configs_site, "trend", "#workload=oltp_read_only"))
    assert {r["profile"] for r in chart_rows(tab, "trend")} == {"default"}
    before = tab.drawn()
    tab.page.check("#compare-configs")
    tab.page.wait_for_function(f"() => window.perftrack.drawn > {before}", timeout=READY_TIMEOUT_MS)
    rows = chart_rows(tab, "trend")
    assert {r["profile"] for r in rows} == {"default", "durable"}
    configs = {m["datum"]["config"] for m in marks(tab, "trend") if m["type"] == "symbol"}
    assert "latin1_swedish_ci · durable" in configs and "latin1_swedish_ci · default" in configs
    assert "profile=all" in tab.page.url
    assert "charset / collation · profile" in tab.page.inner_text("#chart-trend")
    lines = [m for m in marks(tab, "trend") if m["type"] == "line"]
    assert len(configs) == 4  # 2 collations x 2 profiles
    assert len(lines) == 4 * 3  # one line per configuration in each workload's panel
    tab.shot("marks-trend-compare-configurations")
    assert tab.problems() == []


# ---------------------------------------------------------------- deep links


@pytest.mark.parametrize(
    ("page", "link", "says"),
    [
        ("runs", "#run=no-such-run", 'No run "no-such-run" in the data'),
        ("trend", "#workload=no_such_workload", 'workload "no_such_workload"'),
        ("heatmap", "#metric=no_such_metric", 'metric "no_such_metric"'),
        ("index", "#profile=no-such-profile", 'profile "no-such-profile"'),
        (
            "runs",
            "#run=synthetic-night-0003&previous=x&server=y&collation=z&profile=default",
            "This run has no variables diff of x → y",
        ),
    ],
)
def test_a_deep_link_to_something_missing_says_so(
    sites: dict[str, Path], tab: Tab, page: str, link: str, says: str
) -> None:
    tab.open(url(sites["history"], page, link))
    if page == "runs":
        tab.page.wait_for_selector("#run-servers tbody tr", timeout=READY_TIMEOUT_MS)
    problem = tab.page.locator("#link-problem")
    assert problem.is_visible()
    assert says in problem.inner_text()
    text = tab.page.inner_text("main")
    assert "NaN" not in text and "undefined" not in text
    if page in ("trend", "heatmap", "index"):
        chart = {"index": "overview"}.get(page, page)
        assert tab.marks(chart) > 0, "a bad link still shows the default view"
    tab.shot(f"marks-bad-link-{page}")
    assert tab.problems() == []


# ---------------------------------------------------------------- every table


@pytest.mark.parametrize(
    ("page", "link"),
    [
        ("index", ""),
        ("trend", ""),
        ("scaling", ""),
        ("charset", ""),
        ("heatmap", ""),
        ("cost", ""),
        ("runs", "#run=synthetic-night-0011"),
        ("advisor", ""),
        ("study-zz-synthetic", ""),
    ],
)
def test_every_table_fits_its_card_or_scrolls_inside_it(
    sites: dict[str, Path], tab: Tab, page: str, link: str
) -> None:
    tab.open(url(sites["history"], page, link))
    if page == "runs":
        tab.page.wait_for_selector("#run-cells tbody tr", timeout=READY_TIMEOUT_MS)
    for summary in tab.page.locator("details.table-view summary").all():
        summary.click()
    tab.page.wait_for_function(
        "() => [...document.querySelectorAll('details.table-view table')]"
        ".every(t => t.rows.length)",
        timeout=READY_TIMEOUT_MS,
    )
    bad = tab.page.evaluate(
        """() => [...document.querySelectorAll('main table.data')].filter(t => t.rows.length)
          .map(t => { const box = t.parentElement, card = t.closest('.card') || box;
            const scrolls = ['auto', 'scroll'].includes(getComputedStyle(box).overflowX);
            return { id: t.id || t.closest('[data-chart]')?.dataset.chart, fits:
              t.scrollWidth <= box.clientWidth + 1 || scrolls,
              card: card.scrollWidth <= card.clientWidth + 1 }; })
          .filter(x => !x.fits || !x.card)"""
    )
    assert bad == []
    page_overflow = tab.page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert page_overflow <= 1
    assert tab.problems() == []
