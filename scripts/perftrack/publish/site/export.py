"""The site's data: compact per-page data sets exported from the results DB (read-only).

Every page reads a few named data sets (see `PAGE_DATA` in build.py); each is a list of
flat rows, encoded by `columns.encode`. All are derived from the DB and the config files
at build time: nothing is written per version by hand.

Which results each data set uses:
- `summary` (trend, thread scaling, studies) and `charset`: per comparison group
  (compare.GROUP_COLS) and server, the newest run that measured it, on the runner class's
  current hardware — the present picture, with its repeats interleaved in one run;
  `charset` compares two collations as `perftrack compare SERVER --axis charset` does.
- `verdicts` (overview, heatmap): verdicts.latest.
- `history`: every run (night), all hardware; a hardware change starts a new segment.
- `runs` and one detail file per run.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perftrack import __version__
from perftrack.analysis import axis, compare, headline, medians, stats
from perftrack.analysis.annotations import Annotation
from perftrack.publish.site import cost, metrics, verdicts
from perftrack.publish.site import history as history_files
from perftrack.publish.site.histcache import HistoryCache
from perftrack.publish.site.rundetails import RunDetails
from perftrack.publish.site.series import AXES, axis_label, dataset_label, iso
from perftrack.servers import rules
from perftrack.store.queries.history import HistoryTable
from perftrack.store.queries.shapes import NewestCost, NewestRepeats, ServerSummary
from perftrack.store.store import Store

CONFIDENCE = medians.CONFIDENCE  # the bands' coverage, the same as the verdicts' intervals
BASELINE_CHARSET = "latin1"  # the charset impact page's reference (article 000's tables)
# Preferred latin1 collation when a group measured more than one: the server default.
BASELINE_COLLATION = "latin1_swedish_ci"


def version_sort_key(product: str, version: str, server: str) -> tuple[Any, ...]:
    try:
        v: tuple[Any, ...] = rules.parse_version(version)
    except Exception:  # a version string perftrack cannot parse sorts last, by name
        v = (float("inf"),)
    return (product, v, server)


@dataclass(kw_only=True)
class SiteData:
    meta: dict[str, Any]
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    # the index's opening lines: one per version pair (analysis/headline.py, as `compare`)
    headline: list[dict[str, Any]] = field(default_factory=list)
    metric_verdicts: list[dict[str, Any]] = field(default_factory=list)  # the heatmap's
    summary: list[dict[str, Any]] = field(default_factory=list)
    charset: list[dict[str, Any]] = field(default_factory=list)
    # the history (a row per series, server and night) stays in the store: its rows
    # count, and the table the cell files are written from (site/history.py)
    history_rows: int = 0
    history: HistoryTable | None = None
    hardware_changes: list[dict[str, Any]] = field(default_factory=list)
    change_points: list[dict[str, Any]] = field(default_factory=list)
    annotations: list[dict[str, Any]] = field(default_factory=list)
    # the history page's index and its per-cell files (site/history.py)
    history_cells: list[dict[str, Any]] = field(default_factory=list)
    history_files: dict[str, str] = field(default_factory=dict)  # name -> JSON text
    runs: list[dict[str, Any]] = field(default_factory=list)
    run_details: dict[str, dict[str, Any]] = field(default_factory=dict)
    # run_id -> [file, fingerprint] of every run; files kept from the previous build
    run_fingerprints: dict[str, list[str]] = field(default_factory=dict)
    reused_runs: list[str] = field(default_factory=list)
    studies: list[dict[str, Any]] = field(default_factory=list)
    cost: list[dict[str, Any]] = field(default_factory=list)  # site/cost.py


# What `Exporter.describe` reads of a row besides its collation: the key of its answer.
DESCRIBED: tuple[str, ...] = (
    "runner_class",
    "hw_key",
    "profile",
    "tables",
    "table_size",
    "duration_s",
)
DESCRIBED += ("connection", *AXES, "workload", "threads")

# What `series_samples` gives of a series' server after the series columns (its stored
# stand_in, the fifth, is history and not exported: see compare.tables).
SAMPLE_SERVER = ("server_id", "product", "version", "version_string")


class Exporter:
    """Reads one open store (its named site queries); each method returns one data set."""

    def __init__(self, results: Store, notes: list[Annotation]) -> None:
        self.st = results
        self.notes = notes
        self.servers = self._servers()
        self.order = {s["server"]: i for i, s in enumerate(self.servers)}
        self.current_hw = results.current_hardware()
        self.verdicts_origin = "none"
        self.charset_of = results.collation_charsets()
        self._described: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.run_pages = RunDetails(results, self.order)
        self._history: HistoryTable | None = None
        self._newest_cost: list[NewestCost] | None = None

    def _servers(self) -> list[ServerSummary]:
        rows = self.st.server_summaries()
        rows.sort(key=lambda s: version_sort_key(s["product"], s["version"], s["server"]))
        return rows

    def describe(self, group: Mapping[str, Any]) -> dict[str, Any]:
        """The common fields of a series row, from a group dict (compare's or ours).
        Computed once per series (the history has a row per series and run): callers copy
        the dict (`{**describe(r), …}`), never change it."""
        coll = group.get("coll", group.get("collation"))
        key = (coll, *(group.get(k) for k in DESCRIBED))
        if key not in self._described:
            self._described[key] = self._describe(group, coll)
        return self._described[key]

    def _describe(self, group: Mapping[str, Any], coll: Any) -> dict[str, Any]:
        return {
            "runner_class": group["runner_class"],
            "hw_key": group["hw_key"],
            "profile": group["profile"],
            "dataset": dataset_label(
                group["tables"],
                group["table_size"],
                group["duration_s"],
                group["connection"],
                *(axis_label(a, group.get(a)) for a in AXES),
            ),
            "workload": group["workload"],
            "threads": group["threads"],
            "charset": self.charset_of.get(coll),
            "collation": coll,
        }

    # --- verdicts / summary / charset ------------------------------------------------

    def verdicts(self) -> list[dict[str, Any]]:
        rows, self.verdicts_origin = verdicts.latest(
            self.st, self.notes, self.current_hw, self.describe
        )
        for r in rows:
            r["vorder"] = self.order.get(r["server"], -1)
        return rows

    def change_points(self) -> list[dict[str, Any]]:
        """Change points `perftrack detect` stored (none until it has run on ≥ 8 nights)."""
        rows = self.st.change_points(verdicts.METRIC)
        return [
            {
                **self.describe(r),
                "server": r["server_id"],
                "at": iso(r["at_time"]),
                "run_id": r["run_id"],
                "before": r["before_value"],
                "after": r["after_value"],
                "rel_change": r["rel_change"],
                # the size's 95% interval; the scope of the change (class: an environment
                # change of the runner class, drawn on every series of it; server: one
                # server's workload on every class; workload: at every thread count and
                # charset of one class; series) and how many series it spans (schema v7)
                "rel_low": r.get("rel_low"),
                "rel_high": r.get("rel_high"),
                "scope": r.get("scope") or "series",
                "series_count": r.get("series_count") or 1,
                "p_value": r["p_value"],
                "environment": bool(r["environment"]),
                "control": bool(r["is_control"]),
                "acknowledged": r["acknowledged"],
            }
            for r in rows
        ]

    def annotations(self) -> list[dict[str, Any]]:
        """configs/annotations.yaml entries, flat: dated ones are drawn on the history."""
        out = []
        for a in self.notes:
            m = a.match
            pair = m.get("servers")
            out.append(
                {
                    "date": a.date,
                    "reason": a.reason,
                    "link": a.link,
                    "server": m.get("server") or (pair[1] if pair else None),
                    "previous": pair[0] if pair else None,
                    **{k: m.get(k) for k in ("workload", "collation", "threads", "profile")},
                    "runner_class": m.get("runner_class"),
                }
            )
        return out

    def newest(self) -> list[NewestRepeats]:
        """Per group and server: the newest run's repeats (current hardware only)."""
        rows = self.st.newest_repeats()
        return [r for r in rows if self.current_hw.get(r["runner_class"]) == r["hw_key"]]

    def newest_cost(self) -> list[NewestCost]:
        """The store's `newest_cost` of every column the summary and the cost page list:
        one scan of the results for both (rows shared: read them, never change them)."""
        if self._newest_cost is None:
            listed = tuple(dict.fromkeys((*metrics.COST_COLUMNS, *cost.COLUMNS)))
            self._newest_cost = self.st.newest_cost(listed)
        return self._newest_cost

    def summary(self, newest: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for r in newest:
            values = [float(v) for v in r["tps"]]
            tps, lo, hi = medians.with_interval(values)
            p95 = [float(v) for v in r["p95"] if v is not None]
            p95_ms, p95_lo, p95_hi = medians.with_interval(p95)
            out.append(
                {
                    **self.describe(r),
                    "server": r["server"],
                    "vorder": self.order.get(r["server"], -1),
                    "n": len(values),
                    "tps": tps,
                    "tps_low": lo,
                    "tps_high": hi,
                    "p95_ms": p95_ms,
                    "p95_ms_low": p95_lo,
                    "p95_ms_high": p95_hi,
                    "run_id": r["run_id"],
                    "_key": metrics.series_run(r),
                }
            )
        metrics.add_cost(out, self.newest_cost())
        out.sort(key=lambda r: (r["workload"], r["collation"], r["threads"], r["vorder"]))
        return out

    def charset(self) -> list[dict[str, Any]]:
        """Each collation's throughput ratio to the latin1 one, same server and cell (current
        hardware): each side the newest run that measured it, compared by the axis
        comparison of `perftrack compare SERVER --axis charset` (analysis/axis.py
        `compared_all`, i.e. compare.versus_all: paired when both come from one run)."""
        fixed = axis.fixed_columns("charset")
        by_cell: dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]] = defaultdict(dict)
        for d in self._newest_run_values():
            colls = by_cell[(*(d[c] for c in fixed), d["server_id"])]
            colls[d["collation"]] = d["values"]
        items, where = [], []
        for cell, cells in by_cell.items():
            bases = [c for c in cells if self.charset_of.get(c) == BASELINE_CHARSET]
            if not bases:
                continue
            base = BASELINE_COLLATION if BASELINE_COLLATION in bases else sorted(bases)[0]
            key = dict(zip(fixed, cell[:-1], strict=True))
            for coll, side in sorted(cells.items()):
                if coll != base:
                    items.append(((base, coll), key, (cells[base], side)))
                    where.append(cell[-1])
        noise, spreads = self.st.noise_cv(), self.st.noise_spread()
        tables = axis.compared_all("charset", items, verdicts.METRIC, noise, spreads)
        out = []
        for ((base, coll), key, (_, side)), server, t in zip(items, where, tables, strict=True):
            c = t.rows[1].vs_previous
            if c is None:
                continue
            out.append(
                {
                    **self.describe({**key, "collation": coll}),
                    "server": server,
                    "vorder": self.order.get(server, -1),
                    "baseline": base,
                    "n": c.n_b,
                    "n_baseline": c.n_a,
                    "ratio": c.ratio,
                    "ci_low": c.ci_low,
                    "ci_high": c.ci_high,
                    "p_value": c.p_value,
                    "threshold": c.threshold,
                    "paired": c.paired,
                    "verdict": c.verdict,
                    "run_id": side[-1]["run_id"],
                }
            )
        out.sort(key=lambda r: (r["workload"], r["threads"], r["collation"], r["vorder"]))
        return out

    def _newest_run_values(self) -> list[dict[str, Any]]:
        """Per series and server (current hardware only): the values of its newest run,
        as `series_values` rows (key `values`), from the store's `series_samples` of the
        comparisons' window: the answer compare.tables reads (advisor), asked once."""
        samples = self.st.series_samples(
            compare.METRICS[verdicts.METRIC][0], recent=compare.RECENT_VALUES
        )
        n = len(compare.GROUP_COLS)
        out = []
        for s in samples:  # values oldest first: the newest run's are the last ones
            series = dict(zip(compare.GROUP_COLS, s[:n], strict=True))
            if self.current_hw.get(series["runner_class"]) != series["hw_key"]:
                continue
            ident = dict(zip(SAMPLE_SERVER, s[n : n + 4], strict=True))
            values, latency, run_ids, rounds = s[n + 5 :]
            first = len(run_ids)
            while first > 0 and run_ids[first - 1] == run_ids[-1]:
                first -= 1
            rows = [
                {**series, **ident, "value": v, "latency_pct_ms": lat, "run_id": r, "round": k}
                for v, lat, r, k in zip(
                    values[first:], latency[first:], run_ids[first:], rounds[first:], strict=True
                )
            ]
            out.append({**series, "server_id": ident["server_id"], "values": rows})
        return out

    # --- history ---------------------------------------------------------------------

    def history_table(self, cache: HistoryCache | None = None) -> HistoryTable:
        """The history (every run, all hardware: a row per series, server and night) as
        the store's table, labelled as the other data sets are (`describe`, `vorder`,
        `at`); DuckDB writes its cell files (store/queries/history.py). `cache`: a site
        build's, whose monthly aggregate parts it is read from (publish/site/histcache.py)."""
        if self._history is None:
            metrics = history_files.COST_COLUMNS
            parts = cache.aggregate(self.st, metrics) if cache is not None else None
            self._history = self.st.history_table(metrics, self.describe, self.order, iso, parts)
        return self._history

    def history(self) -> list[dict[str, Any]]:
        """The history's rows, oldest first (`site png history`)."""
        return self.history_table().rows()

    def hardware_changes(self) -> list[dict[str, Any]]:
        """Where a runner class's hardware key changed: series are never joined across."""
        out = []
        last: dict[str, str] = {}
        for rc, hw, at, cpu in self.st.hardware_timeline():
            if rc in last and last[rc] != hw:
                out.append(
                    {
                        "runner_class": rc,
                        "at": iso(at),
                        "from_hw": last[rc],
                        "hw_key": hw,
                        "cpu_model": cpu,
                    }
                )
            last[rc] = hw
        return out

    # --- meta ------------------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        counts = self.st.results_by_status()
        first, last = self.st.results_span()
        hardware = self.st.hardware_rows()
        return {
            "generated_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
            "perftrack_version": __version__,
            "results": counts,
            "empty": not counts.get("ok"),
            "first_result_at": iso(first),
            "last_result_at": iso(last),
            "servers": self.servers,
            "hardware": hardware,
            "current_hardware": [
                {"runner_class": k, "hw_key": v} for k, v in sorted(self.current_hw.items())
            ],
            "confidence": CONFIDENCE,
            "threshold": stats.MIN_EFFECT,
            # when `perftrack detect` last stored its results (None: never), so the history
            # page can tell "no change point found" from "not computed yet"
            "detect_ran_at": iso(self.st.verdicts_freshness(verdicts.METRIC)[0]),
        }


def cost_rows(exporter: Exporter) -> list[dict[str, Any]]:
    return cost.rows(exporter)


def export(
    results: Store,
    notes: list[Annotation],
    kept: dict[str, list[str]] | None = None,
    history_cache: HistoryCache | None = None,
) -> SiteData:
    """Every data set of the site from one open (read-only) store. `kept`: run_id ->
    [file, fingerprint] of the run detail files the previous build wrote (and that are
    still there); a run whose file and fingerprint are the same is not recomputed, its
    file is listed in `reused_runs` for the build to take over. `history_cache`: what
    the history's data keeps from the previous build (publish/site/histcache.py)."""
    ex = Exporter(results, notes)
    newest = ex.newest()
    data = SiteData(meta=ex.meta())
    data.verdicts = ex.verdicts()
    # what the overview shows by default: the verdicts of each runner class's current hardware
    data.headline = headline.of_rows([r for r in data.verdicts if r["hw_current"]])
    data.summary = ex.summary(newest)
    data.charset = ex.charset()
    data.history = ex.history_table(history_cache)
    data.history_rows = data.history.count()
    data.hardware_changes = ex.hardware_changes()
    data.change_points = ex.change_points()
    data.annotations = ex.annotations()
    data.history_cells, data.history_files = history_files.split(
        data.history, data.change_points, history_cache
    )
    data.meta["verdicts_from"] = ex.verdicts_origin
    data.meta["metrics"] = metrics.defs()
    data.metric_verdicts = metrics.heatmap_verdicts(ex)
    pages = ex.run_pages
    data.runs = pages.runs()
    data.run_fingerprints = {r["run_id"]: [r["file"], pages.fingerprint(r)] for r in data.runs}
    kept = kept or {}
    todo = [r for r in data.runs if kept.get(r["run_id"]) != data.run_fingerprints[r["run_id"]]]
    data.reused_runs = sorted(r["file"] for r in data.runs if r not in todo)
    data.run_details = pages.details(todo, subset=len(todo) < len(data.runs))
    data.cost = cost_rows(ex)
    return data


def export_for_chart(results: Store, notes: list[Annotation], dataset: str) -> dict[str, Any]:
    """Only what one chart draws: {"table": rows, other named data sets…} (`site png`)."""
    ex = Exporter(results, notes)
    if dataset == "verdicts":  # the pages' default view: each runner class's current hardware
        return {"table": [r for r in ex.verdicts() if r["hw_current"]]}
    if dataset == "summary":
        return {"table": ex.summary(ex.newest())}
    if dataset == "charset":
        return {"table": ex.charset()}
    if dataset == "cost":
        return {"table": cost_rows(ex)}
    if dataset == "history":
        return {
            "table": ex.history(),
            "hardware_changes": ex.hardware_changes(),
            "annotations": ex.annotations(),
            "change_points": ex.change_points(),
        }
    raise ValueError(f"unknown data set {dataset}")
