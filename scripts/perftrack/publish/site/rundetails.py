"""The site's run pages: one detail file per run (servers, cells, effective settings,
failures, variable diffs between its consecutive versions, stored explanations), and the
fingerprint that lets a build keep a run's file from the previous build."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from perftrack.publish.site import columns, why
from perftrack.publish.site.series import AXES, axis_label, dataset_label, iso
from perftrack.store import explanations
from perftrack.store.store import Store

# A failed cell's error-log tail is cut to this many characters on the run page: enough
# for the last dozen lines a person reads; the full tail stays in the DB and the record.
MAX_LOG_CHARS = 4000
# Variable values longer than this are cut in the diff table (some hold long path lists).
MAX_VALUE_CHARS = 300
# Bump when what a run's detail file holds changes: the site build then rewrites every
# run's file instead of keeping those whose run did not change (`run_fingerprint`).
RUN_DETAIL_FORMAT = 3  # 2: diff rows ranked as explain tries them; 3: tables encoded
# The detail file's tables, written in the site's column encoding (columns.encode: the
# page decodes them): a run's cells and explain rows repeat the same few strings, so
# encoded a file is ~8x smaller (issue 39: the run window's files were the site's
# largest part at the nightly's size). `run` is one object, `explanations` nested rows.
TABLES = ("servers", "cells", "effective", "failures", "variable_diffs", "explain_commands")


# The run page lists, and the site ships a detail file for, the runs that started within
# this many days of the newest run; older runs are one query away on the SQL page
# (`runs`, `results`), so the site does not grow a file a night forever.
RUN_WINDOW_DAYS = 366


def window(rows: list[dict[str, Any]], days: int = RUN_WINDOW_DAYS) -> list[dict[str, Any]]:
    """`rows` (runs_overview's, with `first_started_at`) that started within `days` of
    the newest start; a run without a start (no result yet) is kept."""
    starts = [r["first_started_at"] for r in rows if r.get("first_started_at") is not None]
    if not starts:
        return rows
    since = max(starts) - timedelta(days=days)
    return [r for r in rows if r.get("first_started_at") is None or r["first_started_at"] >= since]


class RunDetails:
    """The run list and run detail files of one open store; `order`: server -> its place
    in the site's version order."""

    def __init__(self, results: Store, order: dict[str, int]) -> None:
        self.st = results
        self.order = order
        self._explained: str | None = None  # explanations.state, once (fingerprint)

    def runs(self) -> list[dict[str, Any]]:
        """The runs of the last RUN_WINDOW_DAYS (before the newest run's start), newest
        first: the run page's list and detail files stay bounded (issue 39 item 3)."""
        rows = self.st.runs_overview()
        numbered: list[dict[str, Any]] = [
            {**r, "file": f"r{len(rows) - i:05d}"}  # a safe file name, oldest run = r00001
            for i, r in enumerate(rows)
        ]
        out: list[dict[str, Any]] = []
        for r in window(numbered):  # the run's columns, its times last, as ISO text
            run = {k: v for k, v in r.items() if k not in ("first_started_at", "last_finished_at")}
            run["started_at"] = iso(r["first_started_at"])
            run["finished_at"] = iso(r["last_finished_at"])
            out.append(run)
        return out

    @staticmethod
    def _by_run(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        """Rows of every run split by run_id (one query per run is ~50x slower), each
        without its run_id (the store's rows are left as they are)."""
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            row = dict(r)
            out[row.pop("run_id")].append(row)
        return out

    def fingerprint(self, run: dict[str, Any]) -> str:
        """What a run's detail file depends on: the run's row (its counts and times change
        when more of its records arrive), the servers' order, the stored explanations (any
        new one rewrites every run's file) and RUN_DETAIL_FORMAT."""
        if self._explained is None:
            self._explained = explanations.state(self.st)
        text = json.dumps(
            [RUN_DETAIL_FORMAT, run, sorted(self.order.items()), self._explained],
            default=str,
            sort_keys=True,
        )
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def details(
        self, runs: list[dict[str, Any]], *, subset: bool = False
    ) -> dict[str, dict[str, Any]]:
        """Per run (keyed by its file name): servers, cells, effective settings,
        failures and the variable diffs between its consecutive versions. `subset`: the
        runs are only some of the DB's (the queries read only theirs)."""
        only = [r["run_id"] for r in runs] if subset else None
        servers = self._by_run(self.st.run_servers(only))
        cells = self._by_run(self.st.run_cells(only))
        effective = self._by_run(self.st.run_effective(only))
        failures = self._by_run(self.st.run_failures(only))
        varsets = self._by_run(self.st.run_varsets(only))
        cache: dict[tuple[str, str], list[tuple[str, str | None, str | None, str]]] = {}
        explained: dict[tuple[str, str], list[explanations.StoredExplanation]] = {}
        out = {}
        for run in runs:
            rid = run["run_id"]
            srv = sorted(servers.get(rid, []), key=lambda x: self.order.get(x["server"], -1))
            run_cells = cells.get(rid, [])
            for c in run_cells:
                c["dataset"] = dataset_label(
                    c.pop("tables"),
                    c.pop("table_size"),
                    c.pop("duration_s"),
                    c.pop("connection"),
                    *(axis_label(a, c.pop(a)) for a in AXES),
                )
            fails = failures.get(rid, [])
            for f in fails:
                tail = f["error_log_tail"]
                f["error_log_tail"] = tail[-MAX_LOG_CHARS:] if tail else None
            out[run["file"]] = {
                "run": run,
                "servers": srv,
                "cells": run_cells,
                "effective": _settings(effective.get(rid, [])),
                "failures": fails,
                "variable_diffs": self._variable_diffs(varsets.get(rid, []), srv, cache),
                "explanations": self._explanations(srv, explained),
                "explain_commands": _commands(run_cells, self.order),
            }
        return out

    def _explanations(
        self,
        servers: list[dict[str, Any]],
        cache: dict[tuple[str, str], list[explanations.StoredExplanation]],
    ) -> list[dict[str, Any]]:
        """`perftrack explain`'s newest result for each consecutive pair of the run's
        versions (the pairs whose verdicts and variable diffs the run shows)."""
        out = []
        ids = [s["server"] for s in servers]
        for a, b in itertools.pairwise(ids):
            if (a, b) not in cache:
                cache[(a, b)] = explanations.latest(self.st, a, b)
            out += [{"previous": a, "server": b, **x} for x in cache[(a, b)]]
        return out

    def _variable_diffs(
        self, sets: list[dict[str, Any]], servers: list[dict[str, Any]], cache: dict[Any, Any]
    ) -> list[dict[str, Any]]:
        """SHOW GLOBAL VARIABLES differences between consecutive versions of one run, each
        with its place in the order `perftrack explain` would try it (`rank`, None: left
        out, with the reason in `left`)."""
        release = {s["server"]: (s["product"], s["version"]) for s in servers}
        by_config: dict[tuple[Any, Any], list[dict[str, Any]]] = defaultdict(list)
        for s in sets:
            by_config[(s["profile"], s["collation"])].append(s)
        out = []
        for (profile, coll), items in sorted(by_config.items(), key=lambda kv: str(kv[0])):
            items.sort(key=lambda s: self.order.get(s["server"], -1))
            for a, b in itertools.pairwise(items):
                key = (a["varset"], b["varset"])
                if key not in cache:
                    full = self.st.variables_diff(*key)
                    cache[key] = (
                        self._diff(full),
                        why.ranked(full, *release.get(b["server"], ("", ""))),
                    )
                diff, ranks = cache[key]
                for name, va, vb, change in diff:
                    out.append(
                        {
                            "profile": profile,
                            "collation": coll,
                            "previous": a["server"],
                            "server": b["server"],
                            "name": name,
                            "change": change,
                            "previous_value": va,
                            "value": vb,
                            **ranks[name],
                        }
                    )
        return out

    @staticmethod
    def _diff(full: why.Diff) -> why.Diff:
        return [(name, _cut(va), _cut(vb), change) for name, va, vb, change in full]


def _commands(cells: list[dict[str, Any]], order: dict[str, int]) -> list[dict[str, Any]]:
    """For each pair of consecutive versions the run measured on one cell: the fields of
    the `perftrack explain` command of that cell (`why.command`'s: the page writes the
    command from them, with the same quoting), with the cell's ratio new / previous (the
    page offers the worst first, or the cell a deep link names)."""
    by_cell: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for c in cells:
        if c["tps"] is not None:
            key = (c["workload"], c["threads"], c["collation"], c["profile"], c["dataset"])
            by_cell[key].append(c)
    out = []
    for (workload, threads, coll, profile, _), rows in by_cell.items():
        rows.sort(key=lambda c: order.get(c["server"], -1))
        for a, b in itertools.pairwise(rows):
            out.append(
                {
                    "previous": a["server"],
                    "server": b["server"],
                    "workload": workload,
                    "threads": threads,
                    "collation": coll,
                    "profile": profile,
                    "ratio": b["tps"] / a["tps"] if a["tps"] else None,
                }
            )
    out.sort(key=lambda c: (c["ratio"] is None, c["ratio"] or 0.0))
    return out


def encoded(detail: Mapping[str, Any]) -> dict[str, Any]:
    """A run's detail (`RunDetails.details`' value) as its file holds it: TABLES encoded."""
    return {k: columns.encode(v) if k in TABLES else v for k, v in detail.items()}


def decoded(detail: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of `encoded` (a run file's value, as `site png` and the tests read it)."""
    return {k: columns.decode(v) if k in TABLES else v for k, v in detail.items()}


def _settings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Effective settings (the record's `effective` JSON), one row per setting."""
    out = []
    for e in rows:
        settings = json.loads(e["effective"]) if isinstance(e["effective"], str) else {}
        for name, value in sorted(settings.items()):
            out.append(
                {
                    "server": e["server"],
                    "collation": e["collation"],
                    "profile": e["profile"],
                    "name": name,
                    "value": None if value is None else str(value),
                }
            )
    return out


def _cut(value: str | None) -> str | None:
    if value is None or len(value) <= MAX_VALUE_CHARS:
        return value
    return value[: MAX_VALUE_CHARS - 1] + "…"
