"""What the results DB costs the git repository, night after night (docs/benchmarks.md).

SYNTHETIC DATA (benchmarks/synthetic_history.py: the nightly matrix × 3 runner classes).
A scratch git repository in a temporary directory holds the DB as a checkout does
(`data/results.duckdb` and, since schema v6, its night files `data/results/`) and gets
`data/` committed after every night, exactly as the publish job leaves it (ingest
through the store, then `detect`, which replaces the verdicts and change points;
CHECKPOINT, and a rewrite when a quarter of the file is free). The repository is packed
(`git gc`) at the start and the end of a window of nights; the pack growth over the
window divided by its nights is the cost per night a clone pays. `--base N` first grows
the DB to N nights without committing (one ingest a night, as publish does, unless
`--base-batch` says more), commits that once, then measures. The largest file in the
repository is reported too (the 50 MB limit).

    .venv/bin/python benchmarks/repo_cost.py --base 0 --nights 20
    .venv/bin/python benchmarks/repo_cost.py --base 345 --nights 20
    .venv/bin/python benchmarks/repo_cost.py --base 60 --nights 10 --results-format v9

Variants of the night files' layout (issue 19, "Budgets"), for comparison in one run:
`--results-format v9` writes results files as schemas v6 to v9 did (full record ids,
doubles), `v10` as v10 did (timestamps as microseconds; v11, the default, is
store/files/nightformat.py);
`--parquet-v2` adds DuckDB's PARQUET_VERSION V2 encodings; `--zstd-level N`;
`--order time` writes results sorted by time, as files before schema v10 were (now: by
series). `--cost` gives the committed nights' records the cost-per-operation and host
fields every real nightly record has (synthetic_history.with_cost, modelled on data/'s
real records); without it those columns are null, which real nights' never are.
`--fast` grows the base with synthetic_history.grow_fast (the same model, numpy
draws). `--cost --xz-bound` measures nothing in git: it prints what xz -9e makes of one
night's floor values alone (see FLOOR_VALUES).

    .venv/bin/python benchmarks/repo_cost.py --cost --xz-bound
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import lzma
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import synthetic_history as synth  # noqa: E402

from perftrack import cli  # noqa: E402
from perftrack.store import store  # noqa: E402
from perftrack.store.files import nightfiles, nightformat, rows  # noqa: E402

TIME_ORDER = "started_at, record_id"  # how results files were ordered before schema v10


def configure(results_format: str, parquet_v2: bool, zstd_level: int | None, order: str) -> None:
    """Switch the store's night-file writer to a variant (this process only)."""
    if results_format == "v9":
        nightformat.FORMAT_VERSION = 10**6  # never: results files written as v6 to v9 did
    if results_format in ("v9", "v10"):
        nightformat.SECONDS_VERSION = 10**6  # never: timestamps as v6 to v10 wrote them
    if parquet_v2:
        nightfiles.COPY_OPTIONS += ", PARQUET_VERSION V2"
    if zstd_level is not None:
        nightfiles.COPY_OPTIONS = nightfiles.COPY_OPTIONS.replace(
            "COMPRESSION_LEVEL 19", f"COMPRESSION_LEVEL {zstd_level}"
        )
    if order == "time":
        nightfiles.FILE_TABLES["results"] = TIME_ORDER


# Content the history could drop, for the owner's decision (issue 19: not done in
# perftrack; these only measure what each would save): --drop-series leaves tps_series
# out; --significant N keeps N significant digits of the values perftrack derives
# (the throughput summaries, cost per operation, host percentages, max latency) instead
# of the sampler's and rows.py's fixed decimals.
DROP_SERIES = False
SIGNIFICANT: int | None = None
# --floor: the lower bound of what the history could keep: only the values a verdict, a
# change point or an explanation reads (throughput, p95 latency, the cost per operation
# and the host signals; with the keys and times), every other measured value dropped.
FLOOR = False
NOT_READ = (
    "qps",
    "latency_avg_ms",
    "latency_max_ms",
    "errors_per_s",
    "reconnects_per_s",
    "total_time_s",
    "events",
    "tps_p5",
    "tps_p50",
    "tps_p95",
    "tps_cv",
    "tps_series",
)
DERIVED = (
    "tps_p5",
    "tps_p50",
    "tps_p95",
    "tps_cv",
    "latency_max_ms",
    *(c for c, t in rows.V4_COST_COLUMNS if t == "DOUBLE"),
)


def _significant(x: Any, digits: int) -> Any:
    if not isinstance(x, float) or x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


def reduced(night: list[store.PreparedRecord]) -> list[store.PreparedRecord]:
    """The night's rows with the content DROP_SERIES, SIGNIFICANT and FLOOR say dropped."""
    if not DROP_SERIES and SIGNIFICANT is None and not FLOOR:
        return night
    col = {name: i for i, (name, _) in enumerate(rows.RESULT_COLUMNS)}
    out = []
    for p in night:
        values = list(p.result)
        if DROP_SERIES:
            values[col["tps_series"]] = None
        for c in NOT_READ if FLOOR else ():
            values[col[c]] = None
        if SIGNIFICANT is not None:
            for c in DERIVED:
                values[col[c]] = _significant(values[col[c]], SIGNIFICANT)
        out.append(dataclasses.replace(p, result=tuple(values)))
    return out


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@localhost",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@localhost",
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo),
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


def pack_bytes(repo: Path) -> int:
    git(repo, "gc", "--quiet", "--prune=now")
    return sum(p.stat().st_size for p in (repo / ".git" / "objects" / "pack").glob("*.pack"))


def largest_file(repo: Path) -> tuple[str, int]:
    """(path, bytes) of the largest file in HEAD."""
    best = ("", 0)
    for line in git(repo, "ls-tree", "-r", "-l", "HEAD").splitlines():
        meta, path = line.split("\t", 1)
        size = meta.split()[3]
        if size.isdigit() and int(size) > best[1]:
            best = (path, int(size))
    return best


def commit_data(repo: Path, db: Path, message: str) -> None:
    """Commit what `perftrack publish` commits: the DB file and its night files (never the
    read cache beside them, which the project's .gitignore also keeps out)."""
    ours = [str(p.relative_to(repo)) for p in (db, nightfiles.files_dir(db))]
    git(repo, "add", "-A", "--", *ours)
    git(repo, "commit", "--quiet", "-m", message)


def measure(
    base: int, nights: int, work: Path, base_batch: int, fast: bool = False
) -> dict[str, float | str]:
    setup = synth.load_setup(365)
    repo = work / "repo"
    (repo / "data").mkdir(parents=True)
    git(repo, "init", "--quiet")
    (repo / ".gitignore").write_text("*.lock\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "--quiet", "-m", "init")
    db = repo / "data" / "results.duckdb"
    if base:
        (synth.grow_fast if fast else synth.grow)(db, setup, 0, base, batch=base_batch)
        with store.open_db(db, write=True) as st:  # leave it as a nightly close would
            st.compact_on_close = True
        commit_data(repo, db, f"base: {base} nights")
    rngs = synth.night_rngs(setup)
    start = pack_bytes(repo)
    sizes = []
    results_bytes = []
    t0 = time.perf_counter()
    for night in range(base, base + nights):
        with store.open_db(db, write=True) as st:
            st.ingest_prepared(reduced(synth.prepared_night(setup, night, rngs(night))))
        newest = max(files_of(db, "results"))
        results_bytes.append((newest.stat().st_size, _rows(db, newest)))
        if cli.main(["detect", "--db", str(db)]) != 0:  # as `perftrack publish` does
            raise SystemExit("detect failed")
        commit_data(repo, db, f"night {night}")
        sizes.append(db.stat().st_size)
    loop_s = time.perf_counter() - t0
    end = pack_bytes(repo)
    path, size = largest_file(repo)
    files = nightfiles.files_dir(db)
    night_bytes = sum(p.stat().st_size for p in files.rglob("*.parquet"))
    return {
        "base_nights": base,
        "nights": nights,
        "db_mb_end": sizes[-1] / 1e6,
        "night_files": len(list(files.rglob("*.parquet"))),
        "night_files_mb": night_bytes / 1e6,
        "largest_file": path,
        "largest_file_mb": size / 1e6,
        "pack_mb_start": start / 1e6,
        "pack_mb_end": end / 1e6,
        "pack_kb_per_night": (end - start) / nights / 1e3,
        "results_file_kb_per_night": sum(b for b, _ in results_bytes) / nights / 1e3,
        "results_bytes_per_result": sum(b for b, _ in results_bytes)
        / max(1, sum(n for _, n in results_bytes)),
        "ten_years_gb": (end + (end - start) / nights * (3650 - base - nights)) / 1e9,
        "loop_s": loop_s,
    }


def files_of(db: Path, table: str) -> list[Path]:
    return [p for p in nightfiles.listed_paths(db) if p.name.endswith(f".{table}.parquet")]


def _rows(db: Path, path: Path) -> int:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        rel = path.relative_to(nightfiles.files_dir(db)).as_posix()
        (n,) = con.execute("SELECT rows FROM data_files WHERE path = ?", [rel]).fetchone()
    finally:
        con.close()
    return int(n)


# --xz-bound: the floor's measured values of one night (FLOOR_VALUES; the two sums another
# column gives, cpu_us_per_txn and cpu_us_per_query, left out), as the sampler's decimal
# text, column by column in series order, compressed by xz at its strongest (-9e): what a
# layout that keeps them exactly could hope for, before any key, time or other file.
FLOOR_VALUES = (
    "tps", "latency_pct_ms", "cpu_user_us_per_txn", "cpu_sys_us_per_txn", "ctx_vol_per_txn",
    "ctx_invol_per_txn", "read_bytes_per_txn", "write_bytes_per_txn", "peak_rss_bytes",
    "host_steal_pct", "host_iowait_pct", "host_foreign_cpu_pct", "cpu_mhz",
)  # fmt: skip


def xz_bound(night: int = 40) -> dict[str, float]:
    setup = synth.load_setup(365)
    records = synth.prepared_night(setup, night, synth.night_rngs(setup)(night))
    col = {name: i for i, (name, _) in enumerate(rows.RESULT_COLUMNS)}
    by = ("workload", "threads", "collation", "profile", "server_key", "run_id", "repeat")
    series = sorted(records, key=lambda p: tuple(str(p.result[col[c]]) for c in by))
    text = "\n\n".join(
        "\n".join("" if p.result[col[c]] is None else repr(p.result[col[c]]) for p in series)
        for c in FLOOR_VALUES
    ).encode()
    packed = lzma.compress(text, preset=9 | lzma.PRESET_EXTREME)
    return {
        "results": len(records),
        "values": len(FLOOR_VALUES),
        "text_bytes": len(text),
        "xz_9e_bytes": len(packed),
        "bytes_a_result": round(len(packed) / len(records), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=int, default=0, help="nights grown before measuring")
    ap.add_argument("--nights", type=int, default=20, help="nights committed one by one")
    ap.add_argument("--base-batch", type=int, default=1, help="nights per ingest in the base")
    ap.add_argument("--fast", action="store_true", help="grow the base with grow_fast")
    ap.add_argument("--results-format", choices=("v11", "v10", "v9"), default="v11")
    ap.add_argument("--parquet-v2", action="store_true")
    ap.add_argument("--zstd-level", type=int)
    ap.add_argument("--order", choices=("series", "time"), default="series")
    ap.add_argument("--drop-series", action="store_true", help="measure: no tps_series")
    ap.add_argument("--significant", type=int, help="measure: derived values at N digits")
    ap.add_argument("--floor", action="store_true", help="measure: only the values read")
    ap.add_argument(
        "--cost",
        action="store_true",
        help="the committed nights' records carry cost and host fields like real ones",
    )
    ap.add_argument(
        "--xz-bound",
        action="store_true",
        help="only: the floor's measured values of one night, compressed by xz -9e",
    )
    a = ap.parse_args()
    configure(a.results_format, a.parquet_v2, a.zstd_level, a.order)
    synth.COST = a.cost
    if a.xz_bound:
        print(json.dumps(xz_bound()))
        return
    global DROP_SERIES, SIGNIFICANT, FLOOR
    DROP_SERIES, SIGNIFICANT, FLOOR = a.drop_series, a.significant, a.floor
    with tempfile.TemporaryDirectory(prefix="perftrack-repo-cost-") as tmp:
        out = measure(a.base, a.nights, Path(tmp), a.base_batch, a.fast)
        out |= {
            "results_format": a.results_format,
            "parquet_v2": a.parquet_v2,
            "zstd_level": a.zstd_level or 19,
            "order": a.order,
            "cost": a.cost,
            "drop_series": a.drop_series,
            "significant": a.significant,
            "floor": a.floor,
        }
        print(json.dumps(out))


if __name__ == "__main__":
    main()
