"""`perftrack compare A B --until-conclusive`: sequential interleaved rounds on real servers."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from clirun import assert_one_line_error, perftrack
from fixtures.records.charset_pairs import charset_records
from perftrack.analysis import detect, stats
from perftrack.core import hardware
from perftrack.experiments import conclude, looks
from perftrack.servers import catalog
from perftrack.store import remeasures, store
from standins import WORKLOAD, write_configs


def test_look_points_grow_geometrically_from_four():
    assert conclude.look_points(50) == [4, 6, 9, 14, 21, 32, 48]
    assert conclude.look_points(3) == []


def test_per_look_z_splits_one_percent_over_the_looks():
    assert math.isclose(conclude.look_z(1), stats.Z_FALSE_ALARM, abs_tol=1e-3)
    assert conclude.look_z(8) > conclude.look_z(4) > conclude.look_z(1)
    assert math.isclose(conclude.look_z(10), 3.090, abs_tol=1e-3)  # 0.1% one-sided


def test_more_looks_widen_the_threshold():
    a = [100.0, 104, 97, 101, 99, 103]
    b = [x * 0.9 for x in a]
    one = conclude.decide(a, b, cv=0.05, looks=1)
    many = conclude.decide(a, b, cv=0.05, looks=20)
    assert one is not None and many is not None
    assert many.threshold > one.threshold


def test_a_budget_too_small_for_the_first_look_is_refused(tmp_path: Path):
    cfg = write_configs(tmp_path / "configs", first_bad=3)
    cat = catalog.read_catalog(cfg / "versions.yaml")
    req = conclude.Request(a="sa-1", b="sa-2", budget_s=20, duration_s=5)
    with pytest.raises(Exception, match="cannot fit the 4 rounds"):
        conclude.validate(req, cat)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["sa-1", "sa-2", "--until-conclusive", "--budget", "0"], "--budget must be a positive"),
        (["sa-1", "sa-2", "--until-conclusive", "--budget", "-2"], "--budget must be a positive"),
        (["sa-1", "sa-2", "--until-conclusive", "--budget", "nan"], "--budget must be a positive"),
        (["sa-1", "nope", "--until-conclusive", "--budget", "5"], "unknown server 'nope'"),
        (["sa-1", "--until-conclusive", "--budget", "5"], "exactly two servers"),
        (["sa-1", "sa-1", "--until-conclusive", "--budget", "5"], "two different servers"),
        (["sa-1", "sa-2", "--budget", "5"], "--budget goes with --until-conclusive"),
        (["sa-1", "sa-2", "--until-conclusive"], "needs --budget"),
        (["sa-1", "sa-2", "--until-conclusive", "--budget", "5", "--run", "x"], "no --run"),
        (
            ["sa-1", "sa-2", "--until-conclusive", "--budget", "5", "--min-effect", "150"],
            "--min-effect must be between",
        ),
        (["sa-1", "sa-2", "--until-conclusive", "--budget", "5", "--metric", "x"], "metric"),
        (
            ["sa-1", "sa-2", "--until-conclusive", "--budget", "5", "--server-lifetime", "rn"],
            "--server-lifetime must be group or run, not 'rn'",
        ),
        (["sa-1", "sa-2", "--server-lifetime", "run"], "--server-lifetime goes with"),
        (
            ["sa-1", "sa-2", "--until-conclusive", "--budget", "5", "--handshake", "klingon"],
            "unknown handshake 'klingon'",
        ),
    ],
)
def test_bad_until_conclusive_input_is_one_line(tmp_path: Path, args: list[str], needle: str):
    cfg = write_configs(tmp_path / "configs", first_bad=3)
    db = tmp_path / "r.duckdb"
    res = perftrack(
        "compare", *args, "--db", str(db), "--out", str(tmp_path / "runs"),
        env={"PERFTRACK_CONFIG_DIR": str(cfg)},
    )  # fmt: skip
    assert_one_line_error(res, 2, needle)
    assert not db.exists() and not (tmp_path / "runs").exists()  # nothing half-written


def test_until_conclusive_calls_a_real_slowdown_a_regression(tmp_path: Path, workroot: Path):
    """sa-1 (no fsync per commit) against sa-3 (two fsyncs per commit): >10x slower."""
    cfg = write_configs(tmp_path / "configs", first_bad=3)
    cat = catalog.read_catalog(cfg / "versions.yaml")
    req = conclude.Request(
        a="sa-1", b="sa-3", budget_s=240, workload=WORKLOAD, threads=2, duration_s=2, warmup_s=0
    )
    lines: list[str] = []
    db = tmp_path / "r.duckdb"
    o = conclude.run_rounds(req, cat, cfg, db, tmp_path / "runs", lines.append, workroot=workroot)
    assert o.verdict == "regression", "\n".join(lines)
    last = o.rounds[-1]
    assert last.look is not None and last.comparison is not None
    assert last.comparison.ci_high < 1 and last.comparison.ratio < 0.5  # the right sign
    assert len(o.rounds) >= conclude.FIRST_LOOK_N  # no decision before the first look
    assert sum(1 for ln in lines if ln.startswith("round ")) == len(o.rounds)
    assert lines[-1].startswith("verdict: regression")
    # every round is in the DB, one value per server per round, alternating order
    a, b = conclude.session_pairs(db, o.run_ids, req)
    assert len(a) == len(b) == len(o.rounds)
    assert last.comparison.paired and last.n_a == last.n_b == len(o.rounds)
    # the outcome is stored as a paired re-measurement of the cell the rounds measured
    assert lines[-2].startswith("stored as a paired re-measurement of sa-3 against sa-1")
    with store.open_db(db, write=False) as st:
        (again,) = remeasures.newest(st, "tps").values()
    assert (again["base_server"], again["new_server"], again["verdict"]) == ("sa-1", "sa-3",
            "regression")  # fmt: skip
    assert (again["workload"], again["threads"], again["hw_key"]) == (
        WORKLOAD, 2, hardware.fingerprint()["key"])  # fmt: skip
    assert (again["ratio"], again["n_base"]) == (last.comparison.ratio, len(o.rounds))
    assert again["run_ids"] == o.run_ids


def test_a_stored_aa_spread_keeps_a_tight_cluster_of_rounds_from_a_false_alarm():
    """Four A/A rounds whose ratios happen to agree (+4.4…+4.6%, as real write-only rounds
    did): their own spread is tiny and even Student's t calls them an improvement; with
    the class's stored paired A/A spread (6.7%) the band is ±9.6% and they are not."""
    a = [1000.0, 1100.0, 950.0, 1020.0]
    b = [x * r for x, r in zip(a, (1.044, 1.046, 1.045, 1.046), strict=True)]
    own = looks.decide(a, b, cv=None, looks=5, paired=True)
    assert own is not None and own.verdict == "improvement"
    stored = looks.decide(a, b, cv=None, looks=5, paired=True, aa_spread=0.067)
    assert stored is not None and stored.verdict not in ("improvement", "regression")
    assert stored.threshold > 0.09
    # a real -20% still is a regression at the first look with the stored spread
    worse = looks.decide(a, [x * 0.8 for x in a], cv=None, looks=5, paired=True, aa_spread=0.067)
    assert worse is not None and worse.verdict == "regression"


def test_the_stored_paired_aa_spread_of_the_sessions_class_is_found(tmp_path: Path):
    """SYNTHETIC records: after `detect`, the noise row of the records' runner class,
    hardware and workload holds a paired A/A spread; the sequence reads it for its run."""
    recs = charset_records()
    db = tmp_path / "r.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
        detect.detect_and_store(st, [], None)
        st.con.execute("UPDATE noise SET paired_spread = 0.05")
    run_id, wl = recs[0]["run_id"], recs[0]["cell"]["workload"]
    req = conclude.Request(
        a="a", b="b", budget_s=600, workload=wl, runner_class=recs[0]["runner_class"]
    )
    assert conclude.stored_spread(db, run_id, req) == 0.05
    other = conclude.Request(a="a", b="b", budget_s=600, workload="oltp_read_only")
    assert conclude.stored_spread(db, run_id, other) is None  # another workload: none
    assert conclude.stored_spread(db, "no-such-run", req) is None


def test_a_cv_estimated_from_few_values_widens_the_band():
    """Student's t for the session's own CV, the normal quantile for a stored one."""
    a = [100.0, 108, 95, 103]
    b = [90.0, 97, 86, 93]
    own = looks._pooled_cv(a, b)
    estimated = conclude.decide(a, b, cv=None, looks=5)
    stored = conclude.decide(a, b, cv=own, looks=5)
    assert estimated is not None and stored is not None
    assert estimated.threshold > stored.threshold


def test_paired_looks_see_through_drift_that_moves_both_arms():
    """Rounds whose level slides 29k -> 23k (seen here) with B 6% slower in every round: the
    paired look calls it at the first look; unpaired, the drift is counted as noise."""
    level = [29_000.0, 27_500, 26_000, 24_500, 23_000, 23_500]
    a = [x * f for x, f in zip(level, [1.0, 1.01, 0.99, 1.0, 1.01, 0.995], strict=True)]
    b = [x * 0.94 * f for x, f in zip(level, [1.0, 0.99, 1.01, 1.005, 0.99, 1.0], strict=True)]
    paired = conclude.decide(a, b, cv=None, looks=5, paired=True)
    unpaired = conclude.decide(a, b, cv=None, looks=5)
    assert paired is not None and unpaired is not None
    assert paired.verdict == "regression" and paired.paired
    assert unpaired.verdict == "inconclusive"
    # an A/A pair of the same drift stays quiet, and settles as unchanged within ±10%
    aa = conclude.decide(a, [x * 1.001 for x in a], cv=None, looks=5, paired=True)
    assert aa is not None and aa.verdict == "unchanged"


def test_a_huge_cv_still_lets_a_big_slowdown_be_called():
    """On the log scale a band wider than 100% cannot swallow a 10x slowdown."""
    a = [8000.0, 4000, 6500, 9000, 5200, 7100]
    b = [600.0, 300, 450, 700, 350, 500]
    c = conclude.decide(a, b, cv=0.6, looks=6)
    assert c is not None and c.verdict == "regression"
