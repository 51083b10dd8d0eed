"""Answers rolled forward night by night (store/files/rolling.py): the comparisons' window and the
nightly points, after each night, equal to the answer asked of the whole history; asked
again when a night's rows cannot be rolled in or the kept state is not whole. Real DuckDB
files in tmp_path; records are synthetic fixtures (tests/fixtures)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fixtures.records.synthetic import SYNTHETIC_START, make_record
from perftrack.store import store
from perftrack.store.files import answers, readcache, rolling

RECENT = 6  # values per series and server in the window: 3 cells a night, 2 nights
ASKED = 10  # the rolled answers `asked` reads


def night(n: int, *, run: str | None = None, attempt: int = 1) -> list[dict[str, Any]]:
    """Night n: two servers, three cells each (one series per server)."""
    return [
        make_record(
            run_id=run or f"synthetic-run-{n:03d}",
            cell=3 * s + c,
            attempt=attempt,
            server_id=server,
            version=version,
            tps=1000.0 + 7 * n + c / 3 + (50 if server.endswith("8.4.0") else 0),
            started_at=SYNTHETIC_START + timedelta(days=n, minutes=10 * c + s),
        )
        for s, (server, version) in enumerate(
            (("synthetic-mysql-8.0.36", "8.0.36"), ("synthetic-mysql-8.4.0", "8.4.0"))
        )
        for c in range(3)
    ]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "results.duckdb"


@pytest.fixture
def how(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """How each rolled answer was found ("kept", "rolled", "asked"), in order."""
    seen: list[str] = []
    real = rolling.advance

    def spy(*a: Any, **k: Any) -> tuple[str, str]:
        got = real(*a, **k)
        seen.append(got[1])
        return got

    monkeypatch.setattr(rolling, "advance", spy)
    monkeypatch.setattr(answers, "kept", lambda db, con, sql, args, ask, keep: ask())  # no JSON
    return seen


def ingest(db: Path, records: list[dict[str, Any]]) -> None:
    with store.open_db(db, write=True) as st:
        st.ingest(records)


def asked(db: Path) -> tuple[Any, ...]:
    """Every rolled answer, in the order they are asked: the window and the nightly
    points' arrays (two answers: keys, points) of throughput, each series' variable sets
    and last runs, the servers' and runs' counts, the site's newest runs' repeats, each
    server's newest result and whether throughput and latency pick the same rows."""
    with store.open_db(db, write=False) as st:
        window = st.series_samples("tps", recent=RECENT)
        p = st.nightly_points("tps")
        points = {
            "keys": p.series_keys, "runs": p.runs, "key": p.key.tolist(), "run": p.run.tolist(),
            "at": p.at.tolist(), "value": p.value.tolist(),
        }  # fmt: skip
        series = (st.series_varsets(), st.series_last_run())
        site = (st.server_summaries(), st.runs_overview(), st.newest_repeats())
        detect = (st.server_last_result(), st._same_selection("tps", "latency_pct_ms"))
        return window, points, *series, *site, *detect


@pytest.fixture
def whole(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """asked() of the whole history, with nothing kept or rolled (the oracle)."""

    def oracle(db: Path) -> tuple[Any, ...]:
        with monkeypatch.context() as m:
            m.setattr(
                rolling, "advance", lambda con, db, query, *_, **__: (f"({query('results')})", "")
            )
            m.setattr(answers, "kept", lambda db, con, sql, args, ask, keep: ask())
            return asked(db)

    yield oracle


def states(db: Path) -> list[Path]:
    here = readcache.cache_dir(db) / rolling.SUBDIR
    return sorted(here.glob("*.parquet")) if here.is_dir() else []


def test_night_by_night_the_rolled_answers_equal_the_whole_history_s(
    db: Path, how: list[str], whole: Any
) -> None:
    ingest(db, night(0))
    first = asked(db)
    assert how == ["asked"] * ASKED
    assert len(states(db)) == ASKED
    assert first == whole(db)
    for n in range(1, 5):
        ingest(db, night(n))
        how.clear()
        got = asked(db)
        assert how == ["rolled"] * ASKED, n
        assert got == whole(db), n
    window = got[0]
    assert len(window) == 2 and all(len(row[-4]) == RECENT for row in window)  # it rolled
    assert window[0][-2][0] == "synthetic-run-003"  # the oldest of the last two nights
    how.clear()
    assert asked(db) == got and how == ["kept"] * ASKED  # nothing added: read as kept
    assert got[3] and all(run == "synthetic-run-004" for _at, run in got[3].values())
    newest = (SYNTHETIC_START + timedelta(days=4)).replace(tzinfo=None)  # stored naive UTC
    assert got[-2].keys() == {"synthetic-mysql-8.0.36", "synthetic-mysql-8.4.0"}
    assert all(at > newest for at in got[-2].values()) and got[-1] is True


def test_a_later_attempt_of_a_kept_window_cell_is_asked_of_every_result(
    db: Path, how: list[str], whole: Any
) -> None:
    for n in range(3):
        ingest(db, night(n))
    asked(db)
    again = night(2, attempt=2)[:2]  # night 2's first two cells measured again, later
    for rec in again:
        rec["result"]["tps"] += 0.5
    ingest(db, again)
    how.clear()
    got = asked(db)
    # the window and the points asked again (a kept cell measured again, a run again)
    assert how == ["asked", "rolled", "asked", *["rolled"] * (ASKED - 3)]
    assert got == whole(db)
    values = got[0][0][-4]  # the first server's: night 1's and night 2's latest attempts
    assert len(values) == RECENT and 1014.5 in values and 1014.0 not in values


def test_a_run_continued_in_a_later_file_asks_its_points_again(
    db: Path, how: list[str], whole: Any
) -> None:
    records = night(0) + night(1)
    ingest(db, records[:8])  # night 1 stopped after two cells, resumed into another file
    asked(db)
    ingest(db, records[8:])
    how.clear()
    got = asked(db)
    assert how == ["rolled", "rolled", "asked", *["rolled"] * (ASKED - 3)]
    assert got == whole(db)


def test_a_damaged_or_stale_state_is_asked_again(db: Path, how: list[str], whole: Any) -> None:
    for n in range(2):
        ingest(db, night(n))
    asked(db)
    parquet = states(db)[0]
    data = bytearray(parquet.read_bytes())
    data[len(data) // 2] ^= 0xFF
    parquet.write_bytes(bytes(data))  # a flipped byte: its sidecar says otherwise
    manifest = states(db)[1].with_suffix(".json")
    manifest.write_text(manifest.read_text()[:-9])  # a truncated manifest
    how.clear()
    assert asked(db) == whole(db)
    assert sorted(how) == ["asked", "asked", *["kept"] * (ASKED - 2)]
    how.clear()
    assert asked(db) == whole(db) and how == ["kept"] * ASKED  # kept again, whole


def test_a_kept_file_listed_otherwise_is_asked_again() -> None:
    kept = [["2026/a.results.parquet", "aa", 11], ["2026/b.results.parquet", "bb", 11]]
    now = [(*f,) for f in kept] + [("2026/c.results.parquet", "cc", 11)]
    assert rolling._added(kept, now) == ["2026/c.results.parquet"]
    assert rolling._added(kept, now[:2]) == []
    assert rolling._added(kept, [now[0], ("2026/b.results.parquet", "b2", 11)]) is None
    assert rolling._added(kept, [now[0], ("2026/b.results.parquet", "bb", 12)]) is None
    assert rolling._added(kept, [now[0], now[2]]) is None  # a kept file gone
    assert rolling._added(None, now) is None


def test_an_unwritable_cache_answers_anyway(db: Path, how: list[str], whole: Any) -> None:
    ingest(db, night(0))
    blocker = readcache.cache_dir(db) / rolling.SUBDIR
    blocker.parent.mkdir(exist_ok=True)
    blocker.write_text("not a directory\n")  # the states cannot be written (even as root)
    assert asked(db) == whole(db)
    assert how == ["asked"] * ASKED and blocker.read_text() == "not a directory\n"


def test_the_rolled_points_are_arrays_of_the_same_numbers(db: Path, whole: Any) -> None:
    for n in range(3):
        ingest(db, night(n))
    asked(db)
    ingest(db, night(3))
    got = asked(db)[1]
    assert np.array_equal(got["value"], whole(db)[1]["value"])
    assert len(got["keys"]) == 2 and len(got["runs"]) == 4 and len(got["value"]) == 8


def test_a_state_no_question_wrote_for_a_week_is_deleted_by_a_writer(
    db: Path, how: list[str]
) -> None:
    ingest(db, night(0))
    asked(db)
    old = states(db)[0]
    gone = [old, *(old.parent.glob(old.stem + ".*"))]  # its rows, manifest, sidecars
    week = time.time() - rolling.STALE_S - 60
    for f in gone:
        os.utime(f, (week, week))
    ingest(db, night(1))
    asked(db)  # each answer written again: the aged files of the first one too
    assert len(states(db)) == ASKED
    for f in old.parent.iterdir():
        os.utime(f, (week, week))
    with store.open_db(db, write=False) as st:  # a reader deletes nothing (others read)
        st.series_samples("tps", recent=RECENT + 1)  # another question's state, written now
    assert len(states(db)) == ASKED + 1
    with store.open_db(db, write=True) as st:  # a writer: no one else has the store open
        st.series_samples("tps", recent=RECENT + 2)
    assert [p.stat().st_mtime > week + 60 for p in states(db)].count(True) == 2
    assert len(states(db)) == 2  # the week-old states of the others: deleted
