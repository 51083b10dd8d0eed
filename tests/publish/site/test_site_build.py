"""`perftrack site build | png | serve` without a browser: files, data, errors.

DBs are SYNTHETIC (see conftest.py); nothing here touches data/.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from site_helpers import HOSTILE_VERSION, SYNTHETIC_STUDY, synthetic_studies

from perftrack import cli
from perftrack.core.errors import EXIT_DB, EXIT_USER_ERROR
from perftrack.publish.site import build, columns, export, png, serve, source

REPO = Path(__file__).resolve().parents[3]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = cli.main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# --- data encoding ------------------------------------------------------------------


def test_columns_round_trip_and_dictionary_coding() -> None:
    rows = [
        {"workload": "oltp_read_only", "threads": t, "tps": 1234.56789 + t, "note": None}
        for t in (1, 4, 16, 64)
    ]
    enc = columns.encode(rows)
    assert isinstance(enc["columns"]["workload"], dict)  # repeated strings: a dictionary
    back = columns.decode(enc)
    assert [r["threads"] for r in back] == [1, 4, 16, 64]
    assert back[0]["tps"] == pytest.approx(1235.57, rel=1e-5)
    assert back[0]["note"] is None


def test_data_files_cannot_break_out_of_a_script(tmp_path: Path) -> None:
    value = {"v": "</script><script>alert(1)</script>", "u": "\u2028é&"}
    path = tmp_path / "x.js"
    columns.write_data_file(path, "x", value)
    text = path.read_text(encoding="ascii")
    assert "<" not in text.split("=", 1)[1] and "&" not in text.split("=", 1)[1]
    assert columns.read_data_file(path) == value


def test_median_interval_from_order_statistics() -> None:
    assert export.median_interval([5.0, 1.0, 3.0, 2.0, 4.0]) == (1.0, 5.0)  # n=5: min..max
    assert export.median_interval([float(i) for i in range(1, 11)]) == (2.0, 9.0)  # 97.9%
    assert export.median_interval([]) is None


def test_the_median_interval_s_order_statistic_is_scipy_stats_binomial_s() -> None:
    """export uses scipy.special's binomial so that the site build does not import
    scipy.stats (0.45 s): its k must be the one scipy.stats.binom.cdf gives, at every n."""
    from scipy import stats as sps

    tail = (1 - export.CONFIDENCE) / 2
    for n in range(1, 1201):
        ks = np.arange(1, (n + 1) // 2)  # every k that may still grow by one
        below = sps.binom.cdf(ks, n, 0.5) <= tail  # one call per n, as export's loop reads it
        k = 1 + (int(np.argmin(below)) if not below.all() else len(ks))
        assert export._order_k(n) == k, n


# --- build ----------------------------------------------------------------------------


def test_build_writes_a_self_contained_site(sites: dict[str, Path]) -> None:
    site = sites["history"]
    for page in source.PAGES:
        html = (site / f"{page.name}.html").read_text(encoding="utf-8")
        assert "Content-Security-Policy" in html
        assert "'unsafe-eval'" not in html and "'unsafe-inline'" not in html
        # nothing is loaded from another origin: every src/href is relative
        refs = re.findall(r'(?:src|href)="([^"]+)"', html)
        assert refs and all(not re.match(r"^[a-z]+://|^//", r) for r in refs), refs
    for chart in source.CHARTS:
        spec = json.loads((site / "specs" / f"{chart}.vl.json").read_text())
        assert spec["$schema"].endswith("vega-lite/v6.json")
    for name in source.VENDOR_FILES:
        assert (site / "vendor" / name).stat().st_size > 10_000
    # no CSV files (issue 39 item 3): tables' CSVs are made in the browser
    assert not (site / "data" / "csv").exists()
    runs = columns.decode(columns.read_data_file(site / "data" / "runs.js"))
    assert len(runs) == 12
    assert all((site / "data" / "runs" / f"{r['file']}.js").is_file() for r in runs)


def test_export_finds_the_injected_regression_and_the_hardware_change(history_db: Path) -> None:
    from perftrack.store import store

    with store.open_db(history_db, write=False) as st:
        data = export.export(st, [])
    regressions = [v for v in data.verdicts if v["verdict"] == "regression"]
    assert regressions, "the synthetic 10% step should give regressions"
    assert data.verdicts[0]["verdict"] == "regression"  # regressions first
    # every verdict is exported; those of the current hardware first, flagged
    assert {v["hw_key"] for v in data.verdicts if v["hw_current"]} == {"5ee0000000b2"}
    assert {v["hw_key"] for v in data.verdicts if not v["hw_current"]} == {"5ee0000000a1"}
    flags = [v["hw_current"] for v in data.verdicts]
    assert flags == sorted(flags, reverse=True)
    assert len(data.hardware_changes) == 1
    assert data.hardware_changes[0]["from_hw"] == "5ee0000000a1"
    charset = {(c["server"], c["collation"]) for c in data.charset}
    assert ("synthetic-mysql-8.0.36", "utf8mb4_0900_ai_ci") in charset
    assert all(c["baseline"] == "latin1_swedish_ci" for c in data.charset)
    assert data.meta["verdicts_from"] == "computed at build time"
    # the index's headline (issue 37 item 4): one line per version pair, its counts the
    # verdicts the overview shows by default (current hardware), its largest resolved
    # change the injected regression
    shown = [v for v in data.verdicts if v["hw_current"]]
    assert 0 < len(shown) < len(data.verdicts)
    pairs = {f"{v['previous']} → {v['server']}" for v in shown}
    assert sorted(h["pair"] for h in data.headline) == sorted(pairs)
    assert sum(h["cells"] for h in data.headline) == len(shown)
    for h in data.headline:
        mine = [v for v in shown if f"{v['previous']} → {v['server']}" == h["pair"]]
        assert h["regression"] == sum(v["verdict"] == "regression" for v in mine)
        worst = min((v["ratio"] for v in mine if v["verdict"] == "regression"), default=None)
        if worst is not None and h["largest_verdict"] == "regression":
            assert h["largest_ratio"] == worst and h["text"].startswith(h["pair"] + ": ")
    assert any(h["largest_verdict"] == "regression" for h in data.headline)


def test_html_holds_no_data_only_the_data_files_do(sites: dict[str, Path]) -> None:
    site = sites["hostile"]
    for html in site.glob("*.html"):
        assert "__pwned" not in html.read_text(encoding="utf-8")
    data = (site / "data" / "verdicts.js").read_text(encoding="ascii")
    assert "__pwned" in data and "<script" not in data and "\\u003cscript" in data
    rows = columns.decode(columns.read_data_file(site / "data" / "verdicts.js"))
    assert rows[0]["version_string"] == HOSTILE_VERSION


def test_empty_db_builds_a_site_that_knows_it_is_empty(sites: dict[str, Path]) -> None:
    meta = columns.read_data_file(sites["empty"] / "data" / "meta.js")
    assert meta["empty"] is True
    assert columns.read_data_file(sites["empty"] / "data" / "verdicts.js")["n"] == 0


def test_cli_build_missing_db_is_one_line_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _out, err = run_cli(
        capsys, "site", "build", "--db", str(tmp_path / "nope.duckdb"), "--out", str(tmp_path / "s")
    )
    assert rc == EXIT_USER_ERROR
    assert "perftrack ingest" in one_error_line(err)
    assert not (tmp_path / "s").exists()


def test_cli_build_corrupt_db_leaves_the_previous_site(
    tmp_path: Path, history_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    rc, stdout, _ = run_cli(capsys, "site", "build", "--db", str(history_db), "--out", str(out))
    assert rc == 0 and "pages" in stdout
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(b"this is not a database" * 1000)
    rc, _, err = run_cli(capsys, "site", "build", "--db", str(bad), "--out", str(out))
    assert rc == EXIT_DB
    one_error_line(err)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site")] == []


def test_cli_build_refuses_a_directory_it_did_not_write(
    tmp_path: Path, history_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "precious.txt").write_text("keep me")
    rc, _, err = run_cli(capsys, "site", "build", "--db", str(history_db), "--out", str(out))
    assert rc == EXIT_USER_ERROR
    assert "not written by `perftrack site build`" in one_error_line(err)
    assert [p.name for p in out.iterdir()] == ["precious.txt"]


def test_study_pages_come_from_configs_studies(
    tmp_path: Path, history_db: Path, config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.rmtree(config_dir / "studies", ignore_errors=True)
    synthetic_studies(config_dir)
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(config_dir))
    out = tmp_path / "site"
    assert cli.main(["site", "build", "--db", str(history_db), "--out", str(out)]) == 0
    assert (out / f"study-{SYNTHETIC_STUDY}.html").is_file()
    assert "<b>bold?</b>" not in (out / f"study-{SYNTHETIC_STUDY}.html").read_text()
    pages = sorted(p.name for p in out.glob("study-*.html"))
    assert len(pages) == len(list((config_dir / "studies").glob("*.yaml")))
    study = next(
        s
        for s in columns.read_data_file(out / "data" / "studies.js")
        if s["name"] == SYNTHETIC_STUDY
    )
    # the DB has the local servers' results: the page shows the local scale, labelled
    assert study["scale"] == "local" and "SYNTHETIC servers" in study["local_notes"]
    assert study["players"][0].startswith(
        "base: article MySQL A -> here synthetic-mysql-8.0.36 (MySQL 8.0.36 for MySQL A): "
        "a stand-in of the same product: graded"
    )
    by = {(r["comparison"], r["cells"]): r for r in study["rows"]}
    version = by[("version", "workload=oltp_read_only threads=4 collation=latin1_swedish_ci")]
    assert version["article"] == pytest.approx(0.93)
    assert version["ours"] == pytest.approx(0.95, abs=0.06)  # synthetic: 8.4.0 is 5% slower
    assert version["ci_low"] < version["ours"] < version["ci_high"]
    assert version["n"] == "36/36"  # 12 nights x 3 repeats pooled per side
    charset = by[
        (
            "charset base (A)",
            "latin1_swedish_ci / workload=oltp_read_only threads=4 collation=utf8mb4_0900_ai_ci",
        )
    ]
    assert charset["article"] == pytest.approx(1 / 0.8)  # latin1 / utf8mb4: > 1 = latin1 faster
    assert charset["ours"] == pytest.approx(1 / 0.9, abs=0.08)  # synthetic: utf8mb4 10% slower
    # graded by the one rule (the same product: MySQL 8.4.0 and 8.0.36 for B and A)
    assert version["grade"] == "agrees" and version["graded"]  # 0.95 against 0.93
    (claim,) = [c for c in study["claims"] if c.startswith("claim: B is slower than A")]
    assert claim.endswith(": agrees")
    assert "magnitude differs" in study["rule"] and "direction only" in study["rule"]


# --- vendored JS ------------------------------------------------------------------------


def test_vendored_libraries_match_their_checksums_and_pins() -> None:
    site = REPO / "site"
    sums = dict(
        reversed(line.split("  "))
        for line in (site / "vendor" / "SHA256SUMS").read_text().split("\n")
        if line
    )
    vendored = (*source.VENDOR_FILES, *source.SQL_VENDOR_FILES)
    for name in vendored:
        assert hashlib.sha256((site / "vendor" / name).read_bytes()).hexdigest() == sums[name]
    package = json.loads((site / "package.json").read_text())
    pins = package["dependencies"] | package["devDependencies"]
    versions = dict(
        line.split() for line in (site / "vendor" / "VERSIONS").read_text().splitlines()
    )
    lock = json.loads((site / "package-lock.json").read_text())["packages"]
    # every pinned package was vendored at its pin (plus apache-arrow, which the
    # DuckDB-WASM module bundles), each at the version the lock file resolved
    assert set(versions) == {*pins, "apache-arrow"}
    assert {k: versions[k] for k in pins} == pins
    assert {k: lock[f"node_modules/{k}"]["version"] for k in versions} == versions
    assert source.verify_vendor(site) == {n: sums[n] for n in vendored}


# --- png ----------------------------------------------------------------------------------


@pytest.mark.parametrize("chart", list(source.CHARTS))
def test_png_renders_every_chart_offline(
    chart: str, tmp_path: Path, history_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / f"{chart}.png"
    rc, stdout, err = run_cli(
        capsys, "site", "png", chart, "--db", str(history_db), "--out", str(out)
    )
    assert rc == 0, err
    data = out.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 5_000
    width = int.from_bytes(data[16:20], "big")
    assert width > 300
    assert chart in stdout


def test_png_unknown_chart_lists_the_known_ones(
    tmp_path: Path, history_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, err = run_cli(
        capsys, "site", "png", "pie", "--db", str(history_db), "--out", str(tmp_path / "x.png")
    )
    assert rc == EXIT_USER_ERROR
    assert "unknown chart 'pie'; known: overview, trend, scaling" in one_error_line(err)
    assert not (tmp_path / "x.png").exists()


def test_png_unknown_filter_value_lists_the_known_ones(
    tmp_path: Path, history_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, err = run_cli(
        capsys,
        "site",
        "png",
        "trend",
        "--db",
        str(history_db),
        "--out",
        str(tmp_path / "x.png"),
        "--workload",
        "tpcc",
    )
    assert rc == EXIT_USER_ERROR
    assert "no workload 'tpcc'" in one_error_line(err) and "oltp_read_only" in err


def test_png_filters_follow_the_page_rules(history_db: Path) -> None:
    from perftrack.store import store

    with store.open_db(history_db, write=False) as st:
        rows = export.export_for_chart(st, [], "summary")["table"]
    picked, chosen = png.apply_filters("trend", rows, {"workload": "oltp_read_only"})
    assert chosen["workload"] == "oltp_read_only" and chosen["threads"] == "1"
    assert "collation" not in chosen  # "all" on the trend page: one line per collation
    assert {r["threads"] for r in picked} == {1}


# --- serve --------------------------------------------------------------------------------


def test_serve_binds_loopback_and_refuses_a_non_site(
    tmp_path: Path, sites: dict[str, Path]
) -> None:
    httpd = serve.server(sites["history"], 0)
    try:
        assert httpd.server_address[0] == "127.0.0.1"
    finally:
        httpd.server_close()
    from perftrack.core.errors import ConfigError

    with pytest.raises(ConfigError, match="not a built site"):
        serve.server(tmp_path, 0)


def test_build_output_may_not_overlap_the_sources(tmp_path: Path, history_db: Path) -> None:
    from perftrack.core.errors import ConfigError

    with pytest.raises(ConfigError, match="overlaps the site sources"):
        build.build(history_db, REPO / "site" / "out")


def test_duckdb_wasm_is_loaded_by_the_sql_page_only(sites: dict[str, Path]) -> None:
    """Issue 39: the 34 MB engine is the SQL page's alone. Every page's references (its
    scripts and stylesheets, and what those scripts name) are read: only sql.html's reach
    DuckDB-WASM's module, worker or .wasm."""
    site = sites["history"]
    engine = re.compile(r"duckdb[\w.-]*\.(?:wasm|worker\.js|mjs)")
    pages = sorted(site.glob("*.html"))
    assert len(pages) > 5
    reach: dict[str, set[str]] = {}
    for page in pages:
        html = page.read_text(encoding="utf-8")
        refs = set(re.findall(r'(?:src|href)="([^"#?:]+\.(?:js|css|mjs))"', html))
        named = set(engine.findall(html))
        for ref in refs:
            named |= set(engine.findall((site / ref).read_text(encoding="utf-8")))
            if engine.search(ref):
                named.add(ref)
        reach[page.name] = named
    assert reach["sql.html"] >= {"duckdb-eh.wasm", "duckdb-browser-eh.worker.js"}, reach
    assert {p for p, n in reach.items() if n} == {"sql.html"}, reach
