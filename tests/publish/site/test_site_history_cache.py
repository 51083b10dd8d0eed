"""What the history page's data keeps from one `site build` to the next
(publish/site/histcache.py): a night's build over the previous one shows the same points
as a build from scratch; a cached file that was changed or lost, or a previous build
without the cache, is made again. SYNTHETIC history in tmp_path
(tests/fixtures/records/synthetic_history.py)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fixtures.records.synthetic_history import build_db
from perftrack.publish.site import build, columns, export, histcache, history
from perftrack.store import store
from perftrack.store.queries import histtable

HISTORY = Path(histcache.SUBDIR)
START = datetime(2026, 1, 29, 2, 0, tzinfo=UTC)  # nights across a month's end


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Nights 1-4 (Jan 29 - Feb 1), two nights a night file."""
    path = tmp_path / "history" / "results.duckdb"
    build_db(path, 4, repeats=2, threads=(1,), nights_per_batch=2, start=START)
    return path


def _more_nights(db: Path, nights: int) -> None:
    """Nights up to `nights` (5-6: Feb 2-3), the new ones in a night file of their own."""
    build_db(db, nights, repeats=2, threads=(1,), nights_per_batch=nights, start=START)


def charts(site: Path) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    """Per cell, the points the page draws: its closed file's, then its open file's."""
    index = columns.decode(columns.read_data_file(site / "data" / "history_cells.js"))
    out = {}
    for row in index:
        points = []
        if row["past"]:
            past = columns.read_data_file(site / HISTORY / f"{row['past']}.js")
            points += columns.decode(past["points"])
        cell = columns.read_data_file(site / HISTORY / f"{row['file']}.js")
        out[history.cell_key(row)] = points + columns.decode(cell["points"])
    return out


def manifest(site: Path) -> dict[str, Any]:
    return json.loads((site / HISTORY / histcache.MANIFEST).read_text())


def test_a_night_over_the_previous_build_draws_what_a_build_from_scratch_draws(
    db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    build.build(db, out)
    first = manifest(out)  # both night files start in January: one part, no closed file
    assert sorted(first["parts"]) == ["parts/202601.parquet"] and not first["past"]
    _more_nights(db, 6)
    build.build(db, out)
    fresh = tmp_path / "fresh"
    build.build(db, fresh)
    got, want = charts(out), charts(fresh)
    assert got == want and len(got) == 6
    for points in got.values():
        assert len({p["run_id"] for p in points}) == 6  # every night
        for p in points:
            for m in ("tps", "tps_min", "tps_max", "p95_ms"):
                assert isinstance(p[m], float) and not math.isnan(p[m]) and p[m] > 0
    # January's part was taken over (its night files did not change), the open month's
    # was made again; the closed months' files are the previous build's
    second = manifest(out)
    assert second["parts"]["parts/202601.parquet"] == first["parts"]["parts/202601.parquet"]
    assert sorted(second["parts"]) == ["parts/202601.parquet", "parts/202602.parquet"]
    assert len(second["past"]) == 6 and second == manifest(fresh)
    # a seventh night: January's part and the closed files are taken over, not made
    _more_nights(db, 7)
    before = {p.name: p.stat().st_ino for p in (out / HISTORY).rglob("*")}
    build.build(db, out)
    after = {p.name: p.stat().st_ino for p in (out / HISTORY).rglob("*")}
    for name in ("202601.parquet", *(f"{n}.js" for n in second["past"])):
        assert after[name] == before[name], name
    assert after["202602.parquet"] != before["202602.parquet"]


def test_a_changed_or_missing_cached_file_is_made_again(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    _more_nights(db, 6)
    build.build(db, out)
    want = charts(out)
    part = out / HISTORY / "parts" / "202601.parquet"
    part.write_bytes(part.read_bytes()[:-100] + b"\0" * 100)  # hand-edited
    past = sorted((out / HISTORY).glob(f"{histcache.PAST_PREFIX}*.js"))
    assert past
    text = past[0].read_text().replace('"n":', '"n": ', 1)
    past[0].write_text(text)  # the same data, other bytes: not what the manifest lists
    past[1].unlink()
    _more_nights(db, 7)
    build.build(db, out)
    fresh = tmp_path / "fresh"
    build.build(db, fresh)
    assert charts(out) == charts(fresh) != want
    assert manifest(out) == manifest(fresh)
    for name in ("parts/202601.parquet", *(p.name for p in past[:2])):
        assert (out / HISTORY / name).read_bytes() == (fresh / HISTORY / name).read_bytes()


def test_a_previous_build_without_the_cache_is_made_again_whole(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    _more_nights(db, 6)
    build.build(db, out)
    (out / HISTORY / histcache.MANIFEST).unlink()  # as a build by older code
    for p in (out / HISTORY / "parts").iterdir():
        p.write_bytes(b"not parquet")  # were they taken, the build would fail
    _more_nights(db, 7)
    build.build(db, out)
    fresh = tmp_path / "fresh"
    build.build(db, fresh)
    assert charts(out) == charts(fresh)
    assert manifest(out) == manifest(fresh)


def _history_bytes(site: Path) -> dict[str, bytes]:
    """The history's index and files, as written."""
    files = {p.name: p.read_bytes() for p in (site / HISTORY).glob("*.js")}
    return {**files, "index": (site / "data" / "history_cells.js").read_bytes()}


def test_a_month_that_closes_gives_the_index_and_files_of_a_build_from_scratch(
    db: Path, tmp_path: Path
) -> None:
    """closed.json keeps what the index takes of the closed rows; the night a month
    closes, the closed files are made again and the index rows are those of a build
    from scratch (nights, first and last night, metrics), byte for byte."""
    out = tmp_path / "site"
    _more_nights(db, 6)  # January closed, February open
    build.build(db, out)
    kept = json.loads((out / HISTORY / histcache.CLOSED).read_text())
    assert len(kept["cells"]) == 6 and kept["lines"]
    _more_nights(db, 31)  # up to Feb 28: February still open, closed.json taken over
    build.build(db, out)
    assert json.loads((out / HISTORY / histcache.CLOSED).read_text()) == kept
    before = manifest(out)
    _more_nights(db, 33)  # March 1-2 in a file of their own: February closes
    build.build(db, out)
    fresh = tmp_path / "fresh"
    build.build(db, fresh)
    assert _history_bytes(out) == _history_bytes(fresh)
    assert manifest(out) == manifest(fresh)
    assert set(manifest(out)["past"]).isdisjoint(before["past"])  # all made again
    closed = json.loads((out / HISTORY / histcache.CLOSED).read_text())
    assert closed == json.loads((fresh / HISTORY / histcache.CLOSED).read_text()) != kept
    index = columns.decode(columns.read_data_file(out / "data" / "history_cells.js"))
    assert {r["nights"] for r in index} == {33}
    assert {r["first_at"][:10] for r in index} == {"2026-01-29"}
    assert {r["last_at"][:10] for r in index} == {"2026-03-02"}
    assert all(r["past"] for r in index)


def test_a_lost_closed_summary_is_made_again_from_the_closed_rows(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    _more_nights(db, 6)
    build.build(db, out)
    want = _history_bytes(out)
    kept = json.loads((out / HISTORY / histcache.CLOSED).read_text())
    hand = {**kept, "cells": {k: {"nights": 1} for k in kept["cells"]}}  # not a summary
    (out / HISTORY / histcache.CLOSED).write_text(json.dumps(hand))
    build.build(db, out)
    assert _history_bytes(out) == want
    assert json.loads((out / HISTORY / histcache.CLOSED).read_text()) == kept
    (out / HISTORY / histcache.CLOSED).unlink()
    build.build(db, out)
    assert _history_bytes(out) == want


@pytest.mark.parametrize("hash_join", [True, False])
def test_a_change_point_in_a_closed_month_draws_its_step(
    db: Path, tmp_path: Path, hash_join: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The closed rows are not in the table a night's build labels; the steps of a
    change point in a closed month are drawn from them as from every row (the closed
    rows found by their series' hash, or by its columns, as when two series' hashes
    were the same)."""
    monkeypatch.setattr(histtable, "HASH_JOIN", hash_join)
    _more_nights(db, 6)
    with store.open_db(db, write=False, allow=[tmp_path]) as st:  # the parts: in site/
        rows = export.Exporter(st, []).history()  # every row, in the table
        first = min(r["at"] for r in rows)
        row = next(r for r in rows if r["at"][:10] == "2026-01-31")  # closed (January)
        cp = {
            **{k: row[k] for k in (*history.CELL_KEYS, "hw_key", "at", "run_id", "server")},
            "rel_change": -0.1, "p_value": 0.001, "environment": False, "control": False,
            "acknowledged": None, "scope": "series",
        }  # fmt: skip
        want_index, want = history.split(rows, [cp])
        cache = histcache.HistoryCache(tmp_path / "site", None)
        table = export.Exporter(st, []).history_table(cache)
        assert table.closed and table.count() == len(rows) > len(table.rows())
        got_index, got = history.split(table, [cp], cache)
    assert [{**r, "past": None} for r in got_index] == want_index
    assert all(r["past"] for r in got_index)
    name = next(r["file"] for r in got_index if history.cell_key(r) == history.cell_key(row))
    cell = json.loads(got[name])
    steps = columns.decode(cell["steps"])
    assert steps and {s["metric"] for s in steps} >= {"tps", "p95_ms"}
    assert {(s["from_at"], s["at"]) for s in steps} == {(first, row["at"])}
    for k in ("steps", "change_points"):
        assert cell[k] == json.loads(want[name])[k]
