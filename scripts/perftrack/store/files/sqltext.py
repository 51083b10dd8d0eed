"""SQL text the store builds around values it cannot bind as parameters (file paths in
`read_parquet([...])`, `ATTACH` and view definitions): one way to quote them."""

from __future__ import annotations


def sql_string(text: str) -> str:
    """`text` as an SQL string literal: in single quotes, each quote doubled."""
    return "'" + text.replace("'", "''") + "'"
