"""Past runs as planning reads them: past cell durations, the servers seen, open
regressions.

Planning reads a DB one migration behind too (the publish job migrates it later), so
these queries name only tables and columns every schema since `PLANNING_MIN_SCHEMA` has
(`open_regressions` drops the axis columns an older `verdicts` lacks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import duckdb

from perftrack.core.cell import DURATION_FIELDS
from perftrack.core.errors import DatabaseError
from perftrack.store.files.dbfile import first_line
from perftrack.store.queries.base import QueryBase

PLANNING_MIN_SCHEMA = 2  # results, servers and verdicts: all planning reads
# A cell's duration key after its server: the fields that decide how long it takes.
DURATION_KEY = DURATION_FIELDS
SIMILAR_KEY = ("workload", "duration_s", "warmup_s", "tables", "table_size")


class OpenRegression(NamedTuple):
    """An unacknowledged regression of `verdicts`: its pair and the series fields asked for
    that its row has ({field: value}, compared only)."""

    base: str
    new: str
    fields: dict[str, object]


@dataclass
class PastRuns:
    """What the DB says about past runs, for estimates and priorities."""

    # (server_id, *DURATION_KEY) -> median wall seconds of its ok cells
    durations: dict[tuple[Any, ...], float] = field(default_factory=dict)
    # SIMILAR_KEY -> median wall seconds of such ok cells on any server
    similar: dict[tuple[Any, ...], float] = field(default_factory=dict)
    servers_with_results: set[str] = field(default_factory=set)
    regressions: list[OpenRegression] = field(default_factory=list)


def _cols(fields: tuple[str, ...]) -> str:
    return ", ".join(f'r."{c}"' for c in fields)


class PastRunQueries(QueryBase):
    def past_runs(self, regression_fields: Sequence[str]) -> PastRuns:
        """Everything planning reads, in one call; `regression_fields` the series fields
        an open regression is matched on."""
        try:
            return PastRuns(
                durations=self._durations(f"s.server_id, {_cols(DURATION_KEY)}", True),
                similar=self._durations(_cols(SIMILAR_KEY), False),
                servers_with_results={
                    sid
                    for (sid,) in self._tuples(
                        "SELECT DISTINCT s.server_id FROM results r "
                        "JOIN servers s USING (server_key) WHERE r.status = 'ok'"
                    )
                },
                regressions=self.open_regressions(regression_fields),
            )
        except duckdb.Error as exc:
            raise DatabaseError(
                f"{getattr(self, 'path', 'the DB')}: cannot read for planning ({first_line(exc)})"
            ) from None

    def _durations(self, key: str, by_server: bool) -> dict[tuple[Any, ...], float]:
        join = "JOIN servers s USING (server_key)" if by_server else ""
        rows = self._tuples(f"""
            SELECT {key}, median(epoch(r.finished_at) - epoch(r.started_at))
            FROM results r {join} WHERE r.status = 'ok' GROUP BY ALL
        """)
        return {tuple(k): float(secs) for *k, secs in rows}

    def open_regressions(self, fields: Sequence[str]) -> list[OpenRegression]:
        """Every unacknowledged regression; `fields` the series fields wanted, less those an
        older schema's table lacks."""
        have = {name for (name, *_) in self._tuples("DESCRIBE verdicts")}
        present = [c for c in fields if c in have]
        cols = "".join(f', "{c}"' for c in present)
        rows = self._tuples(
            f"SELECT base_server, new_server{cols} FROM verdicts "
            "WHERE verdict = 'regression' AND acknowledged IS NULL"
        )
        return [
            OpenRegression(base=base, new=new, fields=dict(zip(present, vals, strict=True)))
            for base, new, *vals in rows
        ]
