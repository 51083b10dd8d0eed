"""The results file format of schema v10 (store/files/nightformat.py): fewer bytes, the same
values. Real DuckDB files and Parquet files in tmp_path; records are synthetic fixtures,
except the copy of the real data/ (read, never modified)."""

from __future__ import annotations

import subprocess
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from fixtures.records.synthetic import make_record
from gitrepo import git
from perftrack.core.files import sha256_file
from perftrack.store import store
from perftrack.store.files import migrations, nightfiles, nightformat, rows

REPO = Path(__file__).resolve().parents[3]
REAL_DB = REPO / "data" / "results.duckdb"
FILE_TABLES = tuple(nightfiles.FILE_TABLES)


def fingerprint(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    """table -> {md5 of the row's text: the row's text} for every file table."""
    out: dict[str, dict[str, str]] = {}
    for table in FILE_TABLES:
        got = con.execute(f"SELECT md5(t::VARCHAR), t::VARCHAR FROM {table} t").fetchall()
        out[table] = dict(got)
    return out


def result_types(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return {d[0]: str(d[1]) for d in con.execute("SELECT * FROM results LIMIT 0").description}


def test_the_encoded_columns_are_the_results_double_columns() -> None:
    """nightformat takes rows.RESULT_COLUMNS' DOUBLE and DOUBLE[] columns, all of them."""
    assert nightformat.typed_columns("DOUBLE") == tuple(
        n for n, t in rows.RESULT_COLUMNS if t == "DOUBLE"
    )
    assert "tps" in nightformat.typed_columns("DOUBLE")
    assert nightformat.typed_columns("DOUBLE[]") == ("tps_series",)


def awkward(cell: int, tps: float, series: list[float]) -> dict:
    rec = make_record(cell=cell)
    rec["result"]["tps"] = tps
    rec["result"]["intervals"] = [
        {**rec["result"]["intervals"][0], "t": i + 1, "tps": v} for i, v in enumerate(series)
    ]
    return rec


@pytest.mark.filterwarnings("ignore:overflow encountered")  # the CV of a 1e300 series
def test_values_come_back_exactly_whatever_their_precision(tmp_path: Path) -> None:
    """Two decimals become a DECIMAL; 1/3, 1e300 and -0.0 keep the file's column a DOUBLE;
    either way the view gives back each value bit for bit, and record_id as ingested."""
    plain = tmp_path / "a" / "results.duckdb"
    odd = tmp_path / "b" / "results.duckdb"
    nice = [awkward(i, [1234.56, 99.99, 0.01][i], [10.25, 11.5, 12.0]) for i in range(3)]
    rough = [
        awkward(0, 1 / 3, [1e300, -0.0, 2.5]),
        awkward(1, -0.0, [0.1, 0.2, 0.3]),
        awkward(2, 1e300, [1 / 7]),
    ]
    for db, recs in ((plain, nice), (odd, rough)):
        with store.open_db(db, write=True) as st:
            st.ingest(recs)
        with store.open_db(db, write=False) as st:
            got = {
                r[0]: r[1:]
                for r in st.con.execute(
                    "SELECT record_id, tps, tps_p50, tps_series, latency_avg_ms FROM results"
                ).fetchall()
            }
            assert result_types(st.con)["tps"] == "DOUBLE"
            assert result_types(st.con)["tps_series"] == "DOUBLE[]"
        want = {}
        for rec in recs:
            p = store.prepare(rec, rec["record_id"])
            col = {n: i for i, (n, _) in enumerate(rows.RESULT_COLUMNS)}
            want[p.record_id] = tuple(
                p.result[col[c]] for c in ("tps", "tps_p50", "tps_series", "latency_avg_ms")
            )
        assert got.keys() == want.keys()
        for rid, values in want.items():  # repr: -0.0 and 0.0 differ, 1/3 to the last bit
            assert repr(got[rid]) == repr(values), rid
    stored = duckdb.connect(":memory:")
    try:

        def schema(db: Path) -> dict[str, str]:
            # the newest: a new DB's first (empty) files are the v6 migration's
            path = max(p for p in nightfiles.listed_paths(db) if ".results." in p.name)
            return {
                name: kind
                for name, kind in stored.execute(
                    "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "
                    f"read_parquet('{path}'))"
                ).fetchall()
            }

        assert schema(plain)["tps"] == "DECIMAL(18,2)"
        assert schema(plain)["tps_series"].startswith("DECIMAL(18,")
        assert schema(odd)["tps"] == "DOUBLE"  # 1/3 has no exact decimal
        # issue 39: the per-second trace is no longer committed (the run records keep it)
        assert {v[2] for v in got.values()} == {None}
        assert all(rec["result"]["intervals"] for rec in rough)
        ids = stored.execute(
            "SELECT count(*) FILTER (WHERE record_id IS NOT NULL) FROM read_parquet(?)",
            [[str(p) for p in nightfiles.listed_paths(plain) if ".results." in p.name]],
        ).fetchone()
        assert ids == (0,)  # every id is run_id:cell_id:attempt, recomputed by the view
    finally:
        stored.close()


def test_whole_second_timestamps_are_stored_as_seconds_and_read_back_exactly(
    tmp_path: Path,
) -> None:
    """Since v11 a results file keeps started_at/finished_at only where they are not whole
    seconds (run records' are: run/rundir.now); the view gives back every timestamp as
    ingested, microseconds, a negative epoch and a finish before the start included."""
    db = tmp_path / "data" / "results.duckdb"
    stamps = [  # (started_at, finished_at) of each record
        ("2026-11-25T10:00:00Z", "2026-11-25T10:00:41Z"),
        ("2026-11-25T10:01:00.123456Z", "2026-11-25T10:01:41Z"),  # started at µs
        ("2026-11-25T10:02:00Z", "2026-11-25T10:02:41.5Z"),  # finished at µs
        ("1969-12-31T23:59:58Z", "1970-01-01T00:00:03Z"),  # before 1970
        ("2026-11-25T10:04:10Z", "2026-11-25T10:04:00Z"),  # clock stepped back
    ]
    recs = []
    for i, (start, end) in enumerate(stamps):
        rec = make_record(cell=i)
        rec["started_at"], rec["finished_at"] = start, end
        recs.append(rec)
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    with store.open_db(db, write=False) as st:
        got = st.con.execute(
            "SELECT started_at, finished_at FROM results ORDER BY cell_id"
        ).fetchall()
        columns = [d[0] for d in st.con.execute("SELECT * FROM results LIMIT 0").description]
    want = sorted(
        (
            rec["cell_id"],
            rows._timestamp(rec["started_at"], "s", "t"),
            rows._timestamp(rec["finished_at"], "f", "t"),
        )
        for rec in recs
    )
    assert got == [(s, f) for _, s, f in want]
    assert columns == [n for n, _ in rows.RESULT_COLUMNS]  # the seconds' columns stay hidden
    newest = max(p for p in nightfiles.listed_paths(db) if ".results." in p.name)
    stored = duckdb.connect(":memory:")
    try:
        kept = stored.execute(
            "SELECT started_at IS NOT NULL, finished_at IS NOT NULL, started_s, elapsed_s "
            f"FROM read_parquet('{newest}') ORDER BY cell_id"
        ).fetchall()
    finally:
        stored.close()
    stored_as = dict(zip([c for c, _, _ in want], kept, strict=True))
    by_stamps = {(r["started_at"], r["finished_at"]): stored_as[r["cell_id"]] for r in recs}

    def epoch(text: str) -> int:
        return int(datetime.fromisoformat(text).timestamp())

    whole = stamps[0]
    assert by_stamps[whole] == (False, False, epoch(whole[0]), 41)
    assert by_stamps[stamps[1]] == (True, True, None, None)  # a µs start keeps both
    assert by_stamps[stamps[2]] == (False, True, epoch(stamps[2][0]), None)
    assert by_stamps[stamps[3]] == (False, False, -2, 5)
    assert by_stamps[stamps[4]] == (False, False, epoch(stamps[4][0]), -10)


def test_files_of_v9_and_v10_read_together_and_check_finds_a_copied_record(
    tmp_path: Path,
) -> None:
    """A v9 DB (the fixture) migrated to v10 keeps every row; a new v10 file joins it; a
    record stored in both formats is still a duplicate to `db check`."""
    db = tmp_path / "data" / "results.duckdb"
    db.parent.mkdir(parents=True)
    fixture = REPO / "tests" / "fixtures" / "db" / "schema_v9.duckdb"
    nightfiles.copy_db(fixture, db)
    con = nightfiles.connect(db)
    try:
        before = fingerprint(con)
    finally:
        con.close()
    with store.open_db(db, write=True) as st:
        assert st.migrated == list(range(10, migrations.CURRENT_VERSION + 1))
        st.ingest([make_record(run_id="synthetic-v10-night", cell=i) for i in range(2)])
        assert st.check() == []
        after = fingerprint(st.con)
        assert result_types(st.con)["tps"] == "DOUBLE"
    for table in FILE_TABLES:  # every old row as it was, plus the new night's
        assert before[table].items() <= after[table].items(), table
    assert len(after["results"]) == len(before["results"]) + 2
    versions = sorted(
        v
        for (v,) in duckdb.connect(str(db), read_only=True)
        .execute("SELECT DISTINCT schema_version FROM data_files")
        .fetchall()
    )
    assert versions == [6, 9, migrations.CURRENT_VERSION]
    with store.open_db(db, write=True) as st:  # the same record again, as a v10 file
        old = st.con.execute("SELECT record_id FROM results LIMIT 1").fetchone()[0]
        st.con.begin()
        nightfiles.write_batch(
            st.con,
            db,
            {"results": f"(SELECT * FROM results WHERE record_id = '{old}')"},
            ids=["dup"],
            version=migrations.CURRENT_VERSION,
        )
        nightfiles.create_views(st.con, db, temp=False)
        st.con.commit()
    with store.open_db(db, write=False) as st:
        problems = st.check()
    assert any(f"record_id {old} is stored more than once" in p for p in problems)


def real_older_db(tmp_path: Path) -> Path | None:
    """The published history at a schema version before the current one (v9 or later),
    with its night files, in tmp_path: data/results.duckdb if it still is older, else its
    newest older revision in git (night files are never rewritten, so today's
    data/results/ holds every file that revision lists; the later ones are removed)."""
    db = tmp_path / "data" / "results.duckdb"
    if not REAL_DB.is_file():
        return None
    nightfiles.copy_db(REAL_DB, db)
    revisions = git(REPO, "log", "--format=%H", "-n", "20", "--", "data/results.duckdb")
    for rev in ["", *revisions.split()]:
        if rev:
            blob = subprocess.run(
                ["git", "-C", str(REPO), "show", f"{rev}:data/results.duckdb"],
                capture_output=True,
                check=False,
            )
            if blob.returncode != 0:
                continue
            db.write_bytes(blob.stdout)
        try:
            con = duckdb.connect(str(db), read_only=True)
        except duckdb.Error:
            continue
        try:
            if 9 <= (migrations.schema_version(con) or 0) < migrations.CURRENT_VERSION:
                rows = con.execute(f"SELECT path FROM {nightfiles.FILES_TABLE}").fetchall()
                listed = {r[0] for r in rows}
                _keep_only(nightfiles.files_dir(db), listed)
                return db
        except duckdb.Error:
            pass
        finally:
            con.close()
    return None


def _keep_only(root: Path, listed: set[str]) -> None:
    """The night files of that revision only: the nights published after it (today's
    data/results/ holds them too) are not its files."""
    for f in root.rglob("*.parquet"):
        if f.relative_to(root).as_posix() not in listed:
            f.unlink()


def counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in FILE_TABLES}


def files_as_listed(db: Path) -> tuple[list[tuple[object, ...]], dict[str, str]]:
    """data_files' rows, and sha256 of every file under the DB's files directory."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        listed = con.execute(f"SELECT * FROM {nightfiles.FILES_TABLE} ORDER BY path").fetchall()
    finally:
        con.close()
    root = nightfiles.files_dir(db)
    on_disk = {p.relative_to(root).as_posix(): sha256_file(p) for p in root.rglob("*.parquet")}
    return listed, on_disk


def test_a_copy_of_the_real_data_reads_the_same_after_the_migration(tmp_path: Path) -> None:
    """data/ (copied; never written by tests): the move to the current schema keeps every
    row count and every row's checksum, and leaves the night files as they were (same
    list, same bytes); a new night written in the current format then adds its rows and
    changes none."""
    db = real_older_db(tmp_path)
    if db is None:
        pytest.skip("no older data/results.duckdb in this checkout or its git history")
    con = nightfiles.connect(db)
    try:
        before, before_counts = fingerprint(con), counts(con)
        old = migrations.schema_version(con) or 0
    finally:
        con.close()
    before_files = files_as_listed(db)
    with store.open_db(db, write=True) as st:
        assert st.migrated == list(range(old + 1, migrations.CURRENT_VERSION + 1))
        assert st.check() == []
    with store.open_db(db, write=False) as st:
        assert counts(st.con) == before_counts
        assert fingerprint(st.con) == before  # every row of every file table, value for value
    assert files_as_listed(db) == before_files  # no file written, rewritten or unlisted
    assert before_counts["results"] >= 362
    with store.open_db(db, write=True) as st:
        st.ingest([make_record(run_id="synthetic-after-migration", cell=i) for i in range(3)])
    with store.open_db(db, write=False) as st:
        after = fingerprint(st.con)
        assert counts(st.con)["results"] == before_counts["results"] + 3
        assert st.check() == []
    for table in FILE_TABLES:
        assert before[table].items() <= after[table].items(), table
    assert len(after["results"]) == len(before["results"]) + 3
