"""The cells a study plans, kept in SQL (`Store.cell_records`) and in Python (`of_study`)
from the one definition `study_runs.planned_cells`: both keep the same records of a real
DuckDB file of SYNTHETIC records (test fixture) near every study's matrices."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from fixtures.records.synthetic import make_record
from perftrack.planning import study
from perftrack.publish import study_runs
from perftrack.store import store

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
OTHER_SERVER = "synthetic-mysql-8.0.36"  # in no study: its cells are never a study's
# A value of each field no study plans: the records the filter must drop.
UNPLANNED = {
    "workload": "synthetic_unplanned",
    "threads": 3,
    "profile": "synthetic-unplanned",
    "duration_s": 7,
    "tables": 3,
}
FIELDS = tuple(UNPLANNED)
EVERY_CELL = [{}]  # one cell set that constrains no field: every cell


def _scales() -> list[tuple[study.Study, str]]:
    return [
        (st, sc)
        for st in (study.read_study(n, CONFIGS) for n in study.known(CONFIGS))
        for sc in st.scales
    ]


def _pool() -> dict[str, list[Any]]:
    """Every value any study's matrices plan for each field, and one none plans."""
    pool: dict[str, set[Any]] = {f: {UNPLANNED[f]} for f in FIELDS}
    for st, sc in _scales():
        for cell_set in study_runs.planned_cells(st.matrices(sc)):
            for f in FIELDS:
                pool[f].update(cell_set[f])
    return {f: sorted(v) for f, v in pool.items()}


def _cells() -> list[tuple[dict[str, Any], str]]:
    """Each matrix's first planned cell, and that cell with one field set to each other
    value of the pool (another study's, or none's): every edge of every planned set; each
    on one of its scale's servers in turn (many are other studies' servers too), every
    5th on a server no study names as well."""
    pool = _pool()
    out: list[tuple[dict[str, Any], str]] = []
    for st, sc in _scales():
        servers = itertools.cycle(st.servers(sc))
        for cell_set in study_runs.planned_cells(st.matrices(sc)):
            first = {f: cell_set[f][0] for f in FIELDS}
            near = [first, *({**first, f: v} for f in FIELDS for v in pool[f] if v != first[f])]
            for i, cell in enumerate(near):
                out.append((cell, next(servers)))
                if i % 5 == 0:
                    out.append((cell, OTHER_SERVER))
    return out


def _servers() -> list[str]:
    return sorted({sid for st, sc in _scales() for sid in st.servers(sc)})


@pytest.fixture(scope="module")
def cells_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cells of `_cells`, in 3 runs; every 7th failed first and was measured on its
    second attempt (the latest attempt is the one kept)."""
    recs = []
    for n, (cell, sid) in enumerate(_cells()):
        retried = n % 7 == 0
        for attempt in (1, 2) if retried else (1,):
            status = "failed" if retried and attempt == 1 else "ok"
            rec = make_record(
                run_id=f"synthetic-run-{n % 3}",
                cell=n,
                attempt=attempt,
                status=status,
                server_id=sid,
                tps=1000.0 + n,
            )
            rec["cell"].update(cell)
            recs.append(rec)
    db = tmp_path_factory.mktemp("study-cells") / "results.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    return db


def _key(r: dict[str, Any]) -> tuple[Any, ...]:
    return (r["run_id"], r["server"]["id"], *(r["cell"][f] for f in FIELDS), r["result"]["qps"])


def test_every_study_keeps_in_sql_the_cells_of_study_keeps_in_python(cells_db: Path) -> None:
    with store.open_db(cells_db, write=False) as db:
        everything = db.cell_records([*_servers(), OTHER_SERVER], EVERY_CELL)
        for st, sc in _scales():
            mine = study_runs.db_records(st, sc, db)
            want = [
                r
                for r in everything
                if r["server"]["id"] in st.servers(sc) and study_runs.of_study(st, sc, r["cell"])
            ]
            assert mine, (st.name, sc)  # the fixture has cells of every scale
            assert len(mine) < len([r for r in everything if r["server"]["id"] in st.servers(sc)])
            assert sorted(map(_key, mine)) == sorted(map(_key, want)), (st.name, sc)
            assert all(r["status"] == "ok" for r in mine)  # the retried cells' 2nd attempts


def test_cell_counts_count_each_servers_latest_attempts(cells_db: Path) -> None:
    servers = [*_servers(), OTHER_SERVER]
    with store.open_db(cells_db, write=False) as db:
        counts = db.cell_counts(servers)
        every = db.cell_records(servers, EVERY_CELL)
    assert counts == Counter(r["server"]["id"] for r in every)
    assert set(counts) == set(servers)
    assert len(every) == len(_cells())  # one record per cell: its latest attempt


def _cell_sets() -> hs.SearchStrategy[list[dict[str, tuple[Any, ...]]]]:
    pool = _pool()
    one = hs.fixed_dictionaries(
        {},
        optional={
            f: hs.lists(hs.sampled_from(pool[f]), max_size=4, unique=True).map(tuple)
            for f in FIELDS
        },
    )
    return hs.lists(one, max_size=3)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cell_sets=_cell_sets())
def test_any_union_of_cell_sets_keeps_in_sql_what_planned_keeps_in_python(
    cells_db: Path, cell_sets: list[dict[str, tuple[Any, ...]]]
) -> None:
    servers = [*_servers(), OTHER_SERVER]
    with store.open_db(cells_db, write=False) as db:
        every = db.cell_records(servers, EVERY_CELL)
        kept = db.cell_records(servers, cell_sets)
    want = [r for r in every if study_runs._planned(cell_sets, r["cell"])]
    assert sorted(map(_key, kept)) == sorted(map(_key, want))


def test_a_field_that_is_not_a_cell_field_is_refused(cells_db: Path) -> None:
    with store.open_db(cells_db, write=False) as db, pytest.raises(ValueError, match="qps"):
        db.cell_records([OTHER_SERVER], [{"qps": (1.0,)}])
