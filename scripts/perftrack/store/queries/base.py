"""What every query room shares: the open connection and the shapes of its answers."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import duckdb

from perftrack.store.files import answers, rolling

T = TypeVar("T")
R = TypeVar("R")  # a row shape (queries/shapes.py)


class QueryBase:
    """A mixin of `Store`: `con` is the store's open DuckDB connection."""

    con: duckdb.DuckDBPyConnection
    write: bool
    path: Path

    def _tuples(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, list(params)).fetchall()

    # edge: DuckDB's rows, before _rows types them
    def _dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cur = self.con.execute(sql, list(params))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def _rows(self, shape: type[R], sql: str, params: Sequence[Any] = ()) -> list[R]:
        """`_dicts`, typed as the rows of `shape` (a TypedDict of queries/shapes.py, which
        names the columns `sql` selects): the one place a query's dicts become typed."""
        return cast(list[R], self._dicts(sql, params))

    def _answer(
        self, sql: str, params: Sequence[Any] = (), before: Callable[[str], str] | None = None
    ) -> list[tuple[Any, ...]]:
        """`_tuples`, kept on disk by a writer (detect) for the next command that asks it
        of the same files (store/files/answers.py): for the questions both detect and the
        site build ask. A reader reads a kept answer and keeps none.
        `before(sql)`: the SQL to run for `sql` once what it reads is made (kept under
        `sql`'s digest)."""

        def ask() -> list[tuple[Any, ...]]:
            return self._tuples(before(sql) if before is not None else sql, params)

        return answers.kept(self.path, self.con, sql, params, ask, keep=self.write)

    def _rolling(
        self, query: rolling.Query, merge: rolling.Merge, check: rolling.Check | None = None
    ) -> tuple[str, Callable[[str], str]]:
        """The name a query reads the answer `query("results")` under, rolled forward
        night by night (store/files/rolling.py: `merge`, `check`), and the SQL to run for such
        a query (which makes the answer)."""
        name = rolling.name(query("results"))

        def before(sql: str) -> str:
            got = rolling.advance(self.con, self.path, query, merge, check, writer=self.write)
            return sql.replace(name, got[0])

        return name, before

    def _one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        return self.con.execute(sql, list(params)).fetchone()

    def _kept(self, key: Hashable, compute: Callable[[], T]) -> T:
        """`compute()`, once per `key` on a read-only store: nothing can change its data
        while it is open (the site build asks several pages' questions of one store). A
        writer's answers are never kept. Callers read a kept answer, never change it."""
        if self.write:
            return compute()
        kept: dict[Hashable, T] = self.__dict__.setdefault("_kept_answers", {})
        if key not in kept:
            kept[key] = compute()
        return kept[key]


def marks(values: Sequence[Any]) -> str:
    """`?, ?, …`: one placeholder per value."""
    return ", ".join("?" for _ in values)
