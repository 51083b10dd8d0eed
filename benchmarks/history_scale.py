"""Speed of the nightly publish steps as the history grows (docs/benchmarks.md, "Scale").

SYNTHETIC DATA (benchmarks/synthetic_history.py): the nightly matrix × 3 runner classes,
~1,080 records a night, in a temporary DB. For each size N the DB is grown to N-1
nights, then night N is published as the workflow does and each step is timed:
  ingest    `perftrack ingest` of night N's run-record files (read, validate, write);
  detect    `perftrack detect` over every series;
  site      `perftrack site build`;
and the overview page's payload (HTML + scripts + data it loads) is measured.

With --page, the nightly-history page of each built site is opened in Chromium (Debian's
chromium via Playwright, from file://, a fresh context per load, 1280×900): the bytes it
loads until its first chart (gzip -6, what a static host sends; its data files apart from
the vendored scripts), the largest cell file any filter choice loads, and the time to the
first chart drawn (performance.now() from navigation start; median of --loads loads).

    .venv/bin/python benchmarks/history_scale.py --nights 30 365 1000
    .venv/bin/python benchmarks/history_scale.py --nights 365 --page
    .venv/bin/python benchmarks/history_scale.py --page-standin 365
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import synthetic_history as synth  # noqa: E402

from perftrack import cli  # noqa: E402
from perftrack.publish.site import build  # noqa: E402
from perftrack.store import store  # noqa: E402
from perftrack.store.files import nightfiles  # noqa: E402

STEPS_AT = 365  # where the synthetic step changes fall (a year's history)


def payload(site: Path, page: str) -> int:
    from site_scale import page_files

    return sum(f.stat().st_size for f in page_files(site, page))


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def history_page(site: Path, loads: int) -> dict[str, float]:
    """What the history page loads until its first chart, gzipped, and how long it takes."""
    from site_scale import GZIP_LEVEL, first_chart_ms

    def gz(path: Path) -> int:
        return len(gzip.compress(path.read_bytes(), GZIP_LEVEL))

    loaded: set[str] = set()
    ms = first_chart_ms(site, "history", loads, loaded)
    files = [site / u[len(site.as_uri()) + 1 :] for u in sorted(loaded)]
    data = [f for f in files if f.parent.name in ("data", "history")]
    cells = list((site / "data" / "history").glob("h*.js"))
    return {
        "history_data_gz_kb": sum(map(gz, data)) / 1e3,
        "history_total_gz_kb": sum(map(gz, files)) / 1e3,
        "history_largest_cell_gz_kb": max(map(gz, cells), default=0) / 1e3,
        "history_cells": len(cells),
        "history_first_chart_ms": ms,
    }


def page_standin(nights: int, classes: int, workdir: Path, loads: int) -> dict[str, float]:
    """STAND-IN for a year of history when growing the DB is too slow for the machine (a
    shared 2-core VM grew ~50 nights of the real matrix in 20 minutes): two nights of the
    real matrix are grown and exported as the site does, then each of their series is
    lengthened to `nights` nights in the exporter's own row shape — same cells, versions,
    runner classes and columns, every cost column filled (the synthetic records have none;
    real ones do) — with made-up values (lognormal noise, CV 10%) and change points where
    synthetic_history.py puts its steps (the newest version on read_write at 40%: "server";
    class b, every series, at 70%: "environment"). The site is written by the build's own
    writer (build._write) and its history page measured as with --page."""
    import datetime as dt
    import random

    from perftrack.publish.site import advisor, export, history, source

    setup = synth.load_setup(nights, classes)
    db = workdir / "standin.duckdb"
    synth.grow(db, setup, 0, 2)
    with store.open_db(db, write=False) as st:
        data = export.export(st, [])
        advice = advisor.page_data(st)
    newest = data.meta["servers"][-1]  # the catalog order's last: synthetic_history's step
    server_at, env_at = int(nights * 0.4), int(nights * 0.7)
    rng = random.Random(1)
    start = dt.datetime(2025, 1, 1, 1, 0, tzinfo=dt.UTC)
    seeds = {(*history.cell_key(r), r["server"], r["hw_key"]): r for r in data.history}
    rows, cps = [], []
    for base in seeds.values():
        env_step = base["runner_class"].endswith("b")
        server_step = base["server"] == newest["server"] and base["workload"].endswith("write")
        for k in range(nights):
            level = 0.92 if server_step and k >= server_at else 1.0
            level *= 1.06 if env_step and k >= env_at else 1.0
            f = level * rng.lognormvariate(0, 0.1)
            at = (start + dt.timedelta(days=k)).isoformat().replace("+00:00", "Z")
            row = {**base, "at": at, "run_id": f"standin-{base['runner_class']}-{k:04d}"}
            row.update(tps=base["tps"] * f, tps_min=base["tps"] * f * 0.95)
            row.update(tps_max=base["tps"] * f * 1.05, n=5, p95_ms=(base["p95_ms"] or 1) / f)
            row.update({c: 10.0 * (i + 1) / f for i, c in enumerate(history.COST_COLUMNS)})
            rows.append(row)
            for kind, on, when in (
                ("server", server_step, server_at),
                ("environment", env_step, env_at),
            ):
                if on and k == when:
                    cps.append(
                        {
                            **row,
                            "rel_change": -0.08 if kind == "server" else 0.06,
                            "p_value": 1e-6,
                            "environment": kind == "environment",
                            "control": False,
                            "acknowledged": None,
                        }
                    )
    rows.sort(key=lambda r: r["at"])
    data.history, data.change_points = rows, cps
    data.history_cells, data.history_files = history.split(rows, cps)
    site = workdir / "standin-site"
    build._write(
        site, source.site_dir(), data, [], advice, {"open": [], "closed": {}, "checked_at": None}
    )
    out = history_page(site, loads)
    from site_scale import first_chart_ms

    out["overview_first_chart_ms"] = first_chart_ms(site, "index", loads)  # the yardstick
    out.update(
        nights=nights,
        history_rows=len(rows),
        change_points=len(cps),
    )
    return out


def measure(
    sizes: list[int],
    workdir: Path,
    classes: int,
    batch: int = 30,
    loads: int = 0,
    fast: bool = False,
) -> list[dict[str, float]]:
    setup = synth.load_setup(STEPS_AT, classes)
    db = workdir / "synthetic-history.duckdb"
    rows = []
    have = 0
    for n in sorted(sizes):
        t0 = time.perf_counter()
        (synth.grow_fast if fast else synth.grow)(db, setup, have, n - 1, batch=batch)
        grow_s = time.perf_counter() - t0
        recs = workdir / f"night-{n}"
        count = synth.write_records(setup, n - 1, recs)
        size_before = _stored_bytes(db)
        ingest_s = timed(lambda: store.ingest_paths(db, [recs]))  # noqa: B023
        have = n
        detect_s = timed(lambda: _ok(cli.main(["detect", "--db", str(db)])))
        site = workdir / "site"
        build_s = timed(lambda: build.build(db, site))  # noqa: B023
        with store.open_db(db, write=False) as st:
            results = st.con.execute("SELECT count(*) FROM results").fetchone()[0]
            series = st.con.execute(
                "SELECT count(*) FROM (SELECT DISTINCT run_id FROM results)"
            ).fetchone()[0]
        rows.append(
            {
                "nights": n,
                "records": results,
                "runs": series,
                "night_records": count,
                "db_mb": _stored_bytes(db) / 1e6,  # the DuckDB file and its night files
                "db_growth_kb": (_stored_bytes(db) - size_before) / 1e3,
                "night_files": len(nightfiles.listed_paths(db)),
                "ingest_s": ingest_s,
                "detect_s": detect_s,
                "build_s": build_s,
                "overview_kb": payload(site, "index") / 1e3,
                "grow_s": grow_s,
                **(history_page(site, loads) if loads else {}),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _stored_bytes(db: Path) -> int:
    files = nightfiles.files_dir(db)
    return db.stat().st_size + sum(p.stat().st_size for p in files.rglob("*.parquet"))


def _ok(rc: int) -> None:
    if rc != 0:
        raise SystemExit(f"a step failed (exit {rc})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, nargs="+", default=[30, 365, 1000])
    ap.add_argument("--classes", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="work in this directory and keep it")
    ap.add_argument("--page", action="store_true", help="also measure the history page")
    ap.add_argument("--loads", type=int, default=5, help="history page loads (--page)")
    ap.add_argument(
        "--batch", type=int, default=30, help="nights per ingest while growing (1: as publish)"
    )
    ap.add_argument(
        "--page-standin",
        type=int,
        metavar="NIGHTS",
        help="only the history page, on a stand-in of NIGHTS nights (see page_standin)",
    )
    ap.add_argument(
        "--fast",
        action="store_true",
        help="grow with synthetic_history.grow_fast (the same model, numpy draws: minutes "
        "instead of an hour for 1,000 nights); night N itself is always real records",
    )
    a = ap.parse_args()
    loads = a.loads if a.page else 0
    if a.page_standin:
        with tempfile.TemporaryDirectory(prefix="perftrack-history-page-") as tmp:
            print(json.dumps(page_standin(a.page_standin, a.classes, Path(tmp), a.loads)))
        return
    if a.keep:
        a.keep.mkdir(parents=True, exist_ok=True)
        synth.refuse_data_dir(a.keep)
        rows = measure(a.nights, a.keep, a.classes, a.batch, loads, a.fast)
    else:
        with tempfile.TemporaryDirectory(prefix="perftrack-history-") as tmp:
            rows = measure(a.nights, Path(tmp), a.classes, a.batch, loads, a.fast)
    cols: tuple[str, ...] = ("nights", "records", "db_mb", "ingest_s", "detect_s", "build_s")
    cols += ("overview_kb",)
    if loads:
        cols += ("history_data_gz_kb", "history_total_gz_kb", "history_largest_cell_gz_kb")
        cols += ("history_first_chart_ms",)
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print(
            "| "
            + " | ".join(f"{r[c]:,.1f}" if isinstance(r[c], float) else f"{r[c]:,}" for c in cols)
            + " |"
        )
    first, last = rows[0], rows[-1]
    ratio = last["nights"] / first["nights"]
    for c in ("ingest_s", "detect_s", "build_s"):
        print(f"{c}: x{last[c] / first[c]:.1f} for x{ratio:.0f} the nights")


if __name__ == "__main__":
    main()
