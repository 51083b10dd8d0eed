"""`perftrack runner salvage` / `forget`: run directories kept outside the workspace reach
an upload, tonight's apart from earlier nights'; a live run is never copied or deleted; a
kept run is deleted only once every record of it was uploaded. And `perftrack publish
--earlier`: earlier nights' salvaged records are ingested but not counted as tonight's.

The records are the synthetic fixtures (tests/fixtures/records/synthetic.py), written to
tmp paths only; the processes holding a run are real.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.records.synthetic import make_record
from perftrack import cli
from perftrack.core import dirlock, record
from perftrack.host import salvage


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "state"
    monkeypatch.setenv("PERFTRACK_STATE_DIR", str(d))
    return d


def kept_run(state: Path, night: str, shard: int, run_id: str, cells: int, status: str) -> Path:
    run = state / "nights" / night / f"shard-{shard}" / run_id
    (run / "records").mkdir(parents=True)
    (run / "plan.json").write_text(json.dumps({"run_id": run_id, "cells": []}))
    (run / "run.json").write_text(json.dumps({"run_id": run_id, "status": status}))
    (run / "logs").mkdir()
    (run / "logs" / "c.txt").write_text("log")
    for c in range(cells):
        record.write(make_record(run_id=run_id, cell=c), run / "records")
    return run


def names(d: Path) -> list[str]:
    return sorted(p.name for p in record.find([d])) if d.exists() else []


def test_salvage_splits_tonight_from_earlier_nights(tmp_path, state):
    mine = kept_run(state, "200", 0, "synthetic-run-tonight", 2, "running")
    other_shard = kept_run(state, "200", 1, "synthetic-run-killed-shard", 1, "running")
    old = kept_run(state, "100", 0, "synthetic-run-old", 3, "interrupted")
    into, earlier = tmp_path / "runs", tmp_path / "salvaged"
    lines: list[str] = []
    assert salvage.salvage("200", into, earlier, say=lines.append) == (3, 3)
    assert names(into / mine.name) == names(mine)
    assert names(into / other_shard.name) == names(other_shard)
    assert (into / mine.name / "logs" / "c.txt").is_file()  # tonight's logs too
    assert names(earlier / "100" / old.name) == names(old)
    assert not (earlier / "100" / old.name / "logs").exists()
    assert any("salvaged run synthetic-run-old of night 100 (shard-0, interrupted)" in ln
               for ln in lines)  # fmt: skip
    assert mine.is_dir() and old.is_dir()  # copies: the state is kept until `forget`


def test_a_live_run_is_neither_copied_nor_forgotten(tmp_path, state):
    live = kept_run(state, "100", 0, "synthetic-run-live", 1, "running")
    code = (
        "import sys, time; from pathlib import Path; from perftrack.core import dirlock; "
        "dirlock.hold(Path(sys.argv[1])); print('held', flush=True); time.sleep(300)"
    )
    owner = subprocess.Popen(
        [sys.executable, "-c", code, str(live)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert owner.stdout is not None and owner.stdout.readline().strip() == b"held"
        into, earlier = tmp_path / "runs", tmp_path / "salvaged"
        assert salvage.salvage("200", into, earlier) == (0, 0)
        assert not earlier.exists()
        (earlier / "100" / live.name).mkdir(parents=True)  # even if a copy were uploaded
        (earlier / "100" / live.name / "plan.json").write_text("{}")
        shutil.copytree(live / "records", earlier / "100" / live.name / "records")
        assert salvage.forget([earlier]) == 0
        assert live.is_dir()
    finally:
        owner.kill()
        owner.wait()
    assert dirlock.state(live) == dirlock.FREE
    assert salvage.forget([earlier]) == 1
    assert not live.exists()


def test_forget_needs_every_record_uploaded(tmp_path, state):
    run = kept_run(state, "100", 0, "synthetic-run-partial", 3, "interrupted")
    up = tmp_path / "salvaged"
    salvage.salvage("200", tmp_path / "runs", up)
    first = sorted((up / "100" / run.name / "records").iterdir())[0]
    first.unlink()  # one record missing from the upload
    assert salvage.forget([up]) == 0 and run.is_dir()
    salvage.salvage("200", tmp_path / "runs", up)
    assert salvage.forget([up]) == 1 and not run.exists()
    assert not (state / "nights" / "100").exists()  # empty night directories go too


def test_a_bad_night_id_is_a_one_line_error(tmp_path, state, capsys):
    assert cli.main(["runner", "salvage", "--night-id", "../x", "--into", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --night-id") and "\n" not in err
    assert cli.main(["run", "--night-id", "1", "--server", "x"]) == 2


def test_nothing_kept_is_said_and_exits_zero(tmp_path, state, capsys):
    assert cli.main(["runner", "salvage", "--night-id", "7", "--into", str(tmp_path)]) == 0
    assert "no kept run records" in capsys.readouterr().out
    assert cli.main(["runner", "forget", str(tmp_path)]) == 0
    assert "nothing to forget" in capsys.readouterr().out
