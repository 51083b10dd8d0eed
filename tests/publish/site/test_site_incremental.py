"""`site build` over a previous build: what did not change is taken from it (run detail
files, monthly results parts for the SQL page), and the site is the same as a build from
scratch. SYNTHETIC history in tmp_path (tests/fixtures/records/synthetic_history.py)."""

from __future__ import annotations

import json
import re
import threading
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from fixtures.records.synthetic_history import build_db
from perftrack.cli import main as cli
from perftrack.core.errors import ConfigError, DatabaseError
from perftrack.publish.site import build, columns, parquet, rundetails
from perftrack.store import explanations, store

SQL = Path(parquet.SUBDIR)


def files(site: Path) -> dict[str, bytes]:
    """Every data file of a built site but those stamped with the build time."""
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in sorted((site / "data").rglob("*"))
        if p.is_file() and p.name not in ("meta.js", "meta.csv")
    }


def inodes(site: Path) -> dict[str, int]:
    return {p.relative_to(site).as_posix(): p.stat().st_ino for p in site.rglob("*") if p.is_file()}


# Nights from Jan 29: the second night file (two nights a file) holds Jan 31 and Feb 1.
START = datetime(2026, 1, 29, 2, 0, tzinfo=UTC)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Nights 1-4 (Jan 29 - Feb 1) in two night files, the second of them across the
    month's end: the SQL page's results come in two monthly parts, both from it."""
    path = tmp_path / "history" / "results.duckdb"
    build_db(path, 4, repeats=2, threads=(1,), nights_per_batch=2, start=START)
    return path


def test_a_rebuild_after_a_new_night_reuses_what_did_not_change(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build.build(db, out)
    before = inodes(out)
    manifest = json.loads((out / SQL / parquet.MANIFEST).read_text())
    parts = ["results-202601.parquet", "results-202602.parquet"]
    assert manifest["tables"]["results"]["files"] == parts
    # two more nights (Feb 2 and 3), in a third night file
    build_db(db, 6, repeats=2, threads=(1,), nights_per_batch=6, start=START)
    build.build(db, out)  # over the previous build
    fresh = tmp_path / "fresh"
    build.build(db, fresh)  # from scratch
    assert files(out) == files(fresh)
    after = inodes(out)
    runs = json.loads((out / build.MARKER).read_text())["runs"]
    old_runs = [f"data/runs/{f}.js" for f, _ in runs.values() if f"data/runs/{f}.js" in before]
    assert len(old_runs) == 4 and len(runs) == 6
    for f in old_runs:  # the same file: taken over, not written again
        assert after[f] == before[f], f
    january, february = ((SQL / p).as_posix() for p in parts)
    assert after[january] == before[january]  # its night files did not change
    assert after[february] != before[february]  # a new night file has results of it
    manifest = json.loads((out / SQL / parquet.MANIFEST).read_text())
    results = manifest["tables"]["results"]
    assert results["files"] == parts
    # each part holds its month's results, and every result is in one part
    con = duckdb.connect()
    months = con.execute(
        "SELECT strftime(started_at, '%Y%m') AS m, count(*) FROM read_parquet(?) "
        "GROUP BY m ORDER BY m",
        [[str(out / SQL / p) for p in parts]],
    ).fetchall()
    with store.open_db(db, write=False) as st:
        total = st.con.execute("SELECT count(*) FROM results").fetchone()
    assert [m for m, _ in months] == ["202601", "202602"]
    assert sum(n for _, n in months) == results["rows"] == (total or [0])[0]
    assert results["part_rows"] == {p: n for p, (_, n) in zip(parts, months, strict=True)}
    # the recomputed data sets are new files; the history is on the SQL page, not a CSV
    assert after["data/history_cells.js"] != before["data/history_cells.js"]
    assert not (out / "data" / "csv" / "history.csv").exists()


def test_a_changed_run_is_written_again(db: Path, tmp_path: Path) -> None:
    """A run whose fingerprint changed (here: a forged one in the previous build's marker)
    is recomputed, and what the previous build wrote for it is not trusted."""
    out = tmp_path / "site"
    build.build(db, out)
    marker = json.loads((out / build.MARKER).read_text())
    rid, (name, _) = sorted(marker["runs"].items())[0]
    marker["runs"][rid] = [name, "forged"]
    (out / build.MARKER).write_text(json.dumps(marker))
    (out / "data" / "runs" / f"{name}.js").write_text("stale")
    build.build(db, out)
    assert (out / "data" / "runs" / f"{name}.js").read_text() != "stale"
    fresh = tmp_path / "fresh"
    build.build(db, fresh)
    assert files(out) == files(fresh)


def test_a_new_explanation_rewrites_the_run_files_that_show_it(db: Path, tmp_path: Path) -> None:
    """A run's detail file shows `perftrack explain`'s newest results for its servers: one
    stored after the previous build makes the next build write the files again."""
    out = tmp_path / "site"
    build.build(db, out)
    marker = json.loads((out / build.MARKER).read_text())
    name = sorted(f for f, _ in marker["runs"].values())[-1]
    detail = rundetails.decoded(columns.read_data_file(out / "data" / "runs" / f"{name}.js"))
    a, b = (s["server"] for s in detail["servers"][:2])
    assert detail["explanations"] == []
    explanations.save(
        db,
        {
            "a": a,
            "b": b,
            "cell": {"workload": "oltp_read_only", "threads": 1, "metric": "tps"},
            "conclusion": "SYNTHETIC explanation for the incremental build test",
            "groups": [],
            "isolated": [],
            "machine_s": 0.0,
        },
    )
    build.build(db, out)
    detail = rundetails.decoded(columns.read_data_file(out / "data" / "runs" / f"{name}.js"))
    assert [x["conclusion"] for x in detail["explanations"]] == [
        "SYNTHETIC explanation for the incremental build test"
    ]
    fresh = tmp_path / "fresh"
    build.build(db, fresh)
    assert files(out) == files(fresh)


def test_a_part_that_fails_in_its_thread_fails_the_build_and_keeps_the_old_site(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The results' parts are written by a thread beside the rest of the build
    (parquet.start): its error is the build's, and the previous site stays whole."""
    out = tmp_path / "site"
    build.build(db, out)
    before = files(out)
    build_db(db, 6, repeats=2, threads=(1,), nights_per_batch=6, start=START)
    real = store.Store.copy_to_parquet
    threads: list[str] = []

    def failing(self: store.Store, table: str, *a: object, **k: object) -> int:
        if table == parquet.PARTED:
            threads.append(threading.current_thread().name)
            raise DatabaseError("cannot export table results to Parquet (disk full, test)")
        return real(self, table, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(store.Store, "copy_to_parquet", failing)
    with pytest.raises(DatabaseError, match="disk full, test"):
        build.build(db, out)
    assert threads and threads[0] != threading.main_thread().name  # it ran beside
    assert files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history", "site"]  # no temp left


@pytest.mark.parametrize("recorded", [True, False], ids=["sha256", "no-sha256"])
def test_a_damaged_part_in_the_previous_build_stops_the_build_naming_it(
    db: Path, tmp_path: Path, recorded: bool
) -> None:
    """Bad input (issue 39): a previous build's results part that the next build would
    take over, truncated: one clear error naming it, and nothing replaced."""
    out = tmp_path / "site"
    build.build(db, out)
    january = out / SQL / "results-202601.parquet"
    if not recorded:  # a manifest of older code: the Parquet framing is checked
        path = out / SQL / parquet.MANIFEST
        manifest = json.loads(path.read_text())
        del manifest["tables"]["results"]["part_sha256"]
        path.write_text(json.dumps(manifest))
    january.write_bytes(january.read_bytes()[:-100])
    before = files(out)
    with pytest.raises(ConfigError, match=r"results-202601\.parquet is damaged"):
        build.build(db, out)
    assert files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history", "site"]  # no temp left


def test_cli_names_a_damaged_part_in_one_line(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    build.build(db, out)
    (out / SQL / "results-202601.parquet").write_bytes(b"PAR1")
    assert cli(["site", "build", "--db", str(db), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "results-202601.parquet is damaged" in err[0], err


def test_a_new_night_changes_only_its_month_and_the_small_files(tmp_path: Path) -> None:
    """Deploy stays incremental (issue 39 item 4): after a night of the open month
    (February), every file of the closed month (January: its results part, its history
    aggregate, the cells' closed rows) and every earlier run's file is byte-identical;
    what changed is the open month's parts, the new run and the small recomputed files."""
    db = tmp_path / "history" / "results.duckdb"
    build_db(db, 3, repeats=2, threads=(1,), nights_per_batch=3, start=START)  # Jan 29-31
    build_db(db, 5, repeats=2, threads=(1,), nights_per_batch=5, start=START)  # Feb 1-2
    out = tmp_path / "site"
    build.build(db, out)
    before = all_files(out)
    build_db(db, 6, repeats=2, threads=(1,), nights_per_batch=6, start=START)  # Feb 3
    build.build(db, out)
    after = all_files(out)
    past = [p for p in before if re.fullmatch(r"data/history/p[0-9a-f]+\.js", p)]
    assert len(past) == 6  # each cell's closed rows (3 workloads x 2 collations)
    closed = [p for p in before if "202601" in p] + past
    assert {"data/sql/results-202601.parquet", "data/history/parts/202601.parquet"} <= set(closed)
    old_runs = [p for p in before if p.startswith("data/runs/")]
    for p in closed + old_runs:
        assert after.get(p) == before[p], p
    changed = {p for p in after if after[p] != before.get(p)}
    assert "data/sql/results-202602.parquet" in changed
    big = {p for p in changed if len(after[p]) > 20_000}
    # only the open month's files, the new runs' and the cells' open rows may be large
    assert all(
        p.endswith("202602.parquet") or p.startswith(("data/runs/", "data/history/h")) for p in big
    ), big


def all_files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}
