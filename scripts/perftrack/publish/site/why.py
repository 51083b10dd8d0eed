"""Why two versions differ, as the run and Regressions pages tell it: the stored
explanation of the pair (`perftrack explain`, store/explanations.py) when there is one;
otherwise the pair's settings diff ranked the way the explainer would try it (the settings
B accepts at A's value first, in its order: analysis/candidates.py; the rest with the
reason it leaves them out) and the exact `perftrack explain` command to run."""

from __future__ import annotations

import shlex
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from perftrack.analysis import candidates
from perftrack.core.errors import ConfigError
from perftrack.servers import rules
from perftrack.servers.options import RENAMED_OPTIONS, option_key
from perftrack.store import explanations
from perftrack.store.store import Store

Diff = list[tuple[str, str | None, str | None, str]]  # (name, A's, B's, change)


def ranked(diff: Diff, product: str | None, version: str | None) -> dict[str, dict[str, Any]]:
    """Per differing variable (the diff's name): {rank: its place among the settings
    explain would try (0 first), None if it leaves it out; left: why it leaves it out}."""
    a = {n: va for n, va, _, change in diff if change != "added"}
    b = {n: vb for n, _, vb, change in diff if change != "removed"}
    try:
        rule = rules.rules_for(product or "", version or "")
    except ConfigError as exc:
        return {n: {"rank": None, "left": f"no version rules for B: {exc}"} for n, *_ in diff}
    cands, left = candidates.select(a, b, rule)
    by_key: dict[str, dict[str, Any]] = {}
    for i, c in enumerate(cands):
        by_key[c.name] = {"rank": i, "left": None}
    for x in left:
        by_key[x.name] = {"rank": None, "left": x.reason}
    out = {}
    for name, *_ in diff:
        # a renamed option (tx_isolation -> transaction_isolation) is tried under B's name
        key = option_key(name)
        renamed = option_key(RENAMED_OPTIONS.get(key, key))
        out[name] = by_key.get(key) or by_key.get(renamed) or {"rank": None, "left": "unknown"}
    return out


def command(
    previous: str, server: str, *, workload: str, threads: int, collation: str, profile: str
) -> str:
    """The `perftrack explain` command that explains `server`'s change against `previous`
    on one cell (its other options: explain's defaults)."""
    words = [
        "perftrack",
        "explain",
        previous,
        server,
        "--workload",
        workload,
        "--threads",
        str(threads),
        "--charset",
        collation,
        "--profile",
        profile,
    ]
    return shlex.join(words)


# How many of the settings explain would try first an alert's row names.
FIRST = 5


def of_alerts(results: Store, alerts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any] | None]:
    """The why of each verdict alert (analysis/alerts.py's rows): the stored explanations
    of its pair; without one, the settings explain would try first (from the pair's
    variables as its run measured them) and the command for its cell. None: a change
    point (no pair). The alerts' runs are read once for all of them (a query per alert
    cost the site build seconds at a year of nights)."""
    runs = sorted({str(a["run_id"]) for a in alerts if a.get("run_id")})
    varsets: dict[str, list[Any]] = defaultdict(list)
    servers: dict[str, list[Any]] = defaultdict(list)
    if runs:
        for v in results.run_varsets(runs):
            varsets[v["run_id"]].append(v)
        for s in results.run_servers(runs):
            servers[s["run_id"]].append(s)
    stored: dict[tuple[str, str], list[explanations.StoredExplanation]] = {}
    out: list[dict[str, Any] | None] = []
    for alert in alerts:
        if alert["kind"] != "verdict" or not alert.get("base_server"):
            out.append(None)
            continue
        prev, new = alert["base_server"], alert["server_id"]
        if (prev, new) not in stored:
            stored[(prev, new)] = explanations.latest(results, prev, new)
        if stored[(prev, new)]:
            out.append({"explanations": stored[(prev, new)]})
            continue
        run = alert.get("run_id") or ""
        sets = {
            v["server"]: v["varset"]
            for v in varsets.get(run, [])
            if v["profile"] == alert["profile"] and v["collation"] == alert["collation"]
        }
        release = {s["server"]: (s["product"], s["version"]) for s in servers.get(run, [])}
        out.append(_why(results, alert, sets, release))
    return out


def _why(
    results: Store,
    alert: Mapping[str, Any],
    sets: Mapping[str, str],
    release: Mapping[str, tuple[str, str]],
) -> dict[str, Any]:
    """An alert's why without a stored explanation (`of_alerts`)."""
    prev, new = alert["base_server"], alert["server_id"]
    first: list[str] = []
    tried = left = 0
    if prev in sets and new in sets:
        diff = results.variables_diff(sets[prev], sets[new])
        ranks = ranked(diff, *release.get(new, ("", "")))
        order = sorted((r["rank"], n) for n, r in ranks.items() if r["rank"] is not None)
        values = {n: (va, vb) for n, va, vb, _ in diff}
        first = [f"{n} ({_short(values[n][0])} → {_short(values[n][1])})" for _, n in order[:FIRST]]
        tried, left = len(order), len(diff) - len(order)
    return {
        "explanations": [],
        "try_first": first,
        "tried": tried,
        "left_out": left,
        "command": command(
            prev,
            new,
            workload=alert["workload"],
            threads=alert["threads"],
            collation=alert["collation"],
            profile=alert["profile"],
        ),
    }


def _short(value: str | None, width: int = 40) -> str:
    if value is None:
        return "—"
    return value if len(value) <= width else value[: width - 1] + "…"
