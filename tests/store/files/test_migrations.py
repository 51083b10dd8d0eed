"""Schema migrations: fresh DBs, every committed fixture DB migrating forward, and how a new
migration appends. Fixture DBs and records are synthetic (see tests/fixtures/)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from fixtures.hand_edit import add_night_file
from fixtures.records.synthetic import FIXTURE_RUN_DIR, fixture_records, make_record
from perftrack.core import record
from perftrack.core.errors import DatabaseError
from perftrack.store import store
from perftrack.store.files import migrations, nightfiles, rows

FIXTURE_DBS = Path(__file__).parents[2] / "fixtures" / "db"
FIXTURE_NAME = re.compile(r"^schema_v(\d+)\.duckdb$")


def fixture_dbs() -> list[Path]:
    return sorted(p for p in FIXTURE_DBS.iterdir() if FIXTURE_NAME.match(p.name))


def fixture_version(path: Path) -> int:
    match = FIXTURE_NAME.match(path.name)
    assert match is not None
    return int(match.group(1))


def copy_fixture(fixture: Path, db: Path) -> Path:
    """Copy a fixture DB and (since v6) its night files, under the DB's new name."""
    shutil.copyfile(fixture, db)
    if nightfiles.files_dir(fixture).is_dir():
        shutil.copytree(nightfiles.files_dir(fixture), nightfiles.files_dir(db))
    return db


# --- the migration list ---


def test_versions_are_one_to_n_with_descriptions() -> None:
    versions = [m.version for m in migrations.MIGRATIONS]
    assert versions == list(range(1, len(versions) + 1))
    assert versions[-1] == migrations.CURRENT_VERSION
    assert all(m.description.strip() and m.statements for m in migrations.MIGRATIONS)


def test_gapped_sequence_is_a_programming_error(tmp_path: Path) -> None:
    gapped = (
        *migrations.MIGRATIONS,
        migrations.Migration(migrations.CURRENT_VERSION + 2, "skips versions", ("SELECT 1",)),
    )
    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    try:
        with pytest.raises(ValueError, match=r"1\.\.N in order"):
            migrations.migrate(con, steps=gapped)
    finally:
        con.close()


# --- fresh DB ---


def test_migrate_fresh_creates_every_table(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "fresh.duckdb"))
    try:
        assert migrations.schema_version(con) == 0
        assert migrations.migrate(con) == list(range(1, migrations.CURRENT_VERSION + 1))
        assert migrations.user_relations(con) == set(migrations.TABLES)
        assert migrations.schema_version(con) == migrations.CURRENT_VERSION
        assert migrations.migrate(con) == []
        rows = con.execute("SELECT version, perftrack_version FROM schema_version").fetchall()
    finally:
        con.close()
    assert [v for v, _ in rows] == list(range(1, migrations.CURRENT_VERSION + 1))
    assert all(pv for _, pv in rows)


def test_migrate_stops_at_target(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "t.duckdb"))
    try:
        assert migrations.migrate(con, target=1) == [1]
        assert migrations.schema_version(con) == 1
    finally:
        con.close()


def test_open_db_on_fresh_path_is_current_and_healthy(tmp_path: Path) -> None:
    with store.open_db(tmp_path / "results.duckdb", write=True) as st:
        assert st.schema_version == migrations.CURRENT_VERSION
        assert st.check() == []


# --- the committed fixture DBs: one per schema version ---


def test_every_schema_version_has_a_fixture_db() -> None:
    versions = sorted(fixture_version(p) for p in fixture_dbs())
    expected = list(range(1, migrations.CURRENT_VERSION + 1))
    assert versions == expected, (
        "each schema version needs tests/fixtures/db/schema_vN.duckdb; "
        "run `python tests/fixtures/db/make_fixture_db.py` (see docs/schema.md)"
    )


@pytest.mark.parametrize("fixture", fixture_dbs(), ids=lambda p: p.name)
def test_fixture_db_is_frozen_at_its_version(fixture: Path) -> None:
    con = duckdb.connect(str(fixture), read_only=True)
    try:
        assert migrations.schema_version(con) == fixture_version(fixture)
    finally:
        con.close()


@pytest.mark.parametrize("fixture", fixture_dbs(), ids=lambda p: p.name)
def test_fixture_db_migrates_forward_and_passes_check(fixture: Path, tmp_path: Path) -> None:
    db = copy_fixture(fixture, tmp_path / "results.duckdb")
    old = fixture_version(fixture)
    with store.open_db(db, write=True) as st:
        assert st.migrated == list(range(old + 1, migrations.CURRENT_VERSION + 1))
        assert st.schema_version == migrations.CURRENT_VERSION
        assert st.check() == []
        assert st.info()["counts"]["results"] == len(fixture_records())
        # The current code ingests into the migrated DB, idempotently.
        assert st.ingest(fixture_records()).added == 0
        assert st.ingest([make_record(run_id="synthetic-after-migration")]).added == 1
        assert st.check() == []
    with store.open_db(db, write=False) as st:
        assert st.check() == []


def test_fixture_records_still_validate() -> None:
    paths = list(record.find([FIXTURE_RUN_DIR]))
    assert len(paths) == len(fixture_records())
    assert sorted(record.read(p)["record_id"] for p in paths) == sorted(
        r["record_id"] for r in fixture_records()
    )


# --- appending a migration: how v2, v3 … will work ---

V2 = migrations.Migration(
    2, "test only: a notes column", ("ALTER TABLE results ADD COLUMN notes VARCHAR",)
)


@pytest.fixture
def with_v2(monkeypatch: pytest.MonkeyPatch) -> None:
    # a test-only v2 on top of the real v1 (the real later versions are left out)
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS[:1], V2))
    monkeypatch.setattr(migrations, "CURRENT_VERSION", 2)
    monkeypatch.setattr(migrations, "TABLES", V1_TABLES)


V1_TABLES = ("schema_version", "hardware", "servers", "runs", "results", "server_variables")


def v1_copy(tmp_path: Path) -> Path:
    db = tmp_path / "results.duckdb"
    shutil.copyfile(FIXTURE_DBS / "schema_v1.duckdb", db)
    return db


def test_appended_migration_upgrades_an_older_db(tmp_path: Path, with_v2: None) -> None:
    db = v1_copy(tmp_path)
    with pytest.raises(DatabaseError, match=r"has schema v1 .* run `perftrack db migrate`"):
        store.open_db(db, write=False)
    with store.open_db(db, write=True) as st:
        assert st.migrated == [2]
        assert st.con.execute("SELECT count(notes) FROM results").fetchone() == (0,)
        assert st.check() == []
    with store.open_db(db, write=False) as st:
        assert st.schema_version == 2


def test_failing_migration_rolls_back_to_previous_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = migrations.Migration(
        2,
        "test only: fails half way",
        ("CREATE TABLE half_done (a INTEGER)", "ALTER TABLE no_such_table ADD COLUMN b INTEGER"),
    )
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS[:1], broken))
    monkeypatch.setattr(migrations, "CURRENT_VERSION", 2)
    db = v1_copy(tmp_path)
    with pytest.raises(DatabaseError, match="failed and was rolled back; the file is at v1"):
        store.open_db(db, write=True)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert migrations.schema_version(con) == 1
        assert "half_done" not in migrations.user_tables(con)
    finally:
        con.close()


# --- schema v4: cost per operation and host-noise columns (issue #9) ---


def test_v4_adds_nullable_cost_columns_to_a_v3_db(tmp_path: Path) -> None:
    db = tmp_path / "results.duckdb"
    shutil.copyfile(FIXTURE_DBS / "schema_v3.duckdb", db)
    with store.open_db(db, write=True) as st:
        assert 4 in st.migrated
        cols = dict(
            st.con.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = 'results'"
            ).fetchall()
        )
        for name, sql_type in rows.V4_COST_COLUMNS:
            assert cols[name] == sql_type, name
        # results from before v4 have no cost: null, never zero
        assert st.con.execute(
            "SELECT count(*), count(cpu_us_per_txn), count(noisy) FROM results"
        ).fetchone() == (len(fixture_records()), 0, 0)
        # a record with cost and host fields fills them
        rec = make_record(run_id="synthetic-with-cost")
        rec["result"].update(cpu_us_per_txn=812.5, ctx_vol_per_txn=2.25, ipc=None)
        rec["cost"] = {
            "source": "proc",
            "window_s": 30.0,
            "unavailable": {"ipc": "perf stat cannot count hardware events"},
        }
        rec["host"] = {"steal_pct": 7.0, "noisy": True, "noisy_reason": "CPU steal 7.0% > 5%"}
        assert st.ingest([record.validate(rec)]).added == 1
        row = st.con.execute(
            "SELECT cpu_us_per_txn, ctx_vol_per_txn, ipc, cost_unavailable, host_steal_pct, "
            "noisy, noisy_reason FROM results WHERE run_id = 'synthetic-with-cost'"
        ).fetchone()
        assert st.check() == []
    assert row[:3] == (812.5, 2.25, None)
    assert json.loads(row[3]) == {"ipc": "perf stat cannot count hardware events"}
    assert row[4:] == (7.0, True, "CPU steal 7.0% > 5%")


def test_store_result_columns_cover_every_cost_field() -> None:
    names = [n for n, _ in store.RESULT_COLUMNS]
    v4 = [n for n, _ in rows.V4_COST_COLUMNS]
    assert set(record.COST_FIELDS) <= set(names)
    assert set(v4) <= set(names)
    assert len(names) == len(set(names))


def test_v5_drops_the_record_id_index_keeps_not_null_and_fills_phase(tmp_path: Path) -> None:
    """v5 rebuilds `results` without its PRIMARY KEY (the ART index dominated the file at
    scale) but with every NOT NULL of v1, and fills `phase` from the stored effective
    settings, where earlier versions kept it."""
    db = tmp_path / "results.duckdb"
    shutil.copyfile(FIXTURE_DBS / "schema_v4.duckdb", db)
    con = duckdb.connect(str(db))
    try:
        (rid,) = con.execute("SELECT min(record_id) FROM results").fetchone()
        con.execute(
            "UPDATE results SET effective = json_merge_patch(coalesce(effective, '{}'), "
            '\'{"phase": "post"}\') WHERE record_id = ?',
            [rid],
        )
        assert migrations.migrate(con, target=5) == [5]
        kinds = {
            k
            for (k,) in con.execute(
                "SELECT constraint_type FROM duckdb_constraints() WHERE table_name = 'results'"
            ).fetchall()
        }
        nullable = dict(
            con.execute(
                "SELECT column_name, is_nullable FROM information_schema.columns "
                "WHERE table_name = 'results'"
            ).fetchall()
        )
        phases = con.execute(
            "SELECT record_id, phase FROM results WHERE phase IS NOT NULL"
        ).fetchall()
    finally:
        con.close()
    assert kinds == {"NOT NULL"}
    assert nullable["record_id"] == nullable["collation"] == "NO"
    assert nullable["phase"] == nullable["handshake"] == nullable["dataset_size"] == "YES"
    assert phases == [(rid, "post")]
    with store.open_db(db, write=True) as st:  # idempotent ingest without the index
        assert st.ingest(fixture_records()).added == 0
    add_night_file(db, "results", "SELECT * FROM results LIMIT 1")
    with store.open_db(db, write=False) as st:
        assert any("more than once" in p for p in st.check())


def test_v5s_frozen_axes_are_still_the_records_optional_cell_fields() -> None:
    """migrations.V5_AXES is a labelled frozen copy: the day the record gains an axis, a new
    migration adds its column and this test is updated to compare the prefix."""
    assert tuple(record.OPTIONAL_CELL_FIELDS) == migrations.V5_AXES
