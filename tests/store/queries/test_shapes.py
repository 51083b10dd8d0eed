"""The typed rows (store/queries/shapes.py) name exactly the columns the queries return:
checked on a copy of the committed DB, so a column added to a table or a query without
its shape (or the reverse) fails here, not in a reader the type checker trusted."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from perftrack.store import remeasures, store
from perftrack.store.queries import shapes

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def st(tmp_path_factory: pytest.TempPathFactory) -> Iterator[store.Store]:
    data = tmp_path_factory.mktemp("shapes") / "data"
    shutil.copytree(REPO / "data", data, ignore=shutil.ignore_patterns(".*"))
    with store.open_db(data / "results.duckdb", write=False) as opened:
        yield opened


def keys(shape: Any) -> set[str]:
    return set(shape.__required_keys__ | shape.__optional_keys__)


@pytest.mark.parametrize(
    ("table", "shape"),
    [
        ("alerts", shapes.AlertRow),
        ("verdicts", shapes.VerdictRow),
        ("change_points", shapes.ChangePointRow),
        ("hardware", shapes.HardwareRow),
    ],
)
def test_a_tables_shape_names_its_columns(st: store.Store, table: str, shape: Any) -> None:
    columns = {d[0] for d in st.con.execute(f"SELECT * FROM {table} LIMIT 0").description}
    assert keys(shape) == columns


def test_each_answers_shape_names_the_columns_it_returns(st: store.Store) -> None:
    runs = [r["run_id"] for r in st.runs_overview()]
    answers: list[tuple[Any, Callable[[], list[Any]]]] = [
        (shapes.ValueRow, lambda: st.series_values("tps")),
        (shapes.RunValueRow, lambda: st.run_values(runs, "tps")),
        (shapes.ServerSummary, st.server_summaries),
        (shapes.NewestRepeats, st.newest_repeats),
        (shapes.VerdictRow, lambda: st.verdicts_touched(runs, "tps")),
        (shapes.AlertRow, st.stored_alerts),
        (shapes.VerdictRow, lambda: st.stored_verdicts("tps")),
        (shapes.RunOverview, st.runs_overview),
        (shapes.RunServer, st.run_servers),
        (shapes.RunCell, st.run_cells),
        (shapes.RunEffective, st.run_effective),
        (shapes.RunFailure, st.run_failures),  # none in the committed DB: its columns
        (shapes.RunVarset, st.run_varsets),
    ]
    for shape, ask in answers:
        rows = ask()
        asked = {d[0] for d in st.con.description or []}  # the query just answered
        assert asked == keys(shape), shape.__name__
        assert all(set(r) == asked for r in rows), shape.__name__


def test_a_series_key_is_the_stores_series() -> None:
    assert list(shapes.SeriesKey.__annotations__) == list(store.SERIES_COLS)
    assert list(shapes.SiteSeries.__annotations__) == list(store.SITE_SERIES)


def test_a_remeasures_row_names_the_tables_columns() -> None:
    """`remeasures` is created when first written (store/remeasures.py), so its columns
    come from the statement that creates it."""
    con = duckdb.connect(":memory:")
    con.execute(remeasures.TABLE_SQL)
    columns = {d[0] for d in con.execute(f"SELECT * FROM {remeasures.TABLE}").description}
    assert keys(shapes.RemeasureRow) == columns
