"""What each of the store's three caches buys at 1,000 nights (issue 40 item 3).

SYNTHETIC DATA. The store keeps three caches of answers over its immutable night files,
all derived, in `data/.results-cache/` (docs/schema.md, "The read cache"):

- `readcache` (store/files/readcache.py): each closed month's night files of a table
  consolidated into one Parquet file, which the store's views read instead;
- `answers` (store/files/answers.py): the questions `detect` and then `site build` both
  ask, kept as JSON under the digest of the SQL and of every file the views read;
- `rolling` (store/files/rolling.py): whole-history answers (the comparisons' window,
  the nightly points) kept as Parquet and rolled forward by the night's added files.

Takes a history `history_scale.py --keep` grew and `per_night_files.py` laid out one file
set a night (as `perftrack publish` writes it). First, in a scratch copy, the DB is
migrated, detect run and the site built with every cache on (the previous night's
publish: its caches are what the next night finds). Then, per configuration and round,
on a fresh copy of that (its cache directory included): one whole night is ingested
(3,960 records, the day after the history's last; not compared: ingest reads none of the
three), and timed: `perftrack detect`, `perftrack site build` over the previous build,
and one query on a fresh read-only open (`SELECT count(*), sum(tps) FROM results`, issue
#19's). Configurations: every cache on; each one off; all off. A cache is off in this
process only: its function is replaced by the uncached path it falls back to when its
directory cannot be written (readcache: the views read every night file; answers: asked
every time; rolling: the whole history asked into a TEMP table). The configurations run
in turn within each round, so the ratios (time off / time on) are taken in one run.

    .venv/bin/python benchmarks/history_scale.py --nights 1000 --fast --batch 50 --keep DIR
    .venv/bin/python benchmarks/per_night_files.py DIR DIR1  # one file set a night
    .venv/bin/python benchmarks/store_caches.py DIR1 --rounds 1
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import duckdb  # noqa: E402
import synthetic_history as synth  # noqa: E402
from per_night_files import stamped  # noqa: E402
from publish_night import DB_NAME, whole_night  # noqa: E402

from perftrack import cli  # noqa: E402
from perftrack.store import store  # noqa: E402
from perftrack.store.files import answers, nightfiles, readcache, rolling  # noqa: E402

CACHES = ("readcache", "answers", "rolling")
CONFIGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("all on", ()),
    *((f"no {c}", (c,)) for c in CACHES),
    ("all off", CACHES),
)
STEPS = ("detect_s", "build_s", "query_s")


def _night_files_only(
    db: Path,
    root: Path,
    table: str,
    files: Sequence[readcache.Listed],
    **_: Any,
) -> list[readcache.Part]:
    """readcache.consolidate without the cache: every night file read as it is."""
    ordered = sorted(files, key=lambda f: f.path)
    return [readcache.Part(read=root / f.path, files=(f,), cached=False) for f in ordered]


def _asked(
    db: Path,
    con: duckdb.DuckDBPyConnection,
    sql: str,
    args: Sequence[Any],
    ask: Callable[[], answers.Rows],
) -> answers.Rows:
    """answers.kept without the cache: asked every time."""
    return ask()


def _whole(
    con: duckdb.DuckDBPyConnection,
    db: Path,
    query: rolling.Query,
    merge: rolling.Merge,
    check: rolling.Check | None = None,
    *,
    writer: bool = False,
) -> tuple[str, str]:
    """rolling.advance without the cache: the whole history asked, into a TEMP table."""
    whole = query("results")
    table = rolling.name(whole)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {whole}")
    return table, "asked"


UNCACHED: dict[str, tuple[Any, str, Callable[..., Any]]] = {
    "readcache": (readcache, "consolidate", _night_files_only),
    "answers": (answers, "kept", _asked),
    "rolling": (rolling, "advance", _whole),
}


@contextlib.contextmanager
def without(caches: Sequence[str]) -> Iterator[None]:
    """The named caches off in this process, restored after."""
    saved = [
        (UNCACHED[c][0], UNCACHED[c][1], getattr(UNCACHED[c][0], UNCACHED[c][1])) for c in caches
    ]
    try:
        for c in caches:
            module, attr, uncached = UNCACHED[c]
            setattr(module, attr, uncached)
        yield
    finally:
        for module, attr, original in saved:
            setattr(module, attr, original)


def _timed(step: str, fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    rc = fn()
    took = time.perf_counter() - t0
    if isinstance(rc, int) and rc != 0:
        raise SystemExit(f"error: {step} failed (exit {rc})")
    return took


def _query(db: Path) -> None:
    with store.open_db(db, write=False) as st:
        st.con.execute("SELECT count(*), sum(tps) FROM results").fetchall()


def one_night(
    base: Path, base_site: Path, records: Path, when: Any, work: Path
) -> dict[str, float]:
    """On a fresh copy of the base (caches as the previous night left them): ingest the
    night, then time detect, the site build over the previous build and one query."""
    here = work / "run" / "base"  # the base's directory name: the stored views name it
    db = nightfiles.copy_db(base, here / DB_NAME)
    if readcache.cache_dir(base).is_dir():
        shutil.copytree(readcache.cache_dir(base), readcache.cache_dir(db))
    site = here / "site"
    shutil.copytree(base_site, site)
    os.sync()  # the copies' writes are not the night's: flushed before the timings
    with stamped(when):
        store.ingest_paths(db, [records])
    row = {
        "detect_s": _timed("detect", lambda: cli.main(["detect", "--db", str(db)])),
        "build_s": _timed(
            "site build", lambda: cli.main(["site", "build", "--db", str(db), "--out", str(site)])
        ),
        "query_s": _timed("query", lambda: _query(db)),
    }
    shutil.rmtree(here.parent)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("history", type=Path, help="a directory history_scale.py --keep left")
    ap.add_argument("--rounds", type=int, default=1, help="each configuration this many times")
    a = ap.parse_args()
    src_db, src_site = a.history / DB_NAME, a.history / "site"
    if not src_db.is_file():
        raise SystemExit(f"error: {a.history} holds no {DB_NAME} (history_scale --keep)")
    with tempfile.TemporaryDirectory(prefix="perftrack-store-caches-") as tmp:
        work = Path(tmp)
        base = nightfiles.copy_db(src_db, work / "base" / DB_NAME)
        with store.open_db(base, write=True) as st:  # migrate once, outside the timings
            last, last_at, files = st.con.execute(
                "SELECT max(CAST(split_part(run_id, '-', 2) AS INTEGER)), "
                "max(last_finished_at), (SELECT count(*) FROM data_files "
                "WHERE table_name = 'results') FROM runs"
            ).fetchone()
        base_site = work / "base" / "site"  # the previous night's detect and build
        if (src_site / "index.html").is_file():  # else the first build is from scratch
            shutil.copytree(src_site, base_site)
        if cli.main(["detect", "--db", str(base)]) != 0:
            raise SystemExit("error: the previous night's detect failed")
        if cli.main(["site", "build", "--db", str(base), "--out", str(base_site)]) != 0:
            raise SystemExit("error: the previous night's site build failed")
        night, count = whole_night(synth.load_setup(365, 3), last + 1, work)
        records, when = work / f"night-{night + 1}", last_at + timedelta(days=1)
        print(json.dumps({"nights": last + 1, "results_files": files, "records": count}))
        got: dict[str, list[dict[str, float]]] = {name: [] for name, _ in CONFIGS}
        for rnd in range(a.rounds):
            for name, off in CONFIGS:
                with without(off):
                    row = one_night(base, base_site, records, when, work)
                got[name].append(row)
                print(json.dumps({"round": rnd + 1, "config": name, **row}), flush=True)
    med = {
        name: {s: statistics.median(r[s] for r in rows) for s in STEPS}
        for name, rows in got.items()
    }
    on = med["all on"]
    print("| caches | detect | site build | open + query | detect + build |")
    print("|---|---|---|---|---|")
    for name, _ in CONFIGS:
        m = med[name]
        both, both_on = m["detect_s"] + m["build_s"], on["detect_s"] + on["build_s"]
        cells = [f"{m[s]:.1f} s ({m[s] / on[s]:.2f}×)" for s in ("detect_s", "build_s")]
        cells.append(f"{m['query_s']:.2f} s ({m['query_s'] / on['query_s']:.2f}×)")
        cells.append(f"{both:.1f} s ({both / both_on:.2f}×)")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
