"""The PR check's verdicts and gate, on a tmp DB of SYNTHETIC records (labelled so by the
fixture: runner class `synthetic`): a clear 20% throughput drop must count as an
unacknowledged regression, and stop counting once configs/annotations.yaml acknowledges
the version pair. Real servers and the real workflow: tests/workflows/test_pr_check_act.py.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from fixtures.records.synthetic import SYNTHETIC_START, make_record
from perftrack.analysis import annotations
from perftrack.publish import prcheck
from perftrack.store import store

OLD, NEW = "synthetic-mysql-8.4.3", "synthetic-mysql-8.4.4"
RUN = "synthetic-run-pr"
REPEATS = 6


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "scratch.duckdb"
    recs = []
    for i in range(REPEATS):  # interleaved rounds: old, new, old, new, …
        for j, (sid, version, tps) in enumerate(((OLD, "8.4.3", 1000.0), (NEW, "8.4.4", 800.0))):
            n = 2 * i + j
            recs.append(
                make_record(
                    run_id=RUN,
                    cell=n,
                    server_id=sid,
                    version=version,
                    tps=tps * (1 + 0.005 * ((i % 3) - 1)),
                    instance=n,
                    started_at=SYNTHETIC_START + timedelta(minutes=n),
                )
            )
    with store.open_db(path, write=True) as st:
        st.ingest_prepared([store.prepare(r, "synthetic") for r in recs])
    return path


def test_clear_drop_is_an_unacknowledged_regression(db: Path) -> None:
    rep = prcheck.build_report(db, [RUN], [prcheck.Pair(NEW, OLD)], [])
    assert len(rep.lines) == 1
    line = rep.lines[0]
    assert (line.new, line.previous, line.verdict) == (NEW, OLD, "regression")
    assert line.ratio == pytest.approx(0.8, abs=0.01)
    assert len(rep.regressions) == 1
    text = prcheck.markdown(rep)
    assert "**Result: 1 unacknowledged regression(s)** — the check fails" in text
    assert f"| {NEW} | {OLD} | oltp_read_write | 8 | utf8mb4_0900_ai_ci |" in text
    assert prcheck.summary_json(rep)["regressions"] == 1


def test_acknowledged_regression_is_shown_but_does_not_fail(db: Path, tmp_path: Path) -> None:
    notes_file = tmp_path / "annotations.yaml"
    notes_file.write_text(
        "annotations:\n"
        f"  - match: {{servers: [{OLD}, {NEW}]}}\n"
        "    reason: known cost of the new default\n"
        "    date: 2026-11-23\n"
    )
    notes = annotations.read_annotations(notes_file)
    rep = prcheck.build_report(db, [RUN], [prcheck.Pair(NEW, OLD)], notes)
    assert rep.regressions == [] and len(rep.acknowledged) == 1
    text = prcheck.markdown(rep)
    assert "regression (acknowledged: known cost of the new default)" in text
    assert "**Result: no unacknowledged regression** (1 acknowledged)" in text


def test_server_without_predecessor_needs_no_db(tmp_path: Path) -> None:
    rep = prcheck.build_report(tmp_path / "absent.duckdb", [], [prcheck.Pair(NEW, None)], [])
    assert rep.lines == [] and "no earlier version" in rep.not_run[0]
    assert "no unacknowledged regression" in prcheck.markdown(rep)


def test_chart_is_a_png(db: Path, tmp_path: Path) -> None:
    rep = prcheck.build_report(db, [RUN], [prcheck.Pair(NEW, OLD)], [])
    out = tmp_path / "chart.png"
    prcheck.chart(rep, out)
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_pairs_file_is_validated(tmp_path: Path) -> None:
    bad = tmp_path / "pairs.json"
    bad.write_text('[{"new": "x; rm -rf /", "previous": null}]')
    with pytest.raises(Exception, match="each item must be"):
        prcheck.read_pairs(bad)
    good = tmp_path / "ok.json"
    good.write_text(prcheck.pairs_json([prcheck.Pair(NEW, OLD), prcheck.Pair("a-1.0", None)]))
    assert prcheck.read_pairs(good) == [prcheck.Pair(NEW, OLD), prcheck.Pair("a-1.0", None)]


def test_a_stored_explanation_of_the_pair_is_in_the_comment(db: Path) -> None:
    from perftrack.analysis import candidates
    from perftrack.experiments import explanation
    from perftrack.store import explanations

    cand = candidates.Candidate("sync_binlog", "sync_binlog", "0", "1")
    res = explanation.Explanation(
        a=OLD,
        b=NEW,
        cell={"workload": "oltp_read_write", "threads": 8, "metric": "tps"},
        candidates=[cand],
        left=[],
    )
    res.groups.append(
        explanation.Group(
            label="g1",
            members=(cand,),
            stage=1,
            state=explanation.MOVED,
            share=0.9,
            share_low=0.7,
            share_high=1.1,
        )
    )
    res.isolated.append("g1")
    explanations.save(db, explanation.to_json(res))
    text = prcheck.markdown(prcheck.build_report(db, [RUN], [prcheck.Pair(NEW, OLD)], []))
    assert (
        f"- explained (`perftrack explain`): {NEW} vs {OLD}, oltp_read_write × 8 thread(s): "
        "A's settings recover the gap (90% [70%, 110%]); isolated: sync_binlog=0 recovers 90%"
    ) in text


def test_a_regression_the_db_already_reported_is_not_reported_again(db: Path) -> None:
    """The Nyrkiö bug (old changes re-reported): once detect holds the pair's regression as
    an alert (a nightly, an earlier check), the comment shows it as reported, not new."""
    from datetime import datetime

    from perftrack.analysis import detect

    first = prcheck.build_report(db, [RUN], [prcheck.Pair(NEW, OLD)], [])
    assert [x.state for x in first.lines] == ["new"] and len(first.regressions) == 1
    assert "🔴 regression (new)" in prcheck.markdown(first)
    with store.open_db(db, write=True) as st:
        detect.detect_and_store(st, [], None, now=datetime(2026, 3, 1, 6, 0))
    again = prcheck.build_report(db, [RUN], [prcheck.Pair(NEW, OLD)], [])
    assert again.regressions == [] and len(again.reported_before) == 1
    text = prcheck.markdown(again)
    assert "regression (reported before, 2026-03-01; alert new)" in text
    assert "🔴" not in text
    assert "**Result: no unacknowledged regression** (1 reported before)." in text
    assert prcheck.summary_json(again)["regressions"] == 0


def test_a_false_positive_is_shown_as_such_and_does_not_fail(db: Path, tmp_path: Path) -> None:
    notes_file = tmp_path / "annotations.yaml"
    notes_file.write_text(
        "annotations:\n"
        f"  - match: {{servers: [{OLD}, {NEW}]}}\n"
        "    reason: the runner was throttled\n"
        "    state: false_positive\n"
    )
    rep = prcheck.build_report(
        db, [RUN], [prcheck.Pair(NEW, OLD)], annotations.read_annotations(notes_file)
    )
    assert rep.regressions == [] and rep.lines[0].state == "false_positive"
    assert "regression (false positive: the runner was throttled)" in prcheck.markdown(rep)
