"""Servers and machines as the site lists them: each server with its newest version string
and its count of results, the hardware of every run, each collation's charset."""

from __future__ import annotations

from typing import Any

from perftrack.store.queries.base import QueryBase
from perftrack.store.queries.shapes import HardwareRow, ServerSummary


class ServerQueries(QueryBase):
    def server_summaries(self) -> list[ServerSummary]:
        """Every server: server, product, version, its newest version_string and how many
        results it has (not the stored stand_in: a server is what it is outside a study)."""

        def counts(source: str) -> str:  # per server key: its results, the newest's start
            return (
                "SELECT server_key, count(*) AS n, max(started_at) AS newest "
                f"FROM {source} GROUP BY server_key"
            )

        name, before = self._rolling(  # rolled forward night by night (store/files/rolling.py)
            counts,
            lambda rows: (
                "SELECT server_key, CAST(sum(n) AS BIGINT) AS n, "
                f"max(newest) AS newest FROM {rows} GROUP BY server_key"
            ),
        )
        return self._rows(
            ServerSummary,
            before(f"""SELECT s.server_id AS server, any_value(s.product) AS product,
                      any_value(s.version) AS version,
                      arg_max(s.version_string, c.newest) AS version_string,
                      coalesce(sum(c.n), 0) AS results
               FROM servers s LEFT JOIN {name} c USING (server_key)
               GROUP BY s.server_id ORDER BY s.server_id"""),
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

    def hardware_timeline(self) -> list[tuple[Any, ...]]:
        """(runner_class, hw_key, first_started_at, cpu_model) of every run, oldest first."""
        return self._tuples(
            "SELECT ru.runner_class, ru.hw_key, ru.first_started_at, h.cpu_model "
            "FROM runs ru LEFT JOIN hardware h USING (hw_key) ORDER BY ru.first_started_at"
        )

    def hardware_rows(self) -> list[HardwareRow]:
        return self._rows(HardwareRow, "SELECT * FROM hardware ORDER BY hw_key")
