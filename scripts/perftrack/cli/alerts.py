"""`perftrack alerts`: the changes detect reported, each once, with its state."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from perftrack.cli.app import DbOpt, emit, out, print_json
from perftrack.core import paths
from perftrack.core.errors import ConfigError

StateOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--state",
        help="new, acknowledged, false_positive, fixed, not_reproduced, expired, open (new + "
        "acknowledged) or all; repeatable (default: open)",
    ),
]


def _states(wanted: list[str] | None) -> set[str]:
    from perftrack.analysis import alerts

    picked: set[str] = set()
    for w in wanted or ["open"]:
        if w == "all":
            picked |= set(alerts.STATES)
        elif w == "open":
            picked |= set(alerts.OPEN_STATES)
        elif w in alerts.STATES:
            picked.add(w)
        else:
            raise ConfigError(f"unknown state {w!r}; known: {', '.join(alerts.STATES)}, open, all")
    return picked


def _iso(value: Any) -> Any:
    return value.isoformat() + "Z" if isinstance(value, datetime) else value


def alerts_cmd(
    db: DbOpt = paths.DEFAULT_DB,
    state: StateOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """List the alerts (regressions reported once, with their state), newest first.

    States come from the DB as the last `perftrack detect` left them, with the current
    configs/annotations.yaml applied (acknowledged / false_positive show at once)."""
    from perftrack.analysis import alerts, annotations
    from perftrack.store import remeasures, store

    picked = _states(state)
    cfg = annotations.load_file(paths.config_dir() / "annotations.yaml")
    with store.open_db(db, write=False) as st:
        stored = st.stored_alerts(alerts.METRIC)
        subjects = [*st.stored_verdicts(alerts.METRIC), *st.change_points(alerts.METRIC)]
        again = remeasures.newest(st, alerts.METRIC)
        now = datetime.now(UTC).replace(tzinfo=None)
        restated = alerts.restate(stored, cfg.notes, cfg.expire_days, now, again)
        rows = [a for a in restated if a["state"] in picked]
        both = alerts.evidence_of(st, rows, alerts.METRIC)
    annotations.check_matched(cfg.notes, [*subjects, *map(alerts.subject_of, stored)])
    if as_json:
        rows_json = [
            {**{k: _iso(v) for k, v in a.items()}, **e} for a, e in zip(rows, both, strict=True)
        ]
        print_json("alerts", {"alerts": rows_json})
        return
    if not rows:
        emit(f"no alerts in state {', '.join(sorted(picked))} in {db}")
        return
    tab = Table(box=box.SIMPLE_HEAD)
    for col in ("state", "first seen", "change", "workload", "thr", "collation", "profile",
                "runner", "ratio", "why"):  # fmt: skip
        tab.add_column(col, justify="right" if col in ("thr", "ratio") else "left")
    for a in rows:
        change = (
            f"{a['base_server']} → {a['server_id']}"
            if a["kind"] == "verdict"
            else f"{a['server_id']} night of {str(a['change_at'])[:10]}"
        )
        tab.add_row(
            a["state"],
            str(a["first_seen_at"])[:10],
            change,
            a["workload"],
            str(a["threads"]),
            a["collation"],
            a["profile"],
            a["runner_class"],
            "—" if a["ratio"] is None else f"{a['ratio']:.3f}",
            a["fixed_by"] or a["reason"] or "",
        )
    out.print(tab)
    for a, e in zip(rows, both, strict=True):  # both results of each verdict alert
        if e["found"] or e["paired"]:
            emit(f"{a['base_server']} → {a['server_id']} ({a['workload']}, {a['threads']} thr, "
                 f"{a['collation']}, {a['hw_key']}):")  # fmt: skip
            emit(f"  found    {e['found'] or '—'}")
            emit(f"  paired   {e['paired'] or 'not re-measured paired yet'}")
