"""The SQL page (sql.html): DuckDB-WASM in a real browser (Debian's chromium via
Playwright) over the Parquet files `site build` exports, checked against DuckDB in Python
over the same files and over the DB they came from.

Sites are built from SYNTHETIC DBs (tests/fixtures/records/synthetic_history.py). The
page needs http (browsers refuse workers from file://), so it is served by `site serve`'s
server on 127.0.0.1. Screenshots land in test-artifacts/site/.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import duckdb
import pytest
from site_helpers import HOSTILE_VERSION, READY_TIMEOUT_MS, Tab

from perftrack.core.errors import EnvironmentProblem
from perftrack.publish.site import build, parquet, serve, source
from perftrack.store.files import nightfiles

# A query a reader might type: integers (BIGINT), doubles, text, a timestamp, a date, a
# list and a NULL, so every way a value reaches the page is compared.
TYPED_QUERY = """SELECT s.server_id, r.workload, r.threads, count(*) AS n,
       median(r.tps) AS median_tps, sum(r.events) AS events, min(r.started_at) AS first_at,
       max(r.started_at)::DATE AS last_day,
       list(r.repeat ORDER BY r.started_at, r.record_id)[1:3] AS first_repeats,
       NULL AS nothing
FROM results r JOIN servers s USING (server_key)
WHERE r.status = 'ok'
GROUP BY ALL
ORDER BY s.server_id, r.workload, r.threads"""


@pytest.fixture(scope="module")
def served() -> Iterator[Callable[[Path], str]]:
    """Serve built sites on 127.0.0.1 (perftrack site serve's server); returns base URLs."""
    servers: list[Any] = []

    def start(site: Path) -> str:
        httpd = serve.server(site, 0)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/"

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def open_sql(tab: Tab, base: str, hash_: str = "") -> None:
    tab.open(base + "sql.html" + hash_)
    assert tab.page.get_attribute("body", "data-sql") == "ready", tab.page.inner_text("#status")
    wait_runs(tab, 1)  # the first example runs on load


def runs(tab: Tab) -> int:
    return int(tab.page.get_attribute("body", "data-runs") or "0")


def wait_runs(tab: Tab, n: int) -> None:
    tab.page.wait_for_selector(f"body[data-runs='{n}']", timeout=READY_TIMEOUT_MS)


def run_typed(tab: Tab, sql: str) -> None:
    before = runs(tab)
    tab.page.fill("#sql-input", sql)
    tab.page.click("#sql-run")
    wait_runs(tab, before + 1)


def shown(tab: Tab) -> tuple[list[str], list[list[str]]]:
    """The result table: header and cells as the page shows them."""
    head = tab.page.locator("#sql-result thead th").all_inner_texts()
    rows = tab.page.eval_on_selector_all(
        "#sql-result tbody tr", "trs => trs.map(tr => [...tr.cells].map(td => td.textContent))"
    )
    return head, rows


def python_rows(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[list[str], list[tuple]]:
    cur = con.execute(sql)
    return [d[0] for d in cur.description], cur.fetchall()


def db_rows(db: Path, sql: str) -> tuple[list[str], list[tuple]]:
    """`sql` on the DB itself, night files included, on a connection closed at once: a
    connection left open would refuse the store's (differently configured) one to every
    later test of this worker that opens the shared DB."""
    with closing(nightfiles.connect(db)) as con:
        return python_rows(con, sql)


def parquet_con(site: Path) -> duckdb.DuckDBPyConnection:
    """DuckDB in Python with one view per table over the site's Parquet files."""
    con = duckdb.connect()
    manifest = json.loads((site / parquet.SUBDIR / parquet.MANIFEST).read_text())
    for name, t in manifest["tables"].items():
        files = [str(site / parquet.SUBDIR / f) for f in t["files"]]
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet({files!r}, union_by_name=1)")
    return con


def same(cell: str | None, value: Any) -> bool:
    """A cell as the page shows it (None: NULL) against DuckDB's Python value."""
    if value is None:
        return cell is None or cell == "NULL"
    if isinstance(value, bool):
        return cell == str(value).lower()
    if isinstance(value, int):
        return cell == str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return cell == "NaN"
        return cell is not None and float(cell) == value
    if isinstance(value, dt.datetime):
        return cell == str(value)
    if isinstance(value, dt.date):
        return cell == value.isoformat()
    if isinstance(value, list):
        return cell == "[" + ", ".join("NULL" if v is None else str(v) for v in value) + "]"
    return cell == str(value)


def assert_same(cells: list[list[str | None]], rows: list[tuple]) -> None:
    assert len(cells) == len(rows)
    for got, want in zip(cells, rows, strict=True):
        bad = [(g, w) for g, w in zip(got, want, strict=True) if not same(g, w)]
        assert not bad, (got, want)


def test_build_exports_every_table_as_zstd_parquet_with_a_manifest(
    sites: dict[str, Path], history_db: Path
) -> None:
    site = sites["history"]
    manifest = json.loads((site / parquet.SUBDIR / parquet.MANIFEST).read_text())
    assert manifest["format"] == parquet.MANIFEST_FORMAT
    # every table of the DB, and the history's nightly medians (test_site_bounded.py)
    assert set(manifest["tables"]) == {*parquet.TABLES, parquet.NIGHTLY}
    # the DB's tables, night files included, on a connection closed at once (db_rows)
    with closing(nightfiles.connect(history_db)) as con:
        for name, t in manifest["tables"].items():
            if name == parquet.NIGHTLY:
                continue
            paths = [site / parquet.SUBDIR / f for f in t["files"]]
            assert len(paths) == 1 or name == parquet.PARTED  # results: one file per month
            assert t["bytes"] == sum(p.stat().st_size for p in paths)
            path = "', '".join(map(str, paths))  # read_parquet(['a', 'b']) below
            codecs = {
                c
                for (c,) in con.execute(
                    "SELECT compression FROM parquet_metadata(?)", [[str(p) for p in paths]]
                ).fetchall()
            }
            assert codecs <= {"ZSTD", "UNCOMPRESSED"} and (t["rows"] == 0 or "ZSTD" in codecs), (
                codecs
            )
            # the same rows, nothing lost or added, in both directions
            (n,) = con.execute(f"SELECT count(*) FROM {name}").fetchone()
            assert t["rows"] == n
            for a, b in (
                (name, f"read_parquet(['{path}'])"),
                (f"read_parquet(['{path}'])", name),
            ):
                (extra,) = con.execute(
                    f"SELECT count(*) FROM (FROM {a} EXCEPT ALL FROM {b})"
                ).fetchone()
                assert extra == 0, (name, a)
    assert manifest["tables"]["results"]["rows"] > 0


def test_only_the_sql_page_loads_duckdb(sites: dict[str, Path]) -> None:
    site = sites["history"]
    for page in source.PAGES:
        html = (site / f"{page.name}.html").read_text(encoding="utf-8")
        if page.name == "sql":
            assert source.SQL_CSP in html and "assets/sql.js" in html
        else:
            assert source.CSP in html and "sql.js" not in html
    assert "duckdb" not in (site / "assets" / "app.js").read_text()
    for name in source.SQL_VENDOR_FILES:
        assert (site / "vendor" / name).read_bytes() == (
            source.site_dir() / "vendor" / name
        ).read_bytes()


def test_a_modified_duckdb_wasm_is_refused(tmp_path: Path) -> None:
    real = source.site_dir()
    root = tmp_path / "site"
    root.mkdir()
    for d in ("templates", "assets", "specs"):
        (root / d).symlink_to(real / d)
    (root / "vendor").mkdir()
    for f in (real / "vendor").iterdir():
        (root / "vendor" / f.name).symlink_to(f)
    (root / "vendor" / "duckdb-browser.mjs").unlink()
    shutil.copy(real / "vendor" / "duckdb-browser.mjs", root / "vendor" / "duckdb-browser.mjs")
    with (root / "vendor" / "duckdb-browser.mjs").open("a") as f:
        f.write("\n// changed\n")
    with pytest.raises(EnvironmentProblem, match=r"duckdb-browser\.mjs does not match"):
        source.verify_vendor(root)


def test_sql_page_from_a_file_says_to_serve_it(sites: dict[str, Path], tab: Tab) -> None:
    site = sites["history"]
    tab.open((site / "sql.html").as_uri())
    tab.shot("sql-file-url")
    assert tab.page.get_attribute("body", "data-sql") == "file"
    status = tab.page.inner_text("#status")
    assert "perftrack site serve" in status and "file://" in status
    assert tab.page.is_visible("#status")
    assert tab.problems() == []
    loaded = [r for r in tab.requests if "duckdb" in r or "parquet" in r or "data/sql" in r]
    assert loaded == []


def test_other_pages_load_no_duckdb_over_http(
    sites: dict[str, Path], served: Callable[[Path], str], tab: Tab
) -> None:
    base = served(sites["history"])
    for page in ("index", "trend", "runs"):
        tab.open(base + f"{page}.html")
    assert tab.problems() == []
    assert [r for r in tab.requests if "duckdb" in r or "parquet" in r or "data/sql" in r] == []


def test_a_typed_query_gives_what_duckdb_in_python_gives_and_the_csv_holds_it(
    sites: dict[str, Path], history_db: Path, served: Callable[[Path], str], tab: Tab
) -> None:
    site = sites["history"]
    base = served(site)
    open_sql(tab, base)
    run_typed(tab, TYPED_QUERY)
    tab.shot("sql-typed-query")
    assert tab.page.is_hidden("#sql-error")
    head, cells = shown(tab)
    want_head, want = db_rows(history_db, TYPED_QUERY)
    assert head == want_head
    assert len(want) > 3
    assert_same(cells, want)  # against the DB itself
    assert_same(cells, python_rows(parquet_con(site), TYPED_QUERY)[1])  # and the same files
    with tab.page.expect_download() as dl:
        tab.page.click("#sql-csv")
    assert dl.value.suggested_filename.endswith(".csv")
    parsed = list(csv.reader(io.StringIO(Path(dl.value.path()).read_text(encoding="utf-8"))))
    assert parsed[0] == want_head
    assert_same([[c if c != "" else None for c in r] for r in parsed[1:]], want)
    assert tab.problems() == []
    # everything came from the site itself, the .wasm files included
    assert any(r.endswith("/vendor/duckdb-eh.wasm") for r in tab.requests), tab.requests
    assert all(r.startswith((base, "blob:", "data:")) for r in tab.requests), tab.requests


def test_every_example_runs_and_agrees_with_duckdb_in_python(
    sites: dict[str, Path], history_db: Path, served: Callable[[Path], str], tab: Tab
) -> None:
    open_sql(tab, served(sites["history"]))
    examples = tab.page.evaluate("window.perftrackSql.examples.map(e => [e.title, e.sql])")
    assert len(examples) >= 3
    with closing(nightfiles.connect(history_db)) as con:  # closed at once (db_rows)
        counts = {}
        for i, (title, sql) in enumerate(examples):
            before = runs(tab)
            tab.page.select_option("#sql-example", str(i))
            wait_runs(tab, before + 1)
            assert tab.page.input_value("#sql-input") == sql
            assert tab.page.is_hidden("#sql-error"), (title, tab.page.inner_text("#sql-error"))
            head, cells = shown(tab)
            want_head, want = python_rows(con, sql)
            assert head == want_head, title
            assert_same(cells, want)
            counts[title] = len(want)
            if title.startswith("Ratio"):
                tab.shot("sql-example-ratio")
    # the synthetic history has a pair, nights and a changed default to find
    assert counts["Ratio of two versions, per series"] > 0
    assert counts["Slowest nights of a series"] == 10
    assert counts["Server variables that differ between two versions"] > 0
    assert tab.problems() == []


def test_bad_sql_shows_the_error_under_the_box(
    sites: dict[str, Path], history_db: Path, served: Callable[[Path], str], tab: Tab
) -> None:
    open_sql(tab, served(sites["history"]))
    run_typed(tab, "SELEC count(*) FROM results")
    tab.shot("sql-bad-query")
    error = tab.page.inner_text("#sql-error")
    assert tab.page.is_visible("#sql-error")
    assert "syntax error" in error.lower()
    assert tab.page.locator("#sql-result tr").count() == 0
    assert tab.page.is_disabled("#sql-csv")
    run_typed(tab, "SELECT no_such_column FROM results")
    assert "no_such_column" in tab.page.inner_text("#sql-error")
    run_typed(tab, "SELECT count(*) AS n FROM results")  # a good query clears the error
    assert tab.page.is_hidden("#sql-error")
    (n,) = db_rows(history_db, "SELECT count(*) FROM results")[1][0]
    assert shown(tab) == (["n"], [[str(n)]])
    assert tab.problems() == []


def test_a_table_split_into_files_reads_as_one_by_column_name(
    tmp_path: Path, history_db: Path, served: Callable[[Path], str], tab: Tab
) -> None:
    """The shape per-night Parquet files will publish: `results` as several files, an
    older one without a newer column (issue 19)."""
    site = build.build(history_db, tmp_path / "site").out
    sql_dir = site / parquet.SUBDIR
    con = duckdb.connect()
    manifest = json.loads((sql_dir / parquet.MANIFEST).read_text())
    parts = manifest["tables"]["results"]["files"]  # one file per month of results
    whole = "[" + ", ".join(f"'{sql_dir / p}'" for p in parts) + "]"
    con.execute(
        f"COPY (SELECT * EXCLUDE (phase) FROM read_parquet({whole}) "
        "WHERE run_id < 'synthetic-night-0006') "
        f"TO '{sql_dir / 'night-old.parquet'}' (FORMAT parquet, COMPRESSION zstd)"
    )
    con.execute(
        f"COPY (SELECT * FROM read_parquet({whole}) WHERE run_id >= 'synthetic-night-0006') "
        f"TO '{sql_dir / 'night-new.parquet'}' (FORMAT parquet, COMPRESSION zstd)"
    )
    for part in parts:
        (sql_dir / part).unlink()
    manifest["tables"]["results"]["files"] = ["night-old.parquet", "night-new.parquet"]
    (sql_dir / parquet.MANIFEST).write_text(json.dumps(manifest))
    open_sql(tab, served(site))
    query = (
        "SELECT count(*) AS n, count(phase) AS with_phase, count(DISTINCT run_id) AS nights "
        "FROM results"
    )
    run_typed(tab, query)
    _, cells = shown(tab)
    (want,) = db_rows(history_db, query)[1]
    assert cells[0][0] == str(want[0]) and cells[0][2] == str(want[2])
    assert cells[0][1] == str(python_rows(parquet_con(site), query)[1][0][1])
    assert tab.problems() == []


def test_empty_and_hostile_dbs(
    sites: dict[str, Path], served: Callable[[Path], str], tab: Tab
) -> None:
    open_sql(tab, served(sites["empty"]))
    assert "No results yet" in tab.page.inner_text("#status")
    assert tab.page.is_hidden("#sql-error")  # the example still runs, on empty tables
    open_sql(tab, served(sites["hostile"]))
    run_typed(tab, "SELECT version_string FROM servers ORDER BY version_string")
    _, cells = shown(tab)
    assert [HOSTILE_VERSION] in cells
    assert tab.page.evaluate("window.__pwned") is None
    assert tab.page.locator("main img").count() == 0
    assert tab.problems() == []
