"""The static site's data sets as queries: servers, newest repeats, runs, cost (the
nightly history: store/queries/history.py).

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
# night by night, store/rolling.py), and the join of `ok o` to it; rows in series order
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


class SiteQueries(QueryBase):
    def server_summaries(self) -> list[dict[str, Any]]:
        """Every server: server, product, version, its newest version_string and how many
        results it has (not the stored stand_in: a server is what it is outside a study)."""

        def counts(source: str) -> str:  # per server key: its results, the newest's start
            return (
                "SELECT server_key, count(*) AS n, max(started_at) AS newest "
                f"FROM {source} GROUP BY server_key"
            )

        name, before = self._rolling(  # rolled forward night by night (store/rolling.py)
            counts,
            lambda rows: (
                "SELECT server_key, CAST(sum(n) AS BIGINT) AS n, "
                f"max(newest) AS newest FROM {rows} GROUP BY server_key"
            ),
        )
        return self._dicts(
            before(f"""SELECT s.server_id AS server, any_value(s.product) AS product,
                      any_value(s.version) AS version,
                      arg_max(s.version_string, c.newest) AS version_string,
                      coalesce(sum(c.n), 0) AS results
               FROM servers s LEFT JOIN {name} c USING (server_key)
               GROUP BY s.server_id ORDER BY s.server_id""")
        )

    def current_hardware(self) -> dict[str, str]:
        """runner class -> the hardware key of its newest run."""
        return dict(
            self._tuples(
                "SELECT runner_class, arg_max(hw_key, first_started_at) FROM runs "
                "GROUP BY runner_class"
            )
        )

    def collation_charsets(self) -> dict[str, str]:
        """collation -> its charset, for every collation measured."""
        return dict(self._tuples('SELECT DISTINCT "collation", charset FROM results'))

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

    def newest_repeats(self) -> list[dict[str, Any]]:
        """Per site series and server, the newest run's ok repeats: tps (sorted) and p95."""
        return self._dicts(f"""
            WITH ok AS ({_OK} AND {self._newest()}), newest AS (SELECT * FROM site_newest)
            SELECT {_OG}, o.server, o.run_id, any_value(o.run_at) AS run_at,
                   list(o.tps ORDER BY o.tps) AS tps, list(o.latency_pct_ms) AS p95
            FROM ok o JOIN newest n ON {_ON}
            GROUP BY ALL ORDER BY {_OG}, o.server, o.run_id""")

    def newest_cost(self, columns: Sequence[str]) -> list[dict[str, Any]]:
        """Per site series and server, the newest run's ok repeats (latest attempts):
        n, noisy count, median cpu_us_per_txn, each of `columns` as a list, and cpu_total:
        the list of cpu_us_per_txn."""
        cols = [metric_column(c) for c in columns]
        picked = ", ".join(f"r.{c}" for c in cols)
        lists = ", ".join(f"list(o.{c}) FILTER (WHERE o.{c} IS NOT NULL) AS {c}" for c in cols)
        return self._dicts(f"""
            WITH ok AS (
                SELECT ru.runner_class, ru.hw_key, ru.first_started_at AS run_at, r.run_id,
                       {", ".join("r." + c for c in SHAPE)},
                       r.workload, r.threads, r."collation" AS coll,
                       s.server_id AS server, {picked}, r.noisy, r.cpu_us_per_txn AS cpu_total
                FROM results r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
                WHERE r.status = 'ok' AND r.tps IS NOT NULL AND {LATEST_ATTEMPT}
                      AND {self._newest()}), newest AS (SELECT * FROM site_newest)
            SELECT {_OG}, o.server, o.run_id, count(*) AS n,
                   count(*) FILTER (WHERE o.noisy) AS noisy,
                   median(o.cpu_total) AS cpu_us_per_txn,
                   list(o.cpu_total) FILTER (WHERE o.cpu_total IS NOT NULL) AS cpu_total, {lists}
            FROM ok o JOIN newest n ON {_ON}
            GROUP BY ALL ORDER BY {_OG}, o.server, o.run_id""")

    def hardware_timeline(self) -> list[tuple[Any, ...]]:
        """(runner_class, hw_key, first_started_at, cpu_model) of every run, oldest first."""
        return self._tuples(
            "SELECT ru.runner_class, ru.hw_key, ru.first_started_at, h.cpu_model "
            "FROM runs ru LEFT JOIN hardware h USING (hw_key) ORDER BY ru.first_started_at"
        )

    def hardware_rows(self) -> list[dict[str, Any]]:
        return self._dicts("SELECT * FROM hardware ORDER BY hw_key")

    def runs_overview(self) -> list[dict[str, Any]]:
        """Every run with its hardware and ok/failed/skipped counts, newest first."""
        statuses = ("ok", "failed", "skipped")

        def counts(source: str) -> str:  # per run: its results of each status
            each = ", ".join(f"count(*) FILTER (WHERE status = '{s}') AS {s}" for s in statuses)
            return f"SELECT run_id, {each} FROM {source} GROUP BY run_id"

        sums = ", ".join(f"CAST(sum({s}) AS BIGINT) AS {s}" for s in statuses)
        name, before = self._rolling(  # rolled forward night by night (store/rolling.py)
            counts, lambda rows: f"SELECT run_id, {sums} FROM {rows} GROUP BY run_id"
        )
        each = ", ".join(f"coalesce(c.{s}, 0) AS {s}" for s in statuses)
        return self._dicts(
            before(f"""SELECT ru.run_id, ru.runner_class, ru.hw_key, h.cpu_model, h.cores,
                      h.mem_gib, h.kernel, ru.first_started_at, ru.last_finished_at,
                      ru.perftrack_version, {each}
               FROM runs ru LEFT JOIN hardware h USING (hw_key) LEFT JOIN {name} c USING (run_id)
               ORDER BY ru.first_started_at DESC, ru.run_id""")
        )

    # Each of the next five covers every run at once (one query per run is ~50x slower),
    # or only `runs` (the site build recomputes only the runs whose detail changed);
    # every row has its run_id.

    def run_servers(self, runs: Sequence[str] | None = None) -> list[dict[str, Any]]:
        where, args = _runs_filter(runs)
        return self._dicts(
            f"""SELECT r.run_id, s.server_id AS server, s.product, s.version, s.version_string,
                      s.provider, s.source_sha256, count(*) AS results
               FROM results r JOIN servers s USING (server_key) WHERE {where} GROUP BY ALL""",
            args,
        )

    def run_cells(self, runs: Sequence[str] | None = None) -> list[dict[str, Any]]:
        where, args = _runs_filter(runs)
        return self._dicts(
            f"""SELECT r.run_id, s.server_id AS server, r.workload, r.threads, r.charset,
                      r."collation" AS collation, {", ".join("r." + c for c in SHAPE)},
                      count(*) AS n,
                      count(*) FILTER (WHERE r.status = 'ok') AS ok,
                      median(r.tps) AS tps, median(r.latency_pct_ms) AS p95_ms
               FROM results r JOIN servers s USING (server_key)
               WHERE {where} GROUP BY ALL ORDER BY ALL""",
            args,
        )

    def run_effective(self, runs: Sequence[str] | None = None) -> list[dict[str, Any]]:
        where, args = _runs_filter(runs)
        return self._dicts(
            f"""SELECT r.run_id, s.server_id AS server, r."collation" AS collation, r.profile,
                      any_value(r.effective) AS effective
               FROM results r JOIN servers s USING (server_key)
               WHERE r.effective IS NOT NULL AND {where} GROUP BY ALL ORDER BY ALL""",
            args,
        )

    def run_failures(self, runs: Sequence[str] | None = None) -> list[dict[str, Any]]:
        where, args = _runs_filter(runs)
        return self._dicts(
            f"""SELECT r.run_id, r.record_id, r.status, s.server_id AS server, r.workload,
                      r.threads, r."collation" AS collation, r.reason, r.error_log_tail
               FROM results r JOIN servers s USING (server_key)
               WHERE r.status <> 'ok' AND {where} ORDER BY r.record_id""",
            args,
        )

    def run_varsets(self, runs: Sequence[str] | None = None) -> list[dict[str, Any]]:
        where, args = _runs_filter(runs)
        return self._dicts(
            f"""SELECT r.run_id, s.server_id AS server, r.profile, r."collation" AS collation,
                      any_value(r.varset_hash) AS varset
               FROM results r JOIN servers s USING (server_key)
               WHERE r.varset_hash IS NOT NULL AND {where} GROUP BY ALL""",
            args,
        )

    def results_by_status(self) -> dict[str, int]:
        return dict(self._tuples("SELECT status, count(*) FROM results GROUP BY status"))

    def results_span(self) -> tuple[Any, Any]:
        """(first started_at, last finished_at) over every result; (None, None) if none."""
        row = self._one("SELECT min(started_at), max(finished_at) FROM results")
        return (row[0], row[1]) if row else (None, None)


def _runs_filter(runs: Sequence[str] | None) -> tuple[str, list[Any]]:
    """A WHERE condition on `r.run_id` (true when `runs` is None) and its parameter."""
    if runs is None:
        return "true", []
    return "r.run_id IN (SELECT unnest(?::VARCHAR[]))", [list(runs)]
