"""The monthly records archive (issue 39) against a replayed GitHub API on 127.0.0.1:
upload (the month's asset replaced as nights arrive), verify, fetch, and the bad input."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fixtures.records.synthetic import make_record
from perftrack import cli
from perftrack.core import record
from perftrack.publish import archive
from replay import Replay

NOV = datetime(2026, 11, 3, 2, 0, tzinfo=UTC)


def night(tmp: Path, name: str, day: datetime, cells: int = 2) -> Path:
    d = tmp / name
    d.mkdir()
    for c in range(cells):
        record.write(make_record(run_id=f"synthetic-{name}", cell=c, started_at=day), d)
    return d


@pytest.fixture
def replayed(monkeypatch: pytest.MonkeyPatch):
    with Replay() as r:
        monkeypatch.setenv("PERFTRACK_GITHUB_API_URL", r.url)
        monkeypatch.setenv("GITHUB_REPOSITORY", "synthetic/perftrack")
        monkeypatch.setenv("GITHUB_TOKEN", "ghs_test-token")
        yield r


def run(*args: str) -> int:
    return cli.main(list(args))


def test_the_archive_round_trip_replayed(replayed: Replay, tmp_path: Path, capsys) -> None:
    manifest = tmp_path / "data" / "archive" / "manifest.json"
    m = str(manifest)
    assert run("archive", "upload", str(night(tmp_path, "n1", NOV)), "--manifest", m) == 0
    first = json.loads(manifest.read_text())["months"]
    assert [e["records"] for e in first] == [2] and first[0]["first_night"] == "2026-11-03"
    # the next night of the month: the asset is replaced (one asset, three nights' records)
    later = night(tmp_path, "n2", NOV + timedelta(days=1), cells=1)
    assert run("archive", "upload", str(later), "--manifest", m) == 0
    (e,) = json.loads(manifest.read_text())["months"]
    assert (e["month"], e["records"], e["last_night"]) == ("2026-11", 3, "2026-11-04")
    assert e["tag"] == "records-2026-11" and e["asset"] == "records-2026-11.tar.gz"
    rel = replayed.releases["records-2026-11"]
    assert len(rel["assets"]) == 1  # replaced, not added
    blob = replayed.assets[rel["assets"][0]][1]
    assert hashlib.sha256(blob).hexdigest() == e["sha256"] and len(blob) == e["bytes"]
    deletes = [q for q in replayed.requests if q.method == "DELETE"]
    assert len(deletes) == 1 and all(
        q.headers["Authorization"].startswith("Bearer ") for q in deletes
    )
    # the same records again: nothing uploaded, the asset is reproducible
    assert run("archive", "upload", str(later), "--manifest", m) == 0
    assert "nothing new" in capsys.readouterr().out
    assert archive.pack(archive.unpack(blob, "x")) == blob
    # verify, then fetch the month back: the records as written, with their intervals
    assert run("archive", "verify", "--month", "2026-11", "--manifest", m) == 0
    # GitHub answers an asset download with a redirect to a storage host: followed,
    # without the token
    with Replay() as storage:
        storage.add("GET", "/asset", blob)
        replayed.add(
            "GET", f"/repos/synthetic/perftrack/releases/assets/{rel['assets'][0]}", {},
            302, Location=f"{storage.url}/asset",  # another host:port
        )  # fmt: skip
        assert run("archive", "verify", "--month", "2026-11", "--manifest", m) == 0
        (got,) = storage.requests
    assert "Authorization" not in got.headers
    del replayed.routes[("GET", f"/repos/synthetic/perftrack/releases/assets/{rel['assets'][0]}")]
    out = tmp_path / "back"
    assert run("archive", "fetch", "--month", "2026-11", "--out", str(out), "--manifest", m) == 0
    back = sorted(record.read(p)["record_id"] for p in out.iterdir())
    assert len(back) == 3 and all(
        len(record.read(p)["result"]["intervals"]) == 10 for p in out.iterdir()
    )
    # bad input: a month fetched twice is refused, nothing overwritten
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    assert run("archive", "fetch", "--month", "2026-11", "--out", str(out), "--manifest", m) == 2
    err = capsys.readouterr().err.strip()
    assert "already exists" in err and "\n" not in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # an unknown month
    assert run("archive", "verify", "--month", "2026-10", "--manifest", m) == 2
    assert "2026-10 is not in" in capsys.readouterr().err
    # a damaged asset (sha256 differs): named, nothing written
    replayed.assets[rel["assets"][0]] = (
        e["asset"],
        blob[:20] + bytes([blob[20] ^ 0xFF]) + blob[21:],
    )
    other = tmp_path / "other"
    assert run("archive", "fetch", "--month", "2026-11", "--out", str(other), "--manifest", m) == 2
    err = capsys.readouterr().err
    assert "records-2026-11.tar.gz has sha256" in err and not other.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".other")]
    # a month's whole records uploaded afresh put the damaged asset right
    nights = [str(tmp_path / "n1"), str(later)]
    assert run("archive", "upload", "--fresh", *nights, "--manifest", m) == 0
    assert run("archive", "verify", "--month", "2026-11", "--manifest", m) == 0
    assert json.loads(manifest.read_text())["months"][0]["sha256"] == e["sha256"]
    # a missing asset
    rel["assets"].clear()
    assert run("archive", "verify", "--month", "2026-11", "--manifest", m) == 2
    assert "asset records-2026-11.tar.gz is missing from release records-2026-11" in (
        capsys.readouterr().err
    )
