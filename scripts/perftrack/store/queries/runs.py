"""What given runs produced: the publish job's summary and a sequential comparison read
back the runs they just ingested."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from perftrack.core.record import OPTIONAL_CELL_FIELDS as AXES
from perftrack.store.queries.base import QueryBase, marks
from perftrack.store.queries.series import (
    LATEST_ATTEMPT,
    SERIES_COLS,
    metric_column,
    series_select,
)


class RunQueries(QueryBase):
    def status_by_server(self, run_ids: Sequence[str]) -> list[tuple[str, int, int, int]]:
        """(server_id, ok, failed, skipped) per server of these runs, by server_id."""
        return self._tuples(  # type: ignore[return-value]
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

    def verdicts_touched(self, run_ids: Sequence[str], metric: str) -> list[dict[str, Any]]:
        """The stored verdicts of `metric` on every series these runs measured."""
        on = " AND ".join(  # axes may be null
            f'n."{c}" IS NOT DISTINCT FROM v."{c}"' for c in SERIES_COLS
        )
        return self._dicts(
            f"""WITH n AS (SELECT DISTINCT {series_select()}
                           FROM results r JOIN runs ru USING (run_id)
                           WHERE r.run_id IN ({marks(run_ids)}))
                SELECT v.* FROM verdicts v JOIN n ON {on} WHERE v.metric = ?""",
            [*run_ids, metric],
        )

    def run_values(self, run_ids: Sequence[str], column: str) -> list[dict[str, Any]]:
        """run_id, server_id, value (of `column`) and the cell's charset, collation, profile,
        table_size and axes of every ok result of these runs (the latest attempt of each
        cell), oldest first: the rounds of a sequential comparison, whose arms are servers
        or values of an axis."""
        col = metric_column(column)
        cell = ", ".join(f"r.{c}" for c in ("charset", "profile", "table_size", *AXES))
        return self._dicts(
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
