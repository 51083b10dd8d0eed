"""A table of the results DB copied to a Parquet file (the site's SQL page reads these)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from perftrack.core.errors import DatabaseError
from perftrack.store.files import nightfiles
from perftrack.store.files.dbfile import first_line
from perftrack.store.queries.base import QueryBase

# zstd at DuckDB's default level: docs/schema.md measured 72 bytes a result at level 19;
# the default level is within a few per cent of that and several times faster to write.
COPY_OPTIONS = "FORMAT parquet, COMPRESSION zstd"


class SnapshotQueries(QueryBase):
    path: Path

    def table_files(self, table: str) -> list[tuple[str, str, int]]:
        """(path, sha256, rows) of every night file of `table`, oldest first: the files
        are never rewritten, so a path and its sha256 name the same rows forever."""
        return self._tuples(
            f"SELECT path, sha256, rows FROM {nightfiles.FILES_TABLE} "
            "WHERE table_name = ? ORDER BY path",
            [table],
        )

    def file_months(self, table: str, file: str, time_column: str) -> list[str]:
        """The months (UTC, `YYYYMM`) of `time_column` in one night file of `table`: a
        file is never rewritten, so its months are known once and for all."""
        source = f"({nightfiles.select_files(self.con, self.path, table, [file])})"
        return [
            str(m)
            for (m,) in self._tuples(
                f"SELECT DISTINCT strftime({time_column}, '%Y%m') AS m FROM {source} ORDER BY m"
            )
        ]

    def copy_to_parquet(
        self,
        table: str,
        order_by: str,
        path: Path,
        files: list[str] | None = None,
        month: tuple[str, str] | None = None,
        con: duckdb.DuckDBPyConnection | None = None,
    ) -> int:
        """Write `table` (all columns, rows in `order_by` order) to `path`; its row count.
        `files`: only the rows of these night files of the table (`table_files` paths);
        `month`: (time column, `YYYYMM`): only the rows of that month (UTC). `con`: a
        `side_connection` (it reads `files`, not this connection's views).
        `table`, `order_by` and the column are names from the caller's own list, not input."""
        con = con or self.con
        source = table
        if files is not None:
            source = f"({nightfiles.select_files(con, self.path, table, files)})"
        if month is not None:
            if not month[1].isdigit():
                raise ValueError(f"not a month: {month[1]!r}")
            source = f"(SELECT * FROM {source} WHERE strftime({month[0]}, '%Y%m') = '{month[1]}')"
        try:
            (rows,) = con.execute(  # COPY answers with the rows it wrote
                f"COPY (SELECT * FROM {source} ORDER BY {order_by}) TO ? ({COPY_OPTIONS})",
                [str(path)],
            ).fetchone() or (0,)
        except duckdb.Error as exc:  # a DB this perftrack cannot read
            raise DatabaseError(
                f"cannot export table {table} to Parquet ({first_line(exc)})"
            ) from None
        return int(rows)

    def side_connection(self) -> duckdb.DuckDBPyConnection:
        """Another connection to the same database, for another thread (DuckDB's cursor):
        it sees the stored tables and views, not this connection's TEMP views, so it
        reads night files by name (`copy_to_parquet` with `files`). The caller closes it."""
        return self.con.cursor()

    def parquet_rows(self, paths: list[str]) -> int:
        """The rows of Parquet files (from their footers: nothing else is read)."""
        if not paths:
            return 0
        row = self.con.execute(
            "SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata(?)", [paths]
        ).fetchone()
        return int(row[0]) if row else 0
