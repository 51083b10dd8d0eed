"""Data files are data (store/files/codecheck.py): a results DB carrying a macro, a user view, a
view of another shape, a column default or a CHECK is refused on every open with one line
naming the object; the connection reads and writes no file outside the DB's directory."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from clirun import assert_one_line_error, perftrack
from fixtures.records.synthetic import make_record
from perftrack.core.errors import DatabaseError
from perftrack.store import store
from perftrack.store.files import nightfiles


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "data" / "results.duckdb"
    with store.open_db(path, write=True) as st:
        st.ingest([make_record(cell=i) for i in range(2)])
    return path


@pytest.fixture
def db(template: Path, tmp_path: Path) -> Path:
    return nightfiles.copy_db(template, tmp_path / "data" / "results.duckdb")


def _plant(db: Path, sql: str) -> None:
    con = duckdb.connect(str(db))
    try:
        # a view is bound when created: its relative patterns resolve from the checkout
        con.execute(f"SET file_search_path = '{db.parent.parent}'")
        con.execute(sql.replace("ABS", str(db.parent)))
        con.execute("CHECKPOINT")
    finally:
        con.close()


PLANTED = [
    # overrides the built-in median() for every query on the file
    ("CREATE MACRO median(x) AS 42", "a macro 'main.median'"),
    ("CREATE MACRO main.pt(x) AS TABLE SELECT 1", "a table_macro 'main.pt'"),
    ("CREATE VIEW leak AS SELECT * FROM read_csv('/etc/hostname')", "a user view 'main.leak'"),
    (
        "CREATE OR REPLACE VIEW results AS SELECT * FROM read_csv('/etc/hostname')",
        "a view 'results' that calls read_csv",
    ),
    (
        "CREATE OR REPLACE VIEW servers AS SELECT *, current_setting('home_directory') AS h FROM "
        "read_parquet('data/results/*/*.servers.parquet')",
        "a view 'servers' that calls current_setting",
    ),
    (
        "CREATE OR REPLACE VIEW hardware AS SELECT * FROM "
        "read_parquet('ABS/results/*/*.hardware.parquet')",
        "not its own night files",
    ),
    (
        "CREATE OR REPLACE VIEW runs AS SELECT * FROM schema_version",
        "reads the table or view 'schema_version'",
    ),
    ("ALTER TABLE schema_version ADD COLUMN note VARCHAR DEFAULT 'x'", "a default"),
    ("CREATE TABLE extra (x INTEGER CHECK (x > 0))", "a CHECK"),
]


@pytest.mark.parametrize(("sql", "named"), PLANTED, ids=[n for _, n in PLANTED])
def test_a_db_carrying_code_is_refused_naming_the_object(db: Path, sql: str, named: str) -> None:
    _plant(db, sql)
    for write in (False, True):
        with pytest.raises(DatabaseError, match="a data file may not carry code") as err:
            store.open_db(db, write=write)
        assert named in str(err.value)
        assert "\n" not in str(err.value)


def test_the_cli_refuses_a_planted_median_macro_in_one_line(db: Path) -> None:
    _plant(db, "CREATE MACRO median(x) AS 42")
    res = perftrack("db", "check", "--db", str(db))
    assert_one_line_error(res, 4, "a macro 'main.median'", "did not create", str(db))


def test_perftracks_own_views_pass_and_files_elsewhere_are_out_of_reach(
    db: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    with store.open_db(db, write=False) as st:
        assert st.check() == []
        for sql in (
            f"SELECT * FROM read_csv('{outside}')",
            f"COPY (SELECT 1) TO '{tmp_path / 'x.parquet'}'",
            "SELECT * FROM read_text('/etc/hostname')",
        ):
            with pytest.raises(duckdb.Error, match="disabled by configuration"):
                st.con.execute(sql)
        with pytest.raises(duckdb.Error):
            st.con.execute("SET enable_external_access = true")
    elsewhere = tmp_path / "site"
    elsewhere.mkdir()
    with store.open_db(db, write=False, allow=[elsewhere]) as st:
        st.con.execute(f"COPY (SELECT 1 AS x) TO '{elsewhere / 'x.parquet'}'")
    assert (elsewhere / "x.parquet").is_file()
