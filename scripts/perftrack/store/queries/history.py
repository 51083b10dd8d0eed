"""The site's nightly history as a table DuckDB writes out (per-cell JSON).

One row per site series, server and run (night): the median of the night's repeats of
each metric, throughput's min–max, in the site's row shape (`HISTORY_COLUMNS`). At 1,000
nights of the nightly matrix that is ~800k rows: turned into a Python dict each, then
into JSON by Python, it cost the site build a minute. So the rows stay in a TEMP table
of the store's connection and DuckDB writes each cell's points as JSON text in the
site's column encoding; Python sees only the labels (one per series, run and server),
the cells' index and the points of the lines that have change points
(publish/site/history.py draws their steps).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from perftrack.store import nightfiles
from perftrack.store.queries.series import metric_column
from perftrack.store.queries.site import SITE_SERIES

# The site's history row: the series' labels (what the site shows of a series), then the
# night's values; `rn` (the row's place, oldest first) and `file` (the cell's data file)
# are the table's own.
LABEL_COLUMNS = ("runner_class", "hw_key", "profile", "dataset", "workload", "threads")
LABEL_COLUMNS += ("charset", "collation")
VALUE_COLUMNS = ("server", "vorder", "at", "run_id", "n", "tps", "tps_min", "tps_max", "p95_ms")
TYPES = {"threads": "INTEGER", "vorder": "INTEGER", "n": "BIGINT", "sid": "BIGINT", "rn": "BIGINT"}
TYPES["li"] = "BIGINT"
TYPES |= dict.fromkeys(("tps", "tps_min", "tps_max", "p95_ms"), "DOUBLE")
TABLE = "site_history"
# the table's makings (dropped once it is made) and the cells' files
_RAW, _SERIES, _FILES = "site_history_raw", "site_history_series", "site_history_files"
_RUNS, _ORDER = "site_history_runs", "site_history_vorder"
_WANTED = "site_history_lines"  # the lines whose points line_points reads
_AGG, _OPEN = "site_history_agg", "site_history_open"  # the aggregate, the open runs
# The columns of the DB that name a series, as the site's labels (`describe`) read them.
SERIES_KEYS = (*(c for c in SITE_SERIES if c != "coll"), "coll")


def _type(column: str) -> str:
    return TYPES.get(column, "DOUBLE" if column.endswith(("_txn", "ipc")) else "VARCHAR")


def _temp(con: duckdb.DuckDBPyConnection, name: str, columns: Mapping[str, list[Any]]) -> None:
    """A TEMP table from parallel lists (column name -> values); types from `_type`."""
    cols = ", ".join(f'unnest(?::{_type(c)}[]) AS "{c}"' for c in columns)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT {cols}", list(columns.values()))


class HistoryTable:
    """The history rows of one connection (TEMP table `site_history`), and what the site
    writes of them. `metrics`: the value columns beyond throughput and p95."""

    def __init__(self, con: duckdb.DuckDBPyConnection, metrics: Sequence[str]) -> None:
        self.con = con
        self.metrics = tuple(metric_column(m) for m in metrics)
        self.columns = (*LABEL_COLUMNS, *VALUE_COLUMNS, *self.metrics)
        self._select = ", ".join(f'"{c}"' for c in self.columns)
        # set by `history_table`: (labels, series keys) of each series; server -> vorder
        self.series: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.vorder: dict[str, int] = {}

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> HistoryTable:
        """The table of rows already in the site's shape, in a DB of its own (tests)."""
        table = cls(duckdb.connect(":memory:"), metrics)
        values = {c: [r.get(c) for r in rows] for c in table.columns}
        _temp(table.con, TABLE, {**values, "rn": list(range(len(rows)))})
        table.con.execute(f"ALTER TABLE {TABLE} ADD COLUMN past BOOLEAN DEFAULT false")
        return table

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cur = self.con.execute(sql, list(params))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def _types(self) -> dict[str, str]:
        return {r[0]: r[1] for r in self.con.execute(f"DESCRIBE {TABLE}").fetchall()}

    def count(self) -> int:
        row = self.con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()
        return int(row[0]) if row else 0

    def rows(self, where: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """The rows (those whose columns equal `where`'s values), oldest first."""
        cond = " AND ".join(f"{_col(self, c)} IS NOT DISTINCT FROM ?" for c in where or {})
        return self._all(
            f"SELECT {self._select} FROM {TABLE} WHERE {cond or 'true'} ORDER BY rn",
            list((where or {}).values()),
        )

    # --- the history page's cells --------------------------------------------------

    def cells(self, keys: Sequence[str], metrics: Sequence[str]) -> list[dict[str, Any]]:
        """One row per cell (distinct `keys`): the first row's charset, nights, first and
        last `at`, and `has_M` for each of `metrics`: whether the cell has any value of M."""
        ks = ", ".join(_col(self, k) for k in keys)
        has = "".join(f", count({_col(self, m)}) > 0 AS has_{m}" for m in metrics)
        return self._all(
            f"SELECT {ks}, arg_min(charset, rn) AS charset, count(DISTINCT run_id) AS nights, "
            f'min("at") AS first_at, max("at") AS last_at{has} FROM {TABLE} GROUP BY ALL'
        )

    def name_files(self, keys: Sequence[str], files: Sequence[tuple[Sequence[Any], str]]) -> None:
        """Give each cell (its `keys` values) its file: later calls select cells by file."""
        cols = {k: [v[i] for v, _ in files] for i, k in enumerate(keys)}
        _temp(self.con, _FILES, {**cols, "file": [f for _, f in files]})
        on = " AND ".join(f'h."{k}" IS NOT DISTINCT FROM f."{k}"' for k in keys)
        picked = ", ".join(f'h."{c}"' for c in (*self.columns, "rn", "past"))
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {TABLE} AS SELECT {picked}, f.file "
            f"FROM {TABLE} h JOIN {_FILES} f ON {on}"
        )

    def lines(self) -> list[tuple[str, Any, Any]]:
        """(file, server, hw_key) of every line of every cell."""
        return self.con.execute(
            f"SELECT file, server, hw_key FROM {TABLE} GROUP BY ALL ORDER BY ALL"
        ).fetchall()

    def line_points(
        self, lines: Sequence[tuple[str, Any, Any]], metrics: Sequence[str]
    ) -> dict[tuple[str, Any, Any], dict[str, Any]]:
        """{(file, server, hw_key): that line's rows as columns, by time (then place)}:
        `at` and `run_id` (lists), each of `metrics` (a float array, NaN where null);
        every line in one query, columns fetched as arrays, not a dict per row."""
        wanted = sorted(set(lines), key=str)
        if not wanted:
            return {}
        _temp(
            self.con,
            _WANTED,
            {
                "li": list(range(len(wanted))),
                "file": [f for f, _, _ in wanted],
                "server": [None if s is None else str(s) for _, s, _ in wanted],
                "hw_key": [None if h is None else str(h) for _, _, h in wanted],
            },
        )
        for c in ("server", "hw_key", "at", "run_id", *metrics):
            _col(self, c)  # a history column
        vals = "".join(f', h."{m}"::DOUBLE AS "{m}"' for m in metrics)
        got = self.con.execute(
            f'SELECT w.li, h."at", h.run_id{vals} FROM {TABLE} h JOIN {_WANTED} w '
            "ON h.file = w.file AND h.server IS NOT DISTINCT FROM w.server "
            'AND h.hw_key IS NOT DISTINCT FROM w.hw_key ORDER BY w.li, h."at", h.rn'
        ).fetchnumpy()
        self.con.execute(f"DROP TABLE {_WANTED}")
        li = np.asarray(got["li"])
        bounds = np.searchsorted(li, np.arange(len(wanted) + 1))
        at, run_id = list(got["at"]), list(got["run_id"])
        values = {m: np.ma.filled(np.ma.asarray(got[m], dtype=float), np.nan) for m in metrics}
        out: dict[tuple[str, Any, Any], dict[str, Any]] = {}
        for n, line in enumerate(wanted):
            a, b = int(bounds[n]), int(bounds[n + 1])
            out[line] = {
                "at": at[a:b],
                "run_id": run_id[a:b],
                **{m: v[a:b] for m, v in values.items()},
            }
        return out

    def past_files(self) -> set[str]:
        """The files (cells) with closed rows (`past`: runs before the open month)."""
        got = self.con.execute(f"SELECT DISTINCT file FROM {TABLE} WHERE past").fetchall()
        return {str(f) for (f,) in got}

    def past_runs(self) -> list[tuple[Any, ...]]:
        """(run_id, at, runner_class, hw_key) of the runs of the closed rows, in order."""
        return self.con.execute(
            f'SELECT DISTINCT run_id, "at", runner_class, hw_key FROM {TABLE} WHERE past '
            "ORDER BY ALL"
        ).fetchall()

    def points_json(
        self,
        files: Sequence[str],
        columns: Sequence[str],
        digits: int,
        dict_fraction: float,
        past: bool | None = None,
    ) -> dict[str, str]:
        """{file: its rows' `columns` as the site's column encoding, JSON text} (the
        encoding of publish/site/columns.py `encode`, written by DuckDB): a text column is
        a sorted dictionary plus codes (-1: null) when it has at most `dict_fraction` of
        its rows distinct values (at least one), else a list; a DOUBLE rounded to `digits`
        significant digits (NaN and infinities: null); other numbers as they are.
        `past`: only the closed rows (True) or the open ones (False); None: all. A file
        with no such row is not in the answer."""
        types = self._types()
        # a text column's dictionary: its distinct values per file, numbered in order
        # (sorting the distinct values, not every row), joined back to code the rows
        which = {None: "true", True: "past", False: "NOT past"}[past]
        ctes = [
            f"src AS (SELECT * FROM {TABLE} WHERE list_contains(?::VARCHAR[], file) AND {which})"
        ]
        joins, coded, lists, parts = [], ["src.*"], [], []
        for i, c in enumerate(columns):
            q = _col(self, c)
            if types[c] == "VARCHAR":
                ctes.append(
                    f"d{i} AS (SELECT file, {q} AS v, "
                    f"row_number() OVER (PARTITION BY file ORDER BY {q}) - 1 AS code "
                    f"FROM (SELECT DISTINCT file, {q} FROM src WHERE {q} IS NOT NULL))"
                )
                ctes.append(
                    f"l{i} AS (SELECT file, list(v ORDER BY code) AS dict, count(*) AS k "
                    f"FROM d{i} GROUP BY file)"
                )
                joins.append(f"LEFT JOIN d{i} ON d{i}.file = src.file AND d{i}.v = src.{q}")
                coded.append(f"coalesce(d{i}.code, -1) AS code{i}")
                lists.append(f"list(code{i} ORDER BY rn) AS codes{i}")
                lists.append(f"to_json(list({q} ORDER BY rn)) AS plain{i}")
                k = f"coalesce(l{i}.k, 0)"
                parts.append(
                    f"'{c}', CASE WHEN {k} > 0 AND {k} <= greatest(1, n * {dict_fraction}) "
                    f"THEN json_object('dict', l{i}.dict, 'codes', codes{i}) ELSE plain{i} END"
                )
                continue
            if types[c] == "DOUBLE":  # as Python's float(f"{v:.6g}"): correctly rounded
                q = f"CASE WHEN isfinite({q}) THEN printf('%.{int(digits)}g', {q})::DOUBLE END"
            lists.append(f"to_json(list({q} ORDER BY rn)) AS plain{i}")
            parts.append(f"'{c}', plain{i}")
        dicts = "".join(f" LEFT JOIN l{i} USING (file)" for i, c in enumerate(columns)
                        if types[c] == "VARCHAR")  # fmt: skip
        got = self.con.execute(
            f"WITH {', '.join(ctes)}, "
            f"coded AS (SELECT {', '.join(coded)} FROM src {' '.join(joins)}), "
            f"agg AS (SELECT file, count(*) AS n, {', '.join(lists)} FROM coded GROUP BY file) "
            f"SELECT file, json_object('n', n, 'columns', json_object({', '.join(parts)})) "
            f"FROM agg{dicts}",
            [list(files)],
        ).fetchall()
        return {f: str(text) for f, text in got}


def _col(table: HistoryTable, name: str) -> str:
    """A column of the table, quoted (`collation` is a keyword)."""
    if name not in (*table.columns, "file", "rn"):
        raise ValueError(f"not a history column: {name!r}")
    return f'"{name}"'


# The series columns a result row carries (the run's give runner class and hardware).
RESULT_SERIES = tuple(c for c in SITE_SERIES if c not in ("runner_class", "hw_key"))
AGGREGATE_KEYS = (*RESULT_SERIES, "server", "run_id")  # a row of the aggregate
PART_OPTIONS = "FORMAT parquet, COMPRESSION zstd"


def _aggregate(source: str, cols: Sequence[str], where: str = "true") -> str:
    """SQL of the aggregate of the ok results of `source` (SQL of rows of `results`):
    per result series, server and run, n, median/min/max tps, median p95 and the median
    of each of `cols`. The run's own columns (class, hardware, time) are joined later, so
    an aggregate depends only on the results it is made of (and the servers' names).
    The results it takes are `site.ok_results`' (its join of the runs comes after)."""
    shape = ", ".join(f'r."{c}"' for c in RESULT_SERIES if c != "coll")
    medians = "".join(f", median(r.{c}) AS {c}" for c in cols)
    return f"""
        SELECT {shape}, r."collation" AS coll, s.server_id AS server, r.run_id,
               count(*) AS n, median(r.tps) AS tps, min(r.tps) AS tps_min,
               max(r.tps) AS tps_max, median(r.latency_pct_ms) AS p95_ms{medians}
        FROM {source} r JOIN servers s USING (server_key)
        WHERE r.status = 'ok' AND r.tps IS NOT NULL AND ({where})
        GROUP BY ALL"""


class HistoryQueries:
    """A mixin of `Store`: the history table over the results (see the module doc)."""

    con: duckdb.DuckDBPyConnection
    path: Path

    def history_part(self, files: Sequence[str], metrics: Sequence[str], out: Path) -> int:
        """Write the aggregate (`_aggregate`) of the results of night files `files` to
        Parquet `out`, rows in key order; its rows. A part depends only on those files
        (and the servers' names): the site keeps it from build to build."""
        cols = [metric_column(m) for m in metrics]
        source = f"({nightfiles.select_files(self.con, self.path, 'results', list(files))})"
        order = ", ".join(f'"{c}"' for c in AGGREGATE_KEYS)
        sql = _aggregate(source, cols)
        self.con.execute(f"COPY ({sql} ORDER BY {order}) TO ? ({PART_OPTIONS})", [str(out)])
        row = self.con.execute("SELECT count(*) FROM read_parquet(?)", [str(out)]).fetchone()
        return int(row[0]) if row else 0

    def history_table(
        self,
        metrics: Sequence[str],
        describe: Callable[[dict[str, Any]], Mapping[str, Any]],
        vorder: Mapping[str, int],
        at: Callable[[Any], str | None],
        parts: Sequence[tuple[Path, Sequence[str]]] | None = None,
    ) -> HistoryTable:
        """Per site series, server and run: n, median/min/max tps, median p95 (`p95_ms`)
        and the median of each of `metrics` (null where none was measured). The labels
        come from the caller: `describe(series)` (the SERIES_KEYS of one series; returns
        its LABEL_COLUMNS), `vorder[server]` (-1 if absent), `at(run's start)`.

        `parts`: the aggregate read from these `history_part` files (with the night
        files each is made of; every month of the results, oldest first) instead of
        computed from every result; a run found in two parts (its results ingested in
        two files of two parts) is aggregated again from those parts' night files.
        The rows of the runs in the last part are the open ones (`past` false), the
        others closed: the site writes them apart (publish/site/history.py)."""
        table = HistoryTable(self.con, metrics)
        cols = table.metrics
        split: list[tuple[str, list[str]]] = []
        if parts:
            files = [str(p) for p, _ in parts]
            split = self.con.execute(
                "SELECT run_id, list(filename) FROM (SELECT DISTINCT run_id, filename "
                "FROM read_parquet(?, filename = true)) GROUP BY run_id HAVING count(*) > 1",
                [files],
            ).fetchall()
            # read where it is used (a view: one pass over the parts), unless some runs
            # are aggregated again (a table whose rows of those runs are replaced)
            literal = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
            made = "TABLE" if split else "VIEW"
            self.con.execute(f"CREATE TEMP {made} {_AGG} AS SELECT * FROM read_parquet({literal})")
            if split:
                night = dict(zip(files, (n for _, n in parts), strict=True))
                runs = [r for r, _ in split]
                source = sorted({n for _, fs in split for f in fs for n in night[f]})
                self.con.execute(f"DELETE FROM {_AGG} WHERE list_contains(?, run_id)", [runs])
                self.con.execute(
                    f"INSERT INTO {_AGG} BY NAME "
                    + _aggregate(
                        f"({nightfiles.select_files(self.con, self.path, 'results', source)})",
                        cols,
                        "list_contains(?, r.run_id)",
                    ),
                    [runs],
                )
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {_OPEN} AS "
                "SELECT DISTINCT run_id FROM read_parquet(?)",
                [files[-1]],
            )
        else:
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {_AGG} AS " + _aggregate("results", cols)
            )
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {_OPEN} AS SELECT DISTINCT run_id FROM {_AGG}"
            )
        g = ", ".join(SITE_SERIES)
        on = " AND ".join(f"a.{k} IS NOT DISTINCT FROM s.{k}" for k in SITE_SERIES)
        # sid: the series' rank in series order, ranked over the distinct series and
        # joined back; rn: the row's place by run time, run, series (sid ranks them in
        # the same order as their columns would) and server. Two sorts of every row by
        # all the series' columns cost more than the medians.
        self.con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {_RAW} AS
            WITH agg AS (
                SELECT ru.runner_class, ru.hw_key, ru.first_started_at AS run_at, g.*
                FROM {_AGG} g JOIN runs ru USING (run_id)),
            s AS (SELECT {g}, dense_rank() OVER (ORDER BY {g}) AS sid
                  FROM (SELECT DISTINCT {g} FROM agg))
            SELECT s.sid, row_number() OVER (ORDER BY a.run_at, a.run_id, s.sid, a.server) AS rn,
                   a.*, a.run_id NOT IN (SELECT run_id FROM {_OPEN}) AS past
            FROM agg a JOIN s ON {on}""")
        series = table._all(f"SELECT DISTINCT sid, {', '.join(SERIES_KEYS)} FROM {_RAW}")
        labels = [describe(s) for s in series]
        table.series = [
            ({c: d.get(c) for c in LABEL_COLUMNS}, {k: s[k] for k in SERIES_KEYS})
            for s, d in zip(series, labels, strict=True)
        ]
        _temp(
            self.con,
            _SERIES,
            {
                "sid": [s["sid"] for s in series],
                **{c: [d.get(c) for d in labels] for c in LABEL_COLUMNS},
            },
        )
        runs = self.con.execute(f"SELECT DISTINCT run_id, run_at FROM {_RAW}").fetchall()
        servers = [s for (s,) in self.con.execute(f"SELECT DISTINCT server FROM {_RAW}").fetchall()]
        table.vorder = {s: vorder.get(s, -1) for s in servers}
        _temp(self.con, _RUNS, {"run_id": [r for r, _ in runs], "at": [at(t) for _, t in runs]})
        _temp(self.con, _ORDER, {"server": servers, "vorder": [vorder.get(s, -1) for s in servers]})
        picked = ", ".join(
            [*(f'l."{c}"' for c in LABEL_COLUMNS), "r.server", "o.vorder", 'a."at"', "r.run_id"]
            + [f"r.{c}" for c in (*VALUE_COLUMNS[4:], *cols)]
        )
        self.con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {TABLE} AS
            SELECT {picked}, r.rn, r.past FROM {_RAW} r JOIN {_SERIES} l USING (sid)
                JOIN {_RUNS} a USING (run_id) JOIN {_ORDER} o USING (server)""")
        self.con.execute(f"DROP {'VIEW' if parts and not split else 'TABLE'} {_AGG}")
        for name in (_OPEN, _RAW, _SERIES, _RUNS, _ORDER):
            self.con.execute(f"DROP TABLE {name}")
        return table
