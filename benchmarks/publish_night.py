"""One nightly publish over a long history, timed step by step (docs/benchmarks.md, "Scale").

SYNTHETIC DATA. Takes a history `history_scale.py --keep DIR` left (the DB, its night
files and the site built over it) and, `--runs` times, on a fresh copy of it: ingests one
whole night of record files (the night after the history's last, all runner classes:
3,960 records of the nightly matrix), runs `perftrack detect`, and `perftrack site
build` over the copy's previous build, as the nightly workflow does. The history itself is
never written. Each run starts with the store's read cache (store/files/readcache.py) as the
previous night left it; one last run ("cold") starts without it, as a fresh clone does
(its first open builds it). The new night's files are named (and dated) the day after the
history's last night, as the nightly's would be, so they land in the open month; one more
run ("new month") dates them the first of the next month instead, which closes the last
month and consolidates its read-cache file (store/files/readcache.py), as one night a month does.
First, in a scratch copy, the DB is migrated, detect run and the site built over the
history's build by this code, as the previous night's publish would have (a change of the
site's file layout, or the read cache's answers, is paid there once), so no run times a
migration or a one-off rewrite.

    .venv/bin/python benchmarks/history_scale.py --nights 1000 --fast --batch 50 --keep DIR
    .venv/bin/python benchmarks/per_night_files.py DIR DIR1  # one file set a night
    .venv/bin/python benchmarks/publish_night.py DIR1 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import synthetic_history as synth  # noqa: E402
from per_night_files import stamped  # noqa: E402

from perftrack import cli  # noqa: E402
from perftrack.store import store  # noqa: E402
from perftrack.store.files import nightfiles, readcache  # noqa: E402

DB_NAME = "synthetic-history.duckdb"  # history_scale.py's


def _timed(step: str, fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    rc = fn()
    took = time.perf_counter() - t0
    if isinstance(rc, int) and rc != 0:
        raise SystemExit(f"{step} failed (exit {rc})")
    return took


def whole_night(setup: synth.Setup, first: int, out: Path) -> tuple[int, int]:
    """(night, records) of the first night from `first` on that every class ran whole."""
    full = len(setup.classes) * len(synth._cells(setup.m, len(setup.m.servers)))
    for night in range(first, first + 50):
        recs = out / f"night-{night + 1}"
        n = synth.write_records(setup, night, recs)
        if n == full:
            return night, n
        shutil.rmtree(recs)
    raise SystemExit(f"no whole night in 50 after night {first}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("history", type=Path, help="a directory history_scale.py --keep left")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    src_db, src_site = a.history / DB_NAME, a.history / "site"
    if not src_db.is_file() or not (src_site / "index.html").is_file():
        raise SystemExit(f"error: {a.history} holds no {DB_NAME} and site/ (history_scale --keep)")
    with tempfile.TemporaryDirectory(prefix="perftrack-publish-night-") as tmp:
        work = Path(tmp)
        base = nightfiles.copy_db(src_db, work / "base" / DB_NAME)
        with store.open_db(base, write=True) as st:  # migrate once, outside the timings
            last, last_at = st.con.execute(  # run ids are synthetic-<night>-<class>
                "SELECT max(CAST(split_part(run_id, '-', 2) AS INTEGER)), "
                "max(last_finished_at) FROM runs"
            ).fetchone()
        next_day = last_at + timedelta(days=1)
        new_month = datetime(next_day.year + next_day.month // 12, next_day.month % 12 + 1, 1, 3)
        base_site = work / "base" / "site"  # the previous night's detect and build, by this code
        shutil.copytree(src_site, base_site)
        if cli.main(["detect", "--db", str(base)]) != 0:  # (and the answers it rolls forward)
            raise SystemExit("error: the previous night's detect failed")
        if cli.main(["site", "build", "--db", str(base), "--out", str(base_site)]) != 0:
            raise SystemExit("error: the previous night's site build failed")
        setup = synth.load_setup(365, 3)
        night, count = whole_night(setup, last + 1, work)
        records = work / f"night-{night + 1}"
        rows = []
        kinds = [*(str(r + 1) for r in range(a.runs)), "new month", "cold"]
        for run, kind in enumerate(kinds):  # the last without the read cache: a fresh clone
            cold = kind == "cold"
            when = new_month if kind == "new month" else next_day
            # the base's directory name: the stored views name it (a copy under another
            # name would have them rewritten, which a nightly checkout never does)
            here = work / f"run-{run}" / "base"
            db = nightfiles.copy_db(base, here / DB_NAME)
            if not cold and readcache.cache_dir(base).is_dir():  # as the last night left it
                shutil.copytree(readcache.cache_dir(base), readcache.cache_dir(db))
            site = here / "site"
            shutil.copytree(base_site, site)
            os.sync()  # the copies' writes are not the night's: flushed before the timings
            row = {"run": kind, "night": night + 1, "records": count, "files_dated": str(when)}
            with stamped(when):
                row["ingest_s"] = _timed("ingest", lambda: store.ingest_paths(db, [records]))  # noqa: B023
            row["detect_s"] = _timed("detect", lambda: cli.main(["detect", "--db", str(db)]))  # noqa: B023
            row["build_s"] = _timed(  # the nightly's command (with the study pages)
                "site build",
                lambda: cli.main(["site", "build", "--db", str(db), "--out", str(site)]),  # noqa: B023
            )
            rows.append(row)
            print(json.dumps(row), flush=True)
            shutil.rmtree(here.parent)
    print("| run | ingest | detect | site build |")
    print("|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['run']} | {r['ingest_s']:.1f} s | {r['detect_s']:.1f} s | {r['build_s']:.1f} s |"
        )


if __name__ == "__main__":
    main()
