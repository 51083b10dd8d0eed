"""`perftrack publish --earlier DIR`: records of earlier nights, salvaged from jobs killed
with their runner (host/salvage.py), are ingested with tonight's but are not tonight's:
the shard table counts tonight's runs only, so an earlier night's record of the same cell
never makes a missing cell of tonight look measured.

Real git and DuckDB; the records are the synthetic fixtures, written to tmp paths only.
"""

from __future__ import annotations

import json
import os
import subprocess

from fixtures.records.synthetic import _cell_id, make_record
from perftrack import cli
from perftrack.core import record
from perftrack.store.files import nightfiles

IDENT = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def test_earlier_nights_are_ingested_but_not_counted_as_tonights(tmp_path, monkeypatch, capsys):
    for k, v in IDENT.items():
        monkeypatch.setenv(k, v)
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "s"], check=True)
    tonight, earlier = tmp_path / "incoming", tmp_path / "salvaged"
    record.write(make_record(run_id="synthetic-run-tonight", cell=0), tonight / "r" / "records")
    # an earlier night measured cells 0 and 1; tonight only cell 0 arrived
    for c in (0, 1):
        rec = make_record(run_id="synthetic-run-earlier", cell=c)
        record.write(rec, earlier / "100" / "synthetic-run-earlier" / "records")
    plan = tmp_path / "night-plan.json"
    cells = [{"cell_id": _cell_id(c)} for c in (0, 1)]
    plan.write_text(json.dumps({"shards": [{"shard": 0, "runner_class": "x", "cells": cells}]}))
    db, summary = repo / "data" / "results.duckdb", tmp_path / "summary.md"
    monkeypatch.chdir(repo)
    args = ["publish", str(tonight), "--earlier", str(earlier), "--plan", str(plan)]
    rc = cli.main([*args, "--no-push", "--db", str(db), "--summary", str(summary)])
    assert rc == 0, capsys.readouterr().err
    con = nightfiles.connect(db)
    try:
        runs = con.execute("SELECT DISTINCT run_id FROM results ORDER BY 1").fetchall()
    finally:
        con.close()
    assert runs == [("synthetic-run-earlier",), ("synthetic-run-tonight",)]
    text = summary.read_text()
    assert "| 2 | 1 | 1 cell(s) without a result |" in text  # not 2 of 2
    assert "1 of the runs are earlier nights' salvaged from killed jobs" in text
    assert os.path.isfile(db)
