"""The site's nightly history as a table DuckDB writes out (per-cell JSON).
(store/queries/history.py makes it from the results, or from their monthly aggregates.)

One row per site series, server and run (night): the median of the night's repeats of
each metric, throughput's min–max, in the site's row shape (`HISTORY_COLUMNS`). At 1,000
nights of the nightly matrix that is ~800k rows: turned into a Python dict each, then
into JSON by Python, it cost the site build a minute. So the rows stay in a TEMP table
of the store's connection and DuckDB writes each cell's points as JSON text in the
site's column encoding; Python sees only the labels (one per series, run and server),
the cells' index and the points of the lines that have change points
(publish/site/history.py draws their steps).

Made from the aggregate's monthly parts (store/queries/history.py `history_table`, a site
build), the table holds the open month's rows only; the closed ones stay in the parts
(a view), and the site reads of them only what it needs: their lines and runs, the rows
of the cells whose closed file is made, the points of the lines with change points.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import duckdb
import numpy as np
from numpy.typing import NDArray

from perftrack.store.queries.results import SITE_SERIES
from perftrack.store.queries.series import metric_column

# The site's history row: the series' labels (what the site shows of a series), then the
# night's values; `rn` (the row's place, oldest first) and `file` (the cell's data file)
# are the table's own.
LABEL_COLUMNS: tuple[str, ...] = (
    "runner_class",
    "hw_key",
    "profile",
    "dataset",
    "workload",
    "threads",
)
LABEL_COLUMNS += ("charset", "collation")
VALUE_COLUMNS = ("server", "vorder", "at", "run_id", "n", "tps", "tps_min", "tps_max", "p95_ms")
TYPES = {"threads": "INTEGER", "vorder": "INTEGER", "n": "BIGINT", "sid": "BIGINT", "rn": "BIGINT"}
TYPES["li"] = "BIGINT"
TYPES |= dict.fromkeys(("tps", "tps_min", "tps_max", "p95_ms"), "DOUBLE")
TABLE = "site_history"
# the table's makings (dropped once it is made) and the cells' files
_RAW, _LABELS, _FILES = "site_history_raw", "site_history_labels", "site_history_files"
_RUNS, _ORDER = "site_history_runs", "site_history_vorder"
_RUN_INFO = "site_history_run_info"  # the runs' class, hardware and time
_WANTED = "site_history_lines"  # the lines whose points line_points reads
_WANTED_SERIES = "site_history_line_series"  # and their closed series
# the closed rows (a view over the parts), their runs, and those of some cells labelled
_CLOSED, _CLOSED_RUNS, _PAST = (
    "site_history_closed",
    "site_history_closed_runs",
    "site_history_past",
)
HASH_JOIN = True  # join the closed rows to their series by hash when that is exact
# The closed rows more than this many days older than the newest closed run (from the
# Monday of that week on) are written as one point per line and week: the medians of its
# nights (n: their repeats; run_id null). A line's file then holds a year of nights and
# ~52 points a year before it, so at ten years of the nightly the history's files are a
# fifth of their size (issue 39). The index's nights, the steps and the change points
# still come from every night; the SQL page's `nightly` table has every night.
WEEKLY_AFTER_DAYS = 366
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
    writes of them. `metrics`: the value columns beyond throughput and p95.

    Made from the aggregate's parts (`closed` true), the table holds the open runs' rows
    only; the closed rows stay in the parts, and the site reads of them what it needs:
    their lines (`closed_lines`), their runs (`closed_runs`), the rows of some cells
    (`load_closed`, then `cells` and `points_json` with `past`) and the points of the
    lines that have change points (`line_points`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, metrics: Sequence[str]) -> None:
        self.con = con
        self.metrics = tuple(metric_column(m) for m in metrics)
        self.columns = (*LABEL_COLUMNS, *VALUE_COLUMNS, *self.metrics)
        self._select = ", ".join(f'"{c}"' for c in self.columns)
        # set by `history_table`: (labels, series keys) of each series; server -> vorder
        self.series: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.vorder: dict[str, int] = {}
        self.closed = False  # whether the closed rows are apart (in the parts)
        self.closed_rows = 0
        # history_table's describe, vorder and at, for the series and servers added later
        self.label: tuple[Callable[..., Any], Mapping[str, int], Callable[..., Any]] | None = None
        self._sids: dict[tuple[Any, ...], int] = {}  # SITE_SERIES values -> sid
        self._file_keys: tuple[str, ...] = ()  # the label columns `name_files` keys on
        self._hashed = False  # whether the known series' hashes differ (`_series_on`)
        self.weekly_before: str | None = None  # closed rows before this `at`: weekly

    @classmethod
    def made(
        cls,
        con: duckdb.DuckDBPyConnection,
        metrics: Sequence[str],
        label: tuple[Callable[..., Any], Mapping[str, int], Callable[..., Any]],
        opened: str,
        closed: str | None,
    ) -> HistoryTable:
        """The table of the aggregate's rows `opened` (SQL; ranked and labelled: `label`
        is history_table's describe, vorder and at); `closed` (SQL, or None): the closed
        rows, kept apart (a view)."""
        self = cls(con, metrics)
        self.label = label
        at = label[2]
        cols = self.metrics
        self.con.execute(f"DROP VIEW IF EXISTS {_CLOSED}")
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_RUN_INFO} AS "
            "SELECT run_id, runner_class, hw_key, first_started_at FROM runs"
        )  # read once (a view over the night files)
        if closed is not None:
            self.con.execute(
                f"CREATE TEMP VIEW {_CLOSED} AS SELECT ru.runner_class, ru.hw_key, "
                f"ru.first_started_at AS run_at, g.* FROM {closed} g "
                f"JOIN {_RUN_INFO} ru USING (run_id)"
            )
            self.closed = True
        g = ", ".join(SITE_SERIES)
        on = " AND ".join(f"a.{k} IS NOT DISTINCT FROM s.{k}" for k in SITE_SERIES)
        # sid: the series' rank in series order, ranked over the distinct series and
        # joined back; rn: the row's place by run time, run, series (sid ranks them in
        # the same order as their columns would) and server. Two sorts of every row by
        # all the series' columns cost more than the medians. Ranked over the open rows
        # only, rn orders them as it would among all rows (only the order is written).
        self.con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {_RAW} AS
            WITH agg AS (
                SELECT ru.runner_class, ru.hw_key, ru.first_started_at AS run_at, g.*
                FROM {opened} g JOIN {_RUN_INFO} ru USING (run_id)),
            s AS (SELECT {g}, dense_rank() OVER (ORDER BY {g}) AS sid
                  FROM (SELECT DISTINCT {g} FROM agg))
            SELECT s.sid, row_number() OVER (ORDER BY a.run_at, a.run_id, s.sid, a.server) AS rn,
                   a.*
            FROM agg a JOIN s ON {on}""")
        series = self._all(f"SELECT DISTINCT sid, {', '.join(SITE_SERIES)} FROM {_RAW}")
        keys = ", ".join(f'"{k}" AS "k_{k}"' for k in SITE_SERIES)
        labels = ", ".join(f'NULL::{_type(c)} AS "{c}"' for c in LABEL_COLUMNS)
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_LABELS} AS "
            f"SELECT NULL::BIGINT AS sid, {keys}, {labels}, NULL::BIGINT AS rank, "
            "NULL::UBIGINT AS h "
            f"FROM {_RAW} LIMIT 0"
        )
        self.add_series(series)
        runs = self.con.execute(f"SELECT DISTINCT run_id, run_at FROM {_RAW}").fetchall()
        if self.closed:  # the closed runs (and rows): one pass over the parts' run_id
            got = self.con.execute(
                f"SELECT run_id, run_at, count(*) FROM {_CLOSED} GROUP BY ALL"
            ).fetchall()
            runs += [(r, t) for r, t, _ in got]
            self.closed_rows = sum(n for _, _, n in got)
            _temp(self.con, _CLOSED_RUNS, {"run_id": [r for r, _, _ in got]})
        _temp(self.con, _RUNS, {"run_id": [r for r, _ in runs], "at": [at(t) for _, t in runs]})
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_RUNS} AS SELECT *, "
            f'row_number() OVER (ORDER BY "at", run_id) AS ord FROM {_RUNS}'
        )
        if self.closed:  # of the closed runs only: a closed file's rows depend on them
            row = self.con.execute(
                "SELECT strftime(date_trunc('week', max(\"at\")::TIMESTAMP - "
                f"INTERVAL {WEEKLY_AFTER_DAYS} DAY), '%Y-%m-%dT%H:%M:%SZ') "
                f"FROM {_RUNS} JOIN {_CLOSED_RUNS} USING (run_id)"
            ).fetchone()
            self.weekly_before = row[0] if row else None
        servers = [s for (s,) in self.con.execute(f"SELECT DISTINCT server FROM {_RAW}").fetchall()]
        self.add_servers(servers)
        picked = ", ".join(
            [*(f'l."{c}"' for c in LABEL_COLUMNS), "r.server", "o.vorder", 'a."at"', "r.run_id"]
            + [f"r.{c}" for c in (*VALUE_COLUMNS[4:], *cols)]
        )
        self.con.execute(f"""
            CREATE OR REPLACE TEMP TABLE {TABLE} AS
            SELECT {picked}, r.rn, false AS past FROM {_RAW} r JOIN {_LABELS} l USING (sid)
                JOIN {_RUNS} a USING (run_id) JOIN {_ORDER} o USING (server)""")
        self.con.execute(f"DROP TABLE {_RAW}")
        return self

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

    def _types(self, table: str = TABLE) -> dict[str, str]:
        return {r[0]: r[1] for r in self.con.execute(f"DESCRIBE {table}").fetchall()}

    def count(self) -> int:
        """The rows, closed ones included."""
        row = self.con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()
        return (int(row[0]) if row else 0) + self.closed_rows

    def rows(self, where: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """The table's rows (those whose columns equal `where`'s values), oldest first
        (made from parts: the open ones)."""
        cond = " AND ".join(f"{_col(self, c)} IS NOT DISTINCT FROM ?" for c in where or {})
        return self._all(
            f"SELECT {self._select} FROM {TABLE} WHERE {cond or 'true'} ORDER BY rn",
            list((where or {}).values()),
        )

    # --- the series and servers (their labels) ---------------------------------------

    def add_series(self, series: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Label the series (their SITE_SERIES values) not labelled yet; the labels of
        each (LABEL_COLUMNS), in order."""
        assert self.label is not None
        describe = self.label[0]
        new: dict[tuple[Any, ...], int] = {}
        top = max(self._sids.values(), default=0)
        for s in series:  # the open series' sids are their rank (history_table)
            k = tuple(s[c] for c in SITE_SERIES)
            if k not in self._sids and k not in new:
                new[k] = s.get("sid") or top + len(new) + 1
        if new:
            rows = [dict(zip(SITE_SERIES, k, strict=True)) for k in new]
            labels = [describe(r) for r in rows]
            for r, d in zip(rows, labels, strict=True):
                self.series.append(
                    ({c: d.get(c) for c in LABEL_COLUMNS}, {k: r[k] for k in SERIES_KEYS})
                )
            types = self._types(_LABELS)
            cols = {"sid": list(new.values())}
            cols |= {f"k_{c}": [r[c] for r in rows] for c in SITE_SERIES}
            cols |= {c: [d.get(c) for d in labels] for c in LABEL_COLUMNS}
            sel = ", ".join(f'unnest(?::{types[c]}[]) AS "{c}"' for c in cols)
            self.con.execute(f"INSERT INTO {_LABELS} BY NAME SELECT {sel}", list(cols.values()))
            self._sids |= new
            keys = ", ".join(f'"k_{c}"' for c in SITE_SERIES)
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {_LABELS} AS SELECT * EXCLUDE (rank, h), "
                f"dense_rank() OVER (ORDER BY {keys}) AS rank, hash({keys}) AS h FROM {_LABELS}"
            )
            row = self.con.execute(f"SELECT count(DISTINCT h) = count(*) FROM {_LABELS}")
            self._hashed = bool((row.fetchone() or (False,))[0])
        by_key = {tuple(r[k] for k in SERIES_KEYS): lab for lab, r in self.series}
        return [by_key[tuple(s[k] for k in SERIES_KEYS)] for s in series]

    def add_servers(self, servers: Sequence[str]) -> None:
        """Give the servers not known yet their version order."""
        assert self.label is not None
        new = [s for s in dict.fromkeys(servers) if s not in self.vorder]
        if new or not self.vorder:
            self.vorder |= {s: self.label[1].get(s, -1) for s in new}
            _temp(
                self.con,
                _ORDER,
                {"server": list(self.vorder), "vorder": list(self.vorder.values())},
            )

    # --- the closed rows (the table made from parts) ---------------------------------

    def closed_lines(self) -> list[list[Any]]:
        """[SITE_SERIES values..., server] of each line of the closed rows (one pass
        over the closed parts)."""
        if not self.closed:
            return []
        cols = ", ".join(f'"{c}"' for c in (*SITE_SERIES, "server"))
        got = self.con.execute(f"SELECT {cols} FROM {_CLOSED} GROUP BY ALL ORDER BY ALL")
        return [list(r) for r in got.fetchall()]

    def add_closed(
        self, lines: Sequence[Sequence[Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any], str]]:
        """Label the closed lines (`closed_lines`' rows): (labels, series keys (as in
        `series`), server) of each."""
        series = [dict(zip(SITE_SERIES, line[:-1], strict=True)) for line in lines]
        self.add_servers([line[-1] for line in lines])
        labels = self.add_series(series)
        return [
            (lab, {k: s[k] for k in SERIES_KEYS}, line[-1])
            for lab, s, line in zip(labels, series, lines, strict=True)
        ]

    def closed_runs(self) -> list[tuple[Any, ...]]:
        """(run_id, at, runner_class, hw_key) of the closed runs, in order."""
        if not self.closed:
            return []
        return self.con.execute(
            f'SELECT c.run_id, a."at", r.runner_class, r.hw_key FROM {_CLOSED_RUNS} c '
            f"JOIN {_RUN_INFO} r USING (run_id) JOIN {_RUNS} a USING (run_id) ORDER BY ALL"
        ).fetchall()

    def _series_on(self, closed: str, series: str) -> str:
        """SQL: the closed rows `closed` are of series `series` (a row of `_LABELS`): by the hash of
        the series' columns when the known series' hashes differ (every closed row's
        series is one of them: one key to join on, not 16), else by the columns."""
        if self._hashed and HASH_JOIN:
            return f"hash({', '.join(f'{closed}.{k}' for k in SITE_SERIES)}) = {series}.h"
        return " AND ".join(
            f'{closed}."{k}" IS NOT DISTINCT FROM {series}."k_{k}"' for k in SITE_SERIES
        )

    def _closed_labelled(self) -> str:
        """SQL FROM clause: the closed rows `c` with their series' labels `l`, cell file
        `f` and run time `a`."""
        on = self._series_on("c", "l")
        files = " AND ".join(f'l."{k}" IS NOT DISTINCT FROM f."{k}"' for k in self._file_keys)
        return (
            f"{_CLOSED} c JOIN {_LABELS} l ON {on} JOIN {_FILES} f ON {files} "
            f"JOIN {_RUNS} a USING (run_id)"
        )

    def _closed_line_points(self, metrics: Sequence[str]) -> str:
        """SQL (a UNION ALL to add to line_points' query of the table's rows): the closed
        rows of the lines `_WANTED`, found by their series (a small join first)."""
        cells = " AND ".join(f'l."{k}" IS NOT DISTINCT FROM f."{k}"' for k in self._file_keys)
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_WANTED_SERIES} AS "
            f"SELECT w.li, w.server, l.* FROM {_WANTED} w "
            f"JOIN {_FILES} f ON w.file = f.file JOIN {_LABELS} l ON {cells} "
            "AND l.hw_key IS NOT DISTINCT FROM w.hw_key"
        )
        on = self._series_on("c", "s")
        vals = "".join(f', c."{m}"::DOUBLE AS "{m}"' for m in metrics)
        return (
            f" UNION ALL SELECT s.li, c.run_id, s.rank AS rn{vals} FROM {_CLOSED} c "
            f"JOIN {_WANTED_SERIES} s ON {on} AND c.server IS NOT DISTINCT FROM s.server"
        )

    def load_closed(self, files: Sequence[str]) -> None:
        """The closed rows of the cells `files` labelled, for `cells` and `points_json`
        with `past` (after `name_files`)."""
        picked = ", ".join(
            [*(f'l."{c}"' for c in LABEL_COLUMNS), "c.server", "o.vorder", 'a."at"', "c.run_id"]
            + [f"c.{c}" for c in (*VALUE_COLUMNS[4:], *self.metrics)]
        )
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {_PAST} AS SELECT {picked}, "
            "row_number() OVER (ORDER BY c.run_at, c.run_id, l.rank, c.server) AS rn, "
            "true AS past, f.file "
            f"FROM {self._closed_labelled()} JOIN {_ORDER} o USING (server) "
            "WHERE list_contains(?::VARCHAR[], f.file)",
            [list(files)],
        )

    def _weekly_past(self) -> str:
        """SQL: `load_closed`'s rows, those before `weekly_before` as one row per line
        and week (WEEKLY_AFTER_DAYS): the medians of its nights' values (throughput's
        min and max of theirs), n their repeats, `at` its first night, run_id null."""
        if self.weekly_before is None:
            return _PAST
        line = ", ".join(f'"{c}"' for c in (*LABEL_COLUMNS, "server", "file"))
        values = "".join(f', median("{c}") AS "{c}"' for c in ("tps", "p95_ms", *self.metrics))
        cut = "'" + self.weekly_before.replace("'", "") + "'"
        return (
            f'(SELECT * FROM {_PAST} WHERE "at" >= {cut} UNION ALL BY NAME '
            f'SELECT {line}, any_value(vorder) AS vorder, min("at") AS "at", '
            "NULL::VARCHAR AS run_id, sum(n)::BIGINT AS n, min(tps_min) AS tps_min, "
            f"max(tps_max) AS tps_max{values}, min(rn) AS rn, true AS past "
            f'FROM {_PAST} WHERE "at" < {cut} '
            f"GROUP BY {line}, date_trunc('week', \"at\"::TIMESTAMP))"
        )

    # --- the history page's cells --------------------------------------------------

    def cells(
        self, keys: Sequence[str], metrics: Sequence[str], past: bool = False
    ) -> list[dict[str, Any]]:
        """One row per cell (distinct `keys`): the first row's charset, nights, first and
        last `at`, and `has_M` for each of `metrics`: whether the cell has any value of M.
        `past`: of the closed rows `load_closed` took, else of the table."""
        ks = ", ".join(_col(self, k) for k in keys)
        has = "".join(f", count({_col(self, m)}) > 0 AS has_{m}" for m in metrics)
        source = _PAST if past and self.closed else TABLE
        return self._all(
            f"SELECT {ks}, arg_min(charset, rn) AS charset, count(DISTINCT run_id) AS nights, "
            f'min("at") AS first_at, max("at") AS last_at{has} FROM {source} '
            f"WHERE {'past' if past else 'true'} GROUP BY ALL"
        )

    def name_files(self, keys: Sequence[str], files: Sequence[tuple[Sequence[Any], str]]) -> None:
        """Give each cell (its `keys` values) its file: later calls select cells by file."""
        cols = {k: [v[i] for v, _ in files] for i, k in enumerate(keys)}
        _temp(self.con, _FILES, {**cols, "file": [f for _, f in files]})
        self._file_keys = tuple(keys)
        on = " AND ".join(f'h."{k}" IS NOT DISTINCT FROM f."{k}"' for k in keys)
        picked = ", ".join(f'h."{c}"' for c in (*self.columns, "rn", "past"))
        self.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {TABLE} AS SELECT {picked}, f.file "
            f"FROM {TABLE} h JOIN {_FILES} f ON {on}"
        )

    def lines(self) -> list[tuple[str, Any, Any]]:
        """(file, server, hw_key) of every line of every cell in the table."""
        return self.con.execute(
            f"SELECT file, server, hw_key FROM {TABLE} GROUP BY ALL ORDER BY ALL"
        ).fetchall()

    def line_points(
        self, lines: Sequence[tuple[str, Any, Any]], metrics: Sequence[str]
    ) -> dict[tuple[str, Any, Any], dict[str, Any]]:
        """{(file, server, hw_key): that line's rows as columns, by time (then place)}:
        `at` and `run_id` (sequences), each of `metrics` (a float array, NaN where null);
        every line in one query, columns fetched as arrays, not a dict per row. The
        closed rows of the lines too (read from the parts) when they are apart."""
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
        sql = (
            f'SELECT w.li, h."at", h.run_id, h.rn{vals} FROM {TABLE} h JOIN {_WANTED} w '
            "ON h.file = w.file AND h.server IS NOT DISTINCT FROM w.server "
            "AND h.hw_key IS NOT DISTINCT FROM w.hw_key"
        )
        if self.closed:  # a run is closed or open; within a run and line, rn (open rows)
            # and the series' rank (closed rows) order the rows as rn does all of them;
            # the runs' `ord` orders them by `at` (then run): fetched as numbers, then
            # the runs' `at` and `run_id` taken by it (arrays, not a string per row)
            sql = sql.replace('h."at", h.run_id, ', "h.run_id, ", 1)
            sql += self._closed_line_points(metrics)
            sql = (
                f"SELECT h.* EXCLUDE (run_id, rn), a.ord FROM ({sql}) h "
                f"JOIN {_RUNS} a USING (run_id) ORDER BY h.li, a.ord, h.rn"
            )
        else:
            sql += ' ORDER BY w.li, h."at", h.rn'
        got = self.con.execute(sql).fetchnumpy()
        self.con.execute(f"DROP TABLE {_WANTED}")
        li = np.asarray(got["li"])
        bounds = np.searchsorted(li, np.arange(len(wanted) + 1))
        at: Sequence[Any]
        run_id: Sequence[Any]
        if self.closed:
            runs = self.con.execute(f'SELECT "at", run_id FROM {_RUNS} ORDER BY ord').fetchall()
            by_ord = np.empty((len(runs) + 1, 2), dtype=object)
            by_ord[1:] = runs
            ords = np.asarray(got["ord"])
            at, run_id = by_ord[ords, 0], by_ord[ords, 1]
        else:
            at, run_id = list(got["at"]), list(got["run_id"])
        values: dict[str, NDArray[np.float64]] = {
            m: np.ma.filled(np.ma.asarray(got[m], dtype=float), np.nan) for m in metrics
        }
        out: dict[tuple[str, Any, Any], dict[str, Any]] = {}
        for n, line in enumerate(wanted):
            a, b = int(bounds[n]), int(bounds[n + 1])
            out[line] = {
                "at": at[a:b],
                "run_id": run_id[a:b],
                **{m: v[a:b] for m, v in values.items()},
            }
        return out

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
        `past`: only the closed rows (True: those `load_closed` took when they are
        apart) or the open ones (False); None: all. A file with no such row is not in
        the answer."""
        types = self._types()
        # a text column's dictionary: its distinct values per file, numbered in order
        # (sorting the distinct values, not every row), joined back to code the rows
        which = {None: "true", True: "past", False: "NOT past"}[past]
        source = self._weekly_past() if past and self.closed else TABLE
        ctes = [
            f"src AS (SELECT * FROM {source} WHERE list_contains(?::VARCHAR[], file) AND {which})"
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
