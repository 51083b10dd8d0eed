"""The published tables as Parquet files for the SQL page (`sql.html`, DuckDB-WASM).

`site build` writes every table a reader queries into `data/sql/` as ZSTD Parquet, plus
`manifest.json` listing each table's files. The page (site/assets/sql.js) loads each
table from its files under the DB's own table name, so SQL typed on the page is the SQL
a user types in `duckdb data/results.duckdb`.

Manifest shape: `tables.NAME.files` is a list of paths relative to the manifest. Today
each table is one file exported here; once results are stored as immutable per-night
Parquet files (issue 19), the build lists those files under `results` as they are (the
page combines a table's files by column name, so nights written before a column was
added still read), and only the small, recomputed tables are exported each night.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perftrack.core.errors import DatabaseError
from perftrack.store import migrations

SUBDIR = "data/sql"  # in the built site
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1  # bump when the manifest's shape changes (sql.js checks it)
# zstd at DuckDB's default level: docs/schema.md measured 72 bytes a result at level 19;
# the default level is within a few per cent of that and several times faster to write.
COPY_OPTIONS = "FORMAT parquet, COMPRESSION zstd"

# Table -> the ORDER BY that makes its file deterministic and compress well (a table's
# key, results by time). Every table of the results DB a reader may ask about.
TABLES: dict[str, str] = {
    "results": "started_at, record_id",
    "runs": "run_id",
    "servers": "server_key",
    "server_variables": "varset_hash, name",
    "hardware": "hw_key",
    "noise": "runner_class, hw_key, workload, metric",
    "verdicts": "verdict_id",
    "change_points": "series_key, run_id",
    "schema_version": "version",
}


def export(con: Any, site: Path) -> dict[str, Any]:
    """Write each table of TABLES as `SUBDIR/NAME.parquet` under `site`, and the manifest.

    `con` is a read-only connection to the results DB (store.open_db(..., write=False)).
    Returns the manifest.
    """
    out = site / SUBDIR
    out.mkdir(parents=True, exist_ok=True)
    tables: dict[str, Any] = {}
    for name, order in TABLES.items():
        path = out / f"{name}.parquet"
        try:
            con.execute(
                f"COPY (SELECT * FROM {name} ORDER BY {order}) TO ? ({COPY_OPTIONS})", [str(path)]
            )
            (rows,) = con.execute(f"SELECT count(*) FROM {name}").fetchone()
        except Exception as exc:  # duckdb.Error: a DB this perftrack cannot read
            raise DatabaseError(f"cannot export table {name} to Parquet ({exc})") from None
        tables[name] = {"files": [path.name], "rows": rows, "bytes": path.stat().st_size}
    manifest = {
        "format": MANIFEST_FORMAT,
        "schema_version": migrations.schema_version(con),
        "tables": tables,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest
