"""The site's source files: the checkout's `site/` directory (templates, specs, assets,
vendored JavaScript) and the list of pages and charts built from them."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perftrack.core.errors import ConfigError, EnvironmentProblem

ENV_SITE_DIR = "PERFTRACK_SITE_DIR"
VENDOR_FILES = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js")
# The SQL page's only (site/vendor.sh): DuckDB-WASM (the browser API bundled with
# apache-arrow, the "eh" worker and its .wasm) and parquet-wasm (module and .wasm), which
# decodes the Parquet files: the npm DuckDB-WASM has no Parquet reader built in.
SQL_VENDOR_FILES = (
    "duckdb-browser.mjs",
    "duckdb-browser-eh.worker.js",
    "duckdb-eh.wasm",
    "parquet_wasm.js",
    "parquet_wasm_bg.wasm",
)
# Every page's Content-Security-Policy: nothing from another origin, no inline script or
# style, no eval, no network requests (data files are <script>s). docs/site.md, "Safety".
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "font-src 'self'; connect-src 'none'; base-uri 'none'; form-action 'none'"
)
# The SQL page's: it fetches the site's own Parquet files and .wasm, compiles WebAssembly
# ('wasm-unsafe-eval' allows that, never JavaScript eval) and starts DuckDB's worker.
SQL_CSP = CSP.replace("script-src 'self'", "script-src 'self' 'wasm-unsafe-eval'").replace(
    "connect-src 'none'", "connect-src 'self'; worker-src 'self'"
)
SPEC_SUFFIX = ".vl.json"


@dataclass(frozen=True)
class Page:
    name: str  # file stem: NAME.html
    title: str  # shown in the navigation and <title>; never data from the DB
    data: tuple[str, ...]  # data sets the page loads (data/NAME.js)
    specs: tuple[str, ...] = ()  # charts the page draws (specs/NAME.js)
    nav: bool = True
    script: str = "assets/app.js"  # the page's own logic
    # loaded before `script`: a page's own file (it registers the page with app.js)
    before: tuple[str, ...] = ()
    csp: str = CSP
    vega: bool = False  # loads Vega-Lite without a spec file (builds its chart in app.js)


PAGES: tuple[Page, ...] = (
    Page("index", "Overview", ("meta", "verdicts", "headline"), ("overview",)),
    Page("trend", "Trend", ("meta", "summary"), ("trend",)),
    Page("scaling", "Thread scaling", ("meta", "summary"), ("scaling",)),
    Page("charset", "Charset impact", ("meta", "charset"), ("charset",)),
    Page("heatmap", "Heatmap", ("meta", "verdicts", "metric_verdicts"), ("heatmap",)),
    Page("cost", "Cost per transaction", ("meta", "cost"), ("cost",)),
    Page(
        "history",
        "Nightly history",
        ("meta", "history_cells", "hardware_changes", "annotations"),
        ("history",),
        before=("assets/history.js",),
    ),
    Page("runs", "Runs", ("meta", "runs")),
    Page("studies", "Studies", ("meta", "studies")),
    Page("advisor", "Upgrade advisor", ("meta", "advisor"), vega=True),
    Page("regressions", "Regressions", ("meta", "regressions"), before=("assets/regressions.js",)),
    Page("sql", "SQL", ("meta",), script="assets/sql.js", csp=SQL_CSP),
)
STUDY_PAGE = Page("study", "Study", ("meta", "studies"), nav=False, vega=True)

# chart name -> the data set it draws (the spec's "table"); `site png` uses the same map.
CHARTS: dict[str, str] = {
    "overview": "verdicts",
    "trend": "summary",
    "scaling": "summary",
    "charset": "charset",
    "heatmap": "verdicts",
    "history": "history",
    "cost": "cost",
}


def site_dir() -> Path:
    """site/ of the checkout: $PERFTRACK_SITE_DIR, else the nearest one above cwd or here."""
    env = os.environ.get(ENV_SITE_DIR)
    candidates = [Path(env)] if env else []
    if not env:
        candidates += [d / "site" for d in (Path.cwd(), *Path.cwd().parents)]
        candidates.append(Path(__file__).resolve().parents[4] / "site")
    for c in candidates:
        if (c / "templates" / "page.html").is_file():
            return c
    where = f"{ENV_SITE_DIR}={env}" if env else "the checkout"
    raise ConfigError(
        f"cannot find the site sources (site/templates/page.html) in {where}: run perftrack "
        f"inside the perftrack checkout or set {ENV_SITE_DIR}"
    )


def spec(root: Path, chart: str) -> dict[str, Any]:
    if chart not in CHARTS:
        raise ConfigError(f"unknown chart '{chart}'; known: {', '.join(CHARTS)}")
    path = root / "specs" / f"{chart}{SPEC_SUFFIX}"
    try:
        loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return loaded
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the chart spec ({exc})") from None


def verify_vendor(root: Path) -> dict[str, str]:
    """Check site/vendor/*.min.js against SHA256SUMS; {file: sha256}."""
    vendor = root / "vendor"
    sums: dict[str, str] = {}
    try:
        for line in (vendor / "SHA256SUMS").read_text().splitlines():
            digest, _, name = line.partition("  ")
            sums[name.strip()] = digest.strip()
    except OSError:
        raise EnvironmentProblem(
            f"{vendor}/SHA256SUMS is missing: run site/vendor.sh to vendor the JS libraries"
        ) from None
    for name in (*VENDOR_FILES, *SQL_VENDOR_FILES):
        path = vendor / name
        try:
            actual = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            raise EnvironmentProblem(
                f"{path} is missing: run site/vendor.sh to vendor the JS libraries"
            ) from None
        if sums.get(name) != actual:
            raise EnvironmentProblem(
                f"{path} does not match site/vendor/SHA256SUMS: restore it from git or re-run "
                "site/vendor.sh"
            )
    return {n: sums[n] for n in (*VENDOR_FILES, *SQL_VENDOR_FILES)}
