"""Derived statistics on SYNTHETIC test-fixture records (never real measurements)."""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fixtures.records.synthetic import BASE_VARIABLES, SYNTHETIC_START, make_record
from perftrack.analysis import annotations, changepoints, detect
from perftrack.core import record
from perftrack.core.errors import ConfigError
from perftrack.store import store

RNG = np.random.default_rng(7)


def ingest(db: Path, recs: list[dict]) -> None:
    with store.open_db(db, write=True) as st:
        st.ingest(recs)


def pair_records(
    base_tps: float, new_tps: float, new_vars: dict | None = None, rng: Any = None
) -> list[dict]:
    """Six repeats of each server, 1% noise from `rng` (default: the module's RNG, whose
    draws the tests before share: a test that adds a call passes a generator of its own)."""
    rng = RNG if rng is None else rng
    recs = []
    for rep in range(6):
        for i, (sid, ver, tps, var) in enumerate(
            (
                ("synthetic-mysql-8.0.35", "8.0.35", base_tps, None),
                ("synthetic-mysql-8.0.36", "8.0.36", new_tps, new_vars),
            )
        ):
            recs.append(
                make_record(
                    run_id="synthetic-pair",
                    cell=rep * 2 + i,
                    server_id=sid,
                    version=ver,
                    variables=var,
                    tps=tps * (1 + rng.normal(0, 0.01)),
                )
            )
    return recs


def test_regression_with_the_changed_default_attached(tmp_path: Path):
    db = tmp_path / "r.duckdb"
    changed = {
        **BASE_VARIABLES,
        "sync_binlog": "1" if BASE_VARIABLES.get("sync_binlog") != "1" else "0",
    }
    ingest(db, pair_records(1000, 700, changed))
    with store.open_db(db, write=True) as st:
        s = detect.detect_and_store(st, [], None)
        (row,) = st.con.execute(
            "SELECT base_server, new_server, verdict, ratio, ci_high, threshold, acknowledged, "
            "variables_diff FROM verdicts"
        ).fetchall()
        noise = st.con.execute(
            "SELECT series, cv_median FROM noise WHERE metric = 'tps'"
        ).fetchall()
    assert s.regressions == 1
    base, new, verdict, ratio, ci_high, threshold, ack, diff = row
    assert (base, new, verdict, ack) == (
        "synthetic-mysql-8.0.35",
        "synthetic-mysql-8.0.36",
        "regression",
        None,
    )
    assert ratio == pytest.approx(0.7, abs=0.03) and ci_high < 1 - threshold
    assert "sync_binlog" in json.loads(diff)
    assert noise and noise[0][1] < 0.05


def test_a_verdict_says_how_many_of_its_values_were_not_steady(tmp_path: Path):
    """Two of the new side's six windows were still warming up (run/steady.py puts that in
    the host's noisy_reason); one of them was measured again, steady: only the latest
    attempt counts, so the verdict carries 1."""
    db = tmp_path / "u.duckdb"
    recs = pair_records(1000, 700, rng=np.random.default_rng(17))
    moving = "not steady: throughput rose 12% from the window's first third to its last"
    news = [r for r in recs if r["server"]["id"] == "synthetic-mysql-8.0.36"]
    for r in news[:2]:
        r["host"] = {"noisy": True, "noisy_reason": moving}
    again = make_record(  # news[0] is cell 1 (pair_records: base 0, new 1, base 2, …)
        run_id="synthetic-pair", cell=1, attempt=2,
        server_id="synthetic-mysql-8.0.36", version="8.0.36", tps=700,
    )  # fmt: skip
    assert again["cell_id"] == news[0]["cell_id"]
    ingest(db, [*recs, again])
    with store.open_db(db, write=True) as st:
        detect.detect_and_store(st, [], None)
        ((verdict, unsteady),) = st.con.execute("SELECT verdict, unsteady FROM verdicts").fetchall()
    assert (verdict, unsteady) == ("regression", 1)


def test_acknowledged_regression_is_kept_but_marked(tmp_path: Path):
    db = tmp_path / "a.duckdb"
    ingest(db, pair_records(1000, 700))
    note = annotations.Annotation(
        reason="8.0.36 turned on the binary log by design",
        match={"servers": ["synthetic-mysql-8.0.35", "synthetic-mysql-8.0.36"]},
    )
    with store.open_db(db, write=True) as st:
        s = detect.detect_and_store(st, [note], None)
        ack = st.con.execute("SELECT verdict, acknowledged FROM verdicts").fetchall()
    assert s.regressions == 0 and s.acknowledged == 1
    assert ack == [("regression", "8.0.36 turned on the binary log by design")]


def nights(server_id: str, values: list[float], cell0: int) -> list[dict]:
    return [
        make_record(
            run_id=f"synthetic-night-{n:03d}",
            cell=cell0 + n,
            server_id=server_id,
            tps=v,
            started_at=SYNTHETIC_START + timedelta(days=n),
        )
        for n, v in enumerate(values)
    ]


def test_nightly_step_is_a_change_point_and_a_control_step_marks_environment(tmp_path: Path):
    db = tmp_path / "n.duckdb"
    step = [1000 * (1 + RNG.normal(0, 0.01)) for _ in range(15)] + [
        850 * (1 + RNG.normal(0, 0.01)) for _ in range(15)
    ]
    flat = [500 * (1 + RNG.normal(0, 0.01)) for _ in range(30)]
    ingest(
        db, nights("synthetic-mysql-8.0.36", step, 0) + nights("synthetic-mysql-9.1.0", flat, 100)
    )
    with store.open_db(db, write=True) as st:
        detect.detect_and_store(st, [], None)
        cps = st.con.execute(
            "SELECT server_id, run_id, rel_change, rel_low, rel_high, scope, environment "
            "FROM change_points"
        ).fetchall()
    assert [(c[0], c[1]) for c in cps] == [("synthetic-mysql-8.0.36", "synthetic-night-015")]
    assert cps[0][2] == pytest.approx(-0.15, abs=0.03)
    assert cps[0][3] < -0.15 < cps[0][4] and cps[0][5:] == ("series", False)
    # the same step seen on the control server's series: one environment change of the
    # runner class, not one per series that moved with it
    ctl = nights("synthetic-control", step, 200)
    ingest(db, ctl)
    with store.open_db(db, write=True) as st:
        detect.detect_and_store(st, [], "synthetic-control")
        env = st.con.execute(
            "SELECT server_id, run_id, scope, environment, is_control, series_count "
            "FROM change_points"
        ).fetchall()
    assert env == [("synthetic-control", "synthetic-night-015", "class", True, True, 2)]


# --- the 60-night synthetic history (benchmarks/synthetic_history.py) -------------------

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


def synthetic_points(nights: int) -> tuple[dict, float, float, Any, str]:
    """SYNTHETIC: the nightly points (as the store's nightly_points returns them) of the
    benchmarks' synthetic history: the nightly matrix × 3 runner classes, an 8% read_write
    step of the newest MySQL at 40% of the nights, +6% on class b at 70% (its control
    too), class c drifting, missing and half nights. Built in memory (nothing written)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import synthetic_history as synth
    finally:
        sys.path.remove(str(BENCHMARKS))
    setup = synth.load_setup(nights)
    rngs = synth.night_rngs(setup)
    reps: dict[tuple, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for night in range(nights):
        for run_id, cls, hw, srv, wl, th, coll, _rep, tps, at in synth.night_records(
            setup, night, rngs(night), records=False
        ):
            key = (hw, f"synthetic-class-{cls}", wl, th, coll, "default", 8, 100000, 60, "tcp")
            key += (None,) * (len(detect.SERIES_COLS) - len(key)) + (srv,)
            reps[key][run_id].append((at.replace(tzinfo=None), tps))
    points = {
        k: [(r, min(a for a, _ in v), float(np.median([x for _, x in v]))) for r, v in runs.items()]
        for k, runs in reps.items()
    }
    stepped = synth._server_id(synth._newest_mysql(setup.m.servers))  # the newest MySQL
    return points, synth.STEP_AT, synth.ENV_AT, synth.START.replace(tzinfo=None), stepped


def test_synthetic_60_nights_one_environment_change_the_8pct_step_and_no_drift_alarm():
    points, step_at, env_at, start, stepped = synthetic_points(60)
    assert stepped == "synthetic-mysql-26.10.0"  # the nightly's newest innovation release
    control = "mariadb-10.11.18"  # configs/runners.yaml's control_server
    assert any(k[-1] == control for k in points)  # the fixture's control is the config's
    rows = changepoints.detect(points, control, detect.SERIES_COLS)
    night = {id(c): (c.at - start).days for c in rows}
    env = [c for c in rows if c.environment]
    assert len(env) == 1  # once for the class, not once per series of it
    (e,) = env
    assert (e.scope, e.key[1], e.key[-1], e.is_control) == (
        "class",
        "synthetic-class-b",
        control,
        True,
    )
    assert abs(night[id(e)] - env_at * 60) <= changepoints.MATCH_NIGHTS
    assert e.step.interval[0] <= 0.06 <= e.step.interval[1]
    step = [c for c in rows if c.key[2] == "oltp_read_write" and c.key[-1] == stepped]
    assert len(step) == 1 and step[0].scope == "server"
    assert abs(night[id(step[0])] - step_at * 60) <= changepoints.MATCH_NIGHTS
    assert step[0].step.interval[0] <= -0.08 <= step[0].step.interval[1]
    assert step[0].step.rel == pytest.approx(-0.08, abs=0.03)
    # nothing else: no change point from class c's drift, none from noise
    assert len(rows) == 2


def test_small_labelled_history_reports_the_injected_steps_only():
    """SYNTHETIC, labelled: 2 classes × 4 servers × 2 workloads × 4 thread counts, 120
    nights of 8% per-night noise, 3% missing nights. Injected: a -20% step of one series at
    night 50, a +15% step of one server's workload on every thread count of class x at 70.
    Every reported row must be one of them (precision 100%), each found once."""
    rng = np.random.default_rng(22)
    points: dict[tuple, list] = {}
    start = datetime(2026, 1, 1)
    for cls in ("x", "y"):
        for srv in ("s1", "s2", "s3", "s4"):
            for wl in ("w1", "w2"):
                for th in (1, 4, 16, 64):
                    key = ("hw-" + cls, cls, wl, th, "c", "default", 8, 1000, 60, "tcp")
                    key += (None,) * (len(detect.SERIES_COLS) - len(key)) + (f"synthetic-{srv}",)
                    pts = []
                    for n in range(120):
                        if rng.random() < 0.03:
                            continue
                        f = math.exp(rng.normal(0, 0.08))
                        if (cls, srv, wl, th) == ("y", "s2", "w1", 16) and n >= 50:
                            f *= 0.80
                        if (cls, srv, wl) == ("x", "s3", "w2") and n >= 70:
                            f *= 1.15
                        pts.append((f"synthetic-{n:03d}-{cls}", start + timedelta(days=n), 100 * f))
                    points[key] = pts
    rows = changepoints.detect(points, None, detect.SERIES_COLS)
    got = sorted((c.scope, c.key[1], c.key[-1], c.key[2], (c.at - start).days) for c in rows)
    assert len(got) == 2, got
    (series, workload) = sorted(got, key=lambda g: g[0])
    assert series[:4] == ("series", "y", "synthetic-s2", "w1") and abs(series[4] - 50) <= 3
    assert workload[:4] == ("workload", "x", "synthetic-s3", "w2") and abs(workload[4] - 70) <= 3


def test_a_groups_own_steps_next_to_an_environment_step_keep_their_size():
    """SYNTHETIC, labelled: one class, a control and 6 servers × 8 series, 140 nights of 3%
    noise; an environment step of +6% (every series and the control) at night 70. Server s1
    steps -45% at night 58 (12 nights before it), server s2 +23.5% at night 75 (5 nights
    after it). Before: s1's step was reported as -10% (its group measured the environment
    step on its own signal, its -45% included, and removed that), s2's never (absorbed
    into the environment step), and the environment step's size was pulled by both."""
    rng = np.random.default_rng(7)
    points: dict[tuple, list] = {}
    start = datetime(2026, 1, 1)
    servers = ["control", *(f"s{i}" for i in range(1, 7))]
    for srv in servers:
        for th in (1, 4, 16, 64):
            for coll in ("latin1_swedish_ci", "utf8mb4_general_ci"):
                key = ("hw", "k", "w", th, coll, "default", 8, 1000, 60, "tcp")
                key += (None,) * (len(detect.SERIES_COLS) - len(key)) + (f"synthetic-{srv}",)
                pts = []
                for n in range(140):
                    f = math.exp(rng.normal(0, 0.03)) * (1.06 if n >= 70 else 1.0)
                    if srv == "s1" and n >= 58:
                        f *= 0.55
                    if srv == "s2" and n >= 75:
                        f *= 1.235
                    pts.append((f"synthetic-{n:03d}", start + timedelta(days=n), 100 * f))
                points[key] = pts
    rows = changepoints.detect(points, "synthetic-control", detect.SERIES_COLS)
    got = {(c.scope, c.key[-1]): c for c in rows}
    assert sorted(got) == [
        ("class", "synthetic-control"),
        ("workload", "synthetic-s1"),
        ("workload", "synthetic-s2"),
    ]
    for srv, size, night in (("control", 0.06, 70), ("s1", -0.45, 58), ("s2", 0.235, 75)):
        c = next(c for (_, s), c in got.items() if s == f"synthetic-{srv}")
        assert (c.at - start).days == night, srv
        low, high = c.step.interval
        assert low <= size <= high, (srv, c.step.rel, c.step.interval)


def test_detect_is_idempotent(tmp_path: Path):
    db = tmp_path / "i.duckdb"
    ingest(db, pair_records(1000, 990))
    with store.open_db(db, write=True) as st:
        detect.detect_and_store(st, [], None)
        detect.detect_and_store(st, [], None)
        assert st.con.execute("SELECT count(*) FROM verdicts").fetchone() == (1,)
        assert st.check() == []
        # beside it, once: how it was computed and what it would need (issue 37)
        ((vid, verdict),) = st.con.execute("SELECT verdict_id, verdict FROM verdicts").fetchall()
        ((t,),) = [detect.verdict_tables(st)]
        c = t.rows[1].vs_previous
        assert c is not None and c.verdict == verdict
        assert st.verdict_rounds("tps") == {vid: (c.paired, c.rounds_needed)}
        assert (c.rounds_needed is not None) == (verdict == "inconclusive")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "annotations: [{match: {server: x}, reason: ok, link: 'javascript:alert(1)'}]",
            "'link' must be an https:// URL",
        ),
        ("annotations: [{match: {server: x}, reason: ''}]", "'reason' must be one line"),
        ("annotations: [{match: {bogus: x}, reason: r}]", "unknown match key 'bogus'"),
        ("annotations: [{match: {server: '$(id)'}, reason: r}]", "invalid value"),
        ("annotations: [{match: {server: x}, reason: r, when: 1}]", "unknown key 'when'"),
        ("annotations: {}", "'annotations' must be a list"),
    ],
)
def test_bad_annotations_are_one_line_errors(tmp_path: Path, text: str, message: str):
    p = tmp_path / "annotations.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=message):
        annotations.read_annotations(p)


def test_shipped_annotations_file_loads():
    assert (
        annotations.read_annotations(Path(__file__).parents[2] / "configs" / "annotations.yaml")
        == []
    )


def test_versions_are_only_compared_within_one_product(tmp_path: Path):
    db = tmp_path / "p.duckdb"
    recs = pair_records(1000, 700)
    for r in recs:
        if r["server"]["id"].endswith("8.0.36"):
            r["server"]["product"] = "mariadb"
    ingest(db, recs)
    with store.open_db(db, write=True) as st:
        s = detect.detect_and_store(st, [], None)
    assert s.verdicts == 0


def test_series_split_by_every_axis_so_a_phase_effect_is_not_averaged_away(tmp_path: Path):
    """Schema v5: the pre/post passes (and engine, isolation, durability, handshake,
    dataset size) are separate series. The new server is 30% slower only on the written
    dataset (post); mixed into one series that would read as a 15% slowdown of both."""
    db = tmp_path / "phase.duckdb"
    recs = []
    for phase in ("pre", "post"):
        for r in pair_records(1000, 700 if phase == "post" else 1000):
            r["cell"]["phase"] = phase
            r["cell"]["engine"] = "InnoDB"
            r["run_id"] = f"synthetic-pair-{phase}"
            r["record_id"] = record.record_id(r["run_id"], r["cell_id"], r["attempt"])
            recs.append(r)
    ingest(db, recs)
    with store.open_db(db, write=True) as st:
        detect.detect_and_store(st, [], None)
        rows = st.con.execute(
            "SELECT phase, engine, handshake, verdict, ratio FROM verdicts ORDER BY phase"
        ).fetchall()
        stored = st.con.execute(
            "SELECT phase, count(*) FROM results GROUP BY 1 ORDER BY 1"
        ).fetchall()
    assert stored == [("post", 12), ("pre", 12)]
    assert [(p, e, h, v) for p, e, h, v, _ in rows] == [
        ("post", "InnoDB", None, "regression"),
        ("pre", "InnoDB", None, "unchanged"),
    ]
    assert rows[0][4] == pytest.approx(0.7, abs=0.03) and rows[1][4] == pytest.approx(1, abs=0.03)
