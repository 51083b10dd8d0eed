"""Data files are data: a results DB may carry no code perftrack did not put there.

A DuckDB file can hold more than tables. A ``CREATE MACRO median(x) AS 42`` stored in it
overrides the built-in ``median()`` for every query of a connection on that file; a
stored view runs whatever SQL it was given (``read_csv('/etc/passwd')``, an URL) when it
is read; a column ``DEFAULT`` or a ``CHECK`` runs an expression on every insert. perftrack
creates none of these but the views of its night files (nightfiles.py), so every open
refuses a file holding:

- a macro or function (``duckdb_functions()``, not built in),
- a view that is not one of the night files' views, or one of them whose SQL calls a
  function perftrack's own views do not call, reads another table or view, or reads
  anything but ``read_parquet`` of its own relative ``<dir>/*/*.<table>.parquet`` pattern,
- a column default or a ``CHECK`` constraint,

with one line naming the object (exit 4), before any query reads from the file. The
connection is also opened with DuckDB's external access off, but for the directories the
store works in (`lock_down`): a file that slipped through still reads and writes nothing
else, and no extension is installed or loaded on the file's behalf.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import duckdb

from perftrack.core.errors import DatabaseError
from perftrack.store.files import migrations, nightfiles
from perftrack.store.files.sqltext import sql_string

# Never install or load an extension because a file's SQL names one.
# A DuckDB connection's settings, as duckdb.connect takes them.
Config = dict[str, str | bool | int | float | list[str]]
CONNECT_CONFIG: Config = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}
NAME_CHARS = 80  # an object's name as quoted in the message
# The stored views schema v6 wrote listed their files: read_parquet(list_value('…', …)).
V6_FILE_LIST = frozenset({"list_value"})


def _quote(name: str) -> str:
    return repr(name[:NAME_CHARS])


def _refuse(path: Path, what: str) -> DatabaseError:
    return DatabaseError(
        f"{path} holds {what}, which perftrack did not create: a data file may not carry "
        "code; refused, nothing read from it (restore the file from git or a backup)"
    )


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    """Every object of a `json_serialize_sql` tree."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _parse(con: duckdb.DuckDBPyConnection, select: str) -> dict[str, Any] | None:
    """DuckDB's syntax tree of one SELECT (parsed, never bound or run), or None."""
    row = con.execute("SELECT json_serialize_sql(?)", [select]).fetchone()
    tree = json.loads(row[0]) if row else {}
    if tree.get("error") or len(tree.get("statements") or []) != 1:
        return None
    return tree


def _functions(tree: dict[str, Any]) -> set[str]:
    return {
        str(n.get("function_name")).lower()
        for n in _nodes(tree)
        if n.get("class") == "FUNCTION" and n.get("type") == "FUNCTION"
    }


@cache
def view_functions() -> frozenset[str]:
    """The functions perftrack's own stored views call, for every files' version mix."""
    con = duckdb.connect(":memory:", config=CONNECT_CONFIG)
    try:
        names: set[str] = set()
        versions = range(1, migrations.CURRENT_VERSION + 1)
        for table in nightfiles.FILE_TABLES:
            for mix in ({v} for v in versions):
                for combine in (False, True):
                    sql = nightfiles.view_sql(
                        table, sql_string(f"x/*/*.{table}.parquet"), mix, combine=combine
                    )
                    tree = _parse(con, sql)
                    assert tree is not None, sql
                    names |= _functions(tree)
        return frozenset(names)
    finally:
        con.close()


def _view_problem(con: duckdb.DuckDBPyConnection, table: str, sql: str) -> str | None:
    """Why the stored view `table` (its CREATE VIEW text) is not one of perftrack's."""
    m = re.match(r"(?is)^\s*CREATE\s+VIEW\s+\"?(\w+)\"?\s+AS\s+(.*?);?\s*$", sql)
    tree = _parse(con, m.group(2)) if m and m.group(1) == table else None
    if tree is None:
        return "is not a single SELECT"
    extra = _functions(tree) - view_functions() - V6_FILE_LIST
    if extra:
        return f"calls {', '.join(sorted(extra))}"
    # nightfiles.view_prefix ("<the DB's directory name>/<its stem>", relative), then the
    # pattern of every file (`*/*.<table>.parquet`) or, written by schema v6, each file
    pattern = re.compile(
        rf"^(?:[^/\\]+/){{1,2}}(?:\*/\*|[0-9]{{4}}/[^/\\*]+)\.{re.escape(table)}\.parquet\Z"
    )
    for node in _nodes(tree):
        kind = node.get("type")
        if kind == "BASE_TABLE":
            return f"reads the table or view {_quote(str(node.get('table_name')))}"
        if kind != "TABLE_FUNCTION":
            continue
        function = node.get("function") or {}
        name = str(function.get("function_name", "")).lower()
        first = (function.get("arguments") or [{}])[0].get("expression") or {}
        texts = [
            str(n["literal"].get("text"))
            for n in _nodes(first)
            if isinstance(n.get("literal"), dict) and n["literal"].get("kind") == "STRING"
        ]
        bad = [t for t in texts if not pattern.match(t) or ".." in t.split("/")]
        if name != "read_parquet" or not texts or bad or _functions(first) - V6_FILE_LIST:
            shown = (bad or texts or [""])[0][:NAME_CHARS]
            return f"reads {name}({shown!r}), not its own night files"
    return None


def refuse_code(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Raise `DatabaseError` naming the first object in the file perftrack did not create."""
    here = "database_name = current_database()"
    for schema, name, kind in con.execute(
        "SELECT schema_name, function_name, function_type FROM duckdb_functions() "
        f"WHERE NOT internal AND {here} ORDER BY ALL"
    ).fetchall():
        raise _refuse(path, f"a {kind} {_quote(f'{schema}.{name}')}")
    for schema, name, sql in con.execute(
        "SELECT schema_name, view_name, sql FROM duckdb_views() "
        f"WHERE NOT internal AND NOT temporary AND {here} ORDER BY ALL"
    ).fetchall():
        if schema != "main" or name not in nightfiles.FILE_TABLES:
            raise _refuse(path, f"a user view {_quote(f'{schema}.{name}')}")
        problem = _view_problem(con, name, str(sql))
        if problem:
            raise _refuse(path, f"a view {_quote(name)} that {problem}")
    for table, column, default in con.execute(
        "SELECT table_name, column_name, column_default FROM duckdb_columns() "
        f"WHERE column_default IS NOT NULL AND {here} AND NOT internal ORDER BY ALL"
    ).fetchall():
        raise _refuse(path, f"a default {str(default)[:NAME_CHARS]!r} on {table}.{column}")
    for table, expression in con.execute(
        "SELECT table_name, expression FROM duckdb_constraints() "
        f"WHERE constraint_type = 'CHECK' AND {here} ORDER BY ALL"
    ).fetchall():
        raise _refuse(path, f"a CHECK {str(expression)[:NAME_CHARS]!r} on {table}")


def lock_down(con: duckdb.DuckDBPyConnection, path: Path, allow: Sequence[Path] = ()) -> None:
    """External access off for `con` but for the DB's directory (its night files, the read
    cache, DuckDB's own temp files) and the directories in `allow` (where the caller
    writes, e.g. the site being built), and the night files' relative directory the stored
    views name. Set once: DuckDB refuses to widen it later."""
    dirs = [str(path.resolve().parent), *(str(Path(a).resolve()) for a in allow)]
    # the stored views' relative pattern, bound (in write mode) against the directory above
    dirs.append(nightfiles.view_prefix(path))
    row = con.execute("SELECT current_setting('enable_external_access')").fetchone()
    if row and not row[0]:  # another connection of this process on the file locked it
        return
    listed = ", ".join(sql_string(f"{d}/") for d in dict.fromkeys(dirs))
    con.execute(f"SET allowed_directories = [{listed}]")
    con.execute("SET enable_external_access = false")
