"""Re-measured beats stored: a paired re-measurement of an alert's own cell and pair (the
rounds of `compare --until-conclusive`, ingested, and their outcome stored by
`conclude.store_outcome`) confirms the alert, closes it as not reproduced, or leaves it
open; every place that lists alerts shows both results. Real DuckDB file, SYNTHETIC
test-fixture records (never real measurements); no server runs."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import numpy as np
from test_alerts import NEW, NIGHT0, OLD, ingest, releases, run_detect

from clirun import perftrack
from fixtures.records.synthetic import SYNTHETIC_START, make_record
from perftrack.analysis import alerts
from perftrack.experiments import conclude, explain
from perftrack.experiments import explanation as ex
from perftrack.experiments.looks import FIRST_LOOK_N, decide
from perftrack.publish import job_summary, prcheck
from perftrack.publish.site import regressions
from perftrack.store import remeasures, store


def remeasure(db: Path, ratio: float, rounds: int, tag: str, hw_key: str = "0123456789ab") -> str:
    """Interleaved synthetic rounds of OLD and NEW (NEW at `ratio` of OLD, 1% noise), each
    one run ingested, then the sequence's outcome stored as conclude.run_rounds stores it."""
    rng = np.random.default_rng(rounds * 7 + len(tag))
    req = conclude.Request(a=OLD, b=NEW, budget_s=600.0, threads=8)
    seq = conclude.Sequence(request=req, looks_planned=1)
    a: list[float] = []
    b: list[float] = []
    for k in range(rounds):
        run_id = f"synthetic-round-{tag}-{k}"
        at = SYNTHETIC_START + timedelta(days=30, minutes=10 * k)
        a.append(1000 * (1 + rng.normal(0, 0.01)))
        b.append(1000 * ratio * (1 + rng.normal(0, 0.01)))
        recs = [
            make_record(run_id=run_id, cell=i, server_id=sid, version=sid.rsplit("-", 1)[1],
                        tps=v[-1], started_at=at + timedelta(seconds=i), hw_key=hw_key)
            for i, (sid, v) in enumerate(((OLD, a), (NEW, b)))
        ]  # fmt: skip
        ingest(db, recs)
        c = decide(a, b, cv=None, looks=conclude.SIDES, paired=True)
        look = 1 if k + 1 == FIRST_LOOK_N else None
        seq.rounds.append(
            conclude.Round(
                number=k + 1,
                n_a=len(a),
                n_b=len(b),
                comparison=c,
                look=look,
                round_s=1.0,
                machine_s=1.0,
                run_id=run_id,
            )
        )
    line = conclude.store_outcome(db, seq)
    assert line is not None and "remeasures" in line
    return seq.verdict


def found_alert(tmp_path: Path) -> tuple[Path, dict]:
    db = tmp_path / "r.duckdb"
    ingest(db, releases({OLD: 1000, NEW: 700}))  # a regression verdict: an alert
    _, (alert,) = run_detect(db, NIGHT0)
    assert alert["state"] == "new"
    return db, alert


def settled(db: Path, alert: dict) -> tuple[dict, dict]:
    _, rows = run_detect(db, NIGHT0 + timedelta(days=1))
    (row,) = [a for a in rows if a["alert_id"] == alert["alert_id"]]
    with store.open_db(db, write=False) as st:
        (both,) = alerts.evidence_of(st, [row], "tps")
    return row, both


def test_a_paired_regression_confirms_the_alert_and_both_results_are_shown(tmp_path: Path):
    db, alert = found_alert(tmp_path)
    assert remeasure(db, 0.7, FIRST_LOOK_N, "confirm") == "regression"
    row, both = settled(db, alert)
    assert row["state"] == "new" and row["first_seen_at"] == NIGHT0
    assert both["found"].startswith("regression, 0.69")
    assert both["paired"].startswith("confirmed: re-measured paired regression, 0.7")
    assert f"n={FIRST_LOOK_N}+{FIRST_LOOK_N}" in both["paired"]
    # a pull request's check that measures the pair again: reported before, and confirmed
    key = {c: row[c] for c in store.SERIES_COLS}
    with store.open_db(db, write=False) as st:
        state, reported, paired = prcheck._alert_state(st, [], key, prcheck.Pair(NEW, OLD))
    assert (state, reported, paired) == ("new", str(NIGHT0)[:10], both["paired"])


def test_a_paired_unchanged_closes_the_alert_as_not_reproduced(tmp_path: Path, configs: Path):
    db, alert = found_alert(tmp_path)
    assert remeasure(db, 1.0, FIRST_LOOK_N, "gone") == "unchanged"
    row, both = settled(db, alert)
    assert row["state"] == "not_reproduced"
    assert row["state"] not in alerts.OPEN_STATES
    assert both["paired"].startswith("not reproduced: closed: re-measured paired unchanged, ")
    # detect's own verdict, beside it (the rounds now count in its series too)
    assert both["found"].endswith("n=10+10 (detect's verdict)")
    # the CLI: gone from the open list, listed with both results under its state
    res = perftrack("alerts", "--db", str(db), "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["alerts"] == []
    res = perftrack("alerts", "--db", str(db), "--state", "not_reproduced", "--json")
    (shown,) = json.loads(res.stdout)["alerts"]
    assert shown["alert_id"] == alert["alert_id"]
    assert (shown["found"], shown["paired"]) == (both["found"], both["paired"])
    res = perftrack("alerts", "--db", str(db), "--state", "all")
    assert "not_reproduced" in res.stdout and "re-measured paired unchanged" in res.stdout
    # the site's Regressions page: not open, listed as not reproduced, both results
    with store.open_db(db, write=False) as st:
        data = regressions.page_data(st)
    assert data["open"] == [] and data["closed"] == {"not_reproduced": 1}
    (r,) = data["not_reproduced"]
    assert (r["found"], r["paired"]) == (both["found"], both["paired"])
    # the nightly job summary's verdict row of the pair says what settled it
    note = job_summary._alert_note({**row, "paired": both["paired"]}, set())
    assert note == f"regression ({both['paired']})"


def test_an_inconclusive_paired_sequence_leaves_the_alert_open_and_says_so(tmp_path: Path):
    db, alert = found_alert(tmp_path)
    # two rounds: no look reached (the budget ended first), so no verdict settled
    assert remeasure(db, 1.0, 2, "short") == "inconclusive"
    row, both = settled(db, alert)
    assert row["state"] == "new"
    assert both["paired"].startswith("still open (the paired rounds did not settle it)")
    assert "n=2+2" in both["paired"]
    with store.open_db(db, write=False) as st:
        (r,) = regressions.page_data(st)["open"]
    assert r["paired"] == both["paired"]


def test_a_paired_measurement_on_other_hardware_is_shown_but_settles_nothing(tmp_path: Path):
    db, alert = found_alert(tmp_path)
    assert remeasure(db, 1.0, FIRST_LOOK_N, "elsewhere", hw_key="ba9876543210") == "unchanged"
    with store.open_db(db, write=False) as st:
        (stored,) = remeasures.newest(st, "tps").values()
    assert stored["hw_key"] == "ba9876543210" and stored["n_base"] == FIRST_LOOK_N
    row, both = settled(db, alert)
    assert row["state"] == "new"
    assert both["paired"].startswith("re-measured paired on other hardware (ba9876543210)")
    assert "does not settle" in both["paired"]


def test_explains_first_stage_gap_settles_the_alert_of_its_cell(tmp_path: Path):
    """explain's rounds are not ingested: its gap is keyed by its A/B records' series key
    (remeasures.key_of_record, the same key ingest stores), and stored by store_gap."""
    db, alert = found_alert(tmp_path)
    rec = make_record(run_id="synthetic-explain-1", server_id=OLD, version="8.0.35")
    probe = tmp_path / "probe.duckdb"
    ingest(probe, [rec])
    with store.open_db(probe, write=False) as st:
        assert remeasures.series_keys(st, [rec["run_id"]]) == [remeasures.key_of_record(rec)]
    rng = np.random.default_rng(3)
    a = [1000 * (1 + rng.normal(0, 0.01)) for _ in range(6)]
    b = [v * (1 + rng.normal(0, 0.01)) for v in a]
    e = ex.Explanation(a=OLD, b=NEW, cell={"metric": "tps"}, candidates=[], left=[])
    e.gap = decide(a, b, cv=None, looks=conclude.SIDES, paired=True)
    e.cell_key = remeasures.key_of_record(rec)
    assert e.gap is not None and e.gap.verdict == "unchanged"
    line = explain.store_gap(db, e)
    assert line is not None and "0123456789ab" in line
    row, both = settled(db, alert)
    assert row["state"] == "not_reproduced"
    assert both["paired"].startswith("not reproduced: closed: re-measured paired unchanged")
    assert "n=6+6" in both["paired"]
