"""`perftrack compare SERVER --axis AXIS --values A B` over the DB, on SYNTHETIC records
(test fixtures, not measurements): pairing by every other axis, paired rounds, the one
verdict function, and the one-line refusals of mismatched data."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from clirun import assert_one_line_error, perftrack
from fixtures.records.charset_pairs import SERVER, charset_records
from perftrack.analysis import axis, compare, detect, stats
from perftrack.store import store


def ingest(db: Path, recs: list[dict]) -> Path:
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    return db


def compare_json(db: Path, *args: str) -> list[dict]:
    res = perftrack("compare", SERVER, "--db", str(db), "--json", *args)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "perftrack.compare.v1"
    return doc["groups"]


def test_a_charset_cost_is_paired_by_round_and_called_a_regression(tmp_path: Path):
    db = ingest(tmp_path / "r.duckdb", charset_records())
    (g,) = compare_json(db, "--axis", "charset", "--values", "latin1", "utf8mb4")
    assert g["axis"] == "charset" and "collation" not in g["group"]
    a, b = g["rows"]
    assert (a["value"], b["value"]) == ("latin1", "utf8mb4")
    assert b["collation"] == "utf8mb4_0900_ai_ci" and b["previous"] == "latin1"
    assert b["paired"] is True and b["verdict"] == "regression"
    assert b["ci_low"] < 0.92 < b["ci_high"] < 1
    # the same through the library, and a collation names its side as well as its charset
    with store.open_db(db, write=False) as st:
        res = axis.tables(st, SERVER, "collation", ("latin1_swedish_ci", "utf8mb4"))
    (t,) = res.tables
    assert t.rows[1].vs_previous is not None
    assert math.isclose(t.rows[1].vs_previous.ratio, b["ratio"])


def test_the_human_table_names_the_axis_values(tmp_path: Path):
    db = ingest(tmp_path / "r.duckdb", charset_records())
    res = perftrack(
        "compare", SERVER, "--db", str(db), "--axis", "charset", "--values", "latin1", "utf8mb4"
    )
    assert res.returncode == 0, res.stderr
    assert "charset" in res.stdout and "utf8mb4 (utf8mb4_0900_ai_ci)" in res.stdout
    assert "regression" in res.stdout


@pytest.mark.parametrize(
    ("recs", "args", "needles"),
    [
        (charset_records(), ["--axis", "colour", "--values", "a", "b"], ["unknown axis 'colour'"]),
        (
            charset_records(),
            ["--axis", "charset", "--values", "latin1", "ucs2"],
            ["no result of", "'ucs2'", "latin1_swedish_ci, utf8mb4_0900_ai_ci"],
        ),
        (
            charset_records(utf8_profile="tuned"),
            ["--axis", "charset", "--values", "latin1", "utf8mb4"],
            ["differ in more than charset", "profile (default vs tuned)"],
        ),
        (
            charset_records(drop=(3,)),
            ["--axis", "charset", "--values", "latin1", "utf8mb4"],
            ["round 3 of run synthetic-axis", "no 'utf8mb4' value"],
        ),
        (
            charset_records(),
            ["--axis", "charset", "--values", "latin1", "utf8mb4", "--metric", "ipc"],
            ["no values of metric 'ipc'"],
        ),
        (charset_records(), ["--values", "latin1", "utf8mb4"], ["--values goes with --axis"]),
        (charset_records(), ["--axis", "charset"], ["needs --values"]),
        (
            charset_records(),
            ["--axis", "charset", "--values", "latin1", "latin1"],
            ["two different charset values"],
        ),
    ],
    ids=["axis", "value", "differ", "round", "metric", "no-axis", "no-values", "same"],
)
def test_mismatched_axis_comparisons_are_refused_in_one_line(
    tmp_path: Path, recs: list[dict], args: list[str], needles: list[str]
):
    db = ingest(tmp_path / "r.duckdb", recs)
    res = perftrack("compare", SERVER, "--db", str(db), *args)
    assert_one_line_error(res, 2, *needles)
    assert res.stdout == ""


def test_an_axis_comparison_takes_one_server(tmp_path: Path):
    db = ingest(tmp_path / "r.duckdb", charset_records())
    res = perftrack(
        "compare", SERVER, "other", "--db", str(db), "--axis", "charset", "--values", "a", "b"
    )
    assert_one_line_error(res, 2, "on one server, not 2")


def test_detect_stores_the_paired_aa_spread_and_paired_verdicts_use_it(tmp_path: Path):
    """SYNTHETIC: consecutive repeats of one server are A/A pairs; their RMS log-ratio is
    stored in `noise` and becomes the band of a paired comparison of that class/workload."""
    db = ingest(tmp_path / "r.duckdb", charset_records())
    with store.open_db(db, write=True) as st:
        detect.detect_and_store(st, [], None)
        ((spread, pairs),) = st.con.execute(
            "SELECT paired_spread, pairs FROM noise WHERE metric = 'tps'"
        ).fetchall()
        stored = st.noise_spread()
    # 8 repeats of each collation: pairs (1,2), (3,4), … -> 4 per collation
    values = {c: [] for c in ("latin1", "utf8")}
    for r in charset_records():
        values["latin1" if r["cell"]["charset"] == "latin1" else "utf8"].append(r["result"]["tps"])
    logs = [d for v in values.values() for d in stats.aa_log_ratios(v)]
    assert pairs == 8 and len(logs) == 8
    assert spread is None  # fewer than stats.MIN_AA_PAIRS: the pairs' own spread is used
    assert stored == {}
    # with enough A/A pairs stored, versus takes its band from them (normal z, n rounds)
    assert stats.aa_spread(logs + logs) == pytest.approx(math.sqrt(sum(d * d for d in logs) / 8))
    a = compare.Row(
        server_id=SERVER,
        product="mysql",
        version="8.0.36",
        version_string=None,
        values=values["latin1"],
        latency=[],
    )
    b = compare.Row(
        server_id=SERVER,
        product="mysql",
        version="8.0.36",
        version_string=None,
        values=values["utf8"],
        latency=[],
    )
    a.rounds = b.rounds = [("synthetic-axis", i) for i in range(1, 9)]
    c = compare.versus(a, b, None, True, aa_spread=0.05)
    assert c is not None and c.paired
    assert c.threshold == pytest.approx(stats.paired_threshold(0.05, 8), rel=1e-3)  # z 2.326
    own = compare.versus(a, b, None, True)
    assert own is not None and own.threshold != c.threshold
