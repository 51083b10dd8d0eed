"""The alerts table (schema v7): each change detect reported, once, with its state.

Written by `perftrack detect` through `replace_derived` (in the transaction that writes
the verdicts and change points it came from); read by `perftrack alerts`, the site's
Regressions page and feed, the nightly summary and the PR check.
"""

from __future__ import annotations

from perftrack.store.queries.base import QueryBase
from perftrack.store.queries.shapes import AlertRow

ALERTS_TABLE = "alerts"


class AlertQueries(QueryBase):
    def alert_columns(self) -> list[str]:
        """The columns of `alerts`, in table order (detect writes rows positionally)."""
        return [d[0] for d in self.con.execute("SELECT * FROM alerts LIMIT 0").description]

    def stored_alerts(self, metric: str | None = None) -> list[AlertRow]:
        """Every alert (of one metric, if given), newest first: by when detect first saw
        it, then by the change's own time."""
        where, params = ("WHERE metric = ?", [metric]) if metric else ("", [])
        return self._rows(
            AlertRow,
            f"SELECT * FROM alerts {where} "
            "ORDER BY first_seen_at DESC, change_at DESC NULLS LAST, alert_id",
            params,
        )

    def alerts_by_id(self, ids: list[str], metric: str) -> dict[str, AlertRow]:
        """The stored alerts with these ids (the PR check's lookup), by id."""
        if not ids:
            return {}
        rows = self._rows(
            AlertRow,
            "SELECT * FROM alerts WHERE metric = ? AND alert_id IN (SELECT unnest(?))",
            [metric, ids],
        )
        return {r["alert_id"]: r for r in rows}
