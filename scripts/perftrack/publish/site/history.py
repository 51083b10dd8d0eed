"""The nightly-history page's data, split per cell so the page loads only what it draws.

At a year of the nightly matrix (365 nights × ~260 cells × 3 runner classes) one file of
every night would be tens of MB; the page draws one cell at a time (runner class,
profile, data set, workload, collation, threads: every version and hardware key of it).
So the page loads `data/history_cells.js`, one row per cell with the file that holds it,
and then `data/history/hNNNNN.js` for the cell chosen (docs/site.md, "Nightly history").

A cell file holds:
- `points`: one row per night × version × hardware key: the median of the night's
  repeats of every metric measured (throughput with its min–max, p95, the cost columns);
- `change_points`: the change points `perftrack detect` stored for the cell's series,
  each of `kind` "environment" (the control server moved on the same night, or it is the
  control server) or "server" (this version only). Detect stores one row per cause
  (its `scope`, analysis/changepoints.py) under one series; here it is drawn on every
  cell it covers: a `class` change (the environment of a runner class) on every version
  line of every cell of that class, a `workload` change on that server's line in every
  cell of the class's workload, a `server` change in every cell of the workload on any
  class;
- `steps`: per change point and metric, the level before and after it, drawn as a step
  (computed by analysis/levels.py: medians of the nightly values between neighbouring
  change points of the same version and hardware).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from perftrack.analysis import levels
from perftrack.publish.site import columns, metrics
from perftrack.publish.site.histcache import HistoryCache
from perftrack.store.queries.history import HistoryTable

# The cell a chart draws: what the page's filters choose, in the page's filter order.
CELL_KEYS = ("runner_class", "profile", "dataset", "workload", "collation", "threads")
# (column, label, unit): the metrics the page offers, where a cell has any value of them
# (the one list of the site's metric selectors, publish/site/metrics.py)
METRICS = metrics.LABELS
# The result columns the history query takes medians of (tps and p95 it always has).
COST_COLUMNS = tuple(m for m, *_ in METRICS if m not in ("tps", "p95_ms"))
POINT_COLUMNS = ("at", "server", "vorder", "hw_key", "run_id", "n", "tps_min", "tps_max")
CP_COLUMNS = ("server", "hw_key", "at", "run_id", "kind", "rel_change", "p_value", "acknowledged")
FILE_PREFIX = "h"


def cell_key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row.get(k) for k in CELL_KEYS)


def _sortable(value: Any) -> tuple[int, Any]:
    return (
        (0, value) if isinstance(value, int | float) else (1, "" if value is None else str(value))
    )


def kind(change: dict[str, Any]) -> str:
    """ "environment" when the control server moved too (or it is the control), else "server"."""
    return "environment" if change.get("environment") or change.get("control") else "server"


# The cell keys a change of each scope shares with the cells it covers (`series`: all).
SCOPE_MATCH: dict[str, tuple[str, ...]] = {
    "class": ("runner_class",),
    "workload": ("runner_class", "profile", "dataset", "workload"),
    "server": ("profile", "dataset", "workload"),
    "series": CELL_KEYS,
}


def _cell_change_points(
    key: tuple[Any, ...], lines: Sequence[tuple[Any, Any]], cps: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The change points drawn in one cell (its lines: (server, hw_key)): its own and
    those of a wider scope covering it (a class-wide one on each version line of the cell)."""
    cell = dict(zip(CELL_KEYS, key, strict=True))
    lines = sorted(set(lines), key=str)
    out = []
    for c in cps:
        scope = c.get("scope") or "series"
        if any(c.get(k) != cell[k] for k in SCOPE_MATCH.get(scope, CELL_KEYS)):
            continue
        if scope == "class":
            out += [{**c, "server": s} for s, hw in lines if hw == c.get("hw_key")]
        elif scope == "series" or any(s == c["server"] for s, _ in lines):
            out.append(c)
    return sorted(out, key=lambda c: c["at"])


def split(
    history: HistoryTable | Sequence[dict[str, Any]],
    change_points: Sequence[dict[str, Any]],
    cache: HistoryCache | None = None,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """(index rows, {file name: cell data as JSON text}) from the history (the store's
    table, or rows in its shape) and the exporter's change points. The points of every
    cell are encoded by DuckDB (`HistoryTable.points_json`, the encoding of
    `columns.encode`); only the lines with change points come to Python, as columns,
    for their steps.

    With `cache` (a site build's) and a table made from the aggregate's parts, a cell's
    closed rows (the runs before the open month) go to a file of their own, named by the
    digest of what they are made of (`_Closed`) and taken from the previous build when
    it has it; the index row names it (`past`), the cell's file holds the open rows."""
    if not isinstance(history, HistoryTable):
        history = HistoryTable.from_rows(history, COST_COLUMNS)
    names = [m for m, *_ in METRICS]
    rows = {cell_key(r): r for r in history.cells(CELL_KEYS, names)}  # the table's rows
    closed = _Closed(history, cache) if cache is not None and history.closed else None
    keys = sorted(
        set(rows) | set(closed.cells if closed else ()),
        key=lambda k: tuple(_sortable(v) for v in k),
    )
    files = [f"{FILE_PREFIX}{n:05d}" for n in range(1, len(keys) + 1)]
    file_of = dict(zip(keys, files, strict=True))
    history.name_files(CELL_KEYS, list(file_of.items()))
    lines: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
    for f, server, hw in history.lines():
        lines[f].append((server, hw))
    for key, server, hw in closed.lines if closed else ():
        lines[file_of[key]].append((server, hw))
    cps = [{**c, "kind": kind(c)} for c in change_points]
    summary = closed.summaries(file_of, names) if closed else {}
    cells = {f: _cell_row(rows.get(k), summary.get(f), names) for k, f in file_of.items()}
    present = {f: [m for m in names if cells[f][f"has_{m}"]] for f in files}
    past = closed.write(file_of, present) if closed else {}
    by_metrics: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for f in files:
        by_metrics[tuple(present[f])].append(f)
    points: dict[str, str] = {}
    for ms, fs in by_metrics.items():
        cols = [*POINT_COLUMNS, *ms]
        points |= history.points_json(fs, cols, *ENCODING, past=False if cache else None)
    if cache is not None:
        cache.finish()
    cell_cps = {
        name: _cell_change_points(key, lines[name], cps)
        for key, name in zip(keys, files, strict=True)
    }
    drawn = sorted(
        {(name, c["server"], c["hw_key"]) for name, cs in cell_cps.items() for c in cs}, key=str
    )
    drawn_metrics = [m for m in names if any(m in present[f] for f, _, _ in drawn)]
    line_cols = history.line_points(drawn, drawn_metrics)
    by_file: dict[str, dict[tuple[Any, Any], Any]] = defaultdict(dict)
    for (f, server, hw), line in line_cols.items():
        by_file[f][(server, hw)] = line
    index, out = [], {}
    for key, name in zip(keys, files, strict=True):
        row = cells[name]
        steps_of = levels.steps_of_lines(by_file.get(name, {}), cell_cps[name], present[name])
        parts = {
            "metrics": columns.script_json(present[name]),
            "points": columns.script_json_text(points[name])
            if name in points  # else no open row: an empty table of the cell's columns
            else columns.script_json(columns.encode([], [*POINT_COLUMNS, *present[name]])),
            "change_points": columns.script_json(columns.encode(cell_cps[name], CP_COLUMNS)),
            "steps": columns.script_json(columns.encode(steps_of)),
        }
        out[name] = "{" + ",".join(f'"{k}":{v}' for k, v in parts.items()) + "}"
        index.append(
            {
                **dict(zip(CELL_KEYS, key, strict=True)),
                "charset": row["charset"],
                "file": name,
                "past": past.get(name),
                "nights": row["nights"],
                "first_at": row["first_at"],
                "last_at": row["last_at"],
                "change_points": len(cell_cps[name]),
            }
        )
    return index, out


ENCODING = (columns.FLOAT_SIGNIFICANT_DIGITS, columns.DICT_MAX_DISTINCT_FRACTION)


def _cell_row(
    opened: Mapping[str, Any] | None, closed: Mapping[str, Any] | None, names: Sequence[str]
) -> dict[str, Any]:
    """A cell's index values (`HistoryTable.cells`' row) from those of its open rows and
    its closed ones (either may be None). The runs of the two are apart, so nights add
    up; the charset is the first row's (a cell's rows have their collation's)."""
    parts = [p for p in (closed, opened) if p is not None]
    ats = [p[k] for p in parts for k in ("first_at", "last_at") if p[k] is not None]
    return {
        "charset": next((p["charset"] for p in parts if p["charset"] is not None), None),
        "nights": sum(p["nights"] for p in parts),
        "first_at": min(ats, default=None),
        "last_at": max(ats, default=None),
        **{f"has_{m}": any(p[f"has_{m}"] for p in parts) for m in names},
    }


SUMMARY = ("charset", "nights", "first_at", "last_at")  # and has_M: a cell's index values


class _Closed:
    """The cells' closed rows (a table made from parts, in a site build): their lines,
    what the index takes of them and their files, reading and labelling them only for
    the cells whose closed file is made (or whose summary the cache lacks)."""

    def __init__(self, history: HistoryTable, cache: HistoryCache) -> None:
        self.history, self.cache = history, cache
        self.runs = cache.digest(json.dumps(history.closed_runs(), default=str))
        self.state = cache.closed_state(self.runs) or {"cells": {}}
        self.lines_kept = self.state.get("lines") or history.closed_lines()
        labelled = history.add_closed(self.lines_kept)
        self.lines = [(cell_key(lab), server, lab["hw_key"]) for lab, _, server in labelled]
        series: dict[tuple[Any, ...], set[str]] = defaultdict(set)
        for lab, keys, _ in labelled:
            series[cell_key(lab)].add(json.dumps([lab, keys], sort_keys=True, default=str))
        # a cell's summary is kept under the digest of its closed series' labels
        self.cells = {k: cache.digest(json.dumps(sorted(s))) for k, s in series.items()}
        self.loaded: set[str] = set()

    def summaries(
        self, file_of: Mapping[tuple[Any, ...], str], names: Sequence[str]
    ) -> dict[str, Any]:
        """{file: its closed rows' `HistoryTable.cells` row} of the cells with some."""
        out, need = {}, []
        for key, digest in self.cells.items():
            got = self.state["cells"].get(digest)
            if isinstance(got, dict) and {*SUMMARY, *(f"has_{m}" for m in names)} <= set(got):
                out[file_of[key]] = got
            else:
                need.append(file_of[key])
        if need:
            self._load(need)
            for row in self.history.cells(("file",), names, past=True):
                if row["file"] in need:
                    out[row["file"]] = {k: v for k, v in row.items() if k != "file"}
        self.summary = {self.cells[k]: out[f] for k, f in file_of.items() if k in self.cells}
        return out

    def write(
        self, file_of: Mapping[tuple[Any, ...], str], present: Mapping[str, Sequence[str]]
    ) -> dict[str, str]:
        """{cell file: the name of its closed rows' file}: taken from the previous build
        or written (`HistoryCache`); keeps the closed rows' summary for the next build."""
        history, cache = self.history, self.cache
        vorder = sorted(history.vorder.items(), key=str)
        series: dict[tuple[Any, ...], list[str]] = defaultdict(list)
        for labels, skeys in history.series:
            series[cell_key(labels)].append(json.dumps(skeys, sort_keys=True, default=str))
        past = {}
        for key in self.cells:
            f = file_of[key]
            cols = [*POINT_COLUMNS, *present[f]]
            payload = [list(key), cols, self.runs, vorder, sorted(series[key])]
            past[f] = cache.past_name(json.dumps(payload, default=str))
        todo = [f for f in sorted(past) if not cache.reuse_past(past[f])]
        self._load([f for f in todo if f not in self.loaded])
        by_metrics: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for f in todo:
            by_metrics[tuple(present[f])].append(f)
        for ms, fs in by_metrics.items():
            got = history.points_json(fs, [*POINT_COLUMNS, *ms], *ENCODING, past=True)
            for f in fs:
                cache.write_past(past[f], '{"points":' + columns.script_json_text(got[f]) + "}")
        cache.keep_closed(self.runs, self.lines_kept, self.summary)
        return past

    def _load(self, files: Sequence[str]) -> None:
        """Read and label the closed rows of `files` (and of those loaded before)."""
        if files:
            self.loaded |= set(files)
            self.history.load_closed(sorted(self.loaded))


def _ms(iso: str | None) -> float | None:
    """ISO time (…Z) → milliseconds since the epoch, as Vega's temporal fields take them."""
    import datetime as dt

    if not iso:
        return None
    return dt.datetime.fromisoformat(str(iso).replace("Z", "+00:00")).timestamp() * 1000


def chart_datasets(
    points: Sequence[dict[str, Any]],
    change_points: Sequence[dict[str, Any]],
    hardware_changes: Sequence[dict[str, Any]],
    annotations: Sequence[dict[str, Any]],
) -> dict[str, list[dict[str, Any]]]:
    """One cell's throughput in the fields of site/specs/history.vl.json, for `site png`
    (the page builds the same in history.js, with its metric and rolling median; here the
    line is each night's median)."""
    table = [
        {
            **p,
            "t": _ms(p["at"]),
            "night": str(p["at"])[:16].replace("T", " ") + " UTC",
            "v": p["tps"],
            "med": p["tps"],
            "lo": p["tps_min"],
            "hi": p["tps_max"],
            "line": f"{p['server']} · {p['hw_key']}",
        }
        for p in points
    ]
    cps = [{**c, "kind": kind(c)} for c in change_points]
    lines, marks = [], []
    for s in levels.steps_of_points(points, cps, ["tps"]):
        a, b, e = _ms(s["from_at"]), _ms(s["at"]), _ms(s["to_at"])
        for o, (t, y) in enumerate(
            ((a, s["before"]), (b, s["before"]), (b, s["after"]), (e, s["after"]))
        ):
            lines.append({"cp": s["cp"], "kind": s["kind"], "o": o, "t": t, "y": y})
        marks.append(
            {
                **s,
                "t": b,
                "day": s["at"][:10],
                "kind_text": s["kind"],
                "run_id": cps[s["cp"]]["run_id"],
            }
        )
    return {
        "table": table,
        "steps": lines,
        "cp_marks": marks,
        "hardware_changes": [
            {**c, "t": _ms(c["at"]), "day": c["at"][:10]} for c in hardware_changes
        ],
        "annotations": [
            {**a, "t": _ms(str(a["date"])[:10] + "T00:00:00Z"), "day": str(a["date"])[:10]}
            for a in annotations
        ],
    }
