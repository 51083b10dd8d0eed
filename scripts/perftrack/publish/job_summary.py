"""The publish job's summary: markdown for `$GITHUB_STEP_SUMMARY` (or any file).

What one night produced, read back from the DB after ingest and detect: per server the
cells measured / failed / skipped, the shards of the night plan that sent nothing (their
cells are *missing*: no row in the DB, a gap on the site, never a zero), and the verdicts
of the series this night touched, regressions first. Alerts (analysis/alerts.py) are
reported once: the regressions tonight's detect found first are listed as new; one
reported on an earlier night shows its state and date, never as new again. A chart is
referenced by URL or
relative path (GitHub's summaries do not render `data:` images): the publish workflow
links the PNG it deploys with the site.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from perftrack.analysis import alerts as alerts_mod
from perftrack.analysis import stats
from perftrack.core.errors import ConfigError
from perftrack.store import store

METRIC = "tps"
VERDICT_ORDER = {"regression": 0, "improvement": 1, "inconclusive": 2, "unchanged": 3}
MAX_VERDICT_ROWS = 50  # GitHub caps a step summary at 1 MiB; a table this long is plenty
MAX_PLAN_BYTES = 16 * 1024 * 1024
VERDICT_MARK = {"regression": "🔴 regression", "improvement": "🟢 improvement"}


def _md(text: Any) -> str:
    """A table cell: no pipes or newlines from data can break the table."""
    return " ".join(str(text).replace("|", "\\|").split())


def load_plan(path: Path) -> dict[str, Any]:
    try:
        if path.stat().st_size > MAX_PLAN_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_PLAN_BYTES} bytes; not a night plan")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such night plan file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable night plan ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a night plan is a JSON object")
    return data


def plan_shards(plan: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """shard number -> {runner_class, cell_ids} from a night plan (`perftrack plan --out`)."""
    shards: dict[int, dict[str, Any]] = {}
    for s in plan.get("shards") or []:
        if not isinstance(s, dict) or not isinstance(s.get("shard"), int):
            continue
        ids = {c["cell_id"] for c in s.get("cells") or [] if isinstance(c, dict) and "cell_id" in c}
        shards[s["shard"]] = {"runner_class": s.get("runner_class", ""), "cell_ids": ids}
    return shards


def markdown(
    db: Path,
    run_ids: Sequence[str],
    *,
    headline: str,
    plan: dict[str, Any] | None = None,
    chart: str | None = None,
    detected: bool = True,
) -> str:
    """The summary of one publish: headline, servers, shards, alerts, verdicts, chart.
    `detected`: this publish ran detect (it added records); when it did not, no alert is
    new tonight (a re-run must not report the last detect's alerts again)."""
    lines = ["## perftrack: nightly publish", "", headline, ""]
    shards = plan_shards(plan) if plan else {}
    if not run_ids and not shards:
        return "\n".join([*lines, "No run records arrived.", ""])
    per_server: list[tuple[Any, ...]] = []
    seen: set[str] = set()
    ok: set[str] = set()
    verdicts: list[Mapping[str, Any]] = []
    alerts: list[dict[str, Any]] = []
    if run_ids:  # nothing arrived: the DB may not even exist yet
        with store.open_db(db, write=False) as st:
            per_server = st.status_by_server(run_ids)
            seen, ok = st.cells_seen(run_ids)
            rounds = st.verdict_rounds(METRIC)
            verdicts = [  # each with (paired, rounds a side that would decide it) if stored
                {**v, "paired": rounds[vid][0], "rounds_needed": rounds[vid][1]}
                if (vid := v["verdict_id"]) in rounds
                else v
                for v in st.verdicts_touched(run_ids, METRIC)
            ]
            stored = st.stored_alerts(METRIC)
            alerts = [  # each with its paired re-measurement, in words (or None)
                {**a, "paired": e["paired"]}
                for a, e in zip(stored, alerts_mod.evidence_of(st, stored, METRIC), strict=True)
            ]
    fresh = {a["alert_id"] for a in alerts_mod.newly_reported(alerts)} if detected else set()
    by_id = {a["alert_id"]: a for a in alerts}
    verdicts.sort(
        key=lambda v: (
            v["verdict_id"] not in fresh,
            VERDICT_ORDER.get(v["verdict"], 9),
            v["workload"],
            v["threads"],
        )
    )
    if per_server:
        lines += ["| server | measured | failed | skipped |", "|---|--:|--:|--:|"]
        lines += [f"| {_md(s)} | {o} | {f} | {k} |" for s, o, f, k in per_server]
        lines.append("")
    if shards:
        lines += _shard_lines(shards, seen, ok)
    lines += _alert_lines(alerts, fresh)
    lines += _verdict_lines(verdicts, by_id, fresh)
    if chart:
        lines += ["", f"![throughput trend]({chart})", ""]
    return "\n".join(lines) + "\n"


def _shard_lines(
    shards: dict[int, dict[str, Any]], seen: set[str], with_result: set[str]
) -> list[str]:
    out = ["| shard | runner class | cells | with a result | state |", "|--:|---|--:|--:|---|"]
    missing_cells = 0
    for n in sorted(shards):
        ids = shards[n]["cell_ids"]
        arrived, good = len(ids & seen), len(ids & with_result)
        if not arrived:
            state = "**missing**: no records arrived (shard failed or never started)"
        elif good < len(ids):
            state = f"{len(ids) - good} cell(s) without a result"
        else:
            state = "complete"
        missing_cells += len(ids) - good
        out.append(f"| {n} | {_md(shards[n]['runner_class'])} | {len(ids)} | {good} | {state} |")
    out.append("")
    if missing_cells:
        out += [
            f"{missing_cells} planned cell(s) have no result tonight: they are missing from "
            "the DB and shown as gaps on the site, never as zero.",
            "",
        ]
    return out


def _alert_lines(alerts: list[dict[str, Any]], fresh: set[str]) -> list[str]:
    """Tonight's new alerts, each reported here once; the older open ones only counted."""
    new = [a for a in alerts if a["alert_id"] in fresh and a["state"] == "new"]
    older = [
        a for a in alerts if a["alert_id"] not in fresh and a["state"] in alerts_mod.OPEN_STATES
    ]
    out = [f"**New alerts tonight: {len(new)}**", ""]
    if new:
        out += ["| change | workload | threads | collation | profile | runner | ratio |",
                "|---|---|--:|---|---|---|--:|"]  # fmt: skip
        for a in new[:MAX_VERDICT_ROWS]:
            out.append(
                f"| {_md(_change(a))} | {_md(a['workload'])} | {a['threads']} | "
                f"{_md(a['collation'])} | {_md(a['profile'])} | {_md(a['runner_class'])} | "
                f"{'—' if a['ratio'] is None else format(a['ratio'], '.3f')} |"
            )
        out.append("")
    if older:
        out += [
            f"{len(older)} open alert(s) reported on earlier nights are not repeated here "
            "(the Regressions page and `perftrack alerts` list them).",
            "",
        ]
    return out


def _change(alert: dict[str, Any]) -> str:
    if alert["kind"] == "verdict":
        return f"{alert['base_server']} → {alert['server_id']}"
    return f"{alert['server_id']}: change point on the night of {str(alert['change_at'])[:10]}"


def _alert_note(alert: dict[str, Any] | None, fresh: set[str]) -> str:
    """How a regression verdict's alert reads: new tonight, or what became of it."""
    if alert is None or (alert["alert_id"] in fresh and alert["state"] == "new"):
        return VERDICT_MARK["regression"] + " (new)"
    state, since = alert["state"], str(alert["first_seen_at"])[:10]
    paired = f"; {alert['paired']}" if alert.get("paired") else ""
    if state == "new":
        return f"regression (reported {since}{paired})"
    if state == "not_reproduced":
        return f"regression ({alert['paired']})"
    if state == "fixed":
        return f"regression (fixed: {alert['fixed_by']})"
    if state in ("acknowledged", "false_positive"):
        return f"regression ({state.replace('_', ' ')}: {alert['reason']}{paired})"
    return f"regression ({state}; reported {since})"


def _verdict_lines(
    verdicts: Sequence[Mapping[str, Any]], alerts: dict[str, dict[str, Any]], fresh: set[str]
) -> list[str]:
    if not verdicts:
        return ["No verdicts for tonight's series yet (a series needs two versions).", ""]
    out = [
        "| workload | threads | collation | profile | runner | previous → server | "
        "n previous / server | ratio | 95% CI | threshold | verdict |",
        "|---|--:|---|---|---|---|--:|--:|---|--:|---|",
    ]
    for v in verdicts[:MAX_VERDICT_ROWS]:
        if v["verdict"] == "regression":
            verdict = _alert_note(alerts.get(v["verdict_id"]), fresh)
        else:
            verdict = VERDICT_MARK.get(v["verdict"], v["verdict"])
        if v["verdict"] == "inconclusive" and "rounds_needed" in v:
            verdict += f" ({stats.undecided_note(v['rounds_needed'])})"
        paired = " paired" if v.get("paired") else ""
        out.append(
            f"| {_md(v['workload'])} | {v['threads']} | {_md(v['collation'])} | "
            f"{_md(v['profile'])} | {_md(v['runner_class'])} | "
            f"{_md(v['base_server'])} → {_md(v['new_server'])} | "
            f"{v['n_base']} / {v['n_new']}{paired} | {v['ratio']:.3f} | "
            f"[{v['ci_low']:.3f}, {v['ci_high']:.3f}] | ±{v['threshold']:.1%} | {_md(verdict)} |"
        )
    if len(verdicts) > MAX_VERDICT_ROWS:
        out.append(f"\n… and {len(verdicts) - MAX_VERDICT_ROWS} more on the site.")
    out.append("")
    return out


def append(path: Path, text: str) -> None:
    """Append to a summary file (GitHub's $GITHUB_STEP_SUMMARY is appended to, per step)."""
    try:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the summary ({exc.strerror})") from None
