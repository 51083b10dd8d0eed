"""The upgrade advisor page's data (`advisor.html`): what `perftrack advise --from R`
says, for every release R with results, as flat rows the page filters and draws."""

from __future__ import annotations

from typing import Any

from perftrack.analysis import advise, compare, detect
from perftrack.store.store import Store

SHOWN_SETTINGS = 12  # changed settings per row on the page (the CLI's --json has all)


def page_data(results: Store) -> dict[str, Any]:
    """{"from": [release ids with results], "rows": one row per (from, shape, target),
    "unreachable": one row per release with no path of measurements}."""
    tables = compare.tables(results, noise=results.noise_cv())
    diff = detect.variables_diff_of(results)
    bases = sorted({(r.product, r.version, r.server_id) for t in tables for r in t.rows})
    rows: list[dict[str, Any]] = []
    unreachable: list[dict[str, Any]] = []
    measured: dict[tuple[Any, ...], advise.Measured] = {}  # each pair compared once
    for _product, _version, sid in bases:
        for a in advise.advise(tables, sid, "tps", diff, measured):
            shape = {k: a.shape[k] for k in ("workload", "threads", "collation", "profile")}
            for t in a.targets:
                tp, lat = t.throughput, t.p95
                changed = [(k, v) for k, v in t.settings.items() if None not in v]
                rows.append(
                    {
                        "from": sid,
                        **shape,
                        "release": t.server,
                        "version": t.version,
                        "ratio": tp.ratio if tp else None,
                        "ci_low": tp.ci_low if tp else None,
                        "ci_high": tp.ci_high if tp else None,
                        "verdict": tp.verdict if tp else "inconclusive",
                        "p95_ratio": lat.ratio if lat else None,
                        "p95_ci_low": lat.ci_low if lat else None,
                        "p95_ci_high": lat.ci_high if lat else None,
                        "p95_verdict": lat.verdict if lat else None,
                        "measured": "directly" if t.direct else "chained via " + ", ".join(t.via),
                        "series": t.series,
                        "settings": [f"{k}: {v[0]} → {v[1]}" for k, v in changed[:SHOWN_SETTINGS]],
                        "settings_more": max(0, len(changed) - SHOWN_SETTINGS),
                        "settings_new": sum(1 for v in t.settings.values() if v[0] is None),
                        "settings_removed": sum(1 for v in t.settings.values() if v[1] is None),
                    }
                )
            unreachable.extend({"from": sid, **shape, "release": u} for u in a.unreachable)
    return {"from": [b[2] for b in bases], "rows": rows, "unreachable": unreachable}
