"""`site build` over a previous build: what did not change is taken from it (run detail
files, monthly results parts for the SQL page), and the site is the same as a build from
scratch. SYNTHETIC history in tmp_path (tests/fixtures/records/synthetic_history.py)."""

from __future__ import annotations

import csv
import json
from datetime import datetime
from pathlib import Path

import pytest

from fixtures.records.synthetic_history import build_db
from perftrack.publish.site import build, columns, parquet
from perftrack.store import explanations, nightfiles

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


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Nights 1-4 ingested "last month" (their night files are named for October), 5-6
    now: the SQL page's results come in two monthly parts."""
    path = tmp_path / "history" / "results.duckdb"
    monkeypatch.setattr(nightfiles, "_utc_now", lambda: datetime(2026, 10, 30, 2, 0))
    build_db(path, 4, repeats=2, threads=(1,), nights_per_batch=2)
    monkeypatch.undo()
    return path


def test_a_rebuild_after_a_new_night_reuses_what_did_not_change(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build.build(db, out)
    before = inodes(out)
    manifest = json.loads((out / SQL / parquet.MANIFEST).read_text())
    assert manifest["tables"]["results"]["files"] == ["results-202610.parquet"]
    # two more nights, written now (another month than the first four)
    build_db(db, 6, repeats=2, threads=(1,), nights_per_batch=6)
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
    part = (SQL / "results-202610.parquet").as_posix()
    assert after[part] == before[part]
    manifest = json.loads((out / SQL / parquet.MANIFEST).read_text())
    results = manifest["tables"]["results"]
    assert len(results["files"]) == 2 and results["files"][0] == "results-202610.parquet"
    # the recomputed data sets are new files
    assert after["data/csv/history.csv"] != before["data/csv/history.csv"]
    with (out / "data" / "csv" / "history.csv").open(encoding="utf-8", newline="") as f:
        history = list(csv.DictReader(f))
    assert len({r["run_id"] for r in history}) == 6


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
    detail = columns.read_data_file(out / "data" / "runs" / f"{name}.js")
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
    detail = columns.read_data_file(out / "data" / "runs" / f"{name}.js")
    assert [x["conclusion"] for x in detail["explanations"]] == [
        "SYNTHETIC explanation for the incremental build test"
    ]
    fresh = tmp_path / "fresh"
    build.build(db, fresh)
    assert files(out) == files(fresh)
