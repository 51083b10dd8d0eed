"""What every query room shares: the open connection and the two shapes of its answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb


class QueryBase:
    """A mixin of `Store`: `con` is the store's open DuckDB connection."""

    con: duckdb.DuckDBPyConnection
    write: bool

    def _tuples(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, list(params)).fetchall()

    def _dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cur = self.con.execute(sql, list(params))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def _one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        return self.con.execute(sql, list(params)).fetchone()


def marks(values: Sequence[Any]) -> str:
    """`?, ?, …`: one placeholder per value."""
    return ", ".join("?" for _ in values)
