"""The read cache (store/files/readcache.py): the store's views read a consolidated file per
table and closed month, and give exactly the rows the night files give. Real DuckDB
files and Parquet files in tmp_path; records are synthetic fixtures (tests/fixtures)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from fixtures.records.synthetic import BASE_VARIABLES, make_record
from perftrack.core.errors import DatabaseError
from perftrack.core.files import sha256_file
from perftrack.store import store
from perftrack.store.files import migrations, nightfiles, readcache

REPO = Path(__file__).resolve().parents[3]
FIXTURE = REPO / "tests" / "fixtures" / "db" / "schema_v9.duckdb"  # v6 and v9 files
FILE_TABLES = tuple(nightfiles.FILE_TABLES)


def fingerprint(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    """Every row of every view (md5 of its text, with column names: -0.0, 1/3 to the last
    bit), each view's column names and types, and the runs' chosen values."""
    out: dict[str, object] = {}
    for table in FILE_TABLES:
        rows = con.execute(f"SELECT md5(t::VARCHAR), t::VARCHAR FROM {table} t").fetchall()
        out[table] = sorted(rows)
        out[f"{table} columns"] = [
            (d[0], str(d[1])) for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description
        ]
    return out


def awkward(run_id: str, cell: int, tps: float, series: list[float]) -> dict:
    """A record of its own server, machine and variables (every table gets a file)."""
    rec = make_record(
        run_id=run_id,
        cell=cell,
        server_id=f"synthetic-mysql-{run_id}",
        hw_key=hashlib.sha256(f"{run_id}:{cell}".encode()).hexdigest()[:12],
        variables={**BASE_VARIABLES, "innodb_buffer_pool_size": str(len(run_id) * 2**20 + cell)},
    )
    rec["result"]["tps"] = tps
    rec["result"]["intervals"] = [
        {**rec["result"]["intervals"][0], "t": i + 1, "tps": v} for i, v in enumerate(series)
    ]
    return rec


# (ingest time, records): files over four months of several schema versions and formats
NIGHTS: list[tuple[datetime, list[tuple[str, int, float, list[float]]]]] = [
    # November (with the fixture's v6 and v9 files: full record ids, no seconds columns)
    (datetime(2026, 11, 28, 3), [("synthetic-nov", 0, 1 / 3, [1e300, -0.0, 2.5])]),
    # December: DOUBLE at two decimals and at six, a value too large for a BIGINT at six
    # decimals, and -0.0 (a DOUBLE file)
    (datetime(2026, 12, 3, 3), [("synthetic-dec-a", 0, 999999999999.99, [10.25, 11.5])]),
    (datetime(2026, 12, 10, 3), [("synthetic-dec-b", 1, 0.123456, [0.000001, 7.0])]),
    (datetime(2026, 12, 20, 3), [("synthetic-span", 0, -0.0, [1 / 7])]),
    # January: decimals only (the month's union is a DECIMAL, the whole history's DOUBLE);
    # more rows of a run that began in December
    (datetime(2027, 1, 5, 3), [("synthetic-span", 1, 1234.56, [12.5, 13.25])]),
    (datetime(2027, 1, 20, 3), [("synthetic-jan", 2, 1234.5678, [0.0001, 99.99])]),
    # February: the newest month, read as it is
    (datetime(2027, 2, 1, 3), [("synthetic-feb", 0, 42.0, [42.0]), ("synthetic-span", 2, 1.5, [])]),
    (datetime(2027, 2, 2, 3), [("synthetic-feb-2", 0, 43.5, [43.5])]),
]


pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered")  # CV of 1e300


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    db = tmp_path / "repo" / "data" / "results.duckdb"
    nightfiles.copy_db(FIXTURE, db)
    with store.open_db(db, write=True) as st:
        assert st.migrated == list(range(10, migrations.CURRENT_VERSION + 1))
    for when, recs in NIGHTS:
        monkeypatch.setattr(nightfiles, "_utc_now", lambda when=when: when)
        records = [awkward(*r) for r in recs]
        for rec in records:
            if rec["run_id"] == "synthetic-span" and when.month != 12:
                rec["runner_class"] = "synthetic-later"  # the view keeps the first file's
        with store.open_db(db, write=True) as st:
            st.ingest(records)
    shutil.rmtree(readcache.cache_dir(db), ignore_errors=True)
    return db


def read(db: Path) -> tuple[dict[str, object], str]:
    """The fingerprint through a read-only store, and the SQL of its TEMP views."""
    with store.open_db(db, write=False) as st:
        views = st.con.execute(
            "SELECT string_agg(sql, ' ') FROM duckdb_views() WHERE temporary"
        ).fetchone()[0]
        return fingerprint(st.con), views


def cache_files(db: Path) -> dict[str, Path]:
    directory = readcache.cache_dir(db)
    return {p.name: p for p in sorted(directory.glob("*.parquet"))} if directory.is_dir() else {}


def without_cache(db: Path) -> tuple[dict[str, object], str]:
    """The views over the night files only: the cache's directory cannot be made (a file
    is in its place), as in a read-only checkout."""
    blocker = readcache.cache_dir(db)
    aside = blocker.with_name("cache-aside")
    if blocker.exists():
        blocker.rename(aside)
    blocker.write_text("not a directory\n")
    try:
        return read(db)
    finally:
        blocker.unlink()
        if aside.exists():
            aside.rename(blocker)


def test_files_group_by_month_but_the_newest() -> None:
    files = [
        readcache.Listed(p, "0" * 64, 11)
        for p in (
            "2026/20261125T031500000000Z-a.results.parquet",
            "2026/20261126T031500000000Z-b.results.parquet",
            "2026/20261203T031500000000Z-c.results.parquet",  # alone in its month
            "2027/20270101T031500000000Z-d.results.parquet",
            "2027/20270102T031500000000Z-e.results.parquet",
            "odd-name.results.parquet",  # no month: read as it is
        )
    ]
    got = [
        (month, [f.path.split("/")[-1][:8] for f in group])
        for month, group in readcache.groups(files)
    ]
    assert got == [
        ("202611", ["20261125", "20261126"]),
        (None, ["20261203"]),
        (None, ["20270101"]),
        (None, ["20270102"]),
        (None, ["odd-name"]),
    ]


def test_the_cache_gives_every_row_of_every_view_as_the_night_files_do(history: Path) -> None:
    want, plain_sql = without_cache(history)
    assert ".results-cache" not in plain_sql
    assert not cache_files(history)
    got, cached_sql = read(history)
    assert got == want
    names = cache_files(history)
    months = sorted({name.split("-")[0] for name in names})
    assert months == ["202611", "202612", "202701"]  # February is the newest: not cached
    for month in months:
        tables = {name.split(".")[-2] for name in names if name.startswith(month)}
        assert tables == set(FILE_TABLES) if month == "202612" else tables >= {"results", "runs"}
    assert all(str(p) in cached_sql for p in names.values())
    with store.open_db(history, write=False) as st:  # the runs view keeps December's class
        span = st.con.execute(
            "SELECT runner_class, hw_key FROM runs WHERE run_id = 'synthetic-span'"
        ).fetchone()
        stored = st.con.execute(
            "SELECT string_agg(sql, ' ') FROM duckdb_views() WHERE NOT temporary"
        ).fetchone()[0]
        # the values themselves, as ingested: the view decodes the cache's columns exactly
        tps = dict(
            st.con.execute(
                "SELECT run_id, list(tps ORDER BY started_at) FROM results GROUP BY run_id"
            ).fetchall()
        )
        series = st.con.execute(
            "SELECT tps_series FROM results WHERE run_id = 'synthetic-nov'"
        ).fetchone()[0]
    assert span == ("synthetic", hashlib.sha256(b"synthetic-span:0").hexdigest()[:12])
    assert ".results-cache" not in stored  # plain duckdb reads the night files
    assert repr(tps["synthetic-nov"]) == repr([1 / 3])
    assert repr(tps["synthetic-dec-a"]) == repr([999999999999.99])
    assert repr(tps["synthetic-span"]) == repr([-0.0, 1234.56, 1.5])
    assert repr(tps["synthetic-jan"]) == repr([1234.5678])
    assert series is None  # issue 39: the trace stays in the run records, not the history


def test_a_month_is_cached_with_the_same_bytes_by_any_writer(history: Path) -> None:
    read(history)
    first = {name: sha256_file(p) for name, p in cache_files(history).items()}
    shutil.rmtree(readcache.cache_dir(history))
    read(history)
    assert {name: sha256_file(p) for name, p in cache_files(history).items()} == first


@pytest.mark.parametrize("damage", ["one byte changed", "truncated", "sidecar removed"])
def test_a_damaged_cache_file_is_rebuilt_never_read(history: Path, damage: str) -> None:
    want, _ = without_cache(history)
    read(history)
    victim = next(p for n, p in cache_files(history).items() if n.endswith(".results.parquet"))
    sidecar = victim.with_name(victim.name + readcache.SIDECAR)
    good = victim.read_bytes()
    if damage == "one byte changed":
        data = bytearray(good)
        data[len(data) // 2] ^= 0x01
        victim.write_bytes(bytes(data))
    elif damage == "truncated":
        victim.write_bytes(good[: len(good) // 2])
    else:
        sidecar.unlink()
    got, _ = read(history)
    assert got == want
    assert victim.read_bytes() == good
    assert sidecar.read_text().strip() == sha256_file(victim)


def test_writers_delete_the_cache_files_no_month_needs(history: Path) -> None:
    read(history)
    directory = readcache.cache_dir(history)
    stale = directory / "202610-000000000000000000000000.results.parquet"
    stale.write_bytes(b"an old month's cache")
    stale.with_name(stale.name + readcache.SIDECAR).write_text("0" * 64 + "\n")
    leftover = directory / ".202611-x.results.parquet.writing-1"
    leftover.write_bytes(b"")
    kept = set(cache_files(history))
    read(history)  # a reader deletes nothing
    assert stale.exists() and leftover.exists()
    with store.open_db(history, write=True):
        pass
    assert set(cache_files(history)) == kept - {stale.name}
    assert sorted(p.name for p in directory.iterdir() if not p.name.endswith(".parquet")) == sorted(
        [*(name + readcache.SIDECAR for name in kept - {stale.name}), readcache.MEMO]
    )


def test_a_night_file_changed_since_the_last_open_is_read_again_and_refused(
    history: Path,
) -> None:
    """The sha256s remembered between opens (readcache.MEMO) spare reading unchanged
    files, not checking changed ones: a byte flipped in place, with the file's mtime put
    back, still changes its ctime, and the next open names the file."""
    read(history)
    memo = readcache.cache_dir(history) / readcache.MEMO
    assert memo.is_file() and len(json.loads(memo.read_text())) > 0
    victim = sorted(nightfiles.files_dir(history).rglob("*.results.parquet"))[-1]
    before = victim.stat()
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    time.sleep(0.01)
    victim.write_bytes(bytes(data))
    os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(DatabaseError, match=victim.name):
        read(history)


def test_ingest_and_check_with_the_cache(history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A night in a new month closes February (two files: cached from then on); ingest,
    its idempotency and `db check` see every row."""
    read(history)
    monkeypatch.setattr(nightfiles, "_utc_now", lambda: datetime(2027, 3, 1, 3))
    with store.open_db(history, write=True) as st:
        again = st.ingest([awkward("synthetic-feb", 0, 42.0, [42.0])])
        added = st.ingest([awkward("synthetic-mar", 0, 7.25, [7.25])])
        assert (again.added, added.added) == (0, 1)
        assert st.check() == []
        n = st.con.execute("SELECT count(*) FROM results").fetchone()[0]
    assert any(name.startswith("202702") for name in cache_files(history))
    got, _ = read(history)
    want, _ = without_cache(history)
    assert got == want
    assert len(got["results"]) == n
