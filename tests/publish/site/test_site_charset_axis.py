"""The site's charset page and `perftrack compare SERVER --axis charset --json` give the
same verdict for the same rows: both go through analysis/axis.py `compared` and
compare.versus (SYNTHETIC records: test fixtures, not measurements)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import perftrack
from fixtures.records.charset_pairs import SERVER, charset_records
from perftrack.publish.site import export
from perftrack.store import store

OTHER = "synthetic-mysql-8.4.0"


@pytest.fixture
def charset_db(tmp_path: Path) -> Path:
    """Two servers, one run: utf8mb4 8% slower on SERVER in every round (a regression),
    the same as latin1 on OTHER (within ±10%: unchanged)."""
    db = tmp_path / "r.duckdb"
    recs = charset_records() + charset_records(factor=1.0, start=100, server=OTHER, version="8.4.0")
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    return db


def test_the_charset_page_and_compare_axis_agree_row_by_row(charset_db: Path):
    with store.open_db(charset_db, write=False) as st:
        rows = export.export(st, []).charset
    assert {(r["server"], r["verdict"]) for r in rows} == {
        (SERVER, "regression"),
        (OTHER, "unchanged"),
    }
    for row in rows:
        res = perftrack(
            "compare", row["server"], "--db", str(charset_db), "--json", "--run", row["run_id"],
            "--axis", "charset", "--values", row["baseline"], row["collation"],
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
        (g,) = json.loads(res.stdout)["groups"]
        cli = g["rows"][1]
        assert cli["verdict"] == row["verdict"] and cli["paired"] is row["paired"] is True
        for k in ("ratio", "ci_low", "ci_high", "p_value", "threshold"):
            assert cli[k] == pytest.approx(row[k], rel=1e-12), k
