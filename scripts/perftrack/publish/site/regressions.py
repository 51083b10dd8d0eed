"""The Regressions page's data (`data/regressions.js`) and its Atom feed (`regressions.atom`).

Both list the open alerts (analysis/alerts.py: new and acknowledged), newest first (by
when detect first reported them, then by the change's own time), as the last `perftrack
detect` stored them. Each row links to its run's detail page and to the history of its
series (the deep links those pages read). The feed's ids are the alerts' own, so a feed
reader shows a change once however often the site is rebuilt. A verdict alert shows both
results: detect's verdict it was found from and its paired re-measurement, if any; the
page also lists the alerts a paired re-measurement closed as not reproduced.
"""

from __future__ import annotations

import datetime as dt
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from perftrack.analysis import alerts
from perftrack.publish.site import why
from perftrack.publish.site.series import AXES, axis_label, dataset_label
from perftrack.store.store import Store

FEED = "regressions.atom"
PAGE = "regressions.html"
ATOM_NS = "http://www.w3.org/2005/Atom"
# tag: URIs (RFC 4151) need a date; a fixed one keeps every id the same forever.
ID_PREFIX = "tag:perftrack,2026:"
EPOCH = "1970-01-01T00:00:00Z"  # `updated` of a feed with no alert at all


def _iso(value: Any) -> str | None:
    """RFC 3339 UTC text of a DB timestamp (naive UTC)."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.replace(microsecond=0, tzinfo=None).isoformat() + "Z"
    return str(value)


def _hash(params: dict[str, Any]) -> str:
    return "#" + "&".join(
        f"{urllib.parse.quote(k, safe='')}={urllib.parse.quote(str(v), safe='')}"
        for k, v in params.items()
        if v is not None
    )


def _change(alert: Mapping[str, Any]) -> str:
    if alert["kind"] == "verdict":
        return f"{alert['base_server']} → {alert['server_id']}"
    return f"{alert['server_id']}: nightly change point"


def _run_link(alert: Mapping[str, Any]) -> dict[str, Any]:
    """The run page's deep link to one alert's pair and cell (a change point has no pair)."""
    link = {"run": alert["run_id"]}
    if alert["kind"] != "verdict":
        return link
    return link | {
        "previous": alert["base_server"],
        "server": alert["server_id"],
        "collation": alert["collation"],
        "profile": alert["profile"],
        "workload": alert["workload"],
        "threads": alert["threads"],
    }


def row(alert: Mapping[str, Any], both: dict[str, str | None] | None = None) -> dict[str, Any]:
    """One alert as the page shows it: texts, numbers, the two deep links and, for a
    verdict, both results (alerts.evidence: detect's verdict it was found from, its
    paired re-measurement)."""
    dataset = dataset_label(
        alert["tables"],
        alert["table_size"],
        alert["duration_s"],
        alert["connection"],
        *(axis_label(x, alert.get(x)) for x in AXES),
    )
    history = {
        "runner_class": alert["runner_class"],
        "profile": alert["profile"],
        "dataset": dataset,
        "workload": alert["workload"],
        "collation": alert["collation"],
        "threads": alert["threads"],
    }
    return {
        "id": alert["alert_id"],
        "state": alert["state"],
        "kind": alert["kind"],
        "change": _change(alert),
        "server": alert["server_id"],
        "previous": alert["base_server"],
        "workload": alert["workload"],
        "threads": alert["threads"],
        "collation": alert["collation"],
        "profile": alert["profile"],
        "runner_class": alert["runner_class"],
        "hw_key": alert["hw_key"],
        "dataset": dataset,
        "ratio": alert["ratio"],
        "first_seen": _iso(alert["first_seen_at"]),
        "change_at": _iso(alert["change_at"]),
        "updated": _iso(alert["state_since"]),
        "reason": alert["reason"],
        "link": alert["link"],
        "run_id": alert["run_id"],
        # the run page with this pair's why selected (explanation, ranked settings diff)
        "run_href": f"runs.html{_hash(_run_link(alert))}" if alert["run_id"] else None,
        "history_href": f"history.html{_hash(history)}",
        "found": (both or {}).get("found"),
        "paired": (both or {}).get("paired"),
    }


def page_data(results: Store) -> dict[str, Any]:
    """{open: rows newest first, not_reproduced: the alerts a paired re-measurement
    closed (rows, both results shown), closed: {state: count}, checked_at}."""
    stored = results.stored_alerts(alerts.METRIC)
    closed: dict[str, int] = {}
    for a in stored:
        if a["state"] not in alerts.OPEN_STATES:
            closed[a["state"]] = closed.get(a["state"], 0) + 1
    checked = max((a["checked_at"] for a in stored), default=None)
    shown = [a for a in stored if a["state"] in (*alerts.OPEN_STATES, "not_reproduced")]
    both = alerts.evidence_of(results, shown, alerts.METRIC)
    rows = [row(a, e) for a, e in zip(shown, both, strict=True)]
    opened = [(a, r) for a, r in zip(shown, rows, strict=True) if r["state"] in alerts.OPEN_STATES]
    whys = why.of_alerts(results, [a for a, _ in opened])
    return {
        "open": [{**r, "why": w} for (_, r), w in zip(opened, whys, strict=True)],
        "not_reproduced": [r for r in rows if r["state"] == "not_reproduced"],
        "closed": closed,
        "checked_at": _iso(checked),
    }


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    e = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}", attrs)
    if text is not None:
        e.text = text
    return e


def _summary(row: dict[str, Any]) -> str:
    ratio = "—" if row["ratio"] is None else f"{row['ratio']:.3f}"
    parts = [
        f"{row['state']}: {row['change']}",
        f"ratio {ratio}",
        f"{row['workload']} · {row['threads']} thread(s) · {row['collation']} · profile "
        f"{row['profile']} · {row['dataset']} · runner {row['runner_class']}",
        f"first reported {str(row['first_seen'])[:10]}",
    ]
    if row["reason"]:
        parts.append(f"acknowledged: {row['reason']}")
    if row.get("paired"):
        parts.append(f"found {row['found']}; {row['paired']}")
    return "; ".join(parts)


def feed(data: dict[str, Any]) -> bytes:
    """The Atom 1.0 feed (RFC 4287) of the open alerts. Links are relative to the feed's
    own address (the site's directory), as RFC 4287 allows."""
    ET.register_namespace("", ATOM_NS)
    root = ET.Element(f"{{{ATOM_NS}}}feed")
    _sub(root, "id", ID_PREFIX + "regressions")
    _sub(root, "title", "perftrack: open regressions")
    updated = max((r["updated"] for r in data["open"]), default=None)
    _sub(root, "updated", updated or data.get("checked_at") or EPOCH)
    author = _sub(root, "author")
    _sub(author, "name", "perftrack")
    _sub(root, "link", rel="self", type="application/atom+xml", href=FEED)
    _sub(root, "link", rel="alternate", type="text/html", href=PAGE)
    for r in data["open"]:
        e = _sub(root, "entry")
        _sub(e, "id", f"{ID_PREFIX}alert:{r['id']}")
        _sub(e, "title", f"{r['state']}: {r['change']} ({r['workload']}, {r['threads']} thr)")
        _sub(e, "updated", r["updated"])
        _sub(e, "published", r["first_seen"])
        _sub(e, "link", rel="alternate", type="text/html", href=f"{PAGE}#alert-{r['id']}")
        if r["run_href"]:
            _sub(e, "link", rel="related", type="text/html", href=r["run_href"])
        _sub(e, "link", rel="related", type="text/html", href=r["history_href"])
        _sub(e, "category", term=r["state"])
        _sub(e, "summary", _summary(r), type="text")
    ET.indent(root)
    feed: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return feed + b"\n"
