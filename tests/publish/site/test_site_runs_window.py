"""The run page's list and detail files are bounded to a year of runs (issue 39 item 3):
`rundetails.window`. SYNTHETIC rows (runs_overview's shape, the fields it reads)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from perftrack.publish.site import rundetails

NEWEST = datetime(2029, 3, 1, 2, 0, tzinfo=UTC)


def rows(days_back: list[int | None]) -> list[dict[str, object]]:
    return [
        {
            "run_id": f"synthetic-{i}",
            "first_started_at": None if d is None else NEWEST - timedelta(days=d),
        }
        for i, d in enumerate(days_back)
    ]


def test_runs_older_than_the_window_are_left_out() -> None:
    got = rundetails.window(rows([0, 1, 365, 366, 367, 1000]))
    assert [r["run_id"] for r in got] == [
        "synthetic-0",
        "synthetic-1",
        "synthetic-2",
        "synthetic-3",
    ]
    assert rundetails.RUN_WINDOW_DAYS == 366


def test_a_run_without_a_start_is_kept_and_an_empty_list_stays_empty() -> None:
    got = rundetails.window(rows([None, 0, 400]))
    assert [r["run_id"] for r in got] == ["synthetic-0", "synthetic-1"]
    assert rundetails.window([]) == []
    assert rundetails.window(rows([None])) == rows([None])
