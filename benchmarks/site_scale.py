"""How the published site scales with the nightly history (docs/benchmarks.md, "## Site").

SYNTHETIC DATA: the history is made up by tests/fixtures/records/synthetic_history.py
(the nightly matrix: 3 versions × 3 workloads × 2 collations × threads 1/4/16/64 ×
5 repeats = 360 records a night), ingested with the store's own ingest into a temporary
DB. Nothing is written outside a temporary directory.

For each number of nights it measures:
  - `perftrack detect` time (the nightly pipeline runs it before the build: it stores
    the verdicts and change points the site shows);
  - `perftrack site build` time (build.build: export from DuckDB + write the files),
    after detect, and once before it (verdicts then computed at build time);
  - bytes a browser loads for the overview page and the nightly-history page (raw and
    gzip -6, which is what a static host such as GitHub Pages sends; the history page's
    referenced files only: since issue 20 it then loads its cell's data/history/hNNNNN.js,
    which `history_scale.py --page` counts);
  - time to first chart drawn in Chromium (Debian's chromium via Playwright, from
    file://): performance.now() when the first chart's Vega view has rendered, i.e.
    from navigation start, including parsing vega/vega-lite; median of --loads loads.

    .venv/bin/python benchmarks/site_scale.py --nights 30 365
"""

from __future__ import annotations

import argparse
import gzip
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fixtures.records.synthetic_history import build_db  # noqa: E402
from perftrack.cli import main as cli  # noqa: E402
from perftrack.publish.site import build  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 900}
GZIP_LEVEL = 6  # what typical static hosts use
READY_TIMEOUT_MS = 120_000


def page_files(site: Path, page: str) -> list[Path]:
    html = site / f"{page}.html"
    refs = re.findall(r'(?:src|href)="([^"#?:]+\.(?:js|css))"', html.read_text(encoding="utf-8"))
    return [html, *(site / r for r in dict.fromkeys(refs))]


def page_bytes(site: Path, page: str) -> tuple[int, int]:
    files = page_files(site, page)
    raw = sum(f.stat().st_size for f in files)
    gz = sum(len(gzip.compress(f.read_bytes(), GZIP_LEVEL)) for f in files)
    return raw, gz


def first_chart_ms(site: Path, page: str, loads: int, requested: set[str] | None = None) -> float:
    """Median ms to the page's first chart over `loads` fresh loads; `requested` (if given)
    collects the URLs of the site's own files the page loaded."""
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for _ in range(loads):
                ctx = browser.new_context(viewport=VIEWPORT)  # fresh: nothing cached
                tab = ctx.new_page()
                if requested is not None:
                    prefix = site.as_uri()
                    tab.on("request", lambda r: r.url.startswith(prefix) and requested.add(r.url))  # noqa: B023
                tab.goto((site / f"{page}.html").as_uri())
                tab.wait_for_function(
                    "window.perftrack && window.perftrack.firstChartMs != null",
                    timeout=READY_TIMEOUT_MS,
                )
                times.append(float(tab.evaluate("window.perftrack.firstChartMs")))
                ctx.close()
        finally:
            browser.close()
    return statistics.median(times)


def measure(nights: int, loads: int, builds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="perftrack-site-bench-") as tmp:
        db = Path(tmp) / "synthetic-history.duckdb"
        t0 = time.perf_counter()
        records = build_db(db, nights, hw_change_night=nights * 2 // 3)
        gen_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        build.build(db, Path(tmp) / "site")  # no verdicts stored yet: computed here
        fallback_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        if cli.main(["detect", "--db", str(db)]) != 0:
            raise SystemExit("perftrack detect failed")
        detect_s = time.perf_counter() - t0
        build_times = []
        for i in range(builds):
            t0 = time.perf_counter()
            res = build.build(db, Path(tmp) / "site")
            build_times.append(time.perf_counter() - t0)
            if i == 0:
                site = res.out
        overview_raw, overview_gz = page_bytes(site, "index")
        history_raw, history_gz = page_bytes(site, "history")
        return {
            "nights": nights,
            "records": records,
            "db_mb": db.stat().st_size / 1e6,
            "generate_s": gen_s,
            "detect_s": detect_s,
            "build_s": statistics.median(build_times),
            "build_no_detect_s": fallback_s,
            "site_mb": res.bytes_total / 1e6,
            "overview_kb": overview_raw / 1e3,
            "overview_gz_kb": overview_gz / 1e3,
            "history_kb": history_raw / 1e3,
            "history_gz_kb": history_gz / 1e3,
            "overview_first_chart_ms": first_chart_ms(site, "index", loads),
            "history_first_chart_ms": first_chart_ms(site, "history", loads),
        }


def print_table(rows: list[dict[str, Any]], cols: list[tuple[str, str]]) -> None:
    """rows as a Markdown table: cols are (key, format) pairs."""
    print("| " + " | ".join(c for c, _ in cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f.format(r[c]) for c, f in cols) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, nargs="+", default=[30, 365])
    ap.add_argument("--loads", type=int, default=5, help="page loads per measurement")
    ap.add_argument("--builds", type=int, default=3, help="site builds per size")
    a = ap.parse_args()
    rows = [measure(n, a.loads, a.builds) for n in a.nights]
    cols = [
        ("nights", "{:.0f}"),
        ("records", "{:,.0f}"),
        ("db_mb", "{:.1f}"),
        ("detect_s", "{:.1f}"),
        ("build_s", "{:.1f}"),
        ("build_no_detect_s", "{:.1f}"),
        ("site_mb", "{:.1f}"),
        ("overview_kb", "{:.0f}"),
        ("overview_gz_kb", "{:.0f}"),
        ("overview_first_chart_ms", "{:.0f}"),
        ("history_kb", "{:.0f}"),
        ("history_gz_kb", "{:.0f}"),
        ("history_first_chart_ms", "{:.0f}"),
    ]
    print_table(rows, cols)
    gen = ", ".join(f"{r['generate_s']:.0f} s" for r in rows)
    print(f"(synthetic generation + ingest: {gen})")


if __name__ == "__main__":
    main()
