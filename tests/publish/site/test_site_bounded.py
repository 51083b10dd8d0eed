"""The site stays small as the history grows (issue 39 item 3): the history page's closed
rows over a year old are weekly points, the SQL page ships the repeats of the newest
months only (every night's medians as the `nightly` table), and a run's detail file is in
the column encoding. Checked on a SYNTHETIC history in tmp_path
(tests/fixtures/records/synthetic_history.py), with the rules' constants made small so
that a few weeks of nights cross them."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

from fixtures.records.synthetic_history import build_db
from perftrack.publish.site import build, columns, history, parquet, rundetails
from perftrack.store.files import nightfiles
from perftrack.store.queries import histtable

START = datetime(2026, 1, 1, 2, 0, tzinfo=UTC)  # a Thursday
NIGHTS = 40  # Jan 1 - Feb 9: January closed, February open
WEEKLY_AFTER = 10  # days: the newest closed night is Jan 31, so Jan 21 -> Monday Jan 19
CUT = "2026-01-19"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bounded") / "history" / "results.duckdb"
    # a night file of January (nights 0-30), one of February: January is closed
    build_db(path, NIGHTS, repeats=2, threads=(1,), nights_per_batch=31, start=START)
    return path


def _points(site: Path) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    """Per cell and line (server, hw_key): the points the history page draws, in order."""
    index = columns.decode(columns.read_data_file(site / "data" / "history_cells.js"))
    out: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in index:
        files = [f"{row['past']}.js"] if row["past"] else []
        for name in [*files, f"{row['file']}.js"]:
            got = columns.read_data_file(site / "data" / "history" / name)
            for p in columns.decode(got["points"]):
                out[(*history.cell_key(row), p["server"], p["hw_key"])].append(p)
    return out


def _sites(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(every night drawn, the closed rows before CUT weekly) built from `db`."""
    nightly = build.build(db, tmp_path / "nightly").out
    monkeypatch.setattr(histtable, "WEEKLY_AFTER_DAYS", WEEKLY_AFTER)
    weekly = build.build(db, tmp_path / "weekly").out
    return nightly, weekly


def test_closed_nights_over_the_limit_are_drawn_as_their_weeks_medians(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nightly, weekly = _sites(db, tmp_path, monkeypatch)
    every, weeks = _points(nightly), _points(weekly)
    assert every.keys() == weeks.keys() and len(every) >= 4
    for line, points in every.items():
        old = [p for p in points if p["at"] < CUT]
        kept = [p for p in points if p["at"] >= CUT]
        assert len(old) == 18 and len(kept) == NIGHTS - 18  # Jan 1-18; Jan 19 on
        # from the cut on: every night, as it was
        assert weeks[line][-len(kept) :] == kept
        drawn = weeks[line][: -len(kept)]
        by_week: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for p in old:
            day = datetime.fromisoformat(p["at"][:10])
            by_week[(day - timedelta(days=day.weekday())).date().isoformat()].append(p)
        assert len(drawn) == len(by_week) == 3  # the weeks of Dec 29, Jan 5 and Jan 12
        for w, (_monday, nights) in zip(drawn, sorted(by_week.items()), strict=True):
            assert w["at"] == nights[0]["at"] and w["run_id"] is None
            assert w["n"] == sum(p["n"] for p in nights)
            assert w["tps"] == pytest.approx(statistics.median(p["tps"] for p in nights), rel=1e-5)
            assert w["tps_min"] == min(p["tps_min"] for p in nights)
            assert w["tps_max"] == max(p["tps_max"] for p in nights)
            assert w["p95_ms"] == pytest.approx(
                statistics.median(p["p95_ms"] for p in nights), rel=1e-5
            )
    # the index still counts every night, and nothing is NaN
    index = columns.decode(columns.read_data_file(weekly / "data" / "history_cells.js"))
    assert {r["nights"] for r in index} == {NIGHTS}
    assert "NaN" not in "".join(p.read_text() for p in (weekly / "data" / "history").glob("*.js"))


def test_a_night_over_the_previous_build_writes_what_a_build_from_scratch_writes(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The weekly points depend on the closed runs only, so a closed file taken from the
    previous build is the one a build from scratch writes."""
    monkeypatch.setattr(histtable, "WEEKLY_AFTER_DAYS", WEEKLY_AFTER)
    work = tmp_path / "db"
    work.mkdir()
    for p in db.parent.rglob("*"):
        if p.is_file() and not p.name.endswith(".lock"):
            dest = work / p.relative_to(db.parent)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(p.read_bytes())
    copy = work / db.name
    out = build.build(copy, tmp_path / "site").out
    build_db(copy, NIGHTS + 1, repeats=2, threads=(1,), nights_per_batch=NIGHTS + 1, start=START)
    build.build(copy, out)
    fresh = build.build(copy, tmp_path / "fresh").out
    for d in ("data/history",):
        a = {p.name: p.read_bytes() for p in (out / d).glob("*.js")}
        b = {p.name: p.read_bytes() for p in (fresh / d).glob("*.js")}
        assert a == b


def test_the_sql_page_ships_the_newest_months_repeats_and_every_nights_medians(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parquet, "RESULTS_MONTHS", 1)
    site = build.build(db, tmp_path / "site").out
    sql = site / parquet.SUBDIR
    manifest = json.loads((sql / parquet.MANIFEST).read_text())
    assert manifest["results_months"] == 1
    assert manifest["tables"]["results"]["files"] == ["results-202602.parquet"]
    assert not (sql / "results-202601.parquet").exists()
    with closing(nightfiles.connect(db)) as con:  # closed at once: the DB is shared
        (feb,) = con.execute(
            "SELECT count(*) FROM results WHERE strftime(started_at, '%Y%m') = '202602'"
        ).fetchone()
        assert manifest["tables"]["results"]["rows"] == feb > 0
        # nightly: the history's monthly parts, one row per series, server and run (every
        # night since the first), as the page loads them (paths relative to the manifest)
        entry = manifest["tables"][parquet.NIGHTLY]
        paths = [(sql / f).resolve() for f in entry["files"]]
        assert all(p.is_file() and p.parent.name == "parts" for p in paths)
        assert entry["bytes"] == sum(p.stat().st_size for p in paths)
        files = [str(p) for p in paths]
        mine = duckdb.connect()
        (rows, runs) = mine.execute(
            "SELECT count(*), count(DISTINCT run_id) FROM read_parquet(?)", [files]
        ).fetchone()
        assert entry["rows"] == rows and runs == NIGHTS
        (groups,) = con.execute(
            "SELECT count(*) FROM (SELECT DISTINCT r.run_id, s.server_id, r.workload, r.threads, "
            'r."collation", r.profile FROM results r JOIN servers s USING (server_key) '
            "WHERE r.status = 'ok' AND r.tps IS NOT NULL)"
        ).fetchone()
        assert rows == groups
        # a night's medians there are the medians of its repeats in the DB (the synthetic
        # history's series differ by workload, threads and collation only)
        got = mine.execute(
            "SELECT run_id, server, workload, threads, coll, tps, n FROM read_parquet(?) "
            "ORDER BY ALL LIMIT 3",
            [files],
        ).fetchall()
        for run, server, workload, threads, coll, tps, n in got:
            want = con.execute(
                "SELECT median(r.tps), count(*) FROM results r JOIN servers s USING (server_key) "
                "WHERE r.run_id = ? AND s.server_id = ? AND r.workload = ? AND r.threads = ? "
                "AND r.\"collation\" = ? AND r.status = 'ok'",
                [run, server, workload, threads, coll],
            ).fetchone()
            assert (tps, n) == (pytest.approx(want[0]), want[1])


def test_a_run_file_holds_its_tables_in_the_column_encoding(db: Path, tmp_path: Path) -> None:
    site = build.build(db, tmp_path / "site").out
    runs = sorted((site / "data" / "runs").glob("r*.js"))
    assert runs
    raw = columns.read_data_file(runs[-1])
    for table in rundetails.TABLES:
        assert set(raw[table]) == {"n", "columns"}, table
    detail = rundetails.decoded(raw)
    assert detail["cells"] and all("tps" in c for c in detail["cells"])
    cmds = detail["explain_commands"]
    assert cmds and all("command" not in c for c in cmds)  # the page writes it
    assert {"previous", "server", "workload", "threads", "collation", "profile"} <= set(cmds[0])
