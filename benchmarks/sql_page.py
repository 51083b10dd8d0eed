"""The SQL page's cost: time to the first result, bytes loaded, and the site's size
(docs/benchmarks.md, "## SQL page").

SYNTHETIC DATA: the history is made up by tests/fixtures/records/synthetic_history.py
(the nightly matrix, 360 records a night), ingested with the store's own ingest into a
temporary DB, and the site built from it (no `perftrack detect`: the examples then pick
their version pair from the newest results). Nothing is written outside a temporary
directory.

For each number of nights:
  - the built site on disk, the part only the SQL page uses (DuckDB-WASM, parquet-wasm,
    data/sql/, the page and its script) and the rest (= the site before the SQL page);
  - bytes the SQL page loads until its first result, raw and gzip -6 (what a static
    host such as GitHub Pages sends): every file the page and DuckDB's worker requested;
  - time to the first result in Chromium (Debian's chromium via Playwright) over
    http://127.0.0.1 (`perftrack site serve`'s server): performance.now() when the first
    example's result is in the table, from navigation start, so it includes fetching and
    compiling the .wasm files and reading the Parquet files; cold (a fresh browser
    context each load, nothing cached) and warm (a reload: the .wasm from the browser's
    cache); median of --loads loads.

    /work/bin/quiet .venv/bin/python benchmarks/sql_page.py --nights 30 365
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from site_scale import (  # noqa: E402  (the site benchmark's browser and gzip settings)
    CHROMIUM,
    CHROMIUM_ARGS,
    GZIP_LEVEL,
    READY_TIMEOUT_MS,
    VIEWPORT,
    print_table,
)

from fixtures.records.synthetic_history import build_db  # noqa: E402
from perftrack.publish.site import build, parquet, serve, source  # noqa: E402


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def sql_only(site: Path) -> list[Path]:
    """Files no page but sql.html uses."""
    files = [site / "vendor" / n for n in source.SQL_VENDOR_FILES]
    files += [site / "sql.html", site / "assets" / "sql.js"]
    files += [p for p in (site / parquet.SUBDIR).rglob("*") if p.is_file()]
    files += list((site / "vendor").glob("LICENSE-*duckdb*")) + list(
        (site / "vendor").glob("LICENSE-parquet*")
    )
    return files


def loads(site: Path, n: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    httpd = serve.server(site, 0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/sql.html"
    cold, warm, ready = [], [], []
    fetched: set[str] = set()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for _ in range(n):
                    ctx = browser.new_context(viewport=VIEWPORT)  # fresh: nothing cached
                    tab = ctx.new_page()
                    urls: list[str] = []
                    tab.on("request", lambda r, urls=urls: urls.append(r.url))
                    ctx.on("request", lambda r, urls=urls: urls.append(r.url))
                    for times in (cold, warm):
                        if times is cold:
                            tab.goto(url)
                        else:
                            tab.reload()
                        tab.wait_for_selector("body[data-runs='1']", timeout=READY_TIMEOUT_MS)
                        state = tab.evaluate(
                            "({first: window.perftrackSql.firstResultMs,"
                            " ready: window.perftrackSql.readyMs})"
                        )
                        times.append(float(state["first"]))
                        if times is cold:
                            ready.append(float(state["ready"]))
                            fetched |= {urlparse(u).path.lstrip("/") for u in urls}
                    ctx.close()
            finally:
                browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    files = [site / f for f in sorted(fetched) if (site / f).is_file()]
    return {
        "cold_ms": statistics.median(cold),
        "ready_ms": statistics.median(ready),
        "warm_ms": statistics.median(warm),
        "loaded_bytes": sum(f.stat().st_size for f in files),
        "loaded_gz_bytes": sum(len(gzip.compress(f.read_bytes(), GZIP_LEVEL)) for f in files),
        "loaded_parquet_bytes": sum(f.stat().st_size for f in files if f.suffix == ".parquet"),
        "files": [str(f.relative_to(site)) for f in files],
    }


def measure(nights: int, n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="perftrack-sql-bench-") as tmp:
        db = Path(tmp) / "synthetic-history.duckdb"
        records = build_db(db, nights, hw_change_night=nights * 2 // 3)
        site = build.build(db, Path(tmp) / "site").out
        total = tree_bytes(site)
        only = sum(f.stat().st_size for f in sql_only(site))
        row = {
            "nights": nights,
            "records": records,
            "site_mb": total / 1e6,
            "before_mb": (total - only) / 1e6,
            "sql_only_mb": only / 1e6,
            "parquet_kb": tree_bytes(site / parquet.SUBDIR) / 1e3,
        }
        row.update(loads(site, n))
        return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, nargs="+", default=[30, 365])
    ap.add_argument("--loads", type=int, default=5, help="page loads per measurement")
    a = ap.parse_args()
    rows = [measure(nights, a.loads) for nights in a.nights]
    cols = [
        ("nights", "{:.0f}"),
        ("records", "{:,.0f}"),
        ("before_mb", "{:.1f}"),
        ("sql_only_mb", "{:.1f}"),
        ("site_mb", "{:.1f}"),
        ("parquet_kb", "{:,.0f}"),
        ("loaded_bytes", "{:,.0f}"),
        ("loaded_gz_bytes", "{:,.0f}"),
        ("loaded_parquet_bytes", "{:,.0f}"),
        ("ready_ms", "{:.0f}"),
        ("cold_ms", "{:.0f}"),
        ("warm_ms", "{:.0f}"),
    ]
    print_table(rows, cols)
    print("files loaded until the first result:", ", ".join(rows[-1]["files"]))


if __name__ == "__main__":
    main()
