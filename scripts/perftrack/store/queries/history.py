"""The site's nightly history: its aggregate (per site series, server and run: the
medians of the night's repeats), made from the results, or kept by the site build in
monthly Parquet parts (`history_part`), and the table made of it (`history_table`; the
table and what the site writes of it: store/queries/histtable.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb

from perftrack.store.files import nightfiles
from perftrack.store.files.sqltext import sql_string
from perftrack.store.queries.histtable import HistoryTable
from perftrack.store.queries.results import SITE_SERIES
from perftrack.store.queries.series import metric_column

__all__ = ["HistoryQueries", "HistoryTable"]
_AGG, _OPEN = "site_history_agg", "site_history_open"  # the aggregate, the open runs


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
        time_of: Callable[[Any], str | None],
        parts: Sequence[tuple[Path, Sequence[str]]] | None = None,
    ) -> HistoryTable:
        """Per site series, server and run: n, median/min/max tps, median p95 (`p95_ms`)
        and the median of each of `metrics` (null where none was measured). The labels
        come from the caller: `describe(series)` (the SERIES_KEYS of one series; returns
        its LABEL_COLUMNS), `vorder[server]` (-1 if absent), `time_of(run's start)`.

        `parts`: the aggregate read from these `history_part` files (with the night
        files each is made of; every month of the results, oldest first) instead of
        computed from every result; a run found in two parts (its results ingested in
        two files of two parts) is aggregated again from those parts' night files.
        The runs in the last part are the open ones: only their rows are ranked and
        labelled into the table; the others (closed) stay in the parts, read for what
        the site asks of them (`HistoryTable.closed_lines`, `load_closed`,
        `line_points`): publish/site/history.py writes them apart, once a month."""
        table = HistoryTable(self.con, metrics)
        cols = table.metrics
        for name in (_AGG, _OPEN):
            self.con.execute(f"DROP TABLE IF EXISTS {name}")
        closed = None
        if parts:
            opened, closed = self._history_sources([(str(p), list(n)) for p, n in parts], cols)
        else:
            self.con.execute(f"CREATE TEMP TABLE {_AGG} AS " + _aggregate("results", cols))
            opened = _AGG
        table = HistoryTable.made(self.con, metrics, (describe, vorder, time_of), opened, closed)
        if not parts:
            self.con.execute(f"DROP TABLE {_AGG}")
        return table

    def _history_sources(
        self, parts: Sequence[tuple[str, list[str]]], cols: Sequence[str]
    ) -> tuple[str, str | None]:
        """SQL of the open rows and of the closed ones (None: no closed part) of the
        aggregate `parts` (`history_table`)."""
        files = [f for f, _ in parts]
        split = self.con.execute(
            "SELECT run_id, list(filename) FROM (SELECT DISTINCT run_id, filename "
            "FROM read_parquet(?, filename = true)) GROUP BY run_id HAVING count(*) > 1",
            [files],
        ).fetchall()

        def read(files: Sequence[str]) -> str:  # a literal list: read where it is used
            return "read_parquet([" + ", ".join(sql_string(f) for f in files) + "])"

        if not split:  # a run is in one part: the last part's runs are the open ones
            return read(files[-1:]), (read(files[:-1]) if len(files) > 1 else None)
        # some runs are aggregated again: a table whose rows of those runs are replaced
        self.con.execute(f"CREATE TEMP TABLE {_AGG} AS SELECT * FROM {read(files)}")
        night = dict(parts)
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
            f"CREATE TEMP TABLE {_OPEN} AS SELECT DISTINCT run_id FROM {read(files[-1:])}"
        )
        opened = f"(SELECT * FROM {_AGG} WHERE run_id IN (SELECT run_id FROM {_OPEN}))"
        closed = f"(SELECT * FROM {_AGG} WHERE run_id NOT IN (SELECT run_id FROM {_OPEN}))"
        return opened, closed
