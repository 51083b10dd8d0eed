"""Tests of the results store on real DuckDB files (tmp_path). Records are synthetic fixtures."""

from __future__ import annotations

import copy
import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from fixtures.hand_edit import add_night_file, add_night_files
from fixtures.records.synthetic import BASE_VARIABLES, make_record
from gitrepo import git
from perftrack.core import record
from perftrack.core.errors import ConfigError, DatabaseError, RecordError
from perftrack.store import store
from perftrack.store.files import batch, migrations, nightfiles, variables


def write_records(directory: Path, records: list[dict[str, Any]]) -> Path:
    for rec in records:
        record.write(rec, directory)
    return directory


def counts(db: Path) -> dict[str, int]:
    with store.open_db(db, write=False) as st:
        return st.info()["counts"]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "results.duckdb"


@pytest.fixture
def filled_db(db: Path) -> Path:
    with store.open_db(db, write=True) as st:
        st.ingest([make_record(cell=i) for i in range(3)])
    return db


# --- creating and opening ---


def test_write_mode_creates_a_checkpointed_file_without_wal(db: Path) -> None:
    with store.open_db(db, write=True) as st:
        assert st.migrated == list(range(1, migrations.CURRENT_VERSION + 1))
        assert st.schema_version == migrations.CURRENT_VERSION
        assert st.check() == []
    assert db.exists()
    assert not db.with_name(db.name + ".wal").exists()
    assert sorted(p.name for p in db.parent.iterdir()) == [
        "results",  # the night files (one empty file per table, carrying its column types)
        "results.duckdb",
        "results.duckdb.lock",
    ]


# DuckDB's main file header: 8-byte checksum, b"DUCK", then the storage version number as a
# little-endian uint64. 64 is the format DuckDB 0.10 to 1.x read; DuckDB 2.0's own default
# (999) is unreadable by DuckDB 1.x.
STORAGE_NUMBER_READ_BY_DUCKDB_1 = 64


def test_new_and_compacted_files_use_a_format_duckdb_1_reads(db: Path) -> None:
    with store.open_db(db, write=True) as st:
        st.ingest([make_record()])
    for _ in range(2):
        header = db.read_bytes()[:20]
        assert header[8:12] == b"DUCK"
        assert int.from_bytes(header[12:20], "little") == STORAGE_NUMBER_READ_BY_DUCKDB_1
        store.compact(db)


def test_read_mode_on_missing_file_says_ingest_first(db: Path) -> None:
    # a missing file is the user's input (exit 2), not a corrupt DB (exit 4)
    with pytest.raises(ConfigError, match=r"does not exist: run `perftrack ingest` first"):
        store.open_db(db, write=False)
    assert not db.parent.exists() or not any(db.parent.iterdir())


def test_reopening_does_not_migrate_again(filled_db: Path) -> None:
    with store.open_db(filled_db, write=True) as st:
        assert st.migrated == []
    with store.open_db(filled_db, write=False) as st:
        assert st.migrated == []
        assert st.con.execute("SELECT count(*) FROM results").fetchone() == (3,)


def test_write_open_removes_temp_files_a_killed_writer_left(filled_db: Path) -> None:
    leftovers = [
        filled_db.with_name(".results.duckdb.compacting-99999"),
        filled_db.with_name(".results.duckdb.compacting-99999.wal"),
        filled_db.with_name(".results.duckdb.creating-99999"),
    ]
    for leftover in leftovers:
        leftover.write_bytes(b"half written")
    with store.open_db(filled_db, write=True):
        pass
    assert not any(p.exists() for p in leftovers)


def test_read_mode_store_refuses_to_ingest(filled_db: Path) -> None:
    with store.open_db(filled_db, write=False) as st, pytest.raises(RuntimeError):
        st.ingest([make_record(cell=9)])


# --- ingest ---


def test_ingest_twice_adds_nothing(db: Path) -> None:
    records = [make_record(cell=i) for i in range(4)]
    with store.open_db(db, write=True) as st:
        assert st.ingest(records) == store.IngestResult(added=4, already=0)
        assert st.ingest(records) == store.IngestResult(added=0, already=4)
    before = counts(db)
    with store.open_db(db, write=True) as st:
        assert st.ingest(records) == store.IngestResult(added=0, already=4)
    assert counts(db) == before


def test_ingest_paths_twice_adds_nothing(db: Path, tmp_path: Path) -> None:
    src = write_records(tmp_path / "run", [make_record(cell=i) for i in range(3)])
    assert store.ingest_paths(db, [src]) == store.IngestResult(added=3, already=0)
    assert store.ingest_paths(db, [src]) == store.IngestResult(added=0, already=3)
    assert counts(db)["results"] == 3


def test_record_repeated_within_a_batch_is_stored_once(db: Path) -> None:
    rec = make_record()
    with store.open_db(db, write=True) as st:
        assert st.ingest([rec, rec]) == store.IngestResult(added=1, already=1)


def test_invalid_record_in_batch_names_file_and_field_and_writes_nothing(
    filled_db: Path, tmp_path: Path
) -> None:
    src = write_records(tmp_path / "run", [make_record(cell=i) for i in range(10, 13)])
    bad = src / sorted(p.name for p in src.iterdir())[1]
    data = json.loads(bad.read_text())
    data["cell"]["threads"] = 0
    bad.write_text(json.dumps(data))
    before = counts(filled_db)
    with pytest.raises(RecordError) as err:
        store.ingest_paths(filled_db, [src])
    assert str(bad) in str(err.value)
    assert "cell/threads" in str(err.value)
    assert counts(filled_db) == before


def test_invalid_record_creates_no_db(db: Path, tmp_path: Path) -> None:
    src = write_records(tmp_path / "run", [make_record()])
    path = next(src.iterdir())
    path.write_text(path.read_text().replace('"tcp"', '"carrier-pigeon"'))
    with pytest.raises(RecordError, match="cell/connection"):
        store.ingest_paths(db, [src])
    assert not db.exists()


def test_timestamp_without_offset_is_refused_naming_field(db: Path) -> None:
    # The schema's date-time format is only enforced when jsonschema's optional format
    # checkers are installed; ingest parses timestamps itself.
    rec = make_record()
    rec["started_at"] = "2026-01-01T02:00:00"
    with (
        store.open_db(db, write=True) as st,
        pytest.raises(RecordError, match="field 'started_at'"),
    ):
        st.ingest([rec])


def test_failure_mid_transaction_writes_nothing(
    filled_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = counts(filled_db)
    real_insert = batch.insert_rows

    def failing_insert(con: Any, table: str, *args: Any, **kwargs: Any) -> None:
        if table == "_new_results":  # the batch's results, staged before they are written
            con.execute("SELECT error('disk full (simulated)')")
        real_insert(con, table, *args, **kwargs)

    monkeypatch.setattr(batch, "insert_rows", failing_insert)
    new = [make_record(run_id="synthetic-run-2", cell=i, hw_key="ba9876543210") for i in range(2)]
    with (
        store.open_db(filled_db, write=True) as st,
        pytest.raises(DatabaseError, match="rolled back, nothing was written"),
    ):
        st.ingest(new)
    assert counts(filled_db) == before
    assert len(nightfiles.listed_paths(filled_db)) == len(list(night_files(filled_db)))


def night_files(db: Path) -> list[Path]:
    return sorted(p for p in nightfiles.files_dir(db).rglob("*") if p.is_file())


def test_ingest_fills_every_table(db: Path) -> None:
    recs = [
        make_record(cell=0, server_id="synthetic-mysql-8.0.36"),
        make_record(cell=1, server_id="synthetic-mysql-8.4.0", version="8.4.0"),
        make_record(cell=2, status="failed"),
        make_record(cell=3, status="skipped"),
    ]
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
        info = st.info()
        row = st.con.execute(
            'SELECT status, threads, "collation", tps, tps_series, effective, started_at '
            "FROM results WHERE record_id = ?",
            [recs[0]["record_id"]],
        ).fetchone()
        assert st.check() == []
    assert info["counts"]["results"] == 4
    assert info["counts"]["hardware"] == 1
    assert info["counts"]["servers"] == 3  # two versions + the skipped cell's unstarted server
    assert info["results_by_status"] == {"failed": 1, "ok": 2, "skipped": 1}
    assert info["hardware_keys"] == ["0123456789ab"]
    assert info["first_result_at"] == "2026-01-01T02:00:00"
    assert info["schema_version"] == migrations.CURRENT_VERSION
    assert info["size_bytes"] > 0
    status, threads, collation, tps, series, effective, started = row
    assert (status, threads, collation, tps) == ("ok", 8, "utf8mb4_0900_ai_ci", 1000.0)
    assert series is None and len(recs[0]["result"]["intervals"]) == 10  # issue 39: not committed
    assert json.loads(effective)["transaction_isolation"] == "RR"
    assert started.isoformat() == "2026-01-01T02:00:00"


def test_run_bounds_widen_when_more_records_of_a_run_arrive(db: Path) -> None:
    with store.open_db(db, write=True) as st:
        st.ingest([make_record(cell=5)])
        st.ingest([make_record(cell=1), make_record(cell=9)])
        rows = st.con.execute(
            "SELECT run_id, first_started_at, last_finished_at, perftrack_version FROM runs"
        ).fetchall()
    assert len(rows) == 1
    _, first, last, version = rows[0]
    assert first.isoformat() == "2026-01-01T02:01:00"
    assert last.isoformat() == "2026-01-01T02:09:40"
    assert version == "0.1.0"


def test_timestamps_are_stored_as_utc(db: Path) -> None:
    rec = make_record()
    rec["started_at"] = "2026-01-01T03:00:00+01:00"
    with store.open_db(db, write=True) as st:
        st.ingest([rec])
        (started,) = st.con.execute("SELECT started_at FROM results").fetchone()
    assert started.isoformat() == "2026-01-01T02:00:00"


# --- variable sets ---


def test_variable_sets_are_stored_once_when_records_share_them(db: Path) -> None:
    # Different ports/datadirs/uuids per server start; same settings otherwise.
    recs = [make_record(cell=i, instance=i) for i in range(3)]
    changed = {**BASE_VARIABLES, "innodb_flush_log_at_trx_commit": "2"}
    recs.append(make_record(cell=3, instance=3, variables=changed))
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
        hashes = st.con.execute("SELECT varset_hash FROM results ORDER BY cell_id").fetchall()
        sets = st.con.execute(
            "SELECT varset_hash, count(*) FROM server_variables GROUP BY ALL"
        ).fetchall()
        names = {n for (n,) in st.con.execute("SELECT name FROM server_variables").fetchall()}
    assert len({h for (h,) in hashes}) == 2
    assert len(sets) == 2
    assert all(n == len(BASE_VARIABLES) for _, n in sets)
    assert not names & store.VOLATILE_VARIABLES


def test_variable_set_already_stored_is_not_written_again(db: Path) -> None:
    with store.open_db(db, write=True) as st:
        st.ingest([make_record(run_id="synthetic-run-1")])
        st.ingest([make_record(run_id="synthetic-run-2")])
        (rows,) = st.con.execute("SELECT count(*) FROM server_variables").fetchone()
    assert rows == len(BASE_VARIABLES)


def test_varset_hash_ignores_order_and_distinguishes_null_from_text() -> None:
    a = store.varset_hash({"a": "1", "b": None})
    assert a == store.varset_hash({"b": None, "a": "1"})
    assert a != store.varset_hash({"a": "1", "b": "null"})
    assert a is not None and len(a) == store.KEY_HEX_DIGITS
    assert store.varset_hash({}) is None


def test_variable_sets_of_one_ingest_are_computed_once_and_exactly() -> None:
    """variables.VariableSets gives what stored_variables + varset_hash give, for every kind of
    set, and reuses a result only for the same content."""

    class Text(str):
        pass

    sets = [
        {"a": "1", "b": None, "port": "4000"},
        {"a": "1", "b": None, "port": "4001"},  # another start: same stored set
        {"b": None, "a": "1"},  # same content, other order
        {"a": "1", "b": "null"},
        {"a": "1", "b": "None"},
        {"a": Text("1"), "b": None},  # not a plain str: computed afresh
        {"A": "1", "Port": "x"},
        {},
        None,
    ]
    varsets = variables.VariableSets()
    for _ in range(2):
        for varset in sets:
            kept, vhash = varsets.stored(copy.deepcopy(varset))
            expected = store.stored_variables(varset)
            assert kept == expected and list(kept) == list(expected)
            assert vhash == store.varset_hash(expected)
    first, _ = varsets.stored(dict(sets[0]))
    assert varsets.stored(dict(sets[1]))[0] is first  # one dict per stored set


def test_server_key_is_stable_and_follows_identity() -> None:
    server = make_record()["server"]
    key = store.server_key(server)
    assert key == store.server_key(dict(reversed(list(server.items()))))
    assert key != store.server_key({**server, "source_sha256": "0" * 64})
    assert len(key) == store.KEY_HEX_DIGITS


# --- interval summaries ---


def test_interval_summary_downsamples_to_at_most_series_points() -> None:
    summary = store.summarize_intervals([float(i) for i in range(600)])
    assert summary.series is not None and len(summary.series) == store.SERIES_POINTS == 12
    assert summary.series[0] == pytest.approx(24.5)  # mean of 0..49
    assert summary.series[-1] == pytest.approx(574.0)  # mean of 550..599 is 574.5
    uneven = store.summarize_intervals([float(i) for i in range(25)]).series
    assert uneven == [1.0, 3.5, 5.5, 7.5, 9.5, 11.5, 13.5, 15.5, 17.5, 19.5, 21.5, 23.5]
    assert summary.p50 == pytest.approx(299.5)
    assert summary.p5 is not None and summary.p95 is not None
    assert summary.p5 < summary.p50 < summary.p95


def test_interval_summary_of_short_and_empty_series() -> None:
    assert store.summarize_intervals([5.0, 5.0, 5.0]).series == [5.0, 5.0, 5.0]
    assert store.summarize_intervals([5.0, 5.0, 5.0]).cv == 0.0
    assert store.summarize_intervals([7.0]).cv is None
    assert store.summarize_intervals([]) == store.IntervalSummary(None, None, None, None, None)


# --- broken files ---


def test_truncated_file_is_refused(filled_db: Path) -> None:
    size = filled_db.stat().st_size
    with filled_db.open("r+b") as fh:
        fh.truncate(size // 2)
    for write in (True, False):
        with pytest.raises(DatabaseError, match="is not a readable DuckDB file") as err:
            store.open_db(filled_db, write=write)
        assert str(filled_db) in str(err.value)


def test_text_file_named_duckdb_is_refused(db: Path) -> None:
    db.parent.mkdir(parents=True)
    db.write_text("this is not a database\n")
    with pytest.raises(DatabaseError, match="is not a readable DuckDB file") as err:
        store.open_db(db, write=True)
    assert "perftrack ingest" in str(err.value)  # not in git: rebuild from records
    assert db.read_text() == "this is not a database\n"


def test_duckdb_file_of_another_application_is_refused(db: Path) -> None:
    db.parent.mkdir(parents=True)
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE something_else (a INTEGER)")
    con.close()
    with pytest.raises(DatabaseError, match="not a perftrack results DB"):
        store.open_db(db, write=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_corrupt_file_in_git_names_the_last_good_revision(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    data = repo / "data"
    data.mkdir(parents=True)
    git(repo, "init", "-q")
    db = data / "results.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest([make_record()])
    git(repo, "add", "data/results.duckdb")
    git(repo, "commit", "-q", "-m", "good DB")
    good = git(repo, "rev-parse", "--short", "HEAD")
    date = git(repo, "log", "-1", "--format=%cs")
    db.write_bytes(db.read_bytes()[:1000])
    git(repo, "commit", "-q", "-am", "corrupt DB")
    with pytest.raises(DatabaseError) as err:
        store.open_db(db, write=False)
    message = str(err.value)
    assert f"the last good revision is {good} ({date})" in message
    assert f"`git checkout {good} -- {db}`" in message


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_corrupt_file_tracked_in_git_with_no_good_revision(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    db = repo / "results.duckdb"
    db.write_text("never a database\n")
    git(repo, "add", "results.duckdb")
    git(repo, "commit", "-q", "-m", "bad")
    with pytest.raises(DatabaseError, match="none of its last 20 revisions in git opens"):
        store.open_db(db, write=False)


# --- schema versions ---


def test_newer_schema_is_refused(filled_db: Path) -> None:
    con = duckdb.connect(str(filled_db))
    con.execute("INSERT INTO schema_version VALUES (999, now()::TIMESTAMP, '99.0')")
    con.close()
    current = migrations.CURRENT_VERSION
    expected = f"has schema v999 but this perftrack knows v{current}: upgrade perftrack"
    for write in (True, False):
        with pytest.raises(DatabaseError, match=expected):
            store.open_db(filled_db, write=write)


def test_empty_duckdb_file_is_migrated_in_write_mode_only(db: Path) -> None:
    db.parent.mkdir(parents=True)
    duckdb.connect(str(db)).close()
    with pytest.raises(DatabaseError, match="no perftrack tables yet"):
        store.open_db(db, write=False)
    with store.open_db(db, write=True) as st:
        assert st.migrated == list(range(1, migrations.CURRENT_VERSION + 1))
        assert st.check() == []


# --- locking and concurrency ---


@pytest.fixture
def held_lock(db: Path) -> Iterator[int]:
    """Hold the DB's lock as another perftrack process would, pid 4242 written in it."""
    db.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(store.lock_path(db), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, b"4242\n")
    yield fd
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def test_lock_timeout_names_the_holder(db: Path, held_lock: int) -> None:
    expected = f"{db} is locked by another perftrack process (pid 4242); retry when it finishes"
    with pytest.raises(DatabaseError) as err:
        store.open_db(db, write=True, lock_timeout_s=0.2)
    assert str(err.value) == expected
    assert not db.exists()


def test_reader_waits_for_writer_lock_then_times_out(filled_db: Path, held_lock: int) -> None:
    with pytest.raises(DatabaseError, match=r"locked by another perftrack process \(pid 4242\)"):
        store.open_db(filled_db, write=False, lock_timeout_s=0.2)


def test_readers_share_the_lock(filled_db: Path) -> None:
    with store.open_db(filled_db, write=False) as a, store.open_db(filled_db, write=False) as b:
        assert a.check() == b.check() == []


def test_a_reader_leaves_no_lock_file_and_still_holds_off_a_writer(filled_db: Path) -> None:
    """A read-only open never creates `<db>.lock` (issue 37: read-only commands left one
    beside any --db path); without one it locks the DB file, which a writer waits for."""
    store.lock_path(filled_db).unlink(missing_ok=True)
    with store.open_db(filled_db, write=False) as st:
        assert st.check() == []
        assert not store.lock_path(filled_db).exists()
        with pytest.raises(DatabaseError, match="is locked by another perftrack process;"):
            store.open_db(filled_db, write=True, lock_timeout_s=0.2)
    assert not store.lock_path(filled_db).exists() or not store.lock_path(filled_db).read_text()
    with store.open_db(filled_db, write=True, lock_timeout_s=0.2):
        pass


def test_lock_is_released_and_pid_cleared_after_close(filled_db: Path) -> None:
    with store.open_db(filled_db, write=True):
        assert store.lock_path(filled_db).read_text().strip() == str(os.getpid())
    assert store.lock_path(filled_db).read_text() == ""
    with store.open_db(filled_db, write=True, lock_timeout_s=0.2):
        pass


def test_db_held_open_by_another_duckdb_program_is_reported_as_locked(filled_db: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; con = duckdb.connect(sys.argv[1]); print('ready', flush=True); "
            "sys.stdin.read()",
            str(filled_db),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        for write in (True, False):
            with pytest.raises(DatabaseError) as err:
                store.open_db(filled_db, write=write, lock_timeout_s=0.2)
            assert str(err.value) == (
                f"{filled_db} is locked by another process (pid {holder.pid}); "
                "retry when it finishes"
            )
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


INGEST_SCRIPT = (
    "import sys; from pathlib import Path; from perftrack.store.store import ingest_paths; "
    "print(ingest_paths(Path(sys.argv[1]), [Path(sys.argv[2])]).added)"
)


def test_two_concurrent_ingest_processes_lose_nothing(db: Path, tmp_path: Path) -> None:
    sets = {
        name: write_records(
            tmp_path / name, [make_record(run_id=f"synthetic-{name}", cell=i) for i in range(25)]
        )
        for name in ("run-a", "run-b")
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", INGEST_SCRIPT, str(db), str(src)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for src in sets.values()
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert [out.strip() for out, _ in outputs] == ["25", "25"]
    with store.open_db(db, write=False) as st:
        runs = st.con.execute(
            "SELECT run_id, count(*) FROM results GROUP BY run_id ORDER BY run_id"
        ).fetchall()
        assert st.check() == []
    assert runs == [("synthetic-run-a", 25), ("synthetic-run-b", 25)]


# --- check ---


def test_check_is_empty_for_a_healthy_db(filled_db: Path) -> None:
    with store.open_db(filled_db, write=False) as st:
        assert st.check() == []


def test_check_finds_orphan_rows_a_hand_edit_added(filled_db: Path) -> None:
    add_night_file(
        filled_db,
        "results",
        "SELECT * REPLACE ('synthetic-orphan:0000000000000000:1' AS record_id, "
        "'no-such-run' AS run_id, 'feedfacefeedface' AS varset_hash) FROM results LIMIT 1",
    )
    with store.open_db(filled_db, write=False) as st:
        problems = st.check()
    assert any("run_id with no row in runs" in p for p in problems), problems
    assert any("varset_hash with no rows in server_variables" in p for p in problems), problems
    assert any("synthetic-orphan" in p for p in problems)


def test_check_finds_bad_status_ok_without_tps_and_missing_hardware(filled_db: Path) -> None:
    add_night_files(
        filled_db,
        {
            "results": "(SELECT * REPLACE ('synthetic-x:0:1' AS record_id, 'exploded' AS status) "
            "FROM results LIMIT 1) UNION ALL (SELECT * REPLACE ('synthetic-x:1:1' AS record_id, "
            "NULL AS tps, 'synthetic-nohw' AS run_id) FROM results LIMIT 1)",
            "runs": "SELECT * REPLACE ('synthetic-nohw' AS run_id, 'feedfeedfeed' AS hw_key) "
            "FROM runs LIMIT 1",
        },
    )
    with store.open_db(filled_db, write=False) as st:
        problems = st.check()
    assert any("status other than ok/failed/skipped" in p for p in problems), problems
    assert any("ok results have no tps" in p for p in problems), problems
    assert any("hw_key has no row in hardware" in p for p in problems), problems


def test_check_finds_missing_schema_version_rows(filled_db: Path) -> None:
    with store.open_db(filled_db, write=True) as st:
        st.con.execute("DELETE FROM schema_version")
        assert st.check() == ["schema_version has no rows"]


# --- compaction ---


def test_compact_keeps_every_row_and_key(filled_db: Path) -> None:
    before = counts(filled_db)
    size_before, size_after = store.compact(filled_db)
    assert size_before > 0 and size_after > 0
    assert counts(filled_db) == before
    with store.open_db(filled_db, write=True) as st:
        assert st.check() == []
        assert st.ingest([make_record(cell=0)]) == store.IngestResult(added=0, already=1)
    assert not list(filled_db.parent.glob(".*compacting*"))


@pytest.mark.parametrize(
    ("free", "total", "expected"),
    [(0, 10, False), (4, 10, True), (3, 10, False), (30, 1000, False), (4, 4, True)],
)
def test_worth_compacting(free: int, total: int, expected: bool) -> None:
    assert store.worth_compacting(free, total, 262144) is expected
