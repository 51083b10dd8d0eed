"""The night files (schema v6): the migration that moves a DB's rows into them loses
nothing, and a damaged, duplicated or too-new file is one clear error. Real DuckDB files
and Parquet files in tmp_path; records are synthetic fixtures, except the copy of the
real data/results.duckdb (read, never modified)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from fixtures.records.synthetic import make_record
from gitrepo import git
from perftrack import cli
from perftrack.core.errors import DatabaseError
from perftrack.store import store
from perftrack.store.files import migrations, nightfiles

REPO = Path(__file__).resolve().parents[3]
FIXTURE_DBS = REPO / "tests" / "fixtures" / "db"
REAL_DB = REPO / "data" / "results.duckdb"
FILE_TABLES = tuple(nightfiles.FILE_TABLES)


def fingerprint(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    """Every row of every table that moves into files: table -> {md5 of the row: the row's
    key}; two DBs hold the same rows iff their fingerprints are equal (row order aside)."""
    out: dict[str, dict[str, str]] = {}
    for table in FILE_TABLES:
        rows = con.execute(f"SELECT md5(t::VARCHAR), t::VARCHAR FROM {table} t").fetchall()
        assert len({h for h, _ in rows}) == len(rows), f"{table} has identical rows"
        out[table] = dict(rows)
    return out


def counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in FILE_TABLES}


def v5_fingerprint(db: Path) -> tuple[dict[str, int], dict[str, dict[str, str]]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert migrations.schema_version(con) == 5
        return counts(con), fingerprint(con)
    finally:
        con.close()


def migrate_and_compare(v5_db: Path, tmp_path: Path) -> dict[str, int]:
    db = tmp_path / "data" / "results.duckdb"
    db.parent.mkdir(parents=True)
    shutil.copyfile(v5_db, db)
    before_counts, before = v5_fingerprint(db)
    with store.open_db(db, write=True) as st:
        assert st.migrated == list(range(6, migrations.CURRENT_VERSION + 1))
        assert st.check() == []
    with store.open_db(db, write=False) as st:
        after_counts, after = counts(st.con), fingerprint(st.con)
        assert migrations.user_tables(st.con).isdisjoint(FILE_TABLES)  # all moved out
    assert after_counts == before_counts
    assert after == before  # every row of every table, value for value
    files = nightfiles.listed_paths(db)
    assert sorted(p.name.split(".")[1] for p in files) == sorted(FILE_TABLES)
    return after_counts


# --- the migration to v6 ----------------------------------------------------------------


def test_migration_of_the_v5_fixture_keeps_every_row(tmp_path: Path) -> None:
    got = migrate_and_compare(FIXTURE_DBS / "schema_v5.duckdb", tmp_path)
    assert got["results"] == 4


def real_v5_db(tmp_path: Path) -> Path | None:
    """The published history at schema v5: data/results.duckdb if it still is, else its
    newest v5 revision in git (the commit before the migration)."""
    candidate = tmp_path / "v5" / "results.duckdb"
    candidate.parent.mkdir()
    revisions = git(REPO, "log", "--format=%H", "-n", "20", "--", "data/results.duckdb")
    sources = [REAL_DB.read_bytes()] if REAL_DB.is_file() else []
    for rev in revisions.split():
        blob = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{rev}:data/results.duckdb"],
            capture_output=True,
            check=False,
        )
        if blob.returncode == 0:
            sources.append(blob.stdout)
    for data in sources:
        candidate.write_bytes(data)
        con = duckdb.connect(str(candidate), read_only=True)
        try:
            if migrations.schema_version(con) == 5:
                return candidate
        except duckdb.Error:
            pass
        finally:
            con.close()
    return None


def test_migration_of_a_copy_of_the_real_db_keeps_every_row(tmp_path: Path) -> None:
    """The published history (a copy; data/ itself is never written by tests)."""
    v5 = real_v5_db(tmp_path)
    if v5 is None:
        pytest.skip("no schema v5 data/results.duckdb in this checkout or its git history")
    got = migrate_and_compare(v5, tmp_path)
    assert got["results"] >= 362  # the real runs published before the move


def test_a_failed_move_leaves_the_v5_db_and_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "results.duckdb"
    shutil.copyfile(FIXTURE_DBS / "schema_v5.duckdb", db)
    real = nightfiles.create_views

    def failing(con: duckdb.DuckDBPyConnection, path: Path, *, temp: bool) -> None:
        real(con, path, temp=temp)
        con.execute("SELECT error('disk full (simulated)')")

    monkeypatch.setattr(nightfiles, "create_views", failing)
    with pytest.raises(DatabaseError, match="rolled back; the file is at v5"):
        store.open_db(db, write=True)
    monkeypatch.undo()
    assert not any(nightfiles.files_dir(db).rglob("*.parquet"))
    assert v5_fingerprint(db)[0]["results"] == 4


# --- where the files are found -----------------------------------------------------------


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "repo" / "data" / "results.duckdb"
    with store.open_db(path, write=True) as st:
        st.ingest([make_record(cell=i) for i in range(3)])
        st.ingest([make_record(run_id="synthetic-night-2", cell=i) for i in range(2)])
    return path


def test_plain_duckdb_from_the_checkout_root_sees_the_history(db: Path) -> None:
    """`duckdb data/results.duckdb` (no perftrack) from the root: the stored views."""
    root = db.parent.parent
    out = subprocess.run(
        [
            str(REPO / ".venv" / "bin" / "python"),
            "-c",
            "import duckdb; con = duckdb.connect('data/results.duckdb', read_only=True); "
            "print(con.execute('SELECT count(*) FROM results').fetchone()[0], "
            "con.execute('SELECT count(*) FROM runs').fetchone()[0])",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["5", "2"]


def test_a_db_moved_with_its_files_to_another_directory_still_opens(
    db: Path, tmp_path: Path
) -> None:
    moved = tmp_path / "elsewhere" / "copy" / "history.duckdb"
    moved.parent.mkdir(parents=True)
    shutil.copyfile(db, moved)
    shutil.copytree(nightfiles.files_dir(db), nightfiles.files_dir(moved))
    with store.open_db(moved, write=False) as st:  # TEMP views with absolute paths
        assert st.info()["counts"]["results"] == 5
    with store.open_db(moved, write=True) as st:  # the stored views follow the move
        assert nightfiles.stored_views_current(st.con, moved)
        assert st.check() == []


# --- bad input: one clear error, nothing lost or duplicated ------------------------------


def results_file(db: Path) -> Path:
    return max(p for p in nightfiles.listed_paths(db) if p.name.endswith(".results.parquet"))


def test_the_same_records_ingested_twice_write_no_file(db: Path) -> None:
    before = nightfiles.listed_paths(db)
    with store.open_db(db, write=True) as st:
        res = st.ingest([make_record(run_id="synthetic-night-2", cell=i) for i in range(2)])
    assert res == store.IngestResult(added=0, already=2)
    assert nightfiles.listed_paths(db) == before
    assert sorted(nightfiles.files_dir(db).rglob("*.parquet")) == before


@pytest.mark.parametrize("damage", ["truncated", "one byte changed", "removed"])
def test_a_damaged_night_file_is_refused_naming_it(db: Path, damage: str) -> None:
    victim = results_file(db)
    data = victim.read_bytes()
    if damage == "truncated":
        victim.write_bytes(data[: len(data) // 2])
    elif damage == "one byte changed":
        victim.write_bytes(data[:100] + bytes([data[100] ^ 0xFF]) + data[101:])
    else:
        victim.unlink()
    for write in (False, True):
        with pytest.raises(DatabaseError) as exc:
            store.open_db(db, write=write)
        msg = str(exc.value)
        assert victim.name in msg and "\n" not in msg
        assert ("missing" if damage == "removed" else "hand-edited or truncated") in msg
        assert "not in git" in msg


def test_a_damaged_night_file_in_git_names_the_last_good_revision(db: Path) -> None:
    root = db.parent.parent
    git(root, "init", "--quiet")
    git(root, "add", "data/results.duckdb", "data/results")
    git(root, "commit", "--quiet", "-m", "night")
    good = git(root, "rev-parse", "--short", "HEAD")
    victim = results_file(db)
    victim.write_bytes(victim.read_bytes()[:-10])
    rel = victim.relative_to(root)
    old = Path.cwd()
    os.chdir(root)
    try:
        rc = cli.main(["db", "check", "--db", "data/results.duckdb"])
    finally:
        os.chdir(old)
    assert rc == 4
    with pytest.raises(DatabaseError, match=f"last good revision is {good}") as exc:
        store.open_db(db, write=False)
    assert f"git checkout {good} --" in str(exc.value) and victim.name in str(exc.value)
    git(root, "checkout", good, "--", str(rel))  # what the message says to do
    with store.open_db(db, write=False) as st:
        assert st.check() == [] and st.info()["counts"]["results"] == 5


def test_a_file_from_a_newer_schema_says_upgrade(db: Path) -> None:
    victim = results_file(db)
    con = duckdb.connect(":memory:")
    try:
        con.execute(
            f"COPY (SELECT * FROM read_parquet('{victim}')) TO '{victim}.new' "
            f"(FORMAT parquet, KV_METADATA {{{nightfiles.KV_SCHEMA}: '99'}})"
        )
    finally:
        con.close()
    os.replace(f"{victim}.new", victim)
    with pytest.raises(DatabaseError, match=r"written by schema v99 .* upgrade perftrack"):
        store.open_db(db, write=False)


def test_a_night_file_listed_twice_is_refused_and_nothing_counts_twice(db: Path) -> None:
    victim = results_file(db)
    copy = victim.with_name("20990101T000000000000Z-copy.results.parquet")
    shutil.copyfile(victim, copy)
    con = duckdb.connect(str(db))
    try:
        con.execute(
            f"INSERT INTO {nightfiles.FILES_TABLE} SELECT * REPLACE (? AS path) "
            f"FROM {nightfiles.FILES_TABLE} WHERE path LIKE ?",
            [copy.relative_to(nightfiles.files_dir(db)).as_posix(), f"%{victim.name}"],
        )
    finally:
        con.close()
    with pytest.raises(DatabaseError, match=r"listed in .* a second time") as exc:
        store.open_db(db, write=True)
    assert copy.name in str(exc.value)


def test_a_stray_copy_is_reported_by_check_and_not_read(db: Path) -> None:
    victim = results_file(db)
    shutil.copyfile(victim, victim.with_name("stray.results.parquet"))
    with store.open_db(db, write=False) as st:
        problems = st.check()
        assert st.info()["counts"]["results"] == 5  # the copy's rows are not read
    assert len(problems) == 1 and "stray.results.parquet is not listed" in problems[0]


def test_a_killed_writers_temp_file_is_removed_by_the_next_writer(db: Path) -> None:
    leftover = results_file(db).with_name(".x.results.parquet.writing-12345")
    leftover.write_bytes(b"half a file")
    with store.open_db(db, write=True) as st:
        assert st.check() == []
    assert not leftover.exists()
