"""Results as the site shows them: the ok results of each site series, the newest run's
repeats and cost, counts by status (servers: queries/servers.py; runs: queries/runs.py;
the nightly history: queries/history.py).

The site (publish/site/export.py) shapes these rows into its pages; it writes no SQL.
`SITE_SERIES` is what identifies a series on the site: the store's series with the
collation named `coll` and in the site's column order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from perftrack.core import record
from perftrack.store.queries.base import QueryBase
from perftrack.store.queries.series import LATEST_ATTEMPT, metric_column
from perftrack.store.queries.shapes import NewestCost, NewestRepeats

AXES: tuple[str, ...] = record.OPTIONAL_CELL_FIELDS
SHAPE = ("profile", "tables", "table_size", "duration_s", "connection", *AXES)
CELL = ("workload", "threads", "coll")
SITE_SERIES = ("runner_class", "hw_key", *SHAPE, *CELL)


def ok_results(extra: str = "", source: str = "results") -> str:
    """The ok results (of `source`, SQL of results) with their series columns (and
    `extra` result columns)."""
    return f"""
    SELECT ru.runner_class, ru.hw_key, ru.first_started_at AS run_at, r.run_id,
           {", ".join("r." + c for c in SHAPE)},
           r.workload, r.threads, r.charset, r."collation" AS coll,
           r.server_key, s.server_id AS server, r.tps, r.latency_pct_ms{extra}
    FROM {source} r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
    WHERE r.status = 'ok' AND r.tps IS NOT NULL"""


_OK = ok_results()
_G = ", ".join(SITE_SERIES)
# The newest run of each site series and server (a hash aggregate and a join: a window
# over every result partitioned by series took seconds at 1,000 nights; rolled forward
# night by night, store/files/rolling.py), and the join of `ok o` to it; rows in series order
# (the pages' sorts keep it among equals), lists in a row in no particular order unless
# ordered.


def _newest_runs(source: str) -> str:
    ok = ok_results(source=source)
    return f"SELECT {_G}, server, max(run_at) AS newest_at FROM ({ok}) GROUP BY ALL"


_OG = ", ".join(f"o.{c}" for c in SITE_SERIES)
_ON = " AND ".join(
    [*(f"o.{c} IS NOT DISTINCT FROM n.{c}" for c in (*SITE_SERIES, "server")),
     "o.run_at = n.newest_at"]
)  # fmt: skip


class ResultQueries(QueryBase):
    def _newest(self) -> str:
        """A SQL condition on `r.run_id`: a run that is the newest of some site series and
        server (TEMP table `site_newest`, made once per store: `_kept`). Each page's query
        reads only those runs' results (at 1,000 nights, three runs' instead of every
        night's: the aggregate over every result is the one scan)."""

        def make() -> str:
            name, before = self._rolling(
                _newest_runs,
                lambda rows: (
                    f"SELECT {_G}, server, max(newest_at) AS newest_at FROM {rows} GROUP BY ALL"
                ),
            )
            self.con.execute(
                before(f"CREATE OR REPLACE TEMP TABLE site_newest AS SELECT * FROM {name}")
            )
            return (
                "r.run_id IN (SELECT run_id FROM runs WHERE first_started_at IN "
                "(SELECT newest_at FROM site_newest))"
            )

        return self._kept("site_newest", make)

    def newest_repeats(self) -> list[NewestRepeats]:
        """Per site series and server, the newest run's ok repeats: tps (sorted) and p95."""
        return self._rows(
            NewestRepeats,
            f"""
            WITH ok AS ({_OK} AND {self._newest()}), newest AS (SELECT * FROM site_newest)
            SELECT {_OG}, o.server, o.run_id, any_value(o.run_at) AS run_at,
                   list(o.tps ORDER BY o.tps) AS tps, list(o.latency_pct_ms) AS p95
            FROM ok o JOIN newest n ON {_ON}
            GROUP BY ALL ORDER BY {_OG}, o.server, o.run_id""",
        )

    def newest_cost(self, columns: Sequence[str]) -> list[NewestCost]:
        """Per site series and server, the newest run's ok repeats (latest attempts): n,
        noisy count, median cpu_us_per_txn, and `costs`: each of `columns` and
        cpu_us_per_txn as the list of its repeats' values (None: no repeat has one)."""
        cols = list(dict.fromkeys(metric_column(c) for c in (*columns, "cpu_us_per_txn")))
        picked = ", ".join(f"r.{c}" for c in cols)
        names = ", ".join(f"'{c}'" for c in cols)
        lists = ", ".join(f"list(o.{c}::DOUBLE) FILTER (WHERE o.{c} IS NOT NULL)" for c in cols)
        return self._rows(
            NewestCost,
            f"""
            WITH ok AS (
                SELECT ru.runner_class, ru.hw_key, ru.first_started_at AS run_at, r.run_id,
                       {", ".join("r." + c for c in SHAPE)},
                       r.workload, r.threads, r."collation" AS coll,
                       s.server_id AS server, {picked}, r.noisy
                FROM results r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
                WHERE r.status = 'ok' AND r.tps IS NOT NULL AND {LATEST_ATTEMPT}
                      AND {self._newest()}), newest AS (SELECT * FROM site_newest)
            SELECT {_OG}, o.server, o.run_id, count(*) AS n,
                   count(*) FILTER (WHERE o.noisy) AS noisy,
                   median(o.cpu_us_per_txn) AS cpu_us_per_txn,
                   map([{names}], [{lists}]) AS costs
            FROM ok o JOIN newest n ON {_ON}
            GROUP BY ALL ORDER BY {_OG}, o.server, o.run_id""",
        )

    def results_by_status(self) -> dict[str, int]:
        return dict(self._tuples("SELECT status, count(*) FROM results GROUP BY status"))

    def results_span(self) -> tuple[Any, Any]:
        """(first started_at, last finished_at) over every result; (None, None) if none."""
        row = self._one("SELECT min(started_at), max(finished_at) FROM results")
        return (row[0], row[1]) if row else (None, None)
