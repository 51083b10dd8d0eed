"""SYNTHETIC BENCHMARK DATA: a synthetic history re-laid out as one file set per night.

`history_scale.py --fast --batch 50 --keep DIR` grows its SYNTHETIC history
(synthetic_history.py: the nightly matrix × 3 runner classes, 3,960 results a night) 50
nights per ingest, so 1,000 nights are ~20 results files; `perftrack publish` ingests one
night per ingest, so a real 1,000-night history has ~1,000 results files and ~1,000 runs
files, and DuckDB pays per file on every query of the views. This tool copies such a
history (SRC: `synthetic-history.duckdb`, its night files `synthetic-history/`, `site/`,
`night-N/`) to DST and rewrites the copy's night files as one ingest per night would
have written them (docs/schema.md, "Night files"):

- a night is the runs `synthetic-<night>-<class>`; its results and runs rows go into its
  files; a row of `servers`, `hardware`, `server_variables` goes into the files of the
  first night whose results (hardware: whose runs) reference it, and a night writes no
  file for a table it adds no rows to;
- each file is written by the store's own writer (`nightfiles.write_batch`: the row order,
  the key-value metadata, zstd level 19, the results format of the DB's schema version,
  the name, the `data_files` row), stamped with the night's runs' last finish time, so
  the names sort by night; the rows are staged in the views' column types, as ingest
  stages them;
- the empty file set the DB's creation wrote (schema v6, `-e3b0c44298fc`, every DB has
  one) is kept, byte for byte, renamed to just before the first night;
- `data_files` lists exactly the new files (one transaction), the old files are deleted,
  the stored views are brought up to date for DST's directory.

Then it checks: the store's `check` (what `perftrack db check` runs) finds nothing, and
every table's row count and a checksum of its rows (md5 of each row's text, as
tests/store/files/test_nightformat.py's `fingerprint`, aggregated in SQL: 3.8 M rows' text as
a Python dict would take gigabytes) are equal in SRC and DST. SRC is only read.

    .venv/bin/python benchmarks/per_night_files.py /work/bench/p1000 /work/bench/n1000
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import duckdb  # noqa: E402
import synthetic_history as synth  # noqa: E402

from perftrack.core.errors import DatabaseError  # noqa: E402
from perftrack.store import store  # noqa: E402
from perftrack.store.files import batch, migrations, nightfiles  # noqa: E402

DB_NAME = "synthetic-history.duckdb"
RUN_ID = re.compile(r"^synthetic-(\d{5})-[a-z]+$")  # synthetic_history.night_records
NIGHT_SQL = "CAST(regexp_extract(run_id, '^synthetic-([0-9]{5})-', 1) AS INTEGER)"
CREATION = hashlib.sha256(b"").hexdigest()[:12]  # batch_name([]): the DB's creation set
# Where each non-results table's rows go: (key, SQL of key -> first night referencing it).
FIRST_NIGHT = {
    "hardware": ("hw_key", "SELECT hw_key AS k, min(night) AS night FROM _pn_runs GROUP BY 1"),
    "servers": (
        "server_key",
        "SELECT server_key AS k, min(night) AS night FROM _pn_refs GROUP BY 1",
    ),
    "server_variables": (
        "varset_hash",
        "SELECT varset_hash AS k, min(night) AS night FROM _pn_refs "
        "WHERE varset_hash IS NOT NULL GROUP BY 1",
    ),
}


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@contextmanager
def stamped(now: datetime) -> Iterator[None]:
    """Make the store's writer name a batch (and date its `data_files` row) at `now`."""
    saved = nightfiles._utc_now
    nightfiles._utc_now = lambda: now
    try:
        yield
    finally:
        nightfiles._utc_now = saved


def nights_of(con: duckdb.DuckDBPyConnection) -> dict[int, datetime]:
    """night -> the last finish time of its runs (every run id must be a synthetic one)."""
    out: dict[int, datetime] = {}
    for run_id, finished in con.execute("SELECT run_id, last_finished_at FROM runs").fetchall():
        m = RUN_ID.match(run_id)
        if m is None:
            raise DatabaseError(f"run {run_id!r} is not a synthetic night's run")
        night = int(m.group(1))
        out[night] = max(out.get(night, finished), finished)
    return dict(sorted(out.items()))


def components(pairs: list[tuple[int, str]]) -> list[tuple[list[int], list[str]]]:
    """Group (night, results file) pairs into sets of nights that share files: each set is
    read from its files once. Sorted by first night."""
    parent: dict[object, object] = {}

    def find(x: object) -> object:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]  # type: ignore[index]
            x = parent[x]
        return x

    for night, path in pairs:
        parent[find(("n", night))] = find(("f", path))
    groups: dict[object, tuple[set[int], set[str]]] = {}
    for night, path in pairs:
        nights, files = groups.setdefault(find(("n", night)), (set(), set()))
        nights.add(night)
        files.add(path)
    return sorted(((sorted(n), sorted(f)) for n, f in groups.values()), key=lambda g: g[0][0])


def prepare(con: duckdb.DuckDBPyConnection, db: Path) -> list[tuple[list[int], list[str]]]:
    """TEMP tables the nights are staged from; the results' file groups."""
    for table in ("hardware", "servers", "server_variables"):
        con.execute(f"CREATE TEMP TABLE _pn_all_{table} AS FROM {table}")
    con.execute(f"CREATE TEMP TABLE _pn_runs AS SELECT *, {NIGHT_SQL} AS night FROM runs")
    con.execute(
        f"CREATE TEMP TABLE _pn_refs AS SELECT DISTINCT server_key, varset_hash, {NIGHT_SQL} "
        "AS night FROM results"
    )
    con.execute("CREATE TEMP TABLE _pn_results_type AS FROM results LIMIT 0")
    for table, (key, sql) in FIRST_NIGHT.items():
        con.execute(f"CREATE TEMP TABLE _pn_first_{table} AS {sql}")
        (orphans,) = con.execute(
            f"SELECT count(*) FROM _pn_all_{table} WHERE {key} NOT IN "
            f"(SELECT k FROM _pn_first_{table})"
        ).fetchone() or (0,)
        if orphans:
            raise DatabaseError(f"{orphans} rows of {table} are referenced by no night")
    listed = con.execute(
        "SELECT path FROM data_files WHERE table_name = 'results' AND rows > 0"
    ).fetchall()
    root = nightfiles.files_dir(db).resolve()
    paths = ", ".join(_q(f"{root}/{p}") for (p,) in listed)
    pairs = con.execute(
        f"SELECT DISTINCT {NIGHT_SQL}, filename FROM read_parquet([{paths}], filename = true)"
    ).fetchall()
    return components([(n, str(Path(f).relative_to(root))) for n, f in pairs])


def write_night(
    con: duckdb.DuckDBPyConnection, db: Path, night: int, now: datetime, version: int
) -> list[Path]:
    """Stage one night's rows as ingest stages them and write them with the store's writer."""
    p = batch.STAGE_PREFIX
    stages = {
        "hardware": f"FROM _pn_all_hardware WHERE hw_key IN "
        f"(SELECT k FROM _pn_first_hardware WHERE night = {night})",
        "servers": f"FROM _pn_all_servers WHERE server_key IN "
        f"(SELECT k FROM _pn_first_servers WHERE night = {night})",
        "runs": f"FROM _pn_runs WHERE night = {night}",
        "server_variables": f"FROM _pn_all_server_variables WHERE varset_hash IN "
        f"(SELECT k FROM _pn_first_server_variables WHERE night = {night})",
    }
    sources: dict[str, str] = {}
    try:
        for table in nightfiles.FILE_TABLES:
            stage = f"{p}{table}"
            if table == "results":
                con.execute(f"CREATE OR REPLACE TEMP TABLE {stage} AS FROM _pn_results_type")
                con.execute(
                    f"INSERT INTO {stage} BY NAME SELECT * FROM _pn_chunk "
                    f"WHERE {NIGHT_SQL} = {night}"
                )
            elif table == "runs":  # the view's columns, without the helper column
                con.execute(
                    f"CREATE OR REPLACE TEMP TABLE {stage} AS SELECT * EXCLUDE (night) "
                    f"{stages[table]}"
                )
            else:
                con.execute(f"CREATE OR REPLACE TEMP TABLE {stage} AS {stages[table]}")
            sources[table] = stage
            (n,) = con.execute(f"SELECT count(*) FROM {stage}").fetchone() or (0,)
            if not n:
                con.execute(f"DROP TABLE {stage}")
                del sources[table]
        ids = [r for (r,) in con.execute(f"SELECT record_id FROM {p}results").fetchall()]
        with stamped(now):
            return nightfiles.write_batch(con, db, sources, ids=ids, version=version)
    finally:
        for stage in sources.values():
            con.execute(f"DROP TABLE IF EXISTS {stage}")


def rewrite(db: Path) -> None:
    """Replace the DB's night files by one file set per night (see the module's doc)."""
    con = nightfiles.connect(db, read_only=False)
    try:
        version = migrations.schema_version(con) or 0
        if version != migrations.CURRENT_VERSION:
            raise DatabaseError(
                f"{db} has schema v{version}, this perftrack writes v"
                f"{migrations.CURRENT_VERSION}: run `perftrack db migrate` on a copy first"
            )
        old = con.execute("SELECT path, rows FROM data_files ORDER BY path").fetchall()
        creation = [p for p, n in old if n == 0 and p.split(".")[0].endswith(f"-{CREATION}")]
        if creation and len(creation) != len(nightfiles.FILE_TABLES):
            raise DatabaseError(f"{db}: an incomplete creation file set: {creation}")
        nights = nights_of(con)
        groups = prepare(con, db)
        con.begin()
        written: list[Path] = []
        for group_nights, paths in groups:
            sql = nightfiles.select_files(con, db, "results", paths)
            con.execute(f"CREATE OR REPLACE TEMP TABLE _pn_chunk AS {sql}")
            for night in group_nights:
                written += write_night(con, db, night, nights[night], version)
        covered = {n for g, _ in groups for n in g}
        if covered != set(nights):  # a run without results: ingest never writes one
            raise DatabaseError(f"nights with runs but no results: {sorted(set(nights) - covered)}")
        con.execute("DROP TABLE _pn_chunk")
        root = nightfiles.files_dir(db)
        first = next(iter(nights.values())) - timedelta(seconds=1)  # the DB's creation
        created = nightfiles.batch_name([], first)
        for path in creation:
            new = f"{created}.{path.split('.', 1)[1]}"
            (root / new).parent.mkdir(parents=True, exist_ok=True)
            os.link(root / path, root / new)
            con.execute(
                "UPDATE data_files SET path = ?, added_at = ? WHERE path = ?", [new, first, path]
            )
        gone = [p for p, _ in old if p not in creation]
        con.executemany("DELETE FROM data_files WHERE path = ?", [[p] for p in gone])
        if not nightfiles.stored_views_current(con, db):
            nightfiles.create_views(con, db, temp=False)
        con.commit()
        for path in [p for p, _ in old]:
            (root / path).unlink()
        for directory in root.iterdir():
            if directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()
        con.execute("CHECKPOINT")
    finally:
        con.close()


def fingerprints(db: Path) -> dict[str, tuple[int, str]]:
    """table -> (rows, md5 of the sorted md5s of its rows' text), every table but
    data_files (which lists the files, so differs by design)."""
    con = nightfiles.connect(db, read_only=True)
    try:
        out = {}
        for table in sorted(migrations.user_relations(con)):
            if table == nightfiles.FILES_TABLE:
                continue
            out[table] = con.execute(
                "SELECT count(*), md5(coalesce(string_agg(h, '' ORDER BY h), '')) "
                f"FROM (SELECT md5(t::VARCHAR) AS h FROM {table} t)"
            ).fetchone()
        return out
    finally:
        con.close()


def files_per_table(db: Path) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        got = con.execute(
            "SELECT table_name, count(*) FROM data_files GROUP BY 1 ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    return dict(got)


def layout_problems(db: Path) -> list[str]:
    """How the night files differ from one ingest per night: a results or runs file with
    rows of several nights, a night in several files of a table, names out of night order."""
    con = duckdb.connect(str(db), read_only=True)
    root = nightfiles.files_dir(db).resolve()
    problems = []
    try:
        for table in ("results", "runs"):
            listed = con.execute(
                "SELECT path FROM data_files WHERE table_name = ? AND rows > 0 ORDER BY path",
                [table],
            ).fetchall()
            paths = ", ".join(_q(f"{root}/{p}") for (p,) in listed)
            got = con.execute(
                f"SELECT filename, list(DISTINCT {NIGHT_SQL} ORDER BY {NIGHT_SQL}) FROM "
                f"read_parquet([{paths}], filename = true) GROUP BY 1 ORDER BY 1"
            ).fetchall()
            nights = [n for _, ns in got for n in ns]
            problems += [f"{f} holds nights {ns}" for f, ns in got if len(ns) > 1]
            if len(set(nights)) != len(nights):
                problems.append(f"a night's {table} rows are in more than one file")
            if nights != sorted(nights):
                problems.append(f"the {table} files' names are not in night order")
    finally:
        con.close()
    return problems


def check(src: Path, dst: Path) -> bool:
    """Print rows and files per table in SRC and DST; True if DST is healthy and equal."""
    with store.open_db(dst, write=False) as st:
        problems = st.check()
    layout = layout_problems(dst)
    for problem in problems + layout:
        print(f"problem: {problem}")
    con = duckdb.connect(str(dst), read_only=True)
    try:
        views_ok = nightfiles.stored_views_current(con, dst)
    finally:
        con.close()
    a, b = fingerprints(src), fingerprints(dst)
    fa, fb = files_per_table(src), files_per_table(dst)
    print(
        f"{'table':<18} {'rows SRC':>10} {'rows DST':>10} {'files SRC':>9} {'files DST':>9}  rows"
    )
    equal = a.keys() == b.keys()
    for table in sorted(a.keys() | b.keys()):
        ra, rb = a.get(table, (None, None)), b.get(table, (None, None))
        same = ra == rb
        equal &= same
        print(
            f"{table:<18} {ra[0]!s:>10} {rb[0]!s:>10} {fa.get(table, '')!s:>9} "
            f"{fb.get(table, '')!s:>9}  {'equal' if same else 'DIFFER'}"
        )
    print(
        f"files: {sum(fa.values())} -> {sum(fb.values())}; db check: "
        f"{'ok' if not problems else 'FAILED'}; one file set a night: "
        f"{'yes' if not layout else 'NO'}; stored views current: {views_ok}"
    )
    return equal and not problems and not layout and views_ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path, help="a history_scale.py --keep directory (only read)")
    ap.add_argument("dst", type=Path, help="a new directory for the per-night copy")
    args = ap.parse_args(argv)
    src, dst = args.src.resolve(), args.dst.resolve()
    if not (src / DB_NAME).is_file():
        ap.exit(2, f"error: {src / DB_NAME} does not exist: not a history_scale.py --keep dir\n")
    if dst.exists() and (not dst.is_dir() or any(dst.iterdir())):
        ap.exit(2, f"error: {dst} exists and is not empty: give a new directory\n")
    if dst == src or src in dst.parents or dst in src.parents:
        ap.exit(2, f"error: {dst} and {src} overlap: give a directory outside SRC\n")
    synth.refuse_data_dir(dst)
    t0 = time.perf_counter()
    try:
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.lock"), dirs_exist_ok=True)
        t1 = time.perf_counter()
        rewrite(dst / DB_NAME)
    except BaseException as exc:
        shutil.rmtree(dst, ignore_errors=True)  # nothing half-written
        if isinstance(exc, DatabaseError | duckdb.Error):
            print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
            return 1
        raise
    t2 = time.perf_counter()
    print(f"copied in {t1 - t0:.0f} s, rewritten in {t2 - t1:.0f} s (SYNTHETIC data)")
    ok = check(src / DB_NAME, dst / DB_NAME)
    print(f"checked in {time.perf_counter() - t2:.0f} s: {'EQUAL' if ok else 'NOT EQUAL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
