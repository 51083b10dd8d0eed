"""Runs: every run with its counts and, per run, its servers, cells, settings and
failures (the site's run pages); what given runs produced (the publish job's summary and a
sequential comparison read back the runs they just ingested)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from perftrack.core.record import OPTIONAL_CELL_FIELDS as AXES
from perftrack.store.queries.base import QueryBase, marks
from perftrack.store.queries.results import SHAPE
from perftrack.store.queries.series import (
    LATEST_ATTEMPT,
    SERIES_COLS,
    metric_column,
    series_select,
)
from perftrack.store.queries.shapes import (
    RunCell,
    RunEffective,
    RunFailure,
    RunOverview,
    RunServer,
    RunValueRow,
    RunVarset,
    VerdictRow,
)


class RunQueries(QueryBase):
    def status_by_server(self, run_ids: Sequence[str]) -> list[tuple[str, int, int, int]]:
        """(server_id, ok, failed, skipped) per server of these runs, by server_id."""
        return self._tuples(
            f"""SELECT s.server_id,
                       count(*) FILTER (WHERE r.status = 'ok'),
                       count(*) FILTER (WHERE r.status = 'failed'),
                       count(*) FILTER (WHERE r.status = 'skipped')
                FROM results r JOIN servers s USING (server_key)
                WHERE r.run_id IN ({marks(run_ids)})
                GROUP BY s.server_id ORDER BY s.server_id""",
            run_ids,
        )

    def cells_seen(self, run_ids: Sequence[str]) -> tuple[set[str], set[str]]:
        """(cells with any record, cells with an ok record) among these runs."""
        rows = self._tuples(
            f"SELECT cell_id, bool_or(status = 'ok') FROM results "
            f"WHERE run_id IN ({marks(run_ids)}) GROUP BY cell_id",
            run_ids,
        )
        return {c for c, _ in rows}, {c for c, ok in rows if ok}

    def verdicts_touched(self, run_ids: Sequence[str], metric: str) -> list[VerdictRow]:
        """The stored verdicts of `metric` on every series these runs measured."""
        on = " AND ".join(  # axes may be null
            f'n."{c}" IS NOT DISTINCT FROM v."{c}"' for c in SERIES_COLS
        )
        return self._rows(
            VerdictRow,
            f"""WITH n AS (SELECT DISTINCT {series_select()}
                           FROM results r JOIN runs ru USING (run_id)
                           WHERE r.run_id IN ({marks(run_ids)}))
                SELECT v.* FROM verdicts v JOIN n ON {on} WHERE v.metric = ?""",
            [*run_ids, metric],
        )

    def run_values(self, run_ids: Sequence[str], column: str) -> list[RunValueRow]:
        """run_id, server_id, value (of `column`) and the cell's charset, collation, profile,
        table_size and axes of every ok result of these runs (the latest attempt of each
        cell), oldest first: the rounds of a sequential comparison, whose arms are servers
        or values of an axis."""
        col = metric_column(column)
        cell = ", ".join(f"r.{c}" for c in ("charset", "profile", "table_size", *AXES))
        return self._rows(
            RunValueRow,
            f"""SELECT r.run_id, s.server_id, r.{col} AS value, r."collation", {cell}
                FROM results r JOIN servers s USING (server_key)
                WHERE r.run_id IN ({marks(run_ids)}) AND r.status = 'ok'
                  AND r.{col} IS NOT NULL AND {LATEST_ATTEMPT}
                ORDER BY r.started_at""",
            run_ids,
        )

    def run_hardware(self, run_id: str) -> tuple[str, str] | None:
        """(runner_class, hw_key) of a run; None for a run not in the DB."""
        row = self._one("SELECT runner_class, hw_key FROM runs WHERE run_id = ?", [run_id])
        return (str(row[0]), str(row[1])) if row else None

    def runs_overview(self) -> list[RunOverview]:
        """Every run with its hardware and ok/failed/skipped counts, newest first."""
        statuses = ("ok", "failed", "skipped")

        def counts(source: str) -> str:  # per run: its results of each status
            each = ", ".join(f"count(*) FILTER (WHERE status = '{s}') AS {s}" for s in statuses)
            return f"SELECT run_id, {each} FROM {source} GROUP BY run_id"

        sums = ", ".join(f"CAST(sum({s}) AS BIGINT) AS {s}" for s in statuses)
        name, before = self._rolling(  # rolled forward night by night (store/files/rolling.py)
            counts, lambda rows: f"SELECT run_id, {sums} FROM {rows} GROUP BY run_id"
        )
        each = ", ".join(f"coalesce(c.{s}, 0) AS {s}" for s in statuses)
        return self._rows(
            RunOverview,
            before(f"""SELECT ru.run_id, ru.runner_class, ru.hw_key, h.cpu_model, h.cores,
                      h.mem_gib, h.kernel, ru.first_started_at, ru.last_finished_at,
                      ru.perftrack_version, {each}
               FROM runs ru LEFT JOIN hardware h USING (hw_key) LEFT JOIN {name} c USING (run_id)
               ORDER BY ru.first_started_at DESC, ru.run_id"""),
        )

    # Each of the next five covers every run at once (one query per run is ~50x slower),
    # or only `runs` (the site build recomputes only the runs whose detail changed);
    # every row has its run_id.

    def run_servers(self, runs: Sequence[str] | None = None) -> list[RunServer]:
        where, args = _runs_filter(runs)
        return self._rows(
            RunServer,
            f"""SELECT r.run_id, s.server_id AS server, s.product, s.version, s.version_string,
                      s.provider, s.source_sha256, count(*) AS results
               FROM results r JOIN servers s USING (server_key) WHERE {where} GROUP BY ALL""",
            args,
        )

    def run_cells(self, runs: Sequence[str] | None = None) -> list[RunCell]:
        where, args = _runs_filter(runs)
        return self._rows(
            RunCell,
            f"""SELECT r.run_id, s.server_id AS server, r.workload, r.threads, r.charset,
                      r."collation" AS collation, {", ".join("r." + c for c in SHAPE)},
                      count(*) AS n,
                      count(*) FILTER (WHERE r.status = 'ok') AS ok,
                      median(r.tps) AS tps, median(r.latency_pct_ms) AS p95_ms
               FROM results r JOIN servers s USING (server_key)
               WHERE {where} GROUP BY ALL ORDER BY ALL""",
            args,
        )

    def run_effective(self, runs: Sequence[str] | None = None) -> list[RunEffective]:
        where, args = _runs_filter(runs)
        return self._rows(
            RunEffective,
            f"""SELECT r.run_id, s.server_id AS server, r."collation" AS collation, r.profile,
                      any_value(r.effective) AS effective
               FROM results r JOIN servers s USING (server_key)
               WHERE r.effective IS NOT NULL AND {where} GROUP BY ALL ORDER BY ALL""",
            args,
        )

    def run_failures(self, runs: Sequence[str] | None = None) -> list[RunFailure]:
        where, args = _runs_filter(runs)
        return self._rows(
            RunFailure,
            f"""SELECT r.run_id, r.record_id, r.status, s.server_id AS server, r.workload,
                      r.threads, r."collation" AS collation, r.reason, r.error_log_tail
               FROM results r JOIN servers s USING (server_key)
               WHERE r.status <> 'ok' AND {where} ORDER BY r.record_id""",
            args,
        )

    def run_varsets(self, runs: Sequence[str] | None = None) -> list[RunVarset]:
        where, args = _runs_filter(runs)
        return self._rows(
            RunVarset,
            f"""SELECT r.run_id, s.server_id AS server, r.profile, r."collation" AS collation,
                      any_value(r.varset_hash) AS varset
               FROM results r JOIN servers s USING (server_key)
               WHERE r.varset_hash IS NOT NULL AND {where} GROUP BY ALL""",
            args,
        )


def _runs_filter(runs: Sequence[str] | None) -> tuple[str, list[Any]]:
    """A WHERE condition on `r.run_id` (true when `runs` is None) and its parameter."""
    if runs is None:
        return "true", []
    return "r.run_id IN (SELECT unnest(?::VARCHAR[]))", [list(runs)]
