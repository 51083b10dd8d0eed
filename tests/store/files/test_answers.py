"""Answers kept on disk (store/files/answers.py): detect's window of values read back by the next
command over the same files, never a stale or damaged one. Real DuckDB files in tmp_path;
records are synthetic fixtures (tests/fixtures)."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from fixtures.records.synthetic import SYNTHETIC_START, make_record
from perftrack.store import store
from perftrack.store.files import answers, readcache

SQL = "SELECT run_id, list(tps ORDER BY cell_id) FROM results GROUP BY run_id ORDER BY run_id"


def night(run: int) -> list[dict[str, Any]]:
    return [
        make_record(
            run_id=f"synthetic-run-{run}",
            cell=c,
            tps=1000.0 + run + c / 3,
            started_at=SYNTHETIC_START + timedelta(days=run, minutes=c),
        )
        for c in range(4)
    ]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "results.duckdb"
    with store.open_db(path, write=True) as st:
        st.ingest(night(0))
    return path


def ask(db: Path, sql: str = SQL) -> tuple[list[tuple[Any, ...]], int]:
    """(the answer, how many times the store was asked)."""
    asked = []
    with store.open_db(db, write=False) as st:

        def fresh() -> list[tuple[Any, ...]]:
            asked.append(1)
            return st.con.execute(sql).fetchall()

        return answers.kept(db, st.con, sql, [], fresh), len(asked)


def kept_files(db: Path) -> list[str]:
    directory = readcache.cache_dir(db) / answers.SUBDIR
    return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


def test_an_answer_is_kept_and_given_back_equal_until_a_new_night_file(db: Path) -> None:
    first, asked = ask(db)
    assert asked == 1 and len(kept_files(db)) == 2  # the answer and its sidecar
    again, asked = ask(db)
    assert (again, asked) == (first, 0)
    assert again[0][1] == [1000.0, 1000.0 + 1 / 3, 1000.0 + 2 / 3, 1001.0]  # to the last bit
    ask(db, "SELECT count(*) FROM results")  # another question: kept beside
    assert len(kept_files(db)) == 4
    with store.open_db(db, write=True) as st:  # a new night: new files, another answer
        st.ingest(night(1))
    newer, asked = ask(db)
    assert asked == 1 and [r[0] for r in newer] == ["synthetic-run-0", "synthetic-run-1"]
    assert len(kept_files(db)) == 2  # the older answers of both questions were deleted


@pytest.mark.parametrize("damage", ["flip", "truncate", "sidecar"])
def test_a_damaged_answer_is_asked_again_never_read(db: Path, damage: str) -> None:
    right, _ = ask(db)
    kept = next(readcache.cache_dir(db).glob(f"{answers.SUBDIR}/*.json"))
    data = kept.read_bytes()
    if damage == "flip":  # still valid JSON, another number
        kept.write_bytes(data.replace(b"1000.0", b"9000.0", 1))
    elif damage == "truncate":
        kept.write_bytes(data[: len(data) // 2])
    else:
        kept.with_name(kept.name + answers.SIDECAR).write_text("0" * 64 + "\n")
    again, asked = ask(db)
    assert (again, asked) == (right, 1)


def test_a_cache_that_cannot_be_written_is_skipped(db: Path) -> None:
    directory = readcache.cache_dir(db)
    directory.mkdir(exist_ok=True)
    (directory / answers.SUBDIR).write_text("a file where the directory would go")
    first, asked = ask(db)
    again, asked_again = ask(db)
    assert first == again and (asked, asked_again) == (1, 1)


def test_an_answer_json_cannot_give_back_is_not_kept(db: Path) -> None:
    sql = "SELECT run_id, min(started_at) FROM results GROUP BY run_id"
    first, _ = ask(db, sql)
    assert isinstance(first[0][1], datetime)
    again, asked = ask(db, sql)
    assert (again, asked) == (first, 1) and kept_files(db) == []


def test_the_window_detect_keeps_is_the_one_the_site_build_reads(db: Path) -> None:
    """series_samples (the comparisons' window) through the store: the same rows whether
    kept or asked, and asked once for two opens."""
    with store.open_db(db, write=True) as st:
        st.ingest(night(1))
    with store.open_db(db, write=True) as st:  # detect: a writer
        asked = st.series_samples("tps", recent=200)
    assert len(kept_files(db)) == 2
    stamp = {p: p.stat().st_mtime_ns for p in readcache.cache_dir(db).rglob("*.json")}
    with store.open_db(db, write=False) as st:  # the site build
        read = st.series_samples("tps", recent=200)
    assert read == asked and len(read[0][-4]) == 8  # 2 nights × 4 cells of one series
    assert {p: p.stat().st_mtime_ns for p in stamp} == stamp  # read, not written again
    for p in readcache.cache_dir(db).rglob("*.json*"):
        os.unlink(p)
    with store.open_db(db, write=False) as st:
        assert st.series_samples("tps", recent=200) == asked
    # a reader keeps no answer: one only the site build asks would be written for nobody
    assert kept_files(db) == []
