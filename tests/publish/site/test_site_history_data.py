"""The history page's data (publish/site/history.py): one file per cell, change points as
steps (their levels: analysis/levels.py), environment change points told apart.

Rows are SYNTHETIC (made up here, in the exporter's row shape)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perftrack.publish.site import build, columns, history
from perftrack.store.queries.history import HistoryTable


def _point(night: int, server: str, tps: float, **over: Any) -> dict[str, Any]:
    row = {
        "runner_class": "synthetic",
        "profile": "default",
        "dataset": "8×100,000 rows · 60 s · tcp",
        "workload": "oltp_read_only",
        "collation": "latin1_swedish_ci",
        "charset": "latin1",
        "threads": 4,
        "hw_key": "hw1",
        "server": server,
        "vorder": 0,
        "at": f"2026-01-{night + 1:02d}T02:00:00Z",
        "run_id": f"synthetic-night-{night:04d}",
        "n": 3,
        "tps": tps,
        "tps_min": tps - 1,
        "tps_max": tps + 1,
        "p95_ms": 1000 / tps,
        "cpu_us_per_txn": None,
    }
    row.update(over)
    return row


def _cp(night: int, server: str, **over: Any) -> dict[str, Any]:
    p = _point(night, server, 1.0)
    return {
        **{k: p[k] for k in (*history.CELL_KEYS, "hw_key", "at", "run_id", "server")},
        "rel_change": -0.1,
        "p_value": 0.0001,
        "environment": False,
        "control": False,
        "acknowledged": None,
        **over,
    }


def test_split_writes_one_file_per_cell_with_its_metrics_and_change_point_kinds() -> None:
    pts = [_point(n, "a", 100.0) for n in range(10)]
    pts += [_point(n, "a", 30.0, threads=16) for n in range(10)]
    cps = [_cp(5, "a"), _cp(6, "a", environment=True), _cp(7, "a", threads=16, control=True)]
    index, texts = history.split(pts, cps)
    files = {name: json.loads(text) for name, text in texts.items()}  # as DuckDB wrote them
    assert [(r["threads"], r["nights"], r["change_points"]) for r in index] == [
        (4, 10, 2),
        (16, 10, 1),
    ]
    cell = files[index[0]["file"]]
    assert cell["metrics"] == ["tps", "p95_ms"]  # cpu_us_per_txn: never measured here
    assert [c["kind"] for c in columns.decode(cell["change_points"])] == ["server", "environment"]
    control = columns.decode(files[index[1]["file"]]["change_points"])
    assert [c["kind"] for c in control] == ["environment"]  # the control server moved
    assert {s["metric"] for s in columns.decode(cell["steps"])} == {"tps", "p95_ms"}


def test_the_site_writes_the_index_and_cell_files_not_the_whole_history(
    sites: dict[str, Path],
) -> None:
    site = sites["history"]
    index = columns.decode(columns.read_data_file(site / "data" / "history_cells.js"))
    # SYNTHETIC fixture: 3 workloads × 2 collations × threads 1/4, one runner class
    assert len(index) == 12
    for row in index:  # a cell's points: its closed months' file, then its open month's
        cell = columns.read_data_file(site / "data" / "history" / f"{row['file']}.js")
        past = row["past"] and columns.read_data_file(
            site / "data" / "history" / f"{row['past']}.js"
        )
        points = columns.decode(past["points"]) if past else []
        assert points + columns.decode(cell["points"])
    assert not (site / "data" / "history.js").exists()
    # every night of every series is on the SQL page (results parts), not a 172 MB CSV
    assert not (site / "data" / "csv" / "history.csv").exists()
    html = (site / "history.html").read_text()
    assert html.index("assets/history.js") < html.index("assets/app.js")
    assert "history_cells.js" in html and "data/history.js" not in html
    assert "history" not in build.TABLES


def test_a_change_of_a_wider_scope_is_drawn_in_every_cell_it_covers() -> None:
    # SYNTHETIC: two workloads × two versions on one class, a third workload on another
    # class; detect stored one environment change (scope class, under the control's
    # series) and one server change (scope workload, under one series of server a)
    pts = [
        _point(n, s, 100.0, workload=w, runner_class=rc)
        for n in range(12)
        for s in ("a", "b")
        for w, rc in (("oltp_read_only", "synthetic"), ("oltp_point_select", "synthetic"),
                      ("oltp_read_only", "other"))
    ]  # fmt: skip
    env = _cp(6, "control", environment=True, control=True, scope="class",
              workload="oltp_update_index", threads=1)  # fmt: skip
    srv = _cp(4, "a", scope="workload", workload="oltp_point_select", threads=64)
    index, texts = history.split(pts, [env, srv])
    files = {name: json.loads(text) for name, text in texts.items()}
    drawn = {
        (row["runner_class"], row["workload"]): sorted(
            (c["server"], c["kind"])
            for c in columns.decode(files[row["file"]]["change_points"])
        )
        for row in index
    }  # fmt: skip
    assert drawn == {
        ("synthetic", "oltp_read_only"): [("a", "environment"), ("b", "environment")],
        ("synthetic", "oltp_point_select"): [
            ("a", "environment"), ("a", "server"), ("b", "environment")],
        ("other", "oltp_read_only"): [],
    }  # fmt: skip


def test_duckdb_writes_the_cells_as_python_would() -> None:
    """The cell files' points are written by DuckDB; the same rows through
    columns.encode (the encoder of every other data set) give the same values:
    dictionaries, rounding, NaN, text a page must not run."""
    odd = ["=cmd|' /C calc'!A0", "é<script>\u2028", 'a,"b"\nc', "-1", None]
    pts = [
        _point(n, odd[n % 4], [1234.56789, 1e-7 / 3, float("nan"), 2.5e12 / 7][n % 4],
               hw_key=odd[n % 5], cpu_us_per_txn=[None, float("inf"), 12.3456789][n % 3],
               run_id=odd[n % 5] or "r", vorder=n % 2)
        for n in range(9)
    ]  # fmt: skip
    table = HistoryTable.from_rows(pts, history.COST_COLUMNS)
    table.name_files(("runner_class",), [(("synthetic",), "h00001")])
    cols = [*history.POINT_COLUMNS, "tps", "p95_ms", "cpu_us_per_txn"]
    got = table.points_json(
        ["h00001"], cols, columns.FLOAT_SIGNIFICANT_DIGITS, columns.DICT_MAX_DISTINCT_FRACTION
    )["h00001"]
    safe = columns.script_json_text(got)
    assert "<" not in safe and safe.isascii()
    assert json.loads(safe) == json.loads(columns.script_json(columns.encode(pts, cols)))


def test_split_twice_over_one_table_names_the_files_again() -> None:
    """A second split of the same table (`site png` after the build's, in one process)
    gives the same index and files."""
    pts = [_point(n, "a", 100.0 + n, threads=t) for n in range(4) for t in (1, 4)]
    table = HistoryTable.from_rows(pts, history.COST_COLUMNS)
    first = history.split(table, [_cp(2, "a")])
    assert history.split(table, [_cp(2, "a")]) == first and len(first[0]) == 2
