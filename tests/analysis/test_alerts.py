"""The alert lifecycle on a real DuckDB file, with SYNTHETIC test-fixture records (never
real measurements): a change is one alert across nights, and its state follows the
annotations, later releases, later nights and its age."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from clirun import assert_one_line_error, perftrack
from fixtures.records.synthetic import SYNTHETIC_START, make_record
from perftrack.analysis import alerts, annotations, detect
from perftrack.store import store

NIGHT0 = datetime(2026, 3, 1, 6, 0)  # the alerts' clock on the first night (naive UTC)
OLD, NEW, LATER = "synthetic-mysql-8.0.35", "synthetic-mysql-8.0.36", "synthetic-mysql-8.0.37"


def ingest(db: Path, recs: list[dict]) -> None:
    with store.open_db(db, write=True) as st:
        st.ingest(recs)


def run_detect(db: Path, now: datetime, notes=(), expire_days: int = 90, strict: bool = False):
    with store.open_db(db, write=True) as st:
        counts = detect.detect_and_store(
            st, list(notes), None, expire_days=expire_days, strict=strict, now=now
        )
        return counts, st.stored_alerts("tps")


def nights(values: list[float], first: int = 0, server: str = NEW) -> list[dict]:
    return [
        make_record(
            run_id=f"synthetic-night-{n:03d}",
            cell=n,
            server_id=server,
            tps=v,
            started_at=SYNTHETIC_START + timedelta(days=n),
        )
        for n, v in enumerate(values, start=first)
    ]


def noisy(level: float, n: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return [level * (1 + rng.normal(0, 0.01)) for _ in range(n)]


def releases(levels: dict[str, float], run_id: str = "synthetic-pair") -> list[dict]:
    """Interleaved repeats of releases (server id -> throughput level) in one run."""
    rng = np.random.default_rng(len(run_id))
    recs = []
    for rep in range(6):
        for i, (sid, level) in enumerate(levels.items()):
            recs.append(
                make_record(
                    run_id=run_id,
                    cell=rep * 10 + i,
                    server_id=sid,
                    version=sid.rsplit("-", 1)[1],
                    tps=level * (1 + rng.normal(0, 0.01)),
                )
            )
    return recs


def test_a_change_seen_on_three_nights_is_one_alert_reported_once(tmp_path: Path):
    db = tmp_path / "n.duckdb"
    values = noisy(1000, 12, 1) + noisy(850, 16, 2)
    ingest(db, nights(values[:24]))
    c1, first = run_detect(db, NIGHT0)
    for i, n in enumerate((26, 28), start=1):  # two more nights of data, two more detects
        ingest(
            db,
            nights(values[:n])[n - 2 :],
        )
        c, seen = run_detect(db, NIGHT0 + timedelta(days=i))
    (alert,) = seen
    assert len(first) == 1 and alert["alert_id"] == first[0]["alert_id"]
    assert alert["kind"] == "change_point" and alert["state"] == "new"
    assert alert["first_seen_at"] == NIGHT0 and alert["last_seen_at"] == NIGHT0 + timedelta(2)
    assert alert["ratio"] == pytest.approx(0.85, abs=0.03)
    assert alert["run_id"] == "synthetic-night-012"
    # reported once: new on the first night only
    assert (c1.alerts_new, c.alerts_new, c.alerts_open) == (1, 0, 1)
    assert alerts.newly_reported(seen) == []


def test_acknowledged_and_false_positive_come_from_annotations_yaml(tmp_path: Path):
    db = tmp_path / "a.duckdb"
    ingest(db, releases({OLD: 1000, NEW: 700}))
    _, (alert,) = run_detect(db, NIGHT0)
    assert (alert["kind"], alert["base_server"], alert["server_id"]) == ("verdict", OLD, NEW)
    assert alert["state"] == "new" and alert["run_id"] == "synthetic-pair"
    path = tmp_path / "annotations.yaml"
    path.write_text(
        "annotations:\n"
        f"  - match: {{servers: [{OLD}, {NEW}]}}\n"
        "    reason: binary log on by default\n"
        "    link: https://example.org/notes\n"
    )
    notes = annotations.read_annotations(path)
    _, (acked,) = run_detect(db, NIGHT0 + timedelta(days=1), notes, strict=True)
    assert (acked["state"], acked["reason"], acked["link"]) == (
        "acknowledged",
        "binary log on by default",
        "https://example.org/notes",
    )
    assert acked["first_seen_at"] == NIGHT0 and acked["state_since"] == NIGHT0 + timedelta(1)
    path.write_text(path.read_text() + "    state: false_positive\n")
    _, (fp,) = run_detect(db, NIGHT0 + timedelta(days=2), annotations.read_annotations(path))
    assert fp["state"] == "false_positive" and fp["alert_id"] == alert["alert_id"]


def test_a_later_release_within_the_noise_marks_it_fixed(tmp_path: Path):
    db = tmp_path / "f.duckdb"
    ingest(db, releases({OLD: 1000, NEW: 700}))
    _, (alert,) = run_detect(db, NIGHT0)
    ingest(db, releases({OLD: 1000, NEW: 700, LATER: 1000}, "synthetic-pair-later"))
    _, rows = run_detect(db, NIGHT0 + timedelta(days=1))
    (fixed,) = [a for a in rows if a["alert_id"] == alert["alert_id"]]
    assert fixed["state"] == "fixed" and fixed["fixed_by"].startswith(LATER)
    assert fixed["first_seen_at"] == NIGHT0
    # 8.0.36 -> 8.0.37 is an improvement, not an alert
    assert [a["state"] for a in rows] == ["fixed"]


def test_a_later_release_measured_in_other_runs_is_compared_unpaired_and_marks_it_fixed(
    tmp_path: Path,
):
    """The later release shares no round with the base (an unpaired comparison, which
    detect computes only when the paired ones before it are not back). Two runs of it: 6
    values a side at 1% noise leave a Welch interval of about ±1.5%, wider than the 2%
    band `unchanged` needs it inside; 12 of the later release decide."""
    db = tmp_path / "u.duckdb"
    ingest(db, releases({OLD: 1000, NEW: 700}))
    _, (alert,) = run_detect(db, NIGHT0)
    ingest(db, releases({LATER: 1000}, "synthetic-later-alone"))
    ingest(db, releases({LATER: 1000}, "synthetic-later-alone-again"))
    with store.open_db(db, write=False) as st:
        (t,) = detect.verdict_tables(st)
    assert t.rows[2].server_id == LATER and t.rows[2].vs_previous is not None
    assert not t.rows[2].vs_previous.paired  # 8.0.36 and 8.0.37 share no round either
    _, rows = run_detect(db, NIGHT0 + timedelta(days=1))
    (fixed,) = [a for a in rows if a["alert_id"] == alert["alert_id"]]
    assert fixed["state"] == "fixed" and fixed["fixed_by"].startswith(LATER)


def test_a_later_release_still_slow_does_not_fix_it(tmp_path: Path):
    db = tmp_path / "s.duckdb"
    ingest(db, releases({OLD: 1000, NEW: 700, LATER: 705}))
    _, (alert,) = run_detect(db, NIGHT0)
    assert alert["state"] == "new" and alert["fixed_by"] is None


def test_later_nights_back_at_the_old_level_fix_a_change_point(tmp_path: Path):
    db = tmp_path / "b.duckdb"
    ingest(db, nights(noisy(1000, 12, 3) + noisy(850, 12, 4) + noisy(1000, 12, 5)))
    _, rows = run_detect(db, NIGHT0)
    (alert,) = rows  # the step back up is an improvement: no alert
    assert alert["state"] == "fixed" and alert["fixed_by"].startswith("nights since 2026-01-25")


def test_an_alert_without_news_past_the_window_expires(tmp_path: Path):
    db = tmp_path / "e.duckdb"
    ingest(db, releases({OLD: 1000, NEW: 700}))
    run_detect(db, NIGHT0, expire_days=30)
    _, (still,) = run_detect(db, NIGHT0 + timedelta(days=30), expire_days=30)
    _, (gone,) = run_detect(db, NIGHT0 + timedelta(days=31), expire_days=30)
    assert (still["state"], gone["state"]) == ("new", "expired")
    assert gone["news_at"] == NIGHT0 and gone["state_since"] == NIGHT0 + timedelta(31)


def test_alerts_cli_lists_filters_and_applies_the_annotations_at_once(
    tmp_path: Path, configs: Path
):
    db = tmp_path / "c.duckdb"
    ingest(db, releases({OLD: 1000, NEW: 700}))
    yesterday = datetime.now(UTC).replace(tzinfo=None, microsecond=0) - timedelta(days=1)
    run_detect(db, yesterday)  # `alerts` applies expiry at the real clock
    res = perftrack("alerts", "--db", str(db), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "perftrack.alerts.v1"
    (row,) = doc["alerts"]
    assert (row["state"], row["server_id"], row["first_seen_at"]) == (
        "new",
        NEW,
        yesterday.isoformat() + "Z",
    )
    (configs / "annotations.yaml").write_text(
        f"annotations:\n  - match: {{server: {NEW}}}\n    reason: expected\n"
    )
    res = perftrack("alerts", "--db", str(db), "--json")
    assert [r["state"] for r in json.loads(res.stdout)["alerts"]] == ["acknowledged"]
    res = perftrack("alerts", "--db", str(db), "--state", "new", "--json")
    assert json.loads(res.stdout)["alerts"] == []
    res = perftrack("alerts", "--db", str(db), "--state", "all")
    assert res.returncode == 0 and "acknowledged" in res.stdout and NEW in res.stdout


@pytest.mark.parametrize(
    ("text", "command", "needle"),
    [
        (
            f"annotations:\n  - match: {{server: {NEW}}}\n    reason: r\n    state: wontfix\n",
            "alerts",
            "'state' must be one of acknowledged, false_positive",
        ),
        (
            "annotations:\n  - match: {server: synthetic-mysql-8.0.63}\n    reason: typo\n",
            "alerts",
            "annotation 1 ('typo') matches no verdict or change point",
        ),
        (
            "annotations:\n  - match: {server: synthetic-mysql-8.0.63}\n    reason: typo\n",
            "detect",
            "annotation 1 ('typo') matches no verdict or change point",
        ),
        ("alerts: {expire_days: 0}\nannotations: []\n", "alerts", "alerts.expire_days"),
    ],
)
def test_bad_annotations_are_one_line_errors_and_detect_writes_nothing(
    tmp_path: Path, configs: Path, text: str, command: str, needle: str
):
    db = tmp_path / "bad.duckdb"
    ingest(db, releases({OLD: 1000, NEW: 700}))
    run_detect(db, NIGHT0)
    before = db.read_bytes()
    (configs / "annotations.yaml").write_text(text)
    res = perftrack(command, "--db", str(db))
    assert_one_line_error(res, 2, needle)
    if command == "detect":
        with store.open_db(db, write=False) as st:
            assert [a["checked_at"] for a in st.stored_alerts("tps")] == [NIGHT0]
    else:
        assert db.read_bytes() == before


def test_unknown_state_filter_is_a_one_line_error(tmp_path: Path):
    res = perftrack("alerts", "--db", str(tmp_path / "none.duckdb"), "--state", "closed")
    assert_one_line_error(res, 2, "unknown state 'closed'")


def test_expire_days_is_read_from_annotations_yaml(tmp_path: Path):
    path = tmp_path / "annotations.yaml"
    path.write_text("alerts: {expire_days: 14}\nannotations: []\n")
    assert annotations.load_file(path).expire_days == 14
    assert annotations.load_file(tmp_path / "missing.yaml").expire_days == 90


def test_a_change_point_that_moved_a_night_is_the_same_alert_a_far_one_a_new_one():
    """Otava's split moves as nights arrive: the same series' change found again within
    CP_MATCH_POINTS nights keeps its alert (id, first seen); one further away is new."""
    key = {c: None for c in store.SERIES_COLS} | {"workload": "w", "threads": 1}
    runs = [f"synthetic-night-{n:03d}" for n in range(30)]
    points = {(*key.values(), NEW): [(r, NIGHT0, 1.0) for r in runs]}

    def found(n: int) -> alerts.Found:
        return alerts.Found(
            alert_id=alerts.change_alert_id(list(key.values()), NEW, "tps", runs[n]),
            kind="change_point",
            key=key,
            server_id=NEW,
            base_server=None,
            run_id=runs[n],
            change_at=NIGHT0,
            ratio=0.85,
            before=1000.0,
            after=850.0,
        )

    (first,) = alerts.update([], [found(12)], [], points, "tps", 90, NIGHT0)
    later = NIGHT0 + timedelta(days=1)
    (moved,) = alerts.update([first], [found(13)], [], points, "tps", 90, later)
    assert moved["alert_id"] == first["alert_id"] and moved["run_id"] == runs[13]
    assert (moved["first_seen_at"], moved["last_seen_at"]) == (NIGHT0, later)
    far = alerts.update([moved], [found(20)], [], points, "tps", 90, later)
    assert len({a["alert_id"] for a in far}) == 2
    assert sorted(a["first_seen_at"] for a in far) == [NIGHT0, later]
